// Which queries over a view another node holds are sent whole to it
// (sendsWhole, server/views/view_forward.h): not one that calls a function
// whose value is the asking session's or node's, nor a user's function,
// whose body may call one; those run on the node asked.
#include <doctest/doctest.h>

#include "parser/parser.h"
#include "planner/catalog.h"
#include "planner/user_function.h"
#include "server/views/view_forward.h"

using namespace rtsql;

namespace {

bool whole(const std::string& sql, const Catalog& catalog = Catalog()) {
  std::vector<ast::StatementPtr> stmts = parseStatements(sql);
  REQUIRE(stmts.size() == 1);
  return sendsWhole(*static_cast<const ast::SelectStatement&>(*stmts[0]).query, catalog);
}

}  // namespace

TEST_CASE("forwarded view read: a query of columns, filters and pure functions goes whole") {
  CHECK(whole("SELECT * FROM v WHERE k = 'x'"));
  CHECK(whole("SELECT k, upper(k), s * 2 FROM v WHERE hour(at) = 3 ORDER BY k LIMIT 2"));
  CHECK(whole("SELECT k, count(*), row_number() OVER (ORDER BY k) FROM v GROUP BY k"));
}

TEST_CASE("forwarded view read: a function of the asking session keeps the query here") {
  for (const char* sql :
       {"SELECT k, pg_backend_pid() FROM v", "SELECT now() AS t, k FROM v",
        "SELECT k FROM v WHERE k = current_user", "SELECT current_timestamp FROM v",
        "SELECT k FROM v ORDER BY current_setting('timezone')",
        "SELECT k FROM v WHERE s IN (SELECT s FROM v WHERE at < current_date)",
        "SELECT k, version() FROM v", "SELECT rand() FROM v"}) {
    INFO(sql);
    CHECK_FALSE(whole(sql));
  }
}

TEST_CASE("forwarded view read: a user's function keeps the query here") {
  Catalog catalog;
  UserFunctionDef f;
  f.name = "my_clock";
  f.returns = DataType::of(TypeId::Timestamp);
  catalog.addFunction(std::move(f), false, false, 0);
  CHECK_FALSE(whole("SELECT k, my_clock() FROM v", catalog));
  CHECK(whole("SELECT k, abs(s) FROM v", catalog));
}
