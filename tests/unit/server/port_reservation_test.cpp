// The hold on a listening port rtsqld takes before it starts anything that
// binds or connects on a port the kernel chooses.
#include "server/port_reservation.h"

#include <doctest/doctest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>

namespace {

// A socket on 127.0.0.1:port, optionally with SO_REUSEADDR; -1 if bind fails.
int bindLoopback(uint16_t port, bool reuse) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(fd >= 0);
  int on = 1;
  if (reuse) ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

uint16_t boundPort(int fd) {
  sockaddr_in a{};
  socklen_t len = sizeof a;
  REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0);
  return ntohs(a.sin_port);
}

}  // namespace

TEST_CASE("a held port is kept from automatic ports and free for the listener") {
  // A port the kernel gave out, then let go: free now.
  const int probe = bindLoopback(0, false);
  REQUIRE(probe >= 0);
  const uint16_t port = boundPort(probe);
  ::close(probe);

  rtsql::PortReservation held("127.0.0.1", port);
  REQUIRE(held.held() == 1);

  // Anything else that binds it without SO_REUSEADDR is refused...
  CHECK(bindLoopback(port, false) == -1);
  // ...and no automatic port is this one (bounded: 200 sockets).
  for (int i = 0; i < 200; ++i) {
    const int fd = bindLoopback(0, false);
    REQUIRE(fd >= 0);
    const uint16_t chosen = boundPort(fd);
    ::close(fd);
    REQUIRE(chosen != port);
  }

  // The listener (SO_REUSEADDR, as rtsqld's listeners set it) binds and
  // listens while the hold is still there.
  const int listener = bindLoopback(port, true);
  REQUIRE(listener >= 0);
  CHECK(::listen(listener, 4) == 0);
  held.release();
  CHECK(held.held() == 0);
  ::close(listener);
}

TEST_CASE("port 0 holds nothing; an unresolvable host holds nothing") {
  CHECK(rtsql::PortReservation("127.0.0.1", 0).held() == 0);
  CHECK(rtsql::PortReservation("no-such-host.invalid", 5999).held() == 0);
}
