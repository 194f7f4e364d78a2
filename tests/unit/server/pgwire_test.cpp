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

#include "server/pgwire/codec.h"
#include "server/pgwire/extended.h"
#include "server/pgwire/framing.h"
#include "server/pgwire/server.h"
#include "server/pgwire/worker_pool.h"
#include "server/query_handler.h"
#include "server_test_util.h"

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
  std::atomic<int> liveRunning{0};
  std::mutex mu;
  std::string lastUser;
  std::string lastDatabase;
  std::string lastStatement;
  // Statements run (each of a multi-statement query counts).
  std::atomic<int> executions{0};
  // When set, describe() tells the columns of "select rows" and "select echo"
  // without running them, as the engine does.
  std::atomic<bool> canDescribe{false};
  std::atomic<int> describes{0};

  std::optional<std::vector<ResultColumn>> describe(Session&, const std::string& sql) override {
    if (!canDescribe.load()) return std::nullopt;
    ++describes;
    const std::string stmt = trim(sql);
    if (stmt.rfind("select rows ", 0) == 0) {
      return std::vector<ResultColumn>{{"n", pgtype::kInt8}, {"parity", pgtype::kText}};
    }
    if (stmt.rfind("select echo ", 0) == 0) {
      return std::vector<ResultColumn>{{"echo", pgtype::kText}};
    }
    if (stmt == "select describe boom") throw std::runtime_error("describe boom");
    if (stmt.rfind("select nope", 0) == 0) {
      throw SqlError(sqlstate::kUndefinedTable, "relation \"nope\" does not exist",
                     sql.find("nope"));
    }
    if (stmt.rfind("select", 0) != 0) return std::vector<ResultColumn>{};
    return std::nullopt;
  }

  // prepare(): "select prepared ..." has a prepared form that returns its
  // parameters' literals; with `declinePrepared` that form declines to run
  // and the text runs instead. What prepare() was given, and how often.
  std::atomic<bool> declinePrepared{false};
  std::atomic<int> prepares{0};
  std::atomic<int> preparedRuns{0};
  // With `answerNow` the prepared form answers at once (executeNow) too:
  // how often it did; a first literal 'bad' answers 22P02.
  std::atomic<bool> answerNow{false};
  std::atomic<int> nowRuns{0};
  std::string preparedText;
  std::vector<ParameterAt> preparedParameters;

  class Prepared final : public PreparedQuery {
   public:
    explicit Prepared(FakeHandler& h) : h_(h) {}
    const std::vector<ResultColumn>& columns() const override { return columns_; }
    bool execute(Session&, const std::vector<std::string>& literals, ResultWriter& out) override {
      if (h_.declinePrepared.load()) return false;
      ++h_.preparedRuns;
      std::string joined;
      for (const std::string& l : literals) joined += (joined.empty() ? "" : ",") + l;
      out.columns(columns_);
      out.row({joined});
      out.complete("SELECT 1");
      return true;
    }
    bool executeNow(Session&, const std::vector<std::string>& literals,
                    ResultWriter& out) override {
      if (!h_.answerNow.load()) return false;
      ++h_.nowRuns;
      if (!literals.empty() && literals[0] == "'bad'") {
        out.error(SqlError(sqlstate::kInvalidTextRepresentation, "bad key"));
        return true;
      }
      out.columns(columns_);
      out.row({"now " + (literals.empty() ? std::string() : literals[0])});
      out.complete("SELECT 1");
      return true;
    }

   private:
    FakeHandler& h_;
    const std::vector<ResultColumn> columns_{{"literals", pgtype::kText}};
  };

  std::shared_ptr<PreparedQuery> prepare(Session&, const std::string& text,
                                         const std::vector<ParameterAt>& parameters) override {
    if (text.rfind("select prepared", 0) != 0) return nullptr;
    ++prepares;
    std::lock_guard lock(mu);
    preparedText = text;
    preparedParameters = parameters;
    return std::make_shared<Prepared>(*this);
  }

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
      if (!stmt.empty()) {
        ++executions;
        {
          std::lock_guard lock(mu);
          lastStatement = stmt;
        }
        if (!runOne(stmt, stmtOffset, out)) return;
      }
      start = end + 1;
    }
  }

 private:
  // Returns false after reporting an error (execution stops there).
  bool runOne(const std::string& stmt, size_t offset, ResultWriter& out) {
    // "select echo TEXT" returns TEXT: what the statement became after its
    // parameters were substituted.
    if (stmt.rfind("select echo ", 0) == 0) {
      out.columns({{"echo", pgtype::kText}});
      out.row({stmt.substr(12)});
      out.complete("SELECT 1");
      return true;
    }
    if (stmt.rfind("select rows ", 0) == 0) return runOne(stmt.substr(7), offset + 7, out);
    if (stmt == "select interval") {
      out.columns({{"i", pgtype::kInterval}});
      out.row({std::string("00:00:01")});
      out.complete("SELECT 1");
      return true;
    }
    // An error at the statement's last character, to check positions.
    if (stmt.rfind("select errlast ", 0) == 0) {
      out.error(SqlError(sqlstate::kSyntaxError, "error at the end", offset + stmt.size() - 1));
      return false;
    }
    if (stmt.rfind("select '", 0) == 0) {
      const size_t close = stmt.find('\'', 8);
      out.columns({{"?column?", pgtype::kText}});
      out.row({stmt.substr(8, close - 8)});
      out.complete("SELECT 1");
      return true;
    }
    if (stmt.rfind("rows ", 0) == 0) {
      // The count may arrive quoted ('3', from an untyped parameter) or as
      // NULL (a statement described before its parameters are known).
      std::string digits;
      for (char ch : stmt.substr(5)) {
        if (std::isdigit(static_cast<unsigned char>(ch))) digits.push_back(ch);
      }
      const long n = digits.empty() ? 0 : std::stol(digits);
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
    if (stmt == "throw internal") throw InternalError("invariant broken");
    if (stmt == "throw other") throw 42;
    // The throwing statements again, with a SELECT's first keyword, so that
    // the extended protocol runs them to describe them.
    if (stmt.rfind("select throw", 0) == 0) return runOne(stmt.substr(7), offset + 7, out);
    if (stmt == "sleep") return sleepUntilCancelled(out);
    if (stmt == "select live") return liveUntilCancelled(out);
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

  // Rows 0, 1, 2, ... with a cancelled() check after each, as a live query
  // streams them, until the writer says stop.
  bool liveUntilCancelled(ResultWriter& out) {
    ++liveRunning;
    out.columns({{"n", pgtype::kInt8}});
    const auto deadline = std::chrono::steady_clock::now() + 20s;
    long n = 0;
    while (std::chrono::steady_clock::now() < deadline && !out.cancelled()) {
      out.row({std::to_string(n++)});
      std::this_thread::sleep_for(1ms);
    }
    out.complete("SELECT " + std::to_string(n));
    --liveRunning;
    return true;
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
using testing::eventually;

using TestServer = testing::BasicTestServer<FakeHandler>;

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

using testing::RawClient;
using testing::RawMessage;

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
  // And back: the byte where a character a server points at begins.
  CHECK(byteOffsetOfPosition("select 1", 1) == 0);
  CHECK(byteOffsetOfPosition("select 1", 8) == 7);
  CHECK(byteOffsetOfPosition("\xC3\xA9x", 2) == 2);
  CHECK(byteOffsetOfPosition("a\xE2\x82\xAC" "b", 3) == 4);
  CHECK(byteOffsetOfPosition("ab", 9) == 2);
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

TEST_CASE("pgwire: a result too wide for the protocol is refused, not wrapped") {
  std::vector<ResultColumn> cols(40000, ResultColumn{"c", pgtype::kInt4});
  std::string out = "kept";
  try {
    appendRowDescription(out, cols);
    FAIL("expected a SqlError");
  } catch (const SqlError& e) {
    CHECK(e.sqlstate() == "54011");
  }
  std::vector<std::optional<std::string>> values(40000, std::string("1"));
  CHECK_THROWS_AS(appendDataRow(out, values), SqlError);
  CHECK(out == "kept");
  cols.resize(32767);
  appendRowDescription(out, cols);
  CHECK(out.size() > 4);
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
  // Off: a '...' literal reads backslash escapes, so libpq's quoting doubles them.
  CHECK(std::string(PQparameterStatus(conn.c, "standard_conforming_strings")) == "off");
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

TEST_CASE("pgwire: empty queries and notices") {
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
    // Bind: an oversized Query or Parse is skipped and answered with an error
    // instead, but any other message ends the connection.
    c.send(std::string("B") + be32(100000) + std::string(3000, 'x'));
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
  SUBCASE("messages are read whole however the client's writes cut them") {
    RawClient c(ts.port());
    REQUIRE(rawStartup(c));
    // A header cut in two, then its body in pieces.
    const std::string q = queryMessage("select 'cut'");
    c.send(q.substr(0, 3));
    c.send(q.substr(3, 4));
    c.send(q.substr(7));
    auto cut = c.readUntilReady();
    REQUIRE(cut.size() == 4);
    CHECK(cut[1].body.find("cut") != std::string::npos);
    // Many messages in one write, a message larger than the read buffer
    // among them, and the last one cut across two writes.
    std::string many;
    for (int i = 0; i < 100; ++i) many += queryMessage("select 'q" + std::to_string(i) + "'");
    const std::string big(40000, 'x');
    many += queryMessage("select '" + big + "'");
    const std::string last = queryMessage("select 'last'");
    many += last.substr(0, 9);
    c.send(many);
    c.send(last.substr(9));
    for (int i = 0; i < 100; ++i) {
      auto msgs = c.readUntilReady();
      REQUIRE(msgs.size() == 4);
      CHECK(msgs[1].body.find("q" + std::to_string(i)) != std::string::npos);
    }
    auto large = c.readUntilReady();
    REQUIRE(large.size() == 4);
    CHECK(large[1].body.find(big) != std::string::npos);
    auto end = c.readUntilReady();
    REQUIRE(end.size() == 4);
    CHECK(end[1].body.find("last") != std::string::npos);
  }
  SUBCASE("extended protocol: one error, then messages are skipped until Sync") {
    RawClient c(ts.port());
    REQUIRE(rawStartup(c));
    // The unknown fake statement fails at Execute; the second Execute is
    // skipped, and Sync ends the exchange.
    c.send(frontendMessage('P', std::string("\0select 1\0\0\0", 12)) +
           frontendMessage('B', std::string("\0\0\0\0\0\0\0\0", 8)) +
           frontendMessage('E', std::string("\0\0\0\0\0", 5)) +
           frontendMessage('E', std::string("\0\0\0\0\0", 5)) + frontendMessage('S', ""));
    auto msgs = c.readUntilReady();
    REQUIRE(msgs.size() == 4);
    CHECK(msgs[0].type == '1');
    CHECK(msgs[1].type == '2');
    CHECK(msgs[2].type == 'E');
    CHECK(msgs[2].errorField('C') == "42601");
    CHECK(msgs[3].type == 'Z');
    CHECK(msgs[3].body == "I");
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

// ---- Extended query protocol -----------------------------------------------------------

namespace {

std::string be16(uint16_t v) {
  return std::string{static_cast<char>(v >> 8), static_cast<char>(v & 0xFF)};
}

std::string cstr(std::string_view s) { return std::string(s) + '\0'; }

std::string parseMessage(std::string_view name, std::string_view sql,
                         const std::vector<uint32_t>& types = {}) {
  std::string body = cstr(name) + cstr(sql) + be16(static_cast<uint16_t>(types.size()));
  for (uint32_t t : types) body += be32(t);
  return frontendMessage('P', body);
}

std::string bindMessage(std::string_view portal, std::string_view stmt,
                        const std::vector<std::optional<std::string>>& params = {},
                        const std::vector<int16_t>& resultFormats = {}) {
  std::string body = cstr(portal) + cstr(stmt) + be16(0) +
                     be16(static_cast<uint16_t>(params.size()));
  for (const auto& p : params) {
    if (!p) {
      body += be32(0xFFFFFFFF);
    } else {
      body += be32(static_cast<uint32_t>(p->size())) + *p;
    }
  }
  body += be16(static_cast<uint16_t>(resultFormats.size()));
  for (int16_t f : resultFormats) body += be16(static_cast<uint16_t>(f));
  return frontendMessage('B', body);
}

std::string describeMessage(char kind, std::string_view name) {
  return frontendMessage('D', std::string(1, kind) + cstr(name));
}

std::string executeMessage(std::string_view portal, uint32_t maxRows) {
  return frontendMessage('E', cstr(portal) + be32(maxRows));
}

std::string syncMessage() { return frontendMessage('S', ""); }

std::string types(const std::vector<RawMessage>& msgs) {
  std::string t;
  for (const auto& m : msgs) t.push_back(m.type);
  return t;
}

// The values of a DataRow body (nullopt for NULL).
std::vector<std::optional<std::string>> dataRowValues(const RawMessage& m) {
  std::vector<std::optional<std::string>> out;
  const auto* p = reinterpret_cast<const unsigned char*>(m.body.data());
  const size_t n = static_cast<size_t>((p[0] << 8) | p[1]);
  size_t at = 2;
  for (size_t i = 0; i < n; ++i) {
    const uint32_t len = readBigEndian32(p + at);
    at += 4;
    if (len == 0xFFFFFFFF) {
      out.emplace_back(std::nullopt);
      continue;
    }
    out.emplace_back(m.body.substr(at, len));
    at += len;
  }
  return out;
}

std::string bytesOf(std::initializer_list<int> bytes) {
  std::string s;
  for (int b : bytes) s.push_back(static_cast<char>(b));
  return s;
}

}  // namespace

TEST_CASE("pgwire extended: parameters are found outside quotes, comments and names") {
  CHECK(countParameters("select 1") == 0);
  CHECK(countParameters("select $1 + $3, $2") == 3);
  CHECK(countParameters("select '$1', \"$2\", `$3` -- $4\n /* $5 */ from t$6") == 0);
  CHECK(countParameters("select $2::int") == 2);
  try {
    countParameters("select $0");
    FAIL("expected an error");
  } catch (const SqlError& e) {
    CHECK(e.sqlstate() == "42P02");
    CHECK(e.position() == 7);
  }

  BoundStatement b = substituteParameters("select $1 || $2 || 'x' from t where $1 = z",
                                          {"'it''s'", "NULL"});
  CHECK(b.text == "select 'it''s' || NULL || 'x' from t where 'it''s' = z");
  // Offsets before, inside and after a literal map to the original text.
  CHECK(b.originalOffset(0) == 0);
  CHECK(b.originalOffset(7) == 7);    // the first literal -> its $1
  CHECK(b.originalOffset(12) == 7);
  CHECK(b.originalOffset(15) == 10);  // "||" after the literal
  const std::string original = "select $1 || $2 || 'x' from t where $1 = z";
  CHECK(b.originalOffset(b.text.find("= z") + 2) == original.find("= z") + 2);
  CHECK_THROWS_AS(substituteParameters("select $2", {"1"}), SqlError);
}

TEST_CASE("pgwire extended: parameter values become SQL literals") {
  CHECK(parameterLiteral(std::nullopt, pgtype::kInt4, kTextFormat) == "NULL");
  CHECK(parameterLiteral(std::string("it's"), extype::kUnspecified, kTextFormat) == "'it''s'");
  // A backslash: an E'...' string, which reads the same whether the session
  // reads escapes in '...' or keeps backslashes as written.
  CHECK(parameterLiteral(std::string("a\\b"), pgtype::kText, kTextFormat) == "E'a\\\\b'");
  CHECK(parameterLiteral(std::string("it's\\"), pgtype::kText, kTextFormat) == "E'it''s\\\\'");
  CHECK(parameterLiteral(std::string(" 42 "), pgtype::kInt4, kTextFormat) == "42");
  CHECK(parameterLiteral(std::string("-5"), pgtype::kInt8, kTextFormat) == "(-5)");
  CHECK(parameterLiteral(std::string("2.5"), pgtype::kFloat8, kTextFormat) ==
        "CAST(2.5 AS DOUBLE)");
  CHECK(parameterLiteral(std::string("NaN"), pgtype::kFloat8, kTextFormat) ==
        "CAST('NaN' AS DOUBLE)");
  CHECK(parameterLiteral(std::string("1.5e3"), extype::kNumeric, kTextFormat) == "1.5e3");
  CHECK(parameterLiteral(std::string("yes"), pgtype::kBool, kTextFormat) == "TRUE");
  CHECK(parameterLiteral(std::string("f"), pgtype::kBool, kTextFormat) == "FALSE");
  CHECK(parameterLiteral(std::string("2024-01-02 03:04:05"), pgtype::kTimestamp, kTextFormat) ==
        "TIMESTAMP '2024-01-02 03:04:05'");
  CHECK(parameterLiteral(std::string("2024-01-02 03:04:05+01"), pgtype::kTimestamptz,
                         kTextFormat) == "TIMESTAMP '2024-01-02 03:04:05+01'");
  // A value that does not fit its declared type is the client's error.
  for (auto [value, type] : {std::pair{"4x", pgtype::kInt4}, std::pair{"1; drop", pgtype::kInt8},
                             std::pair{"maybe", pgtype::kBool}, std::pair{"1e", pgtype::kFloat8}}) {
    try {
      parameterLiteral(std::string(value), type, kTextFormat);
      FAIL("expected an error for " << value);
    } catch (const SqlError& e) {
      CHECK(e.sqlstate() == "22P02");
    }
  }

  // Binary parameters, big-endian.
  CHECK(parameterLiteral(bytesOf({0xFF, 0xF9}), extype::kInt2, kBinaryFormat) == "(-7)");
  CHECK(parameterLiteral(bytesOf({0, 0, 0, 41}), pgtype::kInt4, kBinaryFormat) == "41");
  CHECK(parameterLiteral(bytesOf({0, 0, 0, 1, 0, 0, 0, 0}), pgtype::kInt8, kBinaryFormat) ==
        "4294967296");
  CHECK(parameterLiteral(bytesOf({0x40, 0x04, 0, 0, 0, 0, 0, 0}), pgtype::kFloat8, kBinaryFormat) ==
        "CAST(2.5 AS DOUBLE)");
  CHECK(parameterLiteral(bytesOf({1}), pgtype::kBool, kBinaryFormat) == "TRUE");
  CHECK(parameterLiteral(std::string("o'k"), pgtype::kText, kBinaryFormat) == "'o''k'");
  // A timestamptz is microseconds since 2000-01-01 UTC: the instant with its Z;
  // a timestamp the wall clock, read as its text form is.
  CHECK(parameterLiteral(bytesOf({0, 0, 0, 0x14, 0x1D, 0xD7, 0x60, 0}), pgtype::kTimestamptz,
                         kBinaryFormat) == "TIMESTAMP '2000-01-02 00:00:00Z'");
  CHECK(parameterLiteral(bytesOf({0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xF0, 0xBD, 0xC0}),
                         pgtype::kTimestamp, kBinaryFormat) == "TIMESTAMP '1999-12-31 23:59:59'");
  try {
    parameterLiteral(bytesOf({0, 1}), pgtype::kInt4, kBinaryFormat);
    FAIL("expected an error");
  } catch (const SqlError& e) {
    CHECK(e.sqlstate() == "08P01");
  }
  try {
    parameterLiteral(bytesOf({0, 1}), pgtype::kInterval, kBinaryFormat);
    FAIL("expected an error");
  } catch (const SqlError& e) {
    CHECK(e.sqlstate() == "0A000");
  }
}

TEST_CASE("pgwire extended: binary result values and statement kinds") {
  CHECK(encodeBinaryValue("-2", pgtype::kInt4) == bytesOf({0xFF, 0xFF, 0xFF, 0xFE}));
  CHECK(encodeBinaryValue("5", pgtype::kInt8) == bytesOf({0, 0, 0, 0, 0, 0, 0, 5}));
  CHECK(encodeBinaryValue("2.5", pgtype::kFloat8) == bytesOf({0x40, 0x04, 0, 0, 0, 0, 0, 0}));
  CHECK(encodeBinaryValue("t", pgtype::kBool) == bytesOf({1}));
  CHECK(encodeBinaryValue("false", pgtype::kBool) == bytesOf({0}));
  CHECK(encodeBinaryValue("h\xC3\xA9", pgtype::kText) == "h\xC3\xA9");
  CHECK(encodeBinaryValue("\\x0aff", pgtype::kBytea) == bytesOf({0x0A, 0xFF}));
  // 2000-01-02 00:00:01.5 is one day and 1.5 s after PostgreSQL's epoch.
  const int64_t micros = 86400LL * 1000000 + 1500000;
  std::string expected;
  for (int i = 7; i >= 0; --i) expected.push_back(static_cast<char>((micros >> (8 * i)) & 0xFF));
  CHECK(encodeBinaryValue("2000-01-02 00:00:01.5", pgtype::kTimestamp) == expected);
  CHECK(encodeBinaryValue("1999-12-31 23:59:59", pgtype::kTimestamp) ==
        bytesOf({0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xF0, 0xBD, 0xC0}));  // -1 s
  // A timestamptz's text has its offset (pgTimestamptzText): the instant is sent.
  CHECK(encodeBinaryValue("2000-01-02 01:00:01.5+01", pgtype::kTimestamptz) == expected);
  CHECK(encodeBinaryValue("2000-01-01 19:30:01.5-04:30", pgtype::kTimestamptz) == expected);
  CHECK(encodeBinaryValue("1999-12-31 23:59:59+00", pgtype::kTimestamptz) ==
        bytesOf({0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xF0, 0xBD, 0xC0}));
  CHECK(encodeBinaryValue("1999-12-31 20:29:07-03:30:52", pgtype::kTimestamptz) ==
        bytesOf({0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xF0, 0xBD, 0xC0}));
  CHECK(encodeBinaryValue("0001-01-01 00:00:00+00 BC", pgtype::kTimestamptz) ==
        encodeBinaryValue("0000-01-01 00:00:00", pgtype::kTimestamp));
  for (const char* bad :
       {"2000-01-02 00:00:00", "2000-01-02 00:00:00+1", "2000-01-02 00:00:00+01:5",
        "2000-01-02 00:00:00+16", "2000-01-02 00:00:00+01:00:00:00"})
    CHECK_THROWS_AS(encodeBinaryValue(bad, pgtype::kTimestamptz), SqlError);
  CHECK_THROWS_AS(encodeBinaryValue("x", pgtype::kInt4), SqlError);
  CHECK_THROWS_AS(encodeBinaryValue("1 day", pgtype::kInterval), SqlError);
  // numeric: digit count, weight, sign, display scale, base-10000 digits.
  CHECK(encodeBinaryValue("-12345.6780", extype::kNumeric) ==
        bytesOf({0, 3, 0, 1, 0x40, 0, 0, 4, 0, 1, 0x09, 0x29, 0x1A, 0x7C}));  // 1 2345 6780
  CHECK(encodeBinaryValue("0.0001", extype::kNumeric) == bytesOf({0, 1, 0xFF, 0xFF, 0, 0, 0, 4, 0, 1}));
  CHECK(encodeBinaryValue("10000", extype::kNumeric) == bytesOf({0, 1, 0, 1, 0, 0, 0, 0, 0, 1}));
  CHECK(encodeBinaryValue("-0.00", extype::kNumeric) == bytesOf({0, 0, 0, 0, 0, 0, 0, 2}));
  CHECK_THROWS_AS(encodeBinaryValue("1e3", extype::kNumeric), SqlError);
  // ... and the same bytes read back as a parameter.
  CHECK(parameterLiteral(bytesOf({0, 3, 0, 1, 0x40, 0, 0, 4, 0, 1, 0x09, 0x29, 0x1A, 0x7C}),
                         extype::kNumeric, kBinaryFormat) == "(-12345.6780)");
  CHECK(parameterLiteral(bytesOf({0, 1, 0xFF, 0xFF, 0, 0, 0, 4, 0, 1}), extype::kNumeric,
                         kBinaryFormat) == "0.0001");
  CHECK(parameterLiteral(bytesOf({0, 1, 0, 1, 0, 0, 0, 0, 0, 1}), extype::kNumeric, kBinaryFormat) ==
        "10000");
  CHECK_THROWS_AS(parameterLiteral(bytesOf({0, 2, 0, 0, 0, 0, 0, 0, 0, 1}), extype::kNumeric,
                                   kBinaryFormat),
                  SqlError);  // two digits announced, one sent

  CHECK(returnsRows("SELECT 1"));
  CHECK(returnsRows("  -- a comment\n /* another */ show flows"));
  CHECK(returnsRows("(select 1)"));
  CHECK(returnsRows("explain select 1"));
  CHECK(returnsRows("DESCRIBE clicks"));
  CHECK(returnsRows("FETCH FORWARD 5 FROM \"c\""));  // a cursor's rows
  CHECK_FALSE(returnsRows("create source s with (x = 'y')"));
  CHECK_FALSE(returnsRows("SET extra_float_digits = 3"));
  CHECK_FALSE(returnsRows(""));

  const std::vector<ResultColumn> cols{{"a", pgtype::kInt8}, {"b", pgtype::kInterval}};
  CHECK(resultFormatsFor({}, cols) == std::vector<int16_t>{0, 0});
  CHECK(resultFormatsFor({1, 0}, cols) == std::vector<int16_t>{1, 0});
  CHECK_THROWS_AS(resultFormatsFor({1}, cols), SqlError);  // interval in binary
  CHECK_THROWS_AS(resultFormatsFor({0, 0, 0}, cols), SqlError);
}

TEST_CASE("pgwire extended: libpq parameters, prepared statements and Describe") {
  TestServer ts;
  PgConn conn(ts.conninfo());
  REQUIRE_MESSAGE(conn.ok(), conn.error());

  SUBCASE("text parameters, NULL and types") {
    const char* values[] = {"it's", "42", nullptr, "-3"};
    const Oid oids[] = {0, 23, 25, 20};
    PgResult res(PQexecParams(conn.c, "select echo $1, $2::int, $3, x-$4", 4, oids, values,
                              nullptr, nullptr, 0));
    REQUIRE_MESSAGE(res.status() == PGRES_TUPLES_OK, PQresultErrorMessage(res.r));
    CHECK(res.value(0, 0) == "'it''s', 42::int, NULL, x-(-3)");
    CHECK(std::string(PQfname(res.r, 0)) == "echo");
    CHECK(res.cmd() == "SELECT 1");
    // libpq sent Parse/Bind/Describe/Execute/Sync: the statement ran once.
    CHECK(ts.handler.executions.load() == 1);
  }
  SUBCASE("binary parameters") {
    const char int4[] = {0, 0, 0, 41};
    const char int8[] = {0, 0, 0, 0, 0, 0, 0, 7};
    const char f8[] = {0x40, 0x04, 0, 0, 0, 0, 0, 0};
    const char b[] = {0};
    const char* values[] = {int4, int8, f8, b, "txt"};
    const int lengths[] = {4, 8, 8, 1, 3};
    const int formats[] = {1, 1, 1, 1, 1};
    const Oid oids[] = {23, 20, 701, 16, 25};
    PgResult res(PQexecParams(conn.c, "select echo $1 $2 $3 $4 $5", 5, oids, values, lengths,
                              formats, 0));
    REQUIRE_MESSAGE(res.status() == PGRES_TUPLES_OK, PQresultErrorMessage(res.r));
    CHECK(res.value(0, 0) == "41 7 CAST(2.5 AS DOUBLE) FALSE 'txt'");
  }
  SUBCASE("a bad parameter value is an error; the connection goes on") {
    const char* values[] = {"4x"};
    const Oid oids[] = {23};
    PgResult bad(PQexecParams(conn.c, "select echo $1", 1, oids, values, nullptr, nullptr, 0));
    CHECK(bad.status() == PGRES_FATAL_ERROR);
    CHECK(bad.field(PG_DIAG_SQLSTATE) == "22P02");
    CHECK(bad.field(PG_DIAG_MESSAGE_PRIMARY) == "invalid input syntax for type integer: \"4x\"");
    CHECK(ts.handler.executions.load() == 0);
    PgResult good(PQexec(conn.c, "select 'ok'"));
    CHECK(good.status() == PGRES_TUPLES_OK);
  }
  SUBCASE("error positions refer to the text the client sent") {
    const char* values[] = {"a much longer value"};
    PgResult res(
        PQexecParams(conn.c, "select errlast $1 x", 1, nullptr, values, nullptr, nullptr, 0));
    REQUIRE(res.status() == PGRES_FATAL_ERROR);
    CHECK(res.field(PG_DIAG_STATEMENT_POSITION) == "19");  // the final "x"
    {
      std::lock_guard lock(ts.handler.mu);
      CHECK(ts.handler.lastStatement == "select errlast 'a much longer value' x");
    }
  }
  SUBCASE("prepared statements run many times, each run once") {
    PgResult prep(PQprepare(conn.c, "rows_stmt", "select rows $1", 1, nullptr));
    REQUIRE_MESSAGE(prep.status() == PGRES_COMMAND_OK, PQresultErrorMessage(prep.r));
    CHECK(ts.handler.executions.load() == 0);
    for (int n : {3, 5}) {
      const std::string v = std::to_string(n);
      const char* values[] = {v.c_str()};
      PgResult res(PQexecPrepared(conn.c, "rows_stmt", 1, values, nullptr, nullptr, 0));
      REQUIRE_MESSAGE(res.status() == PGRES_TUPLES_OK, PQresultErrorMessage(res.r));
      CHECK(PQntuples(res.r) == n);
      CHECK(PQnfields(res.r) == 2);
      CHECK(PQftype(res.r, 0) == pgtype::kInt8);
      CHECK(res.value(n - 1, 0) == std::to_string(n - 1));
      CHECK(res.cmd() == "SELECT " + v);
    }
    CHECK(ts.handler.executions.load() == 2);

    PgResult dup(PQprepare(conn.c, "rows_stmt", "select rows 1", 0, nullptr));
    CHECK(dup.status() == PGRES_FATAL_ERROR);
    CHECK(dup.field(PG_DIAG_SQLSTATE) == "42P05");
    PgResult missing(PQexecPrepared(conn.c, "nope", 0, nullptr, nullptr, nullptr, 0));
    CHECK(missing.status() == PGRES_FATAL_ERROR);
    CHECK(missing.field(PG_DIAG_SQLSTATE) == "26000");
    PgResult multi(PQprepare(conn.c, "m", "select 'a'; select 'b'", 0, nullptr));
    CHECK(multi.status() == PGRES_FATAL_ERROR);
    CHECK(multi.field(PG_DIAG_SQLSTATE) == "42601");
    PgResult wrongCount(PQexecPrepared(conn.c, "rows_stmt", 0, nullptr, nullptr, nullptr, 0));
    CHECK(wrongCount.status() == PGRES_FATAL_ERROR);
    CHECK(wrongCount.field(PG_DIAG_SQLSTATE) == "08P01");
    // Every error above was followed by Sync and recovery.
    PgResult after(PQexec(conn.c, "select 'after'"));
    CHECK(after.value(0, 0) == "after");
  }
  SUBCASE("Describe of a statement, by running it when the handler cannot tell") {
    const Oid oids[] = {23};
    PgResult prep(PQprepare(conn.c, "s", "select rows $1", 1, oids));
    REQUIRE(prep.status() == PGRES_COMMAND_OK);
    PgResult desc(PQdescribePrepared(conn.c, "s"));
    REQUIRE_MESSAGE(desc.status() == PGRES_COMMAND_OK, PQresultErrorMessage(desc.r));
    CHECK(PQnparams(desc.r) == 1);
    CHECK(PQparamtype(desc.r, 0) == 23);
    REQUIRE(PQnfields(desc.r) == 2);
    CHECK(std::string(PQfname(desc.r, 0)) == "n");
    CHECK(PQftype(desc.r, 0) == pgtype::kInt8);
    CHECK(std::string(PQfname(desc.r, 1)) == "parity");

    PgResult prep2(PQprepare(conn.c, "c", "create $1", 0, nullptr));
    REQUIRE(prep2.status() == PGRES_COMMAND_OK);
    const int before = ts.handler.executions.load();
    PgResult desc2(PQdescribePrepared(conn.c, "c"));
    REQUIRE(desc2.status() == PGRES_COMMAND_OK);
    CHECK(PQnparams(desc2.r) == 1);
    CHECK(PQparamtype(desc2.r, 0) == pgtype::kText);  // unspecified: text
    CHECK(PQnfields(desc2.r) == 0);                     // NoData, without running it
    CHECK(ts.handler.executions.load() == before);
  }
  SUBCASE("Describe from the handler's describe(), without running") {
    ts.handler.canDescribe = true;
    PgResult prep(PQprepare(conn.c, "s", "select rows $1", 0, nullptr));
    REQUIRE(prep.status() == PGRES_COMMAND_OK);
    PgResult desc(PQdescribePrepared(conn.c, "s"));
    REQUIRE(desc.status() == PGRES_COMMAND_OK);
    CHECK(PQnfields(desc.r) == 2);
    CHECK(ts.handler.executions.load() == 0);
    CHECK(ts.handler.describes.load() == 1);
    const char* values[] = {"4"};
    PgResult res(PQexecPrepared(conn.c, "s", 1, values, nullptr, nullptr, 0));
    REQUIRE(res.status() == PGRES_TUPLES_OK);
    CHECK(PQntuples(res.r) == 4);
    CHECK(ts.handler.executions.load() == 1);

    PgResult bad(PQprepare(conn.c, "b", "select nope", 0, nullptr));
    REQUIRE(bad.status() == PGRES_COMMAND_OK);
    PgResult badDesc(PQdescribePrepared(conn.c, "b"));
    CHECK(badDesc.status() == PGRES_FATAL_ERROR);
    CHECK(badDesc.field(PG_DIAG_SQLSTATE) == "42P01");
    CHECK(badDesc.field(PG_DIAG_STATEMENT_POSITION) == "8");
  }
  SUBCASE("statements without rows and empty statements") {
    PgResult res(PQexecParams(conn.c, "create", 0, nullptr, nullptr, nullptr, nullptr, 0));
    CHECK(res.status() == PGRES_COMMAND_OK);
    CHECK(res.cmd() == "CREATE SOURCE");
    PgResult empty(PQexecParams(conn.c, "", 0, nullptr, nullptr, nullptr, nullptr, 0));
    CHECK(empty.status() == PGRES_EMPTY_QUERY);
  }
  SUBCASE("binary results") {
    const char* values[] = {"3"};
    PgResult res(PQexecParams(conn.c, "select rows $1", 1, nullptr, values, nullptr, nullptr, 1));
    REQUIRE_MESSAGE(res.status() == PGRES_TUPLES_OK, PQresultErrorMessage(res.r));
    CHECK(PQfformat(res.r, 0) == 1);
    REQUIRE(PQgetlength(res.r, 2, 0) == 8);
    CHECK(std::string(PQgetvalue(res.r, 2, 0), 8) == bytesOf({0, 0, 0, 0, 0, 0, 0, 2}));
    CHECK(std::string(PQgetvalue(res.r, 0, 1)) == "even");
    PgResult refused(
        PQexecParams(conn.c, "select interval", 0, nullptr, nullptr, nullptr, nullptr, 1));
    CHECK(refused.status() == PGRES_FATAL_ERROR);
    CHECK(refused.field(PG_DIAG_SQLSTATE) == "0A000");
    CHECK(refused.field(PG_DIAG_MESSAGE_PRIMARY).find("binary format") != std::string::npos);
  }
}

TEST_CASE("pgwire extended: raw exchanges") {
  TestServer ts;
  RawClient c(ts.port());
  REQUIRE(rawStartup(c));

  SUBCASE("an Execute row limit suspends the portal until the next Execute") {
    c.send(parseMessage("", "select rows 5") + bindMessage("p1", "") +
           describeMessage('P', "p1") + executeMessage("p1", 2) + executeMessage("p1", 2) +
           executeMessage("p1", 2) + syncMessage());
    auto msgs = c.readUntilReady();
    CHECK(types(msgs) == "12TDDsDDsDCZ");
    REQUIRE(msgs.size() == 12);
    CHECK(dataRowValues(msgs[3])[0] == "0");
    CHECK(dataRowValues(msgs[6])[0] == "2");
    CHECK(dataRowValues(msgs[9])[0] == "4");
    CHECK(msgs[10].body == cstr("SELECT 5"));
    CHECK(msgs[11].body == "I");
    CHECK(ts.handler.executions.load() == 1);
    // Sync ended the portal.
    c.send(executeMessage("p1", 0) + syncMessage());
    auto after = c.readUntilReady();
    CHECK(types(after) == "EZ");
    CHECK(after[0].errorField('C') == "34000");
  }
  SUBCASE("a row limit suspends a live query; the next Execute goes on, Sync ends it") {
    c.send(parseMessage("", "select live") + bindMessage("p", "") + describeMessage('P', "p") +
           executeMessage("p", 1) + frontendMessage('H', ""));
    std::vector<RawMessage> first;
    for (int i = 0; i < 5; ++i) {
      auto m = c.readMessage();
      REQUIRE(m);
      first.push_back(*m);
      if (m->type == 's') break;
    }
    CHECK(types(first) == "12TDs");
    CHECK(dataRowValues(first[3])[0] == "0");
    CHECK(ts.handler.liveRunning.load() == 1);
    // The live query waits for the next Execute, which takes up where it was.
    c.send(executeMessage("p", 2) + frontendMessage('H', ""));
    std::vector<RawMessage> next;
    for (int i = 0; i < 3; ++i) {
      auto m = c.readMessage();
      REQUIRE(m);
      next.push_back(*m);
    }
    CHECK(types(next) == "DDs");
    CHECK(dataRowValues(next[0])[0] == "1");
    CHECK(dataRowValues(next[1])[0] == "2");
    // A Describe of the portal leaves it suspended.
    c.send(describeMessage('P', "p") + executeMessage("p", 1) + syncMessage());
    auto last = c.readUntilReady();
    CHECK(types(last) == "TDsZ");
    CHECK(dataRowValues(last[1])[0] == "3");
    CHECK(eventually([&] { return ts.handler.liveRunning.load() == 0; }));
    // The connection goes on as usual.
    c.send(queryMessage("select 'after'"));
    CHECK(types(c.readUntilReady()) == "TDCZ");
  }
  SUBCASE("any other statement ends a suspended live query first; so does a disconnect") {
    c.send(parseMessage("", "select live") + bindMessage("p", "") + executeMessage("p", 2) +
           frontendMessage('H', ""));
    std::vector<RawMessage> first;
    for (int i = 0; i < 5; ++i) {
      auto m = c.readMessage();
      REQUIRE(m);
      first.push_back(*m);
    }
    CHECK(types(first) == "12DDs");
    c.send(queryMessage("select 'other'"));
    CHECK(types(c.readUntilReady()) == "TDCZ");
    CHECK(ts.handler.liveRunning.load() == 0);
    // The portal has ended: Executing it again returns no more rows.
    c.send(executeMessage("p", 0) + syncMessage());
    auto again = c.readUntilReady();
    CHECK(types(again) == "CZ");
    CHECK(again[0].body == cstr("SELECT 0"));

    c.send(parseMessage("", "select live") + bindMessage("q", "") + executeMessage("q", 1) +
           frontendMessage('H', ""));
    for (int i = 0; i < 4; ++i) REQUIRE(c.readMessage());
    CHECK(ts.handler.liveRunning.load() == 1);
    c.close();
    CHECK(eventually([&] { return ts.handler.liveRunning.load() == 0; }));
    CHECK(eventually([&] { return ts.handler.openSessions.load() == 0; }));
  }
  SUBCASE("a Describe followed by Flush is answered before the Execute") {
    c.send(parseMessage("s", "select rows 2") + bindMessage("", "s") + describeMessage('P', "") +
           frontendMessage('H', ""));
    std::string seen;
    for (int i = 0; i < 3; ++i) {
      auto m = c.readMessage();
      REQUIRE(m);
      seen.push_back(m->type);
    }
    CHECK(seen == "12T");
    c.send(executeMessage("", 0) + syncMessage());
    CHECK(types(c.readUntilReady()) == "DDCZ");
    // The Describe ran the statement to learn its columns, then Execute again.
    CHECK(ts.handler.executions.load() == 2);
  }
  SUBCASE("after an error every message up to Sync is skipped") {
    c.send(parseMessage("a", "select rows 1") + bindMessage("", "missing") +
           executeMessage("", 0) + parseMessage("b", "select rows 1") + syncMessage());
    auto msgs = c.readUntilReady();
    CHECK(types(msgs) == "1EZ");
    CHECK(msgs[1].errorField('C') == "26000");
    CHECK(msgs[1].errorField('M') == "prepared statement \"missing\" does not exist");
    // "a" survived, "b" was never parsed.
    c.send(bindMessage("", "a") + executeMessage("", 0) + bindMessage("", "b") + syncMessage());
    auto next = c.readUntilReady();
    CHECK(types(next) == "2DCEZ");
  }
  SUBCASE("Close and unknown portals") {
    c.send(parseMessage("s", "select 'x'") + frontendMessage('C', "Ss" + std::string(1, '\0')) +
           frontendMessage('C', "Pnever" + std::string(1, '\0')) + syncMessage());
    CHECK(types(c.readUntilReady()) == "133Z");
    c.send(describeMessage('S', "s") + syncMessage());
    auto msgs = c.readUntilReady();
    CHECK(types(msgs) == "EZ");
    CHECK(msgs[0].errorField('C') == "26000");
  }
  SUBCASE("a malformed Bind is a protocol error that Sync recovers from") {
    c.send(frontendMessage('B', std::string("\0\0\0", 3)) + syncMessage());
    auto msgs = c.readUntilReady();
    CHECK(types(msgs) == "EZ");
    CHECK(msgs[0].errorField('C') == "08P01");
    c.send(queryMessage("select 'fine'"));
    CHECK(types(c.readUntilReady()) == "TDCZ");
  }
}

TEST_CASE("pgwire extended: a statement the handler prepared runs without its text") {
  TestServer ts;
  PgConn conn(ts.conninfo());
  REQUIRE_MESSAGE(conn.ok(), conn.error());
  PgResult prep(PQprepare(conn.c, "p", "select prepared $2, $1", 2, nullptr));
  REQUIRE_MESSAGE(prep.status() == PGRES_COMMAND_OK, PQresultErrorMessage(prep.r));
  // Described from the prepared form: the handler's describe() is not asked.
  PgResult desc(PQdescribePrepared(conn.c, "p"));
  REQUIRE(desc.status() == PGRES_COMMAND_OK);
  REQUIRE(PQnfields(desc.r) == 1);
  CHECK(std::string(PQfname(desc.r, 0)) == "literals");
  for (int i = 0; i < 3; ++i) {
    const char* values[] = {"it's", i == 1 ? nullptr : "7"};
    PgResult res(PQexecPrepared(conn.c, "p", 2, values, nullptr, nullptr, 0));
    REQUIRE_MESSAGE(res.status() == PGRES_TUPLES_OK, PQresultErrorMessage(res.r));
    CHECK(res.value(0, 0) == (i == 1 ? "'it''s',NULL" : "'it''s','7'"));
  }
  // Prepared once; no Execute ran the text.
  CHECK(ts.handler.prepares.load() == 1);
  CHECK(ts.handler.preparedRuns.load() == 3);
  CHECK(ts.handler.executions.load() == 0);
  CHECK(ts.handler.describes.load() == 0);
  {
    std::lock_guard lock(ts.handler.mu);
    CHECK(ts.handler.preparedText == "select prepared NULL, NULL");
    REQUIRE(ts.handler.preparedParameters.size() == 2);
    CHECK(ts.handler.preparedParameters[0].at == 16);  // $2's NULL
    CHECK(ts.handler.preparedParameters[0].index == 1);
    CHECK(ts.handler.preparedParameters[1].at == 22);  // $1's NULL
    CHECK(ts.handler.preparedParameters[1].index == 0);
  }
  // A prepared form that declines leaves the text to run.
  ts.handler.declinePrepared = true;
  const char* values[] = {"a", "b"};
  PgResult res(PQexecPrepared(conn.c, "p", 2, values, nullptr, nullptr, 0));
  CHECK(ts.handler.executions.load() == 1);
  CHECK(ts.handler.preparedRuns.load() == 3);
  {
    std::lock_guard lock(ts.handler.mu);
    CHECK(ts.handler.lastStatement == "select prepared 'b', 'a'");
  }
}

TEST_CASE("pgwire extended: a prepared statement that answers at once needs no worker") {
  TestServer ts;
  ts.handler.answerNow = true;
  PgConn conn(ts.conninfo());
  REQUIRE_MESSAGE(conn.ok(), conn.error());
  PgResult prep(PQprepare(conn.c, "p", "select prepared $1", 1, nullptr));
  REQUIRE_MESSAGE(prep.status() == PGRES_COMMAND_OK, PQresultErrorMessage(prep.r));
  auto run = [&](const char* key) {
    const char* values[] = {key};
    return PgResult(PQexecPrepared(conn.c, "p", 1, values, nullptr, nullptr, 0));
  };
  {
    // The first Execute prepares it, on a worker, which runs it too.
    PgResult res = run("a");
    REQUIRE_MESSAGE(res.status() == PGRES_TUPLES_OK, PQresultErrorMessage(res.r));
    CHECK(res.value(0, 0) == "'a'");
  }
  for (const char* key : {"b", "c"}) {
    // Then the connection answers it at once, columns and all.
    PgResult res = run(key);
    REQUIRE_MESSAGE(res.status() == PGRES_TUPLES_OK, PQresultErrorMessage(res.r));
    REQUIRE(PQnfields(res.r) == 1);
    CHECK(std::string(PQfname(res.r, 0)) == "literals");
    CHECK(res.value(0, 0) == "now '" + std::string(key) + "'");
  }
  CHECK(ts.handler.prepares.load() == 1);
  CHECK(ts.handler.preparedRuns.load() == 1);
  CHECK(ts.handler.nowRuns.load() == 2);
  {
    // An error it answers ends the exchange as any other; the next one runs.
    PgResult res = run("bad");
    REQUIRE(res.status() == PGRES_FATAL_ERROR);
    CHECK(std::string(PQresultErrorField(res.r, PG_DIAG_SQLSTATE)) == "22P02");
    PgResult again = run("d");
    REQUIRE_MESSAGE(again.status() == PGRES_TUPLES_OK, PQresultErrorMessage(again.r));
    CHECK(again.value(0, 0) == "now 'd'");
  }
  // One that cannot answer at once runs on a worker.
  ts.handler.answerNow = false;
  PgResult res = run("e");
  REQUIRE_MESSAGE(res.status() == PGRES_TUPLES_OK, PQresultErrorMessage(res.r));
  CHECK(res.value(0, 0) == "'e'");
  CHECK(ts.handler.preparedRuns.load() == 2);
  CHECK(ts.handler.nowRuns.load() == 4);
  CHECK(ts.handler.executions.load() == 0);
}

// A client that sends many lookups without reading their answers, then
// reads them all: every answer arrives, in order; meanwhile the connection
// holds a bounded amount of them (it reads no more messages until the
// client takes some), and the server answers its other clients. Both with
// the connections on the caller's io_context and on the server's own I/O
// threads.
TEST_CASE("pgwire extended: pipelined lookups and a client that reads late") {
  for (size_t ioThreads : {size_t{0}, size_t{2}}) {
    CAPTURE(ioThreads);
    PgServerOptions o;
    o.ioThreads = ioThreads;
    o.maxOutputBytes = 64 * 1024;
    TestServer ts(o);
    ts.handler.answerNow = true;
    RawClient c(ts.port());
    REQUIRE(rawStartup(c));
    // The first Execute prepares the statement (on a worker); the others
    // are answered on the connection's thread.
    c.send(parseMessage("s", "select prepared $1") +
           bindMessage("", "s", {std::string("first")}) + executeMessage("", 0) + syncMessage());
    REQUIRE(types(c.readUntilReady()) == "12DCZ");

    // 120 MB of lookups, more than the sockets' buffers on both sides hold
    // (a loopback receive buffer grows to 32 MB), each with a 10 kB key
    // whose answer repeats it.
    constexpr int kLookups = 12000;
    const std::string pad(10000, 'x');
    auto exchange = [&](int i) {
      return bindMessage("", "s", {std::to_string(i) + pad}) + executeMessage("", 0) +
             syncMessage();
    };
    size_t total = 0;
    for (int i = 0; i < kLookups; ++i) total += exchange(i).size();
    std::atomic<size_t> sent{0};
    std::thread sender([&] {
      std::string batch;
      for (int i = 0; i < kLookups; ++i) {
        batch += exchange(i);
        if (batch.size() >= 256 * 1024 || i + 1 == kLookups) {
          c.send(batch, sent);
          batch.clear();
        }
      }
    });
    // The sender stops: the server no longer reads, its answers unread.
    size_t last = 0;
    auto since = std::chrono::steady_clock::now();
    const bool stalled = eventually(
        [&] {
          const size_t now = sent.load();
          if (now != last) {
            last = now;
            since = std::chrono::steady_clock::now();
            return false;
          }
          return std::chrono::steady_clock::now() - since > 500ms;
        },
        60s);
    CHECK(stalled);
    CHECK(sent.load() < total);
    {
      // Another client is answered meanwhile.
      PgConn other(ts.conninfo());
      REQUIRE_MESSAGE(other.ok(), other.error());
      PgResult res(PQexec(other.c, "select echo hello"));
      REQUIRE_MESSAGE(res.status() == PGRES_TUPLES_OK, PQresultErrorMessage(res.r));
      CHECK(res.value(0, 0) == "hello");
    }
    // Every answer, in order.
    int answered = 0;
    for (int i = 0; i < kLookups; ++i) {
      std::vector<RawMessage> msgs = c.readUntilReady();
      if (types(msgs) != "2DCZ") {
        FAIL_CHECK("lookup " << i << " answered " << types(msgs));
        break;
      }
      const std::optional<std::string> value = dataRowValues(msgs[1])[0];
      if (value != "now '" + std::to_string(i) + pad + "'") {
        FAIL_CHECK("lookup " << i << " answered another key");
        break;
      }
      ++answered;
    }
    sender.join();
    CHECK(answered == kLookups);
    CHECK(sent.load() == total);
    CHECK(ts.handler.nowRuns.load() == kLookups);
  }
}

TEST_CASE("pgwire extended: DEALLOCATE drops prepared statements in the protocol layer") {
  CHECK(deallocateTarget("DEALLOCATE ALL") == std::string());
  CHECK(deallocateTarget(" deallocate prepare _pg3_0 ;") == "_pg3_0");
  CHECK(deallocateTarget("DEALLOCATE \"Mixed Case\"") == "Mixed Case");
  CHECK(deallocateTarget("DEALLOCATE Foo") == "foo");
  CHECK_FALSE(deallocateTarget("select 1"));
  CHECK_FALSE(deallocateTarget("DEALLOCATE"));
  CHECK_FALSE(deallocateTarget("DEALLOCATE a b"));

  TestServer ts;
  PgConn conn(ts.conninfo());
  REQUIRE_MESSAGE(conn.ok(), conn.error());
  PgResult a(PQprepare(conn.c, "a", "select 'a'", 0, nullptr));
  PgResult b(PQprepare(conn.c, "b", "select 'b'", 0, nullptr));
  REQUIRE(b.status() == PGRES_COMMAND_OK);
  PgResult one(PQexec(conn.c, "DEALLOCATE a"));
  CHECK(one.status() == PGRES_COMMAND_OK);
  CHECK(one.cmd() == "DEALLOCATE");
  PgResult goneA(PQexecPrepared(conn.c, "a", 0, nullptr, nullptr, nullptr, 0));
  CHECK(goneA.field(PG_DIAG_SQLSTATE) == "26000");
  PgResult stillB(PQexecPrepared(conn.c, "b", 0, nullptr, nullptr, nullptr, 0));
  CHECK(stillB.value(0, 0) == "b");
  // Through the extended protocol too, and ALL.
  PgResult all(PQexecParams(conn.c, "DEALLOCATE ALL", 0, nullptr, nullptr, nullptr, nullptr, 0));
  CHECK(all.status() == PGRES_COMMAND_OK);
  CHECK(all.cmd() == "DEALLOCATE ALL");
  PgResult goneB(PQexecPrepared(conn.c, "b", 0, nullptr, nullptr, nullptr, 0));
  CHECK(goneB.field(PG_DIAG_SQLSTATE) == "26000");
  PgResult missing(PQexec(conn.c, "DEALLOCATE nope"));
  CHECK(missing.field(PG_DIAG_SQLSTATE) == "26000");
  // The handler never saw any of it.
  CHECK(ts.handler.executions.load() == 1);
}

TEST_CASE("pgwire: an exception from the handler is the same XX000 error on every path") {
  TestServer ts;
  RawClient c(ts.port());
  REQUIRE(rawStartup(c));
  struct Thrown {
    const char* sql;
    const char* message;
  };
  for (const Thrown& k : {Thrown{"select throw", "boom"},
                          Thrown{"select throw internal", "invariant broken"},
                          Thrown{"select throw other", "unknown internal error"}}) {
    CAPTURE(k.sql);
    // A simple query.
    c.send(queryMessage(k.sql));
    const auto simple = c.readUntilReady();
    REQUIRE(types(simple) == "EZ");
    CHECK(simple[0].errorField('S') == "ERROR");
    CHECK(simple[0].errorField('C') == "XX000");
    CHECK(simple[0].errorField('M') == k.message);
    // Execute of a portal, whose deferred Describe runs with it.
    c.send(parseMessage("", k.sql) + bindMessage("", "") + describeMessage('P', "") +
           executeMessage("", 0) + syncMessage());
    const auto executed = c.readUntilReady();
    REQUIRE(types(executed) == "12EZ");
    CHECK(executed[2].errorField('C') == "XX000");
    CHECK(executed[2].errorField('M') == k.message);
    // Describe of a prepared statement the handler cannot describe: it runs.
    c.send(parseMessage("", k.sql) + describeMessage('S', "") + syncMessage());
    const auto described = c.readUntilReady();
    REQUIRE(types(described) == "1EZ");
    CHECK(described[1].errorField('C') == "XX000");
    CHECK(described[1].errorField('M') == k.message);
  }
  // A handler whose describe() throws, for a statement and for a portal.
  ts.handler.canDescribe = true;
  c.send(parseMessage("", "select describe boom") + describeMessage('S', "") + syncMessage());
  const auto statement = c.readUntilReady();
  REQUIRE(types(statement) == "1EZ");
  CHECK(statement[1].errorField('C') == "XX000");
  CHECK(statement[1].errorField('M') == "describe boom");
  c.send(parseMessage("", "select describe boom") + bindMessage("", "") +
         describeMessage('P', "") + executeMessage("", 0) + syncMessage());
  const auto portal = c.readUntilReady();
  REQUIRE(types(portal) == "12EZ");
  CHECK(portal[2].errorField('C') == "XX000");
  CHECK(portal[2].errorField('M') == "describe boom");
  // The session lives on.
  c.send(queryMessage("select 'alive'"));
  CHECK(types(c.readUntilReady()) == "TDCZ");
}
