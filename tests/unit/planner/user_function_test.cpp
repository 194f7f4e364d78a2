// User-defined SQL functions in the planner: the checks of CREATE FUNCTION,
// the inlining of calls (EXPLAIN shows the body over the arguments, with the
// casts it needs), the errors of a call that does not fit, and the catalog's
// refusal to drop or replace a function something calls.
#include "planner/user_function.h"

#include <doctest/doctest.h>

#include "planner_fixture.h"

using namespace rtsql;
using namespace rtsql::testing;

namespace {

struct ProjectFixture : FunctionFixture {
  // The Project line of a one-stage flow's EXPLAIN.
  std::string projectLine(const std::string& select) {
    std::string plan = flow("CREATE FLOW f INTO alerts AS " + select).explain();
    size_t at = plan.find("  Project ");
    REQUIRE(at != std::string::npos);
    return plan.substr(at + 2, plan.find('\n', at) - at - 2);
  }
};

}  // namespace

TEST_CASE("a call is inlined: EXPLAIN shows the body over the arguments") {
  ProjectFixture f;
  f.create(
      "CREATE FUNCTION discount(price DOUBLE, pct INT) RETURNS DOUBLE AS price - price * pct / "
      "100");
  PhysicalPlan p = f.flow(
      "CREATE FLOW f INTO alerts AS SELECT user_id, discount(amount + 1, 10) AS d FROM clicks "
      "WHERE discount(amount, 50) > 5");
  // `price` is `(amount + 1.0)` wherever the body names it; the constant
  // `pct` is folded into the body as the literal 10 would be.
  CHECK(p.explain() ==
        "Flow f INTO alerts (kafka, json)  checkpoint every 5 minutes\n"
        "Stage 0: 2 tasks\n"
        "  Scan clicks (kafka json, subscribe=clicks, partitions 0..1, watermark ts - 10 seconds)\n"
        "  Filter ((amount - ((amount * 50.0) / 100.0)) > 5.0)  [append]\n"
        "  Project user_id, ((amount + 1.0) - (((amount + 1.0) * 10.0) / 100.0)) AS d  [append]\n"
        "  Sink alerts (kafka json, topic=alerts)\n"
        "Task slots: 2\n");
  // The same flow with the body written out plans to the same operators.
  PhysicalPlan written = f.flow(
      "CREATE FLOW f INTO alerts AS SELECT user_id, (amount + 1) - (amount + 1) * 10 / 100 AS d "
      "FROM clicks WHERE amount - amount * 50 / 100 > 5");
  CHECK(written.explain() == p.explain());
}

TEST_CASE("arguments are cast to the parameters' types, the body to the return type") {
  ProjectFixture f;
  f.create("CREATE FUNCTION twice(n BIGINT) RETURNS BIGINT AS n * 2");
  f.create("CREATE FUNCTION as_double(n INT) RETURNS DOUBLE AS n + 1");
  f.create("CREATE FUNCTION label(s STRING) RETURNS STRING AS upper(s)");
  CHECK(f.projectLine("SELECT twice(info.zip) AS t FROM clicks") ==
        "Project (CAST(info.zip AS BIGINT) * 2) AS t  [append]");
  CHECK(f.projectLine("SELECT as_double(info.zip) AS d FROM clicks") ==
        "Project CAST((info.zip + 1) AS DOUBLE) AS d  [append]");
  // No cast when the types already agree; a NULL argument takes the
  // parameter's type.
  CHECK(f.projectLine("SELECT label(url) AS l, label(NULL) AS n FROM clicks") ==
        "Project upper(url) AS l, NULL AS n  [append]");
  PhysicalPlan q = f.query("SELECT twice(info.zip) FROM clicks");
  CHECK(q.sink.input.columns[0].type->toString() == "BIGINT");
}

