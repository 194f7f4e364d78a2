// Tests for the PostgreSQL wire protocol server: message encoding on strings,
// then a real server on a loopback port driven by libpq, psql and a raw socket
// client that sends what well-behaved drivers never would. The engine is a
// fake QueryHandler whose statements are tiny commands ("rows 3", "sleep",
// "fail word").
#include <arpa/inet.h>
#include <doctest/doctest.h>
#include <libpq-fe.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "server/pgwire/messages.h"
#include "server/pgwire/protocol.h"
#include "server/pgwire/server.h"
#include "server/pgwire/worker_pool.h"
#include "server/query_handler.h"

using namespace rtsql;
using namespace rtsql::pgwire;
using namespace std::chrono_literals;

namespace {

// ---- A fake engine --------------------------------------------------------------

class FakeHandler;

class FakeSession : public Session {
 public:
  explicit FakeSession(std::atomic<int>& open) : open_(open) { ++open_; }
  ~FakeSession() override { --open_; }

 private:
  std::atomic<int>& open_;
};

std::string trim(std::string_view s) {
  size_t b = 0;
  size_t e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

// Statements are separated by ';' (no quoting rules: test texts avoid ';' in
// literals). Error positions are byte offsets into the whole query text, as
// the real engine reports them.
class FakeHandler : public QueryHandler {
 public:
  std::atomic<int> openSessions{0};
  std::atomic<int> sessionsOpened{0};
  std::atomic<int> running{0};
  std::atomic<int> cancelObserved{0};
  std::mutex mu;
  std::string lastUser;
  std::string lastDatabase;

  std::unique_ptr<Session> openSession(const std::string& user,
                                       const std::string& database) override {
    if (user == "nobody") {
      throw SqlError("28000", "role \"nobody\" does not exist");
    }
    {
      std::lock_guard lock(mu);
      lastUser = user;
      lastDatabase = database;
    }
    ++sessionsOpened;
    return std::make_unique<FakeSession>(openSessions);
  }

  void execute(Session&, const std::string& sql, ResultWriter& out) override {
    size_t start = 0;
    while (start <= sql.size()) {
      size_t end = sql.find(';', start);
      if (end == std::string::npos) end = sql.size();
      const std::string raw = sql.substr(start, end - start);
      const size_t lead = raw.find_first_not_of(" \t\r\n");
      const std::string stmt = trim(raw);
      const size_t stmtOffset = start + (lead == std::string::npos ? 0 : lead);
      if (!stmt.empty() && !runOne(stmt, stmtOffset, out)) return;
      start = end + 1;
    }
  }

 private:
  // Returns false after reporting an error (execution stops there).
  bool runOne(const std::string& stmt, size_t offset, ResultWriter& out) {
    if (stmt.rfind("select '", 0) == 0) {
      const size_t close = stmt.find('\'', 8);
      out.columns({{"?column?", pgtype::kText}});
      out.row({stmt.substr(8, close - 8)});
      out.complete("SELECT 1");
      return true;
    }
    if (stmt.rfind("rows ", 0) == 0) {
      const long n = std::stol(stmt.substr(5));
      out.columns({{"n", pgtype::kInt8}, {"parity", pgtype::kText}});
      for (long i = 0; i < n; ++i) {
        std::optional<std::string> parity;
        if (i % 2 == 0) parity = "even";
        out.row({std::to_string(i), parity});
      }
      out.complete("SELECT " + std::to_string(n));
      return true;
    }
    if (stmt == "nulls") {
      out.columns({{"a", pgtype::kText}, {"b", pgtype::kInt4}});
      out.row({std::nullopt, std::string("7")});
      out.complete("SELECT 1");
      return true;
    }
    if (stmt == "create") {
      out.complete("CREATE SOURCE");
      return true;
    }
    if (stmt == "notice") {
      out.notice("hello notice");
      out.complete("SET");
      return true;
    }
    if (stmt.rfind("fail ", 0) == 0) {
      const std::string word = stmt.substr(5);
      SqlError err(sqlstate::kSyntaxError, "syntax error at or near \"" + word + "\"",
                   offset + 5, "Check the spelling.");
      err.withDetail("The fake engine knows few words.");
      out.error(err);
      return false;
    }
    if (stmt == "throw") throw std::runtime_error("boom");
    if (stmt == "sleep") return sleepUntilCancelled(out);
    if (stmt == "stream") {
      // One row, a pause, another row: the first must reach the client
      // before the statement ends.
      out.columns({{"v", pgtype::kText}});
      out.row({std::string("first")});
      std::this_thread::sleep_for(500ms);
      out.row({std::string("second")});
      out.complete("SELECT 2");
      return true;
    }
    out.error(SqlError(sqlstate::kSyntaxError, "unknown fake statement", offset));
    return false;
  }

  bool sleepUntilCancelled(ResultWriter& out) {
    ++running;
    const auto deadline = std::chrono::steady_clock::now() + 20s;
    while (std::chrono::steady_clock::now() < deadline) {
      if (out.cancelled()) {
        ++cancelObserved;
        --running;
        out.error(SqlError("57014", "canceling statement due to user request"));
        return false;
      }
      std::this_thread::sleep_for(5ms);
    }
    --running;
    out.complete("SLEEP");
    return true;
  }
};

// Polls `cond` every few milliseconds for at most `timeout`.
template <typename F>
bool eventually(F cond, std::chrono::milliseconds timeout = 5000ms) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (cond()) return true;
    std::this_thread::sleep_for(5ms);
  }
  return cond();
}

