// Binding of count/sum/avg(DISTINCT x), FILTER (WHERE ...) on aggregate calls,
// and aggregations over the retractions of another aggregation: what the
// Aggregate spec holds, how EXPLAIN prints it, which calls are told apart, and
// what is still refused (with SQLSTATE and position).
#include <doctest/doctest.h>

#include "../sql_error_of.h"
#include "planner/planner.h"
#include "planner_fixture.h"

using namespace rtsql;
using namespace rtsql::testing;

namespace {

struct Fixture : PlannerFixture {
  Fixture() {
    partitions = 4;
    addClicksAndSinks(*this);
    ddl(R"(
      CREATE SOURCE sess (user_id STRING, ts TIMESTAMP, WATERMARK FOR ts AS ts)
        WITH (connector = 'kafka', subscribe = 'sess', format = 'json');
    )");
  }
  PhysicalPlan plan(const std::string& select) {
    return flow("CREATE FLOW f INTO alerts AS " + select);
  }
  // Into a sink that writes every change: an aggregation over an aggregation
  // retracts rows, which a sink keeping each key's latest row cannot take.
  PhysicalPlan planChanges(const std::string& select) {
    return flow("CREATE FLOW f INTO changes AS " + select);
  }
  // The aggregations of the plan, in stage order.
  std::vector<const AggregateSpec*> aggregates(const PhysicalPlan& p) {
    std::vector<const AggregateSpec*> out;
    for (const StageSpec& s : p.stages) {
      for (const OperatorSpec& op : s.operators) {
        if (op.is<AggregateSpec>()) out.push_back(&op.as<AggregateSpec>());
      }
    }
    return out;
  }
};

}  // namespace

TEST_CASE("aggregate binder: FILTER (WHERE ...) binds a BOOLEAN per call and EXPLAIN prints it") {
  Fixture f;
  PhysicalPlan p = f.plan(
      "SELECT user_id, count(*) FILTER (WHERE amount > 1) AS big, count(*) AS n, "
      "count(*) FILTER (WHERE amount > 2) AS bigger, sum(amount) FILTER (WHERE amount > 1) AS s, "
      "count(*) FILTER (WHERE amount > 1) AS again FROM clicks GROUP BY user_id");
  auto aggs = f.aggregates(p);
  REQUIRE(aggs.size() == 1);
  const AggregateSpec& a = *aggs[0];
  // Different filters are different calls; the same call twice is one.
  REQUIRE(a.aggregates.size() == 4);
  CHECK(a.aggregates[0].filter != nullptr);
  CHECK(a.aggregates[1].filter == nullptr);
  CHECK(a.aggregates[2].filter != nullptr);
  CHECK(a.describe() ==
        "Aggregate keys=[user_id] aggs=[count(*) FILTER (WHERE amount > 1.0), count(*), count(*) "
        "FILTER (WHERE amount > 2.0), sum(amount) FILTER (WHERE amount > 1.0)]");

  const std::string head = "CREATE FLOW f INTO alerts AS ";
  std::string sql =
      head + "SELECT user_id, count(*) FILTER (WHERE url) FROM clicks GROUP BY user_id";
  SqlError e = sqlErrorOf([&] { f.flow(sql); });
  CHECK(e.sqlstate() == "42804");
  CHECK(e.position() == sql.find("url)"));
  CHECK(e.message().find("FILTER must be type BOOLEAN") != std::string::npos);
}

TEST_CASE("aggregate binder: count(DISTINCT x) is its own call") {
  Fixture f;
  PhysicalPlan p = f.plan(
      "SELECT user_id, count(DISTINCT url) AS d, count(url) AS c, sum(DISTINCT amount) AS s, "
      "max(DISTINCT amount) AS m, max(amount) AS m2 FROM clicks GROUP BY user_id");
  auto aggs = f.aggregates(p);
  REQUIRE(aggs.size() == 1);
  const AggregateSpec& a = *aggs[0];
  // max(DISTINCT x) is max(x): one call.
  REQUIRE(a.aggregates.size() == 4);
  CHECK(a.aggregates[0].distinct);
  CHECK_FALSE(a.aggregates[1].distinct);
  CHECK(a.describe() ==
        "Aggregate keys=[user_id] aggs=[count(DISTINCT url), count(url), sum(DISTINCT amount), "
        "max(amount)]");
  // DISTINCT and FILTER together.
  p = f.plan("SELECT count(DISTINCT url) FILTER (WHERE amount > 1) AS d FROM clicks");
  CHECK(f.aggregates(p)[0]->describe() ==
        "Aggregate keys=[] aggs=[count(DISTINCT url) FILTER (WHERE amount > 1.0)]");
}