TEST_CASE("a function may call a function created before it") {
  ProjectFixture f;
  f.create("CREATE FUNCTION sq(x DOUBLE) RETURNS DOUBLE AS x * x");
  f.create("CREATE FUNCTION norm(a DOUBLE, b DOUBLE) RETURNS DOUBLE AS sqrt(sq(a) + sq(b))");
  CHECK(f.projectLine("SELECT norm(amount, 3) AS n FROM clicks") ==
        "Project sqrt(((amount * amount) + 9.0)) AS n  [append]");
  CHECK(f.catalog.findFunction("norm")->calls == std::vector<std::string>{"sq"});

  // The functions a flow calls, directly, from every clause and subquery.
  auto stmt = parseOne(
      "CREATE FLOW g INTO alerts AS SELECT NORM(amount, 1) AS n FROM "
      "(SELECT * FROM clicks WHERE sq(amount) > 1) c WHERE upper(url) <> ''");
  const auto& cf = static_cast<const ast::CreateFlow&>(*stmt);
  CHECK(userFunctionsCalled(*cf.query, f.catalog) == std::vector<std::string>{"norm", "sq"});
}

TEST_CASE("a call that does not fit the signature is 42883 with the signature in the hint") {
  ProjectFixture f;
  f.create("CREATE FUNCTION discount(price DOUBLE, pct INT) RETURNS DOUBLE AS price * pct");
  const std::string arity = "SELECT discount(amount) FROM clicks";
  SqlError e = sqlErrorOf([&] { f.query(arity); });
  CHECK(e.sqlstate() == "42883");
  CHECK(e.position() == arity.find("discount"));
  CHECK(e.message() == "function discount(DOUBLE) does not exist");
  CHECK(e.hint() == "discount(price DOUBLE, pct INT) RETURNS DOUBLE: it takes 2 arguments, not 1");

  const std::string type = "SELECT discount(amount, url) FROM clicks";
  e = sqlErrorOf([&] { f.query(type); });
  CHECK(e.sqlstate() == "42883");
  CHECK(e.position() == type.find("url"));
  CHECK(e.message() == "function discount(DOUBLE, STRING) does not exist");
  CHECK(e.hint().find("argument 2 (pct) is STRING, not INT") != std::string::npos);

  // Narrowing is no implicit conversion either.
  e = sqlErrorOf([&] { f.query("SELECT discount(amount, amount) FROM clicks"); });
  CHECK(e.sqlstate() == "42883");

  // An unknown name close to a user function's is taken for a typo of it.
  e = sqlErrorOf([&] { f.query("SELECT discont(amount, 1) FROM clicks"); });
  CHECK(e.sqlstate() == "42883");
  CHECK(e.hint() == "did you mean discount(price DOUBLE, pct INT)?");
  e = sqlErrorOf([&] { f.query("SELECT nosuchthing(amount) FROM clicks"); });
  CHECK(e.sqlstate() == "42883");
  CHECK(e.hint().find("discount") == std::string::npos);
}

TEST_CASE("CREATE FUNCTION refuses what a body cannot be") {
  ProjectFixture f;
  // `at`: the text the error points at; "RETURNS" stands for the body at the end.
  auto check = [&](const std::string& sql, const char* state, const std::string& at) {
    SqlError e = f.createError(sql);
    size_t want = at == "RETURNS" ? sql.size() - 1 : sql.find(at);
    CHECK_MESSAGE(e.sqlstate() == state, sql, " -> ", e.sqlstate(), " ", e.message());
    CHECK_MESSAGE(e.position() == want, sql, " -> ", e.position(), " ", e.message());
    CHECK_MESSAGE(!e.hint().empty(), sql);
    return e;
  };
  SqlError e = check("CREATE FUNCTION f(a INT) RETURNS INT AS a + amount", "42703", "amount");
  CHECK(e.hint() == "a function body names only its parameters: a");
  check("CREATE FUNCTION f(a INT) RETURNS INT AS sum(a)", "42803", "sum");
  check("CREATE FUNCTION f(a INT) RETURNS INT AS count(*)", "42803", "count");
  check("CREATE FUNCTION f(a INT) RETURNS BIGINT AS row_number() OVER (ORDER BY a)", "0A000",
        "row_number");
  check("CREATE FUNCTION f(a INT) RETURNS INT AS (SELECT 1)", "0A000", "(SELECT");
  check("CREATE FUNCTION f(a INT) RETURNS INT AS f(a - 1)", "42P13", "f(a - 1)");
  check("CREATE FUNCTION f(a INT) RETURNS INT AS g(a)", "42883", "g(a)");
  e = check("CREATE FUNCTION f(a STRING) RETURNS INT AS upper(a)", "42804", "upper");
  CHECK(e.hint() == "write CAST(upper(a) AS INT) as the body, or declare RETURNS STRING");
  // Narrowing is no implicit conversion: the body `a` (at the end) is refused.
  e = check("CREATE FUNCTION f(a DOUBLE) RETURNS INT AS a", "42804", "RETURNS");
  check("CREATE FUNCTION upper(a STRING) RETURNS STRING AS a", "42723", "upper(");
  check("CREATE FUNCTION Count(a INT) RETURNS INT AS a", "42723", "Count");
  check("CREATE FUNCTION f(a INT, A INT) RETURNS INT AS a", "42P13", "A INT");
  check("CREATE FUNCTION f(a INT) RETURNS NOSUCH AS a", "42704", "NOSUCH");
  CHECK(f.catalog.functions().empty());
}