// A server on an ephemeral loopback port, its io_context run by two threads so
// the per-connection strands are exercised.
struct TestServer {
  FakeHandler handler;
  boost::asio::io_context io;
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> guard;
  std::unique_ptr<PgServer> server;
  std::vector<std::thread> threads;

  explicit TestServer(PgServerOptions options = {}) {
    options.host = "127.0.0.1";
    options.port = 0;
    server = std::make_unique<PgServer>(io, handler, options);
    server->start();
    guard.emplace(io.get_executor());
    for (int i = 0; i < 2; ++i) threads.emplace_back([this] { io.run(); });
  }

  ~TestServer() {
    server->stop();
    guard.reset();
    // Closing every connection leaves the io_context without work; give it a
    // bounded time to wind down, then force it.
    eventually([this] { return io.stopped(); }, 3000ms);
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

struct PgConn {
  PGconn* c;
  explicit PgConn(const std::string& conninfo) : c(PQconnectdb(conninfo.c_str())) {}
  ~PgConn() { PQfinish(c); }
  bool ok() const { return PQstatus(c) == CONNECTION_OK; }
  std::string error() const { return PQerrorMessage(c); }
};

struct PgResult {
  PGresult* r;
  explicit PgResult(PGresult* res) : r(res) {}
  ~PgResult() { PQclear(r); }
  ExecStatusType status() const { return PQresultStatus(r); }
  std::string value(int row, int col) const { return PQgetvalue(r, row, col); }
  std::string field(int code) const {
    const char* f = PQresultErrorField(r, code);
    return f ? f : "";
  }
  std::string cmd() const { return PQcmdStatus(r); }
};

// ---- A raw client for what drivers never send ------------------------------------

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
    const uint32_t len = readBigEndian32(reinterpret_cast<unsigned char*>(header + 1));
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

std::string be32(uint32_t v) {
  std::string s(4, '\0');
  for (int i = 0; i < 4; ++i) s[static_cast<size_t>(i)] = static_cast<char>(v >> (24 - 8 * i));
  return s;
}

std::string startupPacket(uint32_t version,
                          const std::vector<std::pair<std::string, std::string>>& params) {
  std::string body = be32(version);
  for (const auto& [k, v] : params) {
    body += k;
    body.push_back('\0');
    body += v;
    body.push_back('\0');
  }
  body.push_back('\0');
  return be32(static_cast<uint32_t>(body.size() + 4)) + body;
}

std::string frontendMessage(char type, std::string_view body) {
  return std::string(1, type) + be32(static_cast<uint32_t>(body.size() + 4)) + std::string(body);
}

std::string queryMessage(std::string_view sql) {
  std::string body(sql);
  body.push_back('\0');
  return frontendMessage('Q', body);
}

// Connects and completes startup; returns false if the server refused.
bool rawStartup(RawClient& c) {
  c.send(startupPacket(kProtocolV3, {{"user", "raw"}, {"database", "db"}}));
  auto msgs = c.readUntilReady();
  return !msgs.empty() && msgs.front().type == 'R' && msgs.back().type == 'Z';
}

}  // namespace

// ---- Encoding ----------------------------------------------------------------------

TEST_CASE("pgwire: character positions count UTF-8 characters, 1-based") {
  CHECK(characterPosition("select 1", 0) == 1);
  CHECK(characterPosition("select 1", 7) == 8);
  // "é" is two bytes; the byte after it is the third character.
  CHECK(characterPosition("\xC3\xA9x", 2) == 2);
  CHECK(characterPosition("a\xE2\x82\xAC" "b", 4) == 3);  // a, euro sign, b
  CHECK(characterPosition("abc", 100) == 4);               // clamped to the end
}

TEST_CASE("pgwire: backend messages have the documented layout") {
  std::string out;
  appendDataRow(out, {std::string("ab"), std::nullopt});
  // 'D', length 4+2+(4+2)+4 = 16, 2 columns, "ab", NULL as -1.
  CHECK(out == std::string("D\0\0\0\x10\0\x02\0\0\0\x02" "ab\xFF\xFF\xFF\xFF", 17));

  out.clear();
  appendReadyForQuery(out, 'I');
  CHECK(out == std::string("Z\0\0\0\x05I", 6));

  out.clear();
  SqlError err(sqlstate::kSyntaxError, "bad", 2, "a hint");
  appendErrorResponse(out, err, "ab\xC3\xA9" "cd");
  RawMessage m{out[0], out.substr(5)};
  CHECK(m.type == 'E');
  CHECK(readBigEndian32(reinterpret_cast<const unsigned char*>(out.data() + 1)) == out.size() - 1);
  CHECK(m.errorField('S') == "ERROR");
  CHECK(m.errorField('V') == "ERROR");
  CHECK(m.errorField('C') == "42601");
  CHECK(m.errorField('M') == "bad");
  CHECK(m.errorField('H') == "a hint");
  CHECK(m.errorField('P') == "3");
  CHECK(m.errorField('D').empty());

  // An embedded NUL would end the string early and break framing.
  out.clear();
  appendCommandComplete(out, std::string("SEL\0ECT", 7));
  CHECK(out == std::string("C\0\0\0\x0bSELECT\0", 12));
}

TEST_CASE("pgwire: frontend decoding rejects malformed bodies with 08P01") {
  auto startup = startupPacket(kProtocolV3, {{"user", "u"}, {"application_name", "app"}});
  auto packet = decodeStartupPacket(std::string_view(startup).substr(4));
  CHECK(packet.kind == StartupPacket::Kind::kStartup);
  CHECK(packet.protocolVersion == kProtocolV3);
  CHECK(packet.parameter("user") == "u");
  CHECK(packet.parameter("application_name") == "app");
  CHECK_FALSE(packet.parameter("database"));

  auto ssl = decodeStartupPacket(be32(kSslRequestCode));
  CHECK(ssl.kind == StartupPacket::Kind::kSslRequest);
  auto cancel = decodeStartupPacket(be32(kCancelRequestCode) + be32(42) + be32(7));
  CHECK(cancel.kind == StartupPacket::Kind::kCancelRequest);
  CHECK(cancel.cancelPid == 42);
  CHECK(cancel.cancelSecret == 7);

  try {
    decodeStartupPacket(be32(kProtocolV3) + std::string("user\0u", 6));  // unterminated
    FAIL("expected a protocol error");
  } catch (const SqlError& e) {
    CHECK(e.sqlstate() == "08P01");
  }
  CHECK(decodeQuery(std::string("select 1\0", 9)) == "select 1");
  CHECK_THROWS_AS(decodeQuery("select 1"), SqlError);
  CHECK_THROWS_AS(decodeQuery(std::string("a\0b\0", 4)), SqlError);
}

TEST_CASE("pgwire: the worker pool never queues a task behind a blocked one") {
  WorkerPool pool(64, 50ms);
  // Twenty tasks that each wait until all twenty run at once: this finishes
  // only if the pool gives every task its own thread.
  constexpr int kTasks = 20;
  std::atomic<int> started{0};
  std::atomic<int> finished{0};
  for (int i = 0; i < kTasks; ++i) {
    REQUIRE(pool.submit([&] {
      ++started;
      const auto deadline = std::chrono::steady_clock::now() + 5s;
      while (started.load() < kTasks && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(1ms);
      }
      if (started.load() == kTasks) ++finished;
    }));
  }
  CHECK(eventually([&] { return finished.load() == kTasks; }));
  // Idle threads leave after the idle timeout; the pool still works afterwards.
  CHECK(eventually([&] { return pool.threadCount() == 0; }));
  std::atomic<bool> ran{false};
  REQUIRE(pool.submit([&] { ran = true; }));
  CHECK(eventually([&] { return ran.load(); }));
  pool.shutdown();
  CHECK_FALSE(pool.submit([] {}));
}

// ---- A real server, real clients ---------------------------------------------------

TEST_CASE("pgwire: libpq connects, sees the startup parameters and runs a query") {
  TestServer ts;
  PgConn conn(ts.conninfo("alice", "application_name=pgtest sslmode=prefer"));
  REQUIRE_MESSAGE(conn.ok(), conn.error());
  CHECK(std::string(PQparameterStatus(conn.c, "server_version")) == "15.0");
  CHECK(PQserverVersion(conn.c) == 150000);
  CHECK(std::string(PQparameterStatus(conn.c, "server_encoding")) == "UTF8");
  CHECK(std::string(PQparameterStatus(conn.c, "client_encoding")) == "UTF8");
  CHECK(std::string(PQparameterStatus(conn.c, "DateStyle")) == "ISO, MDY");
  CHECK(std::string(PQparameterStatus(conn.c, "integer_datetimes")) == "on");
  CHECK(std::string(PQparameterStatus(conn.c, "standard_conforming_strings")) == "on");
  CHECK(std::string(PQparameterStatus(conn.c, "TimeZone")) == "UTC");
  CHECK(std::string(PQparameterStatus(conn.c, "application_name")) == "pgtest");
  CHECK(PQbackendPID(conn.c) > 0);
  CHECK(PQsslInUse(conn.c) == 0);  // SSLRequest was declined, startup went on in plain text
  {
    std::lock_guard lock(ts.handler.mu);
    CHECK(ts.handler.lastUser == "alice");
    CHECK(ts.handler.lastDatabase == "flows");
  }
  CHECK(ts.handler.openSessions.load() == 1);
  CHECK(ts.server->connectionCount() == 1);

  PgResult res(PQexec(conn.c, "select 'hello'"));
  REQUIRE(res.status() == PGRES_TUPLES_OK);
  CHECK(PQntuples(res.r) == 1);
  CHECK(PQnfields(res.r) == 1);
  CHECK(std::string(PQfname(res.r, 0)) == "?column?");
  CHECK(PQftype(res.r, 0) == pgtype::kText);
  CHECK(res.value(0, 0) == "hello");
  CHECK(res.cmd() == "SELECT 1");
}

TEST_CASE("pgwire: several statements in one query string") {
  TestServer ts;
  PgConn conn(ts.conninfo());
  REQUIRE_MESSAGE(conn.ok(), conn.error());
  REQUIRE(PQsendQuery(conn.c, "create; select 'a'; nulls; rows 3") == 1);
  std::vector<std::unique_ptr<PgResult>> results;
  for (int i = 0; i < 10; ++i) {
    PGresult* r = PQgetResult(conn.c);
    if (!r) break;
    results.push_back(std::make_unique<PgResult>(r));
  }
  REQUIRE(results.size() == 4);
  CHECK(results[0]->status() == PGRES_COMMAND_OK);
  CHECK(results[0]->cmd() == "CREATE SOURCE");
  CHECK(results[1]->status() == PGRES_TUPLES_OK);
  CHECK(results[1]->value(0, 0) == "a");
  const PgResult& nulls = *results[2];
  CHECK(nulls.status() == PGRES_TUPLES_OK);
  CHECK(PQgetisnull(nulls.r, 0, 0) == 1);
  CHECK(PQgetisnull(nulls.r, 0, 1) == 0);
  CHECK(nulls.value(0, 1) == "7");
  CHECK(PQftype(nulls.r, 1) == pgtype::kInt4);
  CHECK(PQfsize(nulls.r, 1) == 4);
  CHECK(PQfsize(nulls.r, 0) == -1);
  const PgResult& rows = *results[3];
  CHECK(rows.cmd() == "SELECT 3");
  CHECK(PQntuples(rows.r) == 3);
  CHECK(PQftype(rows.r, 0) == pgtype::kInt8);
  CHECK(rows.value(2, 0) == "2");
  CHECK(PQgetisnull(rows.r, 1, 1) == 1);
  CHECK(rows.value(2, 1) == "even");
}

TEST_CASE("pgwire: errors carry SQLSTATE, character position, detail and hint") {
  TestServer ts;
  PgConn conn(ts.conninfo());
  REQUIRE_MESSAGE(conn.ok(), conn.error());
  // "é" is two bytes: the failing word starts at byte offset 18, after 17
  // characters, so its 1-based character position is 18 (a byte-based
  // position would say 19).
  const std::string sql = "select '\xC3\xA9'; fail \xC3\xBCnknown";
  REQUIRE(sql.find("\xC3\xBCnknown") == 18);
  REQUIRE(PQsendQuery(conn.c, sql.c_str()) == 1);
  PgResult first(PQgetResult(conn.c));
  CHECK(first.status() == PGRES_TUPLES_OK);
  CHECK(first.value(0, 0) == "\xC3\xA9");
  PgResult err(PQgetResult(conn.c));
  REQUIRE(err.status() == PGRES_FATAL_ERROR);
  CHECK(err.field(PG_DIAG_SQLSTATE) == "42601");
  CHECK(err.field(PG_DIAG_SEVERITY) == "ERROR");
  CHECK(err.field(PG_DIAG_SEVERITY_NONLOCALIZED) == "ERROR");
  CHECK(err.field(PG_DIAG_MESSAGE_PRIMARY) == "syntax error at or near \"\xC3\xBCnknown\"");
  CHECK(err.field(PG_DIAG_MESSAGE_HINT) == "Check the spelling.");
  CHECK(err.field(PG_DIAG_MESSAGE_DETAIL) == "The fake engine knows few words.");
  CHECK(err.field(PG_DIAG_STATEMENT_POSITION) == "18");
  CHECK(PQgetResult(conn.c) == nullptr);

  // The session survives the error.
  PgResult after(PQexec(conn.c, "select 'still here'"));
  CHECK(after.status() == PGRES_TUPLES_OK);
  CHECK(after.value(0, 0) == "still here");

  // A handler that throws despite its contract costs one query, not the server.
  PgResult thrown(PQexec(conn.c, "throw"));
  CHECK(thrown.status() == PGRES_FATAL_ERROR);
  CHECK(thrown.field(PG_DIAG_SQLSTATE) == "XX000");
  CHECK(thrown.field(PG_DIAG_MESSAGE_PRIMARY) == "boom");
  PgResult again(PQexec(conn.c, "select 'x'"));
  CHECK(again.status() == PGRES_TUPLES_OK);
}

TEST_CASE("pgwire: empty queries, notices, and the unsupported extended protocol") {
  TestServer ts;
  PgConn conn(ts.conninfo());
  REQUIRE_MESSAGE(conn.ok(), conn.error());
  PgResult empty(PQexec(conn.c, ""));
  CHECK(empty.status() == PGRES_EMPTY_QUERY);
  PgResult blanks(PQexec(conn.c, "  ;  ; "));
  CHECK(blanks.status() == PGRES_EMPTY_QUERY);

  std::vector<std::string> notices;
  PQsetNoticeReceiver(
      conn.c,
      [](void* arg, const PGresult* r) {
        const char* m = PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY);
        static_cast<std::vector<std::string>*>(arg)->push_back(m ? m : "");
      },
      &notices);
  PgResult set(PQexec(conn.c, "notice"));
  CHECK(set.status() == PGRES_COMMAND_OK);
  CHECK(set.cmd() == "SET");
  REQUIRE(notices.size() == 1);
  CHECK(notices[0] == "hello notice");

