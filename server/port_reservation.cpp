#include "server/port_reservation.h"

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <utility>

namespace rtsql {

PortReservation::PortReservation(const std::string& host, uint16_t port) {
  if (port == 0) return;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (::getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &found) != 0)
    return;
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    int on = 1;
    if (::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on) == 0 &&
        ::bind(fd, a->ai_addr, a->ai_addrlen) == 0) {
      fds_.push_back(fd);
    } else {
      ::close(fd);
    }
  }
  ::freeaddrinfo(found);
}

PortReservation::~PortReservation() { release(); }

PortReservation::PortReservation(PortReservation&& other) noexcept
    : fds_(std::exchange(other.fds_, {})) {}

PortReservation& PortReservation::operator=(PortReservation&& other) noexcept {
  if (this != &other) {
    release();
    fds_ = std::exchange(other.fds_, {});
  }
  return *this;
}

void PortReservation::release() {
  for (const int fd : fds_) ::close(fd);
  fds_.clear();
}

}  // namespace rtsql
