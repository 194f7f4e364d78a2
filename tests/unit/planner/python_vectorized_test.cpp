// Vectorized Python functions in the planner: VECTORIZED in CREATE FUNCTION,
// the VectorizedBatch step placed before exactly the Filters and Projects that
// call one (and shown by EXPLAIN), aggregates' arguments and grouping keys
// batched in the projection before the shuffle, and a call in a join
// condition refused with 0A000 at the call.
#include <doctest/doctest.h>

#include "common/python/function.h"
#include "common/python/vectorized_call.h"
#include "planner/user_function.h"
#include "planner_fixture.h"

using namespace rtsql;
using namespace rtsql::testing;

namespace {

struct VectorizedFixture : FunctionFixture {
  VectorizedFixture() {
    create(
        "CREATE FUNCTION vtwice(n BIGINT) RETURNS BIGINT LANGUAGE PYTHON VECTORIZED AS $$ return "
        "[None if x is None else x * 2 for x in n] $$");
    create(
        "CREATE FUNCTION vlen(s STRING) RETURNS BIGINT LANGUAGE PYTHON VECTORIZED AS $$ return "
        "[None if x is None else len(x) for x in s] $$");
    create("CREATE FUNCTION py_inc(n BIGINT) RETURNS BIGINT LANGUAGE PYTHON AS $$ return n + 1 $$");
  }

  SqlError flowError(const std::string& sql) {
    return sqlErrorOf([&] { flow(sql); });
  }
};

}  // namespace

TEST_CASE("VECTORIZED is kept in the definition, and only a Python function takes it") {
  VectorizedFixture f;
  auto def = f.catalog.findFunction("vtwice");
  REQUIRE(def);
  CHECK(def->vectorized);
  CHECK(def->python->vectorized());
  CHECK_FALSE(f.catalog.findFunction("py_inc")->vectorized);
  const std::string sql = "CREATE FUNCTION s(n INT) RETURNS INT VECTORIZED AS n + 1";
  SqlError e = f.createError(sql);
  CHECK(e.sqlstate() == "42P13");
  CHECK(e.position() == sql.find("VECTORIZED"));
}

TEST_CASE("a batching step goes before each Filter and Project that calls a vectorized function") {
  VectorizedFixture f;
  const std::string plan =
      f.flow(
           "CREATE FLOW f INTO alerts AS SELECT user_id, vtwice(info.zip) AS t, py_inc(1) AS p, "
           "vlen(url) AS l FROM clicks WHERE vlen(user_id) > 2")
          .explain();
  const size_t batch1 = plan.find("  VectorizedBatch [vlen] (up to 1024 rows)  [append]\n");
  const size_t filter = plan.find("  Filter (vlen(user_id) > 2)");
  const size_t batch2 = plan.find("  VectorizedBatch [vtwice, vlen] (up to 1024 rows)  [append]\n");
  const size_t project = plan.find(
      "  Project user_id, vtwice(CAST(info.zip AS BIGINT)) AS t, py_inc(1) AS p, vlen(url) AS l");
  REQUIRE(batch1 != std::string::npos);
  REQUIRE(filter != std::string::npos);
  REQUIRE(batch2 != std::string::npos);
  REQUIRE(project != std::string::npos);
  CHECK(batch1 < filter);
  CHECK(filter < batch2);
  CHECK(batch2 < project);
  // A flow with only scalar calls has no batching step.
  const std::string scalar =
      f.flow("CREATE FLOW g INTO alerts AS SELECT user_id, py_inc(1) AS p FROM clicks").explain();
  CHECK(scalar.find("VectorizedBatch") == std::string::npos);
}

TEST_CASE("a batching step also serves a Project after an aggregation") {
  VectorizedFixture f;
  const std::string plan = f.flow(
                                "CREATE FLOW f INTO changes AS SELECT user_id, vtwice(count(*)) AS "
                                "c FROM clicks GROUP BY user_id")
                               .explain();
  const size_t aggregate = plan.find("  Aggregate");
  const size_t batch = plan.find("  VectorizedBatch [vtwice]");
  REQUIRE(aggregate != std::string::npos);
  REQUIRE(batch != std::string::npos);
  CHECK(aggregate < batch);
}

TEST_CASE(
    "an aggregate's argument and a GROUP BY key are batched in the projection before the shuffle") {
  VectorizedFixture f;
  const std::string plan =
      f.flow(
           "CREATE FLOW f INTO changes AS SELECT vtwice(info.zip) AS k, sum(vlen(url)) AS s FROM "
           "clicks GROUP BY vtwice(info.zip)")
          .explain();
  const size_t batch = plan.find("  VectorizedBatch [vtwice, vlen] (up to 1024 rows)  [append]\n");
  const size_t project =
      plan.find("  Project vtwice(CAST(info.zip AS BIGINT)), vlen(url)  [append]\n");
  const size_t shuffle = plan.find("  Shuffle by");
  REQUIRE(batch != std::string::npos);
  REQUIRE(project != std::string::npos);
  CHECK(batch < project);
  CHECK(project < shuffle);
  // Only that one step: the aggregate reads the projected columns.
  CHECK(plan.find("VectorizedBatch", batch + 3) == std::string::npos);
}

TEST_CASE("a vectorized call in a join condition is 0A000 at the call") {
  VectorizedFixture f;
  f.ddl("CREATE TABLE codes (code STRING, n BIGINT);");
  const std::string probe =
      "CREATE FLOW f INTO alerts AS SELECT c.user_id FROM clicks c JOIN codes t ON "
      "vtwice(c.info.zip) = t.n";
  SqlError e = f.flowError(probe);
  CHECK(e.sqlstate() == "0A000");
  CHECK(e.message() == "vectorized function vtwice cannot be called in a join condition");
  CHECK(e.position() == probe.find("vtwice("));
  const std::string residual =
      "CREATE FLOW f INTO alerts AS SELECT c.user_id FROM clicks c JOIN codes t ON c.user_id = "
      "t.code AND vlen(t.code) > 1";
  e = f.flowError(residual);
  CHECK(e.sqlstate() == "0A000");
  CHECK(e.position() == residual.find("vlen("));
}