  // Extended protocol: a clean error, then the connection is usable again.
  PgResult params(PQexecParams(conn.c, "select 'x'", 0, nullptr, nullptr, nullptr, nullptr, 0));
  CHECK(params.status() == PGRES_FATAL_ERROR);
  CHECK(params.field(PG_DIAG_SQLSTATE) == "0A000");
  CHECK(params.field(PG_DIAG_MESSAGE_PRIMARY) == "extended query protocol is not supported yet");
  PgResult prepared(PQprepare(conn.c, "s1", "select 'x'", 0, nullptr));
  CHECK(prepared.status() == PGRES_FATAL_ERROR);
  CHECK(prepared.field(PG_DIAG_SQLSTATE) == "0A000");
  PgResult simple(PQexec(conn.c, "select 'back'"));
  CHECK(simple.status() == PGRES_TUPLES_OK);
  CHECK(simple.value(0, 0) == "back");
}

TEST_CASE("pgwire: a large result arrives complete and in order") {
  TestServer ts;
  PgConn conn(ts.conninfo());
  REQUIRE_MESSAGE(conn.ok(), conn.error());
  PgResult res(PQexec(conn.c, "rows 200000"));
  REQUIRE(res.status() == PGRES_TUPLES_OK);
  REQUIRE(PQntuples(res.r) == 200000);
  CHECK(res.cmd() == "SELECT 200000");
  bool inOrder = true;
  for (int i = 0; i < 200000; i += 997) {
    if (res.value(i, 0) != std::to_string(i)) inOrder = false;
    if ((PQgetisnull(res.r, i, 1) == 1) != (i % 2 == 1)) inOrder = false;
  }
  CHECK(inOrder);
  CHECK(res.value(199999, 0) == "199999");
}

