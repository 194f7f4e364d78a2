// What the server tests share: a server on an ephemeral loopback port, a
// bounded wait, and a plain-TCP PostgreSQL-protocol client that sends exact
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
#include <utility>
#include <vector>

#include <boost/asio.hpp>

#include <chrono>
#include <memory>
#include <thread>

#include "server/pgwire/framing.h"
#include "server/pgwire/server.h"

namespace rtsql::testing {

// True once `cond` holds, checking every 5 ms until `timeout`.
template <typename F>
bool eventually(F cond, std::chrono::milliseconds timeout = std::chrono::milliseconds(5000)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (cond()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return cond();
}

// A server with `Handler` as its engine on an ephemeral loopback port, its
// io_context run by two threads so the per-connection strands are exercised.
template <typename Handler>
struct BasicTestServer {
  Handler handler;
  boost::asio::io_context io;
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> guard;
  std::unique_ptr<PgServer> server;
  std::vector<std::thread> threads;

  explicit BasicTestServer(PgServerOptions options = {}) {
    options.host = "127.0.0.1";
    options.port = 0;
    server = std::make_unique<PgServer>(io, handler, options);
    server->start();
    guard.emplace(io.get_executor());
    for (int i = 0; i < 2; ++i) threads.emplace_back([this] { io.run(); });
  }

  ~BasicTestServer() {
    server->stop();
    guard.reset();
    // Closing every connection leaves the io_context without work; give it a
    // bounded time to wind down, then force it.
    eventually([this] { return io.stopped(); }, std::chrono::milliseconds(3000));
    io.stop();
    for (auto& t : threads) t.join();
    server.reset();
  }

  uint16_t port() const { return server->port(); }

  std::string conninfo(const std::string& user = "alice", const std::string& extra = "") const {
    return "host=127.0.0.1 port=" + std::to_string(port()) + " user=" + user +
           " dbname=flows connect_timeout=5 gssencmode=disable " + extra;
  }
};

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
