// Tests for the describe path of the extended query protocol
// (server/pgwire/describe.h): which columns a statement returns, asked of the
// handler or found by running the statement, and the NoData or RowDescription
// that says so. A small fake handler stands in for the engine.
#include <doctest/doctest.h>

#include <atomic>
#include <stdexcept>
#include <string>

#include "server/pgwire/codec.h"
#include "server/pgwire/describe.h"
#include "server/pgwire/extended.h"
#include "server/query_handler.h"

using namespace rtsql;
using namespace rtsql::pgwire;

namespace {

// Statements: "known" (describe() tells two columns), "command" (describe()
// says no rows), "bad $1" (describe() fails at the word bad), "throws"
// (describe() throws a std::exception); anything else describe() cannot tell
// and execute() decides: "rows" announces a column and then streams rows
// until told to stop, "quiet" completes without rows, "fails" reports an
// error at its last word, after the literal bound to $1, "explodes" throws.
class DescribeHandler : public QueryHandler {
 public:
  int executions = 0;
  int rowsSent = 0;

  std::unique_ptr<Session> openSession(const std::string&, const std::string&) override {
    return std::make_unique<Session>();
  }

  std::optional<std::vector<ResultColumn>> describe(Session&, const std::string& sql) override {
    if (sql == "known") return std::vector<ResultColumn>{{"a", pgtype::kInt8}, {"b", pgtype::kText}};
    if (sql == "command") return std::vector<ResultColumn>{};
    if (sql.rfind("bad ", 0) == 0) throw SqlError(sqlstate::kSyntaxError, "bad word", 0);
    if (sql == "throws") throw std::runtime_error("describe failed");
    return std::nullopt;
  }

  void execute(Session&, const std::string& sql, ResultWriter& out) override {
    ++executions;
    if (sql == "rows") {
      out.columns({{"n", pgtype::kInt4}});
      // At most 100 rows: the probe must stop the run after the columns.
      for (int i = 0; i < 100 && !out.cancelled(); ++i) {
        out.row({std::to_string(i)});
        ++rowsSent;
      }
      out.complete("SELECT");
      return;
    }
    if (sql == "quiet") return out.complete("SET");
    if (sql.rfind("fails ", 0) == 0) {
      return out.error(SqlError(sqlstate::kDivisionByZero, "division by zero", sql.rfind('x')));
    }
    if (sql == "explodes") throw std::runtime_error("execute failed");
    out.error(SqlError(sqlstate::kSyntaxError, "unknown statement"));
  }
};

BoundStatement unbound(const std::string& sql) { return substituteParameters(sql, {}); }

struct DescribeFixture {
  DescribeHandler h;
  Session s;
  std::atomic<bool> gone{false};

  Description describe(const BoundStatement& bound) { return describeStatement(h, s, bound, gone); }
  Description describe(const std::string& sql) { return describe(unbound(sql)); }
};

}  // namespace

TEST_CASE_FIXTURE(DescribeFixture, "pgwire describe: the handler's answer is used without running the statement") {
  const Description known = describe("known");
  REQUIRE(known.columns.has_value());
  CHECK_FALSE(known.error.has_value());
  REQUIRE(known.columns->size() == 2);
  CHECK((*known.columns)[0].name == "a");
  CHECK((*known.columns)[1].typeOid == pgtype::kText);

  const Description command = describe("command");
  REQUIRE(command.columns.has_value());
  CHECK(command.columns->empty());
  CHECK(h.executions == 0);

  // askHandler alone leaves both unset when the handler cannot tell.
  const Description unknown = askHandler(h, s, unbound("rows"));
  CHECK_FALSE(unknown.columns.has_value());
  CHECK_FALSE(unknown.error.has_value());
  CHECK(h.executions == 0);
}

TEST_CASE_FIXTURE(DescribeFixture, "pgwire describe: a statement the handler cannot describe runs until its columns") {
  const Description rows = describe("rows");
  REQUIRE(rows.columns.has_value());
  REQUIRE(rows.columns->size() == 1);
  CHECK((*rows.columns)[0].name == "n");
  CHECK(h.executions == 1);
  CHECK(h.rowsSent == 0);  // stopped as soon as the columns were known

  const Description quiet = describe("quiet");
  REQUIRE(quiet.columns.has_value());
  CHECK(quiet.columns->empty());
}

TEST_CASE_FIXTURE(DescribeFixture, "pgwire describe: errors carry the client's positions, whoever raised them") {
  // The handler reports positions in the substituted text; the client wrote $1.
  const BoundStatement failing = substituteParameters("fails $1 x", {"'long literal'"});
  REQUIRE(failing.text.rfind('x') == 21);
  const Description ran = describe(failing);
  CHECK_FALSE(ran.columns.has_value());
  REQUIRE(ran.error.has_value());
  CHECK(ran.error->sqlstate() == "22012");
  CHECK(ran.error->position() == 9);

  const BoundStatement bad = substituteParameters("bad $1", {"1"});
  const Description asked = describe(bad);
  REQUIRE(asked.error.has_value());
  CHECK(asked.error->sqlstate() == "42601");
  CHECK(asked.error->position() == 0);

  // Exceptions become the same XX000 error as everywhere else.
  const Description thrownByDescribe = describe("throws");
  REQUIRE(thrownByDescribe.error.has_value());
  CHECK(thrownByDescribe.error->sqlstate() == "XX000");
  CHECK(thrownByDescribe.error->message() == "describe failed");
  const Description thrownByRun = describe("explodes");
  REQUIRE(thrownByRun.error.has_value());
  CHECK(thrownByRun.error->sqlstate() == "XX000");
  CHECK(thrownByRun.error->message() == "execute failed");
}

TEST_CASE("pgwire describe: NoData for no rows, RowDescription with formats otherwise") {
  std::string none;
  appendDescription(none, {});
  CHECK(none == std::string("n\0\0\0\4", 5));

  const std::vector<ResultColumn> cols{{"n", pgtype::kInt8}, {"s", pgtype::kText}};
  std::string text;
  appendDescription(text, cols);
  std::string expected;
  appendRowDescription(expected, cols);
  CHECK(text == expected);

  // A portal's Describe uses the formats its Bind asked for.
  std::string binary;
  appendPortalDescription(binary, {kBinaryFormat}, {{"n", pgtype::kInt8}});
  std::string expectedBinary;
  appendRowDescription(expectedBinary, {{"n", pgtype::kInt8}}, {kBinaryFormat});
  CHECK(binary == expectedBinary);

  std::string portalNone;
  appendPortalDescription(portalNone, {kTextFormat}, {});
  CHECK(portalNone == none);

  // Formats that do not fit are an error, and nothing is written.
  std::string untouched = "x";
  CHECK_THROWS_AS(appendPortalDescription(untouched, {kTextFormat, kTextFormat, kTextFormat}, cols),
                  SqlError);
  CHECK(untouched == "x");
}