TEST_CASE("pgwire: rows of a running statement reach the client promptly") {
  TestServer ts;
  PgConn conn(ts.conninfo());
  REQUIRE_MESSAGE(conn.ok(), conn.error());
  const auto t0 = std::chrono::steady_clock::now();
  REQUIRE(PQsendQuery(conn.c, "stream") == 1);
  REQUIRE(PQsetSingleRowMode(conn.c) == 1);
  PgResult first(PQgetResult(conn.c));
  const auto firstAt = std::chrono::steady_clock::now() - t0;
  REQUIRE(first.status() == PGRES_SINGLE_TUPLE);
  CHECK(first.value(0, 0) == "first");
  // The statement pauses 500 ms after its first row; that row must not wait.
  CHECK(firstAt < 350ms);
  PgResult second(PQgetResult(conn.c));
  CHECK(second.status() == PGRES_SINGLE_TUPLE);
  CHECK(second.value(0, 0) == "second");
  CHECK(std::chrono::steady_clock::now() - t0 >= 450ms);
  PgResult done(PQgetResult(conn.c));
  CHECK(done.status() == PGRES_TUPLES_OK);
  CHECK(PQgetResult(conn.c) == nullptr);
}

TEST_CASE("pgwire: 50 concurrent sessions") {
  TestServer ts;
  constexpr int kClients = 50;
  std::atomic<int> good{0};
  std::vector<std::string> failures(kClients);
  std::vector<std::thread> clients;
  for (int i = 0; i < kClients; ++i) {
    clients.emplace_back([&, i] {
      PgConn conn(ts.conninfo("user" + std::to_string(i)));
      if (!conn.ok()) {
        failures[static_cast<size_t>(i)] = conn.error();
        return;
      }
      for (int q = 0; q < 10; ++q) {
        const std::string tag = "c" + std::to_string(i) + "q" + std::to_string(q);
        PgResult res(PQexec(conn.c, ("select '" + tag + "'; rows 500").c_str()));
        // PQexec returns the last result: the 500 rows.
        if (res.status() != PGRES_TUPLES_OK || PQntuples(res.r) != 500) {
          failures[static_cast<size_t>(i)] = "bad result for " + tag;
          return;
        }
        PgResult one(PQexec(conn.c, ("select '" + tag + "'").c_str()));
        if (one.status() != PGRES_TUPLES_OK || one.value(0, 0) != tag) {
          failures[static_cast<size_t>(i)] = "wrong value for " + tag;
          return;
        }
      }
      ++good;
    });
  }
  for (auto& t : clients) t.join();
  for (const auto& f : failures) CHECK_MESSAGE(f.empty(), f);
  CHECK(good.load() == kClients);
  CHECK(ts.handler.sessionsOpened.load() == kClients);
  // Every session is destroyed once its client has gone.
  CHECK(eventually([&] { return ts.handler.openSessions.load() == 0; }));
  CHECK(eventually([&] { return ts.server->connectionCount() == 0; }));
}