TEST_CASE("the catalog: duplicates, OR REPLACE, drops refused while something calls a function") {
  ProjectFixture f;
  f.create("CREATE FUNCTION sq(x DOUBLE) RETURNS DOUBLE AS x * x");
  SqlError e = f.createError("CREATE FUNCTION sq(x INT) RETURNS INT AS x");
  CHECK(e.sqlstate() == "42723");
  CHECK(e.message() == "function sq(x DOUBLE) already exists");
  // IF NOT EXISTS keeps the old one, OR REPLACE replaces it.
  f.create("CREATE FUNCTION IF NOT EXISTS sq(x INT) RETURNS INT AS x");
  CHECK(f.catalog.findFunction("SQ")->bodyText == "x * x");
  f.create("CREATE OR REPLACE FUNCTION sq(x DOUBLE) RETURNS DOUBLE AS x * x * 1.0");
  CHECK(f.catalog.findFunction("sq")->bodyText == "x * x * 1.0");

  f.create("CREATE FUNCTION norm(a DOUBLE) RETURNS DOUBLE AS sqrt(sq(a))");
  e = sqlErrorOf([&] { f.catalog.dropFunction("sq", false, 14); });
  CHECK(e.sqlstate() == "2BP01");
  CHECK(e.message() == "cannot drop function sq: function norm calls it");
  CHECK(e.hint() == "DROP FUNCTION norm first");
  CHECK(e.position() == 14);
  e = f.createError("CREATE OR REPLACE FUNCTION sq(x DOUBLE) RETURNS DOUBLE AS x");
  CHECK(e.sqlstate() == "2BP01");

  FlowDef flow;
  flow.name = "Scores";
  flow.sink = "alerts";
  flow.functions = {"norm"};
  f.catalog.addFlow(flow, false, 0);
  e = sqlErrorOf([&] { f.catalog.dropFunction("NORM", false, 0); });
  CHECK(e.sqlstate() == "2BP01");
  CHECK(e.message() == "cannot drop function norm: flow \"Scores\" calls it");
  CHECK(e.hint() == "DROP FLOW Scores first");

  f.catalog.dropFlow("scores", false, 0);
  CHECK(f.catalog.dropFunction("norm", false, 0));
  CHECK(f.catalog.dropFunction("sq", false, 0));
  CHECK_FALSE(f.catalog.dropFunction("sq", true, 0));
  e = sqlErrorOf([&] { f.catalog.dropFunction("sq", false, 5); });
  CHECK(e.sqlstate() == "42883");
  CHECK(e.position() == 5);
}

TEST_CASE("functions list in creation order, which replays") {
  ProjectFixture f;
  f.create("CREATE FUNCTION zeta(x INT) RETURNS INT AS x + 1");
  f.create("CREATE FUNCTION alpha(x INT) RETURNS INT AS zeta(x) * 2");
  f.create("CREATE FUNCTION mid(x INT) RETURNS INT AS x");
  f.create("CREATE OR REPLACE FUNCTION mid(x INT) RETURNS INT AS alpha(x)");
  std::vector<std::string> names;
  for (const auto& fn : f.catalog.functions()) names.push_back(fn->name);
  CHECK(names == std::vector<std::string>{"zeta", "alpha", "mid"});
  // A copy of the catalog (a dry run's) has the same functions, and
  // changes apart from the original.
  Catalog copy(f.catalog);
  copy.dropFunction("mid", false, 0);
  CHECK(copy.functions().size() == 2);
  CHECK(f.catalog.functions().size() == 3);
}