TEST_CASE("aggregate binder: an aggregation over an aggregation reads its retractions") {
  Fixture f;
  PhysicalPlan p = f.planChanges(
      "SELECT n, count(*) AS users FROM (SELECT user_id, count(*) AS n FROM clicks GROUP BY "
      "user_id) GROUP BY n");
  auto aggs = f.aggregates(p);
  REQUIRE(aggs.size() == 2);
  CHECK(aggs[0]->input == ChangelogMode::Append);
  CHECK(aggs[0]->changelog.mode == ChangelogMode::Retract);
  CHECK(aggs[1]->input == ChangelogMode::Retract);
  CHECK(aggs[1]->changelog.mode == ChangelogMode::Retract);
  // A single aggregation into a sink that keeps each key's latest row stays
  // in update mode.
  p = f.plan("SELECT user_id, count(*) AS n FROM clicks GROUP BY user_id");
  CHECK(f.aggregates(p)[0]->changelog.mode == ChangelogMode::Updates);
  CHECK(f.aggregates(p)[0]->input == ChangelogMode::Append);
}

TEST_CASE("aggregate binder: what is still refused over an aggregation") {
  Fixture f;
  const std::string head = "CREATE FLOW f INTO alerts AS ";
  // A window over the updates of an aggregation.
  std::string sql = head +
                    "SELECT count(*) FROM (SELECT user_id, max(ts) AS ts, count(*) AS n FROM "
                    "clicks GROUP BY user_id) GROUP BY window(ts, '1 minute')";
  SqlError e = sqlErrorOf([&] { f.flow(sql); });
  CHECK(e.sqlstate() == "0A000");
  CHECK(e.message().find("windowed aggregation over the result of another aggregation") !=
        std::string::npos);

  // The updates of a session window have no key.
  sql = head +
        "SELECT n, count(*) FROM (SELECT user_id, count(*) AS n FROM sess GROUP BY "
        "session_window(ts, '1 minute'), user_id) GROUP BY n";
  e = sqlErrorOf([&] { f.flow(sql); });
  CHECK(e.sqlstate() == "0A000");
  CHECK(e.position() == sql.rfind("n"));
  CHECK(e.hint().find("EMIT ON WINDOW CLOSE") != std::string::npos);

  // Once closed, a session's row is final: aggregating those is fine.
  PhysicalPlan p = f.plan(
      "SELECT n, count(*) FROM (SELECT user_id, count(*) AS n FROM sess GROUP BY "
      "session_window(ts, '1 minute'), user_id EMIT ON WINDOW CLOSE) GROUP BY n");
  CHECK(f.aggregates(p).size() == 2);

  // DISTINCT in a windowed aggregation.
  sql = head + "SELECT count(DISTINCT url) FROM clicks GROUP BY window(ts, '1 minute')";
  e = sqlErrorOf([&] { f.flow(sql); });
  CHECK(e.sqlstate() == "0A000");
  CHECK(e.position() == sql.find("count("));
}

TEST_CASE(
    "aggregate binder: an aggregation over a windowed aggregation's updates groups by its window") {
  Fixture f;
  // The shape of Nexmark q5's inner max: the outer groups by the inner's
  // window column, a plain key (no window of its own).
  PhysicalPlan p = f.planChanges(
      "SELECT window, max(n) AS top FROM (SELECT window, user_id, count(*) AS n FROM clicks "
      "GROUP BY window(ts, '10 seconds'), user_id) GROUP BY window");
  auto aggs = f.aggregates(p);
  REQUIRE(aggs.size() == 2);
  CHECK(aggs[0]->window.kind == WindowKind::Tumbling);
  CHECK(aggs[0]->changelog.mode == ChangelogMode::Retract);
  CHECK(aggs[1]->window.kind == WindowKind::None);
  CHECK(aggs[1]->input == ChangelogMode::Retract);
  CHECK(aggs[1]->describe() == "Aggregate keys=[window] aggs=[max(n)]");
  // With EMIT ON WINDOW CLOSE the inner rows are final: the outer reads appends
  // and, into a sink that keeps each key's latest row, emits updates.
  p = f.plan(
      "SELECT window, max(n) AS top FROM (SELECT window, user_id, count(*) AS n FROM clicks "
      "GROUP BY window(ts, '10 seconds'), user_id EMIT ON WINDOW CLOSE) GROUP BY window");
  aggs = f.aggregates(p);
  REQUIRE(aggs.size() == 2);
  CHECK(aggs[1]->input == ChangelogMode::Append);
  CHECK(aggs[1]->changelog.mode == ChangelogMode::Updates);
}
