// Holds the ports rtsqld was told to listen on from its first moment until
// its listeners have bound them. rtsqld starts an embedded broker, Kafka
// clients and restored flows before its PostgreSQL and HTTP listeners; each of
// them binds or connects on a port the kernel chooses, and without the hold
// the kernel may hand one of them the very port named by --port or
// --http-port (then rtsqld's own listener fails with "Address already in
// use"). A port bound by any socket is never chosen for such an automatic
// port, so a socket bound (not listening) with SO_REUSEADDR keeps the port
// out of the kernel's choices while still letting the listener, which also
// sets SO_REUSEADDR, bind it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace rtsql {

class PortReservation {
 public:
  PortReservation() = default;
  // Binds every address `host` resolves to on `port`; port 0 (any free port)
  // holds nothing. A failure to bind is not an error here: the listener
  // reports it with its own message when it binds.
  PortReservation(const std::string& host, uint16_t port);
  ~PortReservation();
  PortReservation(PortReservation&& other) noexcept;
  PortReservation& operator=(PortReservation&& other) noexcept;
  PortReservation(const PortReservation&) = delete;
  PortReservation& operator=(const PortReservation&) = delete;

  // How many sockets hold the port (0 when nothing could be bound).
  size_t held() const { return fds_.size(); }
  // Closes the sockets; call it once the listener has bound the port.
  void release();

 private:
  std::vector<int> fds_;
};

}  // namespace rtsql
