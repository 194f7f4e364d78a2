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

TEST_CASE("a batching step appends its calls as columns, and the operator reads them") {
  VectorizedFixture f;
  PhysicalPlan plan = f.flow(
      "CREATE FLOW f INTO alerts AS SELECT user_id, vtwice(vlen(url)) AS t FROM clicks WHERE "
      "vlen(user_id) > 2");
  const std::vector<OperatorSpec>& ops = plan.stages.front().operators;
  const size_t width = plan.scans.front().schema.columns.size();
  REQUIRE(ops.size() == 4);
  // The Filter reads the column its batch appended, under the call's text.
  REQUIRE(ops[0].is<VectorizedBatchSpec>());
  CHECK(ops[0].as<VectorizedBatchSpec>().inputColumns == static_cast<int>(width));
  CHECK(ops[0].output().columns.size() == width + 1);
  CHECK(ops[0].output().columns.back().name == "vlen(user_id)");
  REQUIRE(ops[1].is<FilterSpec>());
  CHECK(vectorizedCallsIn(*ops[1].as<FilterSpec>().predicate).empty());
  CHECK(ops[1].as<FilterSpec>().predicate->toString() == "(vlen(user_id) > 2)");
  // The next batch appends after that column; the inner call comes first and
  // the outer one reads its column.
  REQUIRE(ops[2].is<VectorizedBatchSpec>());
  const auto& batch = ops[2].as<VectorizedBatchSpec>();
  CHECK(batch.inputColumns == static_cast<int>(width + 1));
  REQUIRE(batch.calls.size() == 2);
  CHECK(batch.calls[0]->toString() == "vlen(url)");
  CHECK(vectorizedCallsIn(*batch.calls[1]).size() == 1);
  REQUIRE(ops[3].is<ProjectSpec>());
  const ExprPtr& t = ops[3].as<ProjectSpec>().exprs.at(1);
  CHECK(columnRefIndex(*t) == static_cast<int>(width + 2));
  CHECK(t->toString() == "vtwice(vlen(url))");
  CHECK(ops[3].output().columns.size() == 2);
}

TEST_CASE("after a Filter that no Project follows, a Project drops the appended columns") {
  VectorizedFixture f;
  f.ddl("CREATE TABLE codes (code STRING, n BIGINT);");
  // The IN subquery joins the filtered rows with the table: the join's
  // columns follow the stream row's, which must be the source's again.
  PhysicalPlan plan = f.flow(
      "CREATE FLOW f INTO alerts AS SELECT user_id FROM clicks WHERE vlen(url) > 2 AND user_id "
      "IN (SELECT code FROM codes)");
  const std::vector<OperatorSpec>& ops = plan.stages.front().operators;
  const Schema& scanned = plan.scans.front().schema;
  REQUIRE(ops.size() == 5);
  CHECK(ops[0].is<VectorizedBatchSpec>());
  CHECK(ops[1].is<FilterSpec>());
  CHECK(ops[1].output().columns.size() == scanned.columns.size() + 1);
  REQUIRE(ops[2].is<ProjectSpec>());
  const auto& strip = ops[2].as<ProjectSpec>();
  REQUIRE(strip.exprs.size() == scanned.columns.size());
  for (size_t c = 0; c < strip.exprs.size(); ++c) {
    CHECK(columnRefIndex(*strip.exprs[c]) == static_cast<int>(c));
    CHECK(strip.output.columns[c].name == scanned.columns[c].name);
  }
  CHECK(ops[3].is<BroadcastJoinSpec>());
  CHECK(plan.explain().find("  Filter (vlen(url) > 2)  [append]\n  Project user_id, url, ") !=
        std::string::npos);
}
