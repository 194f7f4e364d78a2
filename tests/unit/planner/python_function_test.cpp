// Python functions in the planner: a call is a node evaluated per row (never
// inlined, never folded at plan time), the definition's checks, and planning
// flows without Python functions leaving the interpreter unstarted.
#include "common/python/function.h"

#include <doctest/doctest.h>

#include "planner/user_function.h"
#include "planner_fixture.h"

using namespace rtsql;
using namespace rtsql::testing;

namespace {

using PythonFixture = FunctionFixture;

}  // namespace

// First in the file: each test file runs in a process of its own.
TEST_CASE("flows and SQL functions never start the interpreter") {
  PythonFixture f;
  f.create("CREATE FUNCTION twice(n BIGINT) RETURNS BIGINT AS n * 2");
  f.flow("CREATE FLOW f INTO alerts AS SELECT user_id, twice(info.zip) AS t FROM clicks");
  // A refused definition in another language does not start it either.
  CHECK(f.createError("CREATE FUNCTION j(n INT) RETURNS INT LANGUAGE JS AS $$ n $$").sqlstate() ==
        "0A000");
  CHECK_FALSE(pythonStarted());
}

TEST_CASE("a Python function is called per row, not inlined or folded") {
  PythonFixture f;
  f.create("CREATE FUNCTION py_inc(n BIGINT) RETURNS BIGINT LANGUAGE PYTHON AS $$ return n + 1 $$");
  CHECK(pythonStarted());
  PhysicalPlan p = f.flow(
      "CREATE FLOW f INTO alerts AS SELECT user_id, py_inc(info.zip) AS a, py_inc(1) AS b FROM "
      "clicks WHERE py_inc(2) > 0");
  const std::string plan = p.explain();
  CHECK(plan.find("Filter (py_inc(2) > 0)") != std::string::npos);
  CHECK(plan.find("Project user_id, py_inc(CAST(info.zip AS BIGINT)) AS a, py_inc(1) AS b") !=
        std::string::npos);
  // Its definition keeps the code and the language; it calls no SQL function.
  auto def = f.catalog.findFunction("py_inc");
  REQUIRE(def);
  CHECK(def->language == "python");
  CHECK(def->body == nullptr);
  CHECK(def->python != nullptr);
  CHECK(def->bodyText == " return n + 1 ");
  CHECK(def->calls.empty());
}

TEST_CASE("CREATE FUNCTION ... LANGUAGE refusals") {
  PythonFixture f;
  const std::string noDollars = "CREATE FUNCTION p(n INT) RETURNS INT LANGUAGE PYTHON AS n + 1";
  SqlError e = f.createError(noDollars);
  CHECK(e.sqlstate() == "42601");
  CHECK(e.position() == noDollars.find("n + 1"));
  const std::string sqlDollars = "CREATE FUNCTION s(n INT) RETURNS INT AS $$ n + 1 $$";
  e = f.createError(sqlDollars);
  CHECK(e.sqlstate() == "42601");
  CHECK(e.position() == sqlDollars.find("$$"));
  const std::string other = "CREATE FUNCTION r(n INT) RETURNS INT LANGUAGE R AS $$ n $$";
  e = f.createError(other);
  CHECK(e.sqlstate() == "0A000");
  CHECK(e.position() == other.find("R AS"));
  // A built-in's name is refused before any Python runs.
  CHECK(f.createError("CREATE FUNCTION upper(s STRING) RETURNS STRING LANGUAGE PYTHON AS $$ "
                      "return s $$")
            .sqlstate() == "42723");
}
