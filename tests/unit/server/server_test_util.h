// What the server tests share: a temporary directory, an engine on a data
// directory of its own with what its statements answer captured, a server on
// an ephemeral loopback port, a bounded wait, and a plain-TCP
// PostgreSQL-protocol client that sends exact bytes and reads exact answers,
// for what libpq never sends (bad lengths, half-finished startups) and for
// checking message-level details.
#pragma once

#include <doctest/doctest.h>
#include <stdlib.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/asio.hpp>

#include <chrono>
#include <filesystem>
#include <memory>
#include <thread>

#include "common/error.h"
#include "connectors/provider.h"
#include "server/engine.h"
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

// A directory of its own under the system's temporary directory (its
// canonical path, links resolved), removed with all it holds at the end.
struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::string& prefix = "rtsql-test") {
    std::string tmpl = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    path = std::filesystem::canonical(tmpl);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

// What one execute() answered: the columns, rows, completion tag, notices,
// and the error, if any.
class ResultCapture : public ResultWriter {
 public:
  std::vector<ResultColumn> cols;
  std::vector<std::vector<std::optional<std::string>>> rows;
  std::string tag;
  std::optional<SqlError> err;
  std::vector<std::string> notices;
  int results = 0;  // completions and errors: a statement answers exactly one

  void columns(const std::vector<ResultColumn>& c) override { cols = c; }
  void row(const std::vector<std::optional<std::string>>& v) override { rows.push_back(v); }
  void complete(const std::string& t) override {
    tag = t;
    ++results;
  }
  void error(const SqlError& e) override {
    err = e;
    ++results;
  }
  void notice(const std::string& m) override { notices.push_back(m); }
};

// Requires that a statement answered no error, naming it and the error.
inline void requireOk(const ResultCapture& c, const std::string& sql) {
  REQUIRE_MESSAGE(!c.err, sql, ": ", c.err ? c.err->message() : "");
}

// A data directory ("data") in a temporary directory of its own, the
// connectors an engine on it uses, and the options of that engine.
template <typename Connectors = DefaultConnectorProvider>
struct EngineFixture {
  TempDir tmp;
  Connectors connectors;
  EngineOptions options;

  explicit EngineFixture(int slots = 16, const std::string& prefix = "rtsql-engine") : tmp(prefix) {
    options.dataDir = dataDir().string();
    options.slots = slots;
    std::filesystem::create_directories(options.dataDir);
  }
  std::filesystem::path dataDir() const { return tmp.path / "data"; }
};

// An engine started as rtsqld starts it (its catalog restored from the data
// directory) with one session of `user`.
class RestoredEngine {
 public:
  RestoredEngine(const EngineOptions& options, ConnectorProvider& connectors,
                 const std::string& user = "rtsql")
      : engine(options, connectors) {
    engine.restore();
    session = engine.openSession(user, "rtsql");
  }

  ResultCapture run(const std::string& sql) {
    ResultCapture c;
    engine.execute(*session, sql, c);
    return c;
  }
  // Runs each statement in turn, requiring that each succeeds.
  void runAll(const std::vector<std::string>& sqls) {
    for (const std::string& sql : sqls) requireOk(run(sql), sql);
  }

  Engine engine;
  std::unique_ptr<Session> session;
};

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

  // send(), adding to `sent` what the socket took as it goes (from another
  // thread, to see how far a server that stops reading let it come).
  void send(std::string_view bytes, std::atomic<size_t>& sent) {
    size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = ::send(fd_, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
      if (n <= 0) return;
      done += static_cast<size_t>(n);
      sent += static_cast<size_t>(n);
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