TEST_CASE("pgwire: a client that disconnects mid-statement cancels it") {
  TestServer ts;
  {
    PgConn conn(ts.conninfo());
    REQUIRE_MESSAGE(conn.ok(), conn.error());
    REQUIRE(PQsendQuery(conn.c, "sleep") == 1);
    REQUIRE(eventually([&] { return ts.handler.running.load() == 1; }));
  }  // PQfinish closes the socket while the statement runs
  CHECK(eventually([&] { return ts.handler.cancelObserved.load() == 1; }));
  CHECK(eventually([&] { return ts.handler.running.load() == 0; }));
  CHECK(eventually([&] { return ts.handler.openSessions.load() == 0; }));
  CHECK(eventually([&] { return ts.server->connectionCount() == 0; }));

  // Abrupt disconnects at awkward moments: mid-startup, mid-header, mid-body.
  {
    RawClient c(ts.port());
    c.send(std::string("\0\0\0", 3));
  }
  {
    RawClient c(ts.port());
    REQUIRE(rawStartup(c));
    c.send(std::string("Q\0\0", 3));
  }
  {
    RawClient c(ts.port());
    REQUIRE(rawStartup(c));
    c.send(std::string("Q\0\0\0\x20sel", 8));
  }
  CHECK(eventually([&] { return ts.server->connectionCount() == 0; }));
  CHECK(eventually([&] { return ts.handler.openSessions.load() == 0; }));
  PgConn conn(ts.conninfo());
  CHECK(conn.ok());
}

