// A plain-TCP PostgreSQL-protocol client for the server tests: it sends exact
// bytes and reads exact answers, for what libpq never sends (bad lengths,
// half-finished startups) and for checking message-level details.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "server/pgwire/protocol.h"

namespace rtsql::testing {

struct RawMessage {
  char type;
  std::string body;

  // A field of an ErrorResponse / NoticeResponse body.
  std::string errorField(char code) const {
    size_t i = 0;
    while (i < body.size() && body[i] != '\0') {
      const char c = body[i++];
      const size_t end = body.find('\0', i);
      if (c == code) return body.substr(i, end - i);
      i = end + 1;
    }
    return "";
  }
  // The code of an Authentication message (0 ok, 10 SASL, ...).
  int32_t authCode() const {
    const auto* p = reinterpret_cast<const unsigned char*>(body.data());
    return static_cast<int32_t>(pgwire::readBigEndian32(p));
  }
};

class RawClient {
 public:
  explicit RawClient(uint16_t port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    timeval tv{5, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  }
  ~RawClient() { close(); }

  bool connected() const { return connected_; }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

  void send(std::string_view bytes) {
    size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = ::send(fd_, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
      if (n <= 0) return;
      done += static_cast<size_t>(n);
    }
  }

  bool readExact(char* out, size_t n) {
    size_t done = 0;
    while (done < n) {
      const ssize_t got = ::recv(fd_, out + done, n - done, 0);
      if (got <= 0) return false;
      done += static_cast<size_t>(got);
    }
    return true;
  }

  std::optional<RawMessage> readMessage() {
    char header[5];
    if (!readExact(header, 5)) return std::nullopt;
    const uint32_t len = pgwire::readBigEndian32(reinterpret_cast<unsigned char*>(header + 1));
    if (len < 4 || len > 1'000'000) return std::nullopt;
    RawMessage m{header[0], std::string(len - 4, '\0')};
    if (len > 4 && !readExact(m.body.data(), len - 4)) return std::nullopt;
    return m;
  }

  // Reads messages up to and including ReadyForQuery (or until the
  // connection ends).
  std::vector<RawMessage> readUntilReady() {
    std::vector<RawMessage> out;
    for (int i = 0; i < 10000; ++i) {
      auto m = readMessage();
      if (!m) break;
      out.push_back(*m);
      if (m->type == 'Z') break;
    }
    return out;
  }

  // True when the server closed the connection (EOF) within the timeout.
  bool closedByServer() {
    char c;
    for (int i = 0; i < 1000; ++i) {
      const ssize_t n = ::recv(fd_, &c, 1, 0);
      if (n == 0) return true;
      if (n < 0) return errno == ECONNRESET;
    }
    return false;
  }

 private:
  int fd_ = -1;
  bool connected_ = false;
};

}  // namespace rtsql::testing