TEST_CASE("pgwire: CancelRequest cancels the running statement") {
  TestServer ts;
  PgConn conn(ts.conninfo());
  REQUIRE_MESSAGE(conn.ok(), conn.error());
  REQUIRE(PQsendQuery(conn.c, "sleep") == 1);
  REQUIRE(eventually([&] { return ts.handler.running.load() == 1; }));

  // A wrong secret is ignored.
  {
    RawClient c(ts.port());
    c.send(be32(16) + be32(kCancelRequestCode) + be32(static_cast<uint32_t>(PQbackendPID(conn.c))) +
           be32(12345));
    CHECK(c.closedByServer());
  }
  std::this_thread::sleep_for(50ms);
  CHECK(ts.handler.running.load() == 1);

  PGcancel* cancel = PQgetCancel(conn.c);
  char errbuf[256];
  CHECK(PQcancel(cancel, errbuf, sizeof errbuf) == 1);
  PQfreeCancel(cancel);
  PgResult res(PQgetResult(conn.c));
  CHECK(res.status() == PGRES_FATAL_ERROR);
  CHECK(res.field(PG_DIAG_SQLSTATE) == "57014");
  CHECK(PQgetResult(conn.c) == nullptr);
  CHECK(ts.handler.cancelObserved.load() == 1);
  // The cancel applied to that statement only.
  PgResult next(PQexec(conn.c, "select 'next'"));
  CHECK(next.status() == PGRES_TUPLES_OK);
}

TEST_CASE("pgwire: connection limits and refused sessions") {
  PgServerOptions options;
  options.maxConnections = 2;
  TestServer ts(options);
  PgConn a(ts.conninfo());
  PgConn b(ts.conninfo());
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  {
    PgConn c(ts.conninfo());
    CHECK_FALSE(c.ok());
    CHECK(c.error().find("too many clients") != std::string::npos);
  }
  PQfinish(a.c);
  a.c = nullptr;
  // The server notices the close asynchronously; then a slot is free again.
  REQUIRE(eventually([&] { return ts.server->connectionCount() == 1; }));
  PgConn d(ts.conninfo());
  CHECK_MESSAGE(d.ok(), d.error());

  PQfinish(b.c);
  b.c = nullptr;
  REQUIRE(eventually([&] { return ts.server->connectionCount() == 1; }));
  PgConn refused(ts.conninfo("nobody"));
  CHECK_FALSE(refused.ok());
  CHECK(refused.error().find("role \"nobody\" does not exist") != std::string::npos);
}

TEST_CASE("pgwire: start() fails clearly when the port is taken") {
  TestServer ts;
  FakeHandler other;
  boost::asio::io_context io;
  PgServerOptions options;
  options.host = "127.0.0.1";
  options.port = ts.port();
  PgServer second(io, other, options);
  try {
    second.start();
    FAIL("expected start() to throw");
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    CHECK(what.find("could not listen on 127.0.0.1:" + std::to_string(ts.port())) !=
          std::string::npos);
  }
}

TEST_CASE("pgwire: protocol violations get 08P01 and a closed connection") {
  PgServerOptions options;
  options.maxMessageBytes = 1024;
  TestServer ts(options);

  SUBCASE("message length below 4") {
    RawClient c(ts.port());
    REQUIRE(rawStartup(c));
    c.send(std::string("Q\0\0\0\x02", 5));
    auto m = c.readMessage();
    REQUIRE(m);
    CHECK(m->type == 'E');
    CHECK(m->errorField('C') == "08P01");
    CHECK(m->errorField('S') == "FATAL");
    CHECK(c.closedByServer());
  }
  SUBCASE("oversized message") {
    RawClient c(ts.port());
    REQUIRE(rawStartup(c));
    c.send(std::string("Q") + be32(100000) + std::string(3000, 'x'));
    auto m = c.readMessage();
    REQUIRE(m);
    CHECK(m->type == 'E');
    CHECK(m->errorField('C') == "08P01");
    CHECK(m->errorField('M').find("exceeds the limit of 1024 bytes") != std::string::npos);
    CHECK(c.closedByServer());
  }
  SUBCASE("unknown message type") {
    RawClient c(ts.port());
    REQUIRE(rawStartup(c));
    c.send(frontendMessage('y', "abc"));
    auto m = c.readMessage();
    REQUIRE(m);
    CHECK(m->errorField('C') == "08P01");
    CHECK(c.closedByServer());
  }
  SUBCASE("query text without its terminating NUL") {
    RawClient c(ts.port());
    REQUIRE(rawStartup(c));
    c.send(frontendMessage('Q', "select 'x'"));
    auto m = c.readMessage();
    REQUIRE(m);
    CHECK(m->errorField('C') == "08P01");
    CHECK(c.closedByServer());
  }
  SUBCASE("bad startup packets") {
    {
      RawClient c(ts.port());
      c.send(be32(3));
      auto m = c.readMessage();
      REQUIRE(m);
      CHECK(m->errorField('C') == "08P01");
      CHECK(c.closedByServer());
    }
    {
      RawClient c(ts.port());
      c.send(be32(1u << 30));
      auto m = c.readMessage();
      REQUIRE(m);
      CHECK(m->errorField('C') == "08P01");
      CHECK(c.closedByServer());
    }
    {
      RawClient c(ts.port());
      c.send(startupPacket(2u << 16, {{"user", "u"}}));
      auto m = c.readMessage();
      REQUIRE(m);
      CHECK(m->errorField('C') == "0A000");
      CHECK(c.closedByServer());
    }
    {
      RawClient c(ts.port());
      c.send(startupPacket(kProtocolV3, {{"database", "d"}}));
      auto m = c.readMessage();
      REQUIRE(m);
      CHECK(m->errorField('C') == "28000");
      CHECK(c.closedByServer());
    }
  }
  // None of that disturbed anyone else.
  CHECK(eventually([&] { return ts.server->connectionCount() == 0; }));
  PgConn conn(ts.conninfo());
  CHECK(conn.ok());
}

TEST_CASE("pgwire: raw protocol flows") {
  TestServer ts;

  SUBCASE("SSL and GSS encryption requests are declined, then startup proceeds") {
    RawClient c(ts.port());
    c.send(be32(8) + be32(kGssEncRequestCode));
    char answer = 0;
    REQUIRE(c.readExact(&answer, 1));
    CHECK(answer == 'N');
    c.send(be32(8) + be32(kSslRequestCode));
    REQUIRE(c.readExact(&answer, 1));
    CHECK(answer == 'N');
    CHECK(rawStartup(c));
  }
  SUBCASE("a newer minor version and protocol options are negotiated down") {
    RawClient c(ts.port());
    c.send(startupPacket(kProtocolV3 | 2, {{"user", "u"}, {"_pq_.fancy", "1"}}));
    auto msgs = c.readUntilReady();
    REQUIRE(msgs.size() >= 3);
    CHECK(msgs[0].type == 'v');
    CHECK(msgs[0].body == be32(0) + be32(1) + std::string("_pq_.fancy\0", 11));
    CHECK(msgs[1].type == 'R');
    CHECK(msgs.back().type == 'Z');
  }
  SUBCASE("pipelined queries are answered in order") {
    RawClient c(ts.port());
    REQUIRE(rawStartup(c));
    c.send(queryMessage("select 'one'") + queryMessage("select 'two'"));
    auto first = c.readUntilReady();
    auto second = c.readUntilReady();
    REQUIRE(first.size() == 4);  // T, D, C, Z
    REQUIRE(second.size() == 4);
    CHECK(first[1].body.find("one") != std::string::npos);
    CHECK(second[1].body.find("two") != std::string::npos);
  }
  SUBCASE("extended protocol: one error, then messages are skipped until Sync") {
    RawClient c(ts.port());
    REQUIRE(rawStartup(c));
    c.send(frontendMessage('P', std::string("\0select 1\0\0\0", 12)) +
           frontendMessage('B', std::string("\0\0\0\0\0\0\0\0", 8)) +
           frontendMessage('E', std::string("\0\0\0\0\0", 5)) + frontendMessage('S', ""));
    auto msgs = c.readUntilReady();
    REQUIRE(msgs.size() == 2);
    CHECK(msgs[0].type == 'E');
    CHECK(msgs[0].errorField('C') == "0A000");
    CHECK(msgs[1].type == 'Z');
    c.send(queryMessage("select 'fine'"));
    auto after = c.readUntilReady();
    REQUIRE(after.size() == 4);
    CHECK(after[1].body.find("fine") != std::string::npos);
  }
  SUBCASE("Terminate closes the connection") {
    RawClient c(ts.port());
    REQUIRE(rawStartup(c));
    c.send(frontendMessage('X', ""));
    CHECK(c.closedByServer());
  }
}

TEST_CASE("pgwire: stop() closes sessions and cancels running statements") {
  TestServer ts;
  PgConn idle(ts.conninfo());
  PgConn busy(ts.conninfo());
  REQUIRE(idle.ok());
  REQUIRE(busy.ok());
  REQUIRE(PQsendQuery(busy.c, "sleep") == 1);
  REQUIRE(eventually([&] { return ts.handler.running.load() == 1; }));
  ts.server->stop();
  CHECK(eventually([&] { return ts.handler.cancelObserved.load() == 1; }));
  CHECK(eventually([&] { return ts.handler.openSessions.load() == 0; }));
  PgResult res(PQexec(idle.c, "select 'x'"));
  CHECK(res.status() == PGRES_FATAL_ERROR);
  CHECK(PQstatus(idle.c) == CONNECTION_BAD);
}

TEST_CASE("pgwire: psql works against the server") {
  if (access("/usr/bin/psql", X_OK) != 0) {
    MESSAGE("psql is not installed; skipping");
    return;
  }
  TestServer ts;
  const std::string base = "timeout 20 /usr/bin/psql -X -A -t -h 127.0.0.1 -p " +
                           std::to_string(ts.port()) + " -U alice -d flows ";
  auto run = [](const std::string& cmd, int& status) {
    std::string out;
    FILE* p = popen((cmd + " 2>&1").c_str(), "r");
    REQUIRE(p != nullptr);
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    status = pclose(p);
    return out;
  };
  int status = 0;
  std::string out = run(base + "-c \"select 'hello'\"", status);
  CHECK(status == 0);
  CHECK(out == "hello\n");

  out = run(base + "-c \"rows 3\"", status);
  CHECK(status == 0);
  CHECK(out == "0|even\n1|\n2|even\n");

  out = run(base + "-v ON_ERROR_STOP=1 -c \"fail oops\"", status);
  CHECK(status != 0);
  CHECK(out.find("ERROR:  syntax error at or near \"oops\"") != std::string::npos);
  CHECK(out.find("HINT:  Check the spelling.") != std::string::npos);
}
