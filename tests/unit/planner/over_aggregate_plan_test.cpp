// OVER aggregate plans: aggregate select items OVER (PARTITION BY ... ORDER BY
// ... ROWS ...) become one OverAggregate stage shuffled by the partition keys,
// with the frame, the aggregate calls and their result types in its spec, the
// items in their order after it, and a retracting output; over a top-N the
// operator reads a retracting input; the refusals with their SQLSTATE.
#include <doctest/doctest.h>

#include "planner/planner.h"
#include "planner_fixture.h"

using namespace rtsql;
using namespace rtsql::testing;

namespace {

struct Fixture : PlannerFixture {
  Fixture() {
    partitions = 4;
    addClicksAndSinks(*this);
  }
};

const OverAggregateSpec& over(const PhysicalPlan& p, size_t stage) {
  REQUIRE(p.stages.size() > stage);
  REQUIRE(!p.stages[stage].operators.empty());
  return p.stages[stage].operators[0].as<OverAggregateSpec>();
}

}  // namespace

TEST_CASE("aggregates OVER one window: an OverAggregate stage shuffled by the partition keys") {
  Fixture f;
  PhysicalPlan p = f.query(
      "SELECT avg(amount) OVER (PARTITION BY user_id ORDER BY ts DESC ROWS BETWEEN 4 PRECEDING "
      "AND CURRENT ROW) AS a, url, count(*) OVER (PARTITION BY user_id ORDER BY ts DESC ROWS 4 "
      "PRECEDING) AS n FROM clicks");
  const OverAggregateSpec& o = over(p, 1);
  CHECK(o.precedingRows == 4);
  CHECK(o.descending == std::vector<bool>{true});
  REQUIRE(o.aggregates.size() == 2);
  CHECK(o.aggregates[0].function == AggregateFunction::Avg);
  CHECK(o.aggregates[1].function == AggregateFunction::CountStar);
  CHECK(o.input == ChangelogMode::Append);
  CHECK(o.changelog.mode == ChangelogMode::Retract);
  CHECK(o.changelog.stateUnbounded);
  CHECK(p.stages[1].tasks == 8);
  CHECK(p.sink.input.toString() == "(a DOUBLE, url STRING, n BIGINT)");
}

TEST_CASE("UNBOUNDED PRECEDING is a running aggregate; over a top-N the input retracts") {
  Fixture f;
  PhysicalPlan p = f.query(
      "SELECT user_id, max(amount) OVER (PARTITION BY user_id ORDER BY ts ROWS BETWEEN "
      "UNBOUNDED PRECEDING AND CURRENT ROW) AS top FROM (SELECT * FROM (SELECT user_id, amount, "
      "ts, ROW_NUMBER() OVER (PARTITION BY url ORDER BY amount DESC) AS rn FROM clicks) WHERE "
      "rn <= 1) AS q");
  REQUIRE(p.stages.size() == 3);
  const OverAggregateSpec& o = over(p, 2);
  CHECK(o.precedingRows < 0);
  CHECK(o.input == ChangelogMode::Retract);
  CHECK(o.aggregates[0].function == AggregateFunction::Max);
  CHECK(p.sink.input.toString() == "(user_id STRING, top DOUBLE)");
}

TEST_CASE("OVER aggregates: the refusals") {
  Fixture f;
  auto state = [&](const std::string& sql) {
    try {
      f.query(sql);
    } catch (const SqlError& e) {
      return e.sqlstate();
    }
    return std::string("ok");
  };
  CHECK(state("SELECT sum(amount) OVER (PARTITION BY user_id) AS s FROM clicks") == "0A000");
  CHECK(state("SELECT sum(amount) OVER (ORDER BY ts) AS s FROM clicks") == "0A000");
  CHECK(state("SELECT sum(amount) OVER (ORDER BY ts ROWS 1 PRECEDING) AS a, "
              "sum(amount) OVER (ORDER BY url ROWS 1 PRECEDING) AS b FROM clicks") == "0A000");
  CHECK(state("SELECT user_id, count(*), sum(amount) OVER (ORDER BY ts ROWS 1 PRECEDING) AS a "
              "FROM clicks GROUP BY user_id") == "0A000");
  CHECK(state("SELECT count(DISTINCT url) OVER (ORDER BY ts ROWS 1 PRECEDING) AS a FROM "
              "clicks") == "0A000");
  CHECK(state("SELECT amount - avg(amount) OVER (ORDER BY ts ROWS 1 PRECEDING) AS a FROM "
              "clicks") == "0A000");
  CHECK(state("SELECT sum(url) OVER (ORDER BY ts ROWS 1 PRECEDING) AS a FROM clicks") == "42804");
  CHECK(state("SELECT * FROM clicks WHERE sum(amount) OVER (ORDER BY ts ROWS 1 PRECEDING) > 1") ==
        "0A000");
  // The same window written twice is one window.
  CHECK(state("SELECT sum(amount) OVER (ORDER BY ts ROWS 1 PRECEDING) AS a, "
              "min(amount) OVER (ORDER BY clicks.ts ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS "
              "b FROM clicks") == "ok");
}

TEST_CASE("lag, first_value and last_value in a flow: first/last over the OverAggregate's frame") {
  Fixture f;
  PhysicalPlan p = f.query(
      "SELECT url, lag(amount, 2, 0) OVER (PARTITION BY user_id ORDER BY ts) AS p FROM clicks");
  const OverAggregateSpec& o = over(p, 1);
  // lag(x, 2) is first(x) over the 2 rows before the row and the row, when
  // the frame holds 3 rows (count(*)).
  CHECK(o.precedingRows == 2);
  REQUIRE(o.aggregates.size() == 2);
  CHECK(o.aggregates[0].function == AggregateFunction::CountStar);
  CHECK(o.aggregates[1].function == AggregateFunction::First);
  CHECK(o.analytic.empty());
  CHECK(p.sink.input.toString() == "(url STRING, p DOUBLE)");

  PhysicalPlan q = f.query(
      "SELECT first_value(amount) IGNORE NULLS OVER (ORDER BY ts ROWS 3 PRECEDING) AS a, "
      "last_value(amount) OVER (ORDER BY ts ROWS BETWEEN 3 PRECEDING AND CURRENT ROW) AS b "
      "FROM clicks");
  const OverAggregateSpec& v = over(q, 1);
  CHECK(v.precedingRows == 3);
  REQUIRE(v.aggregates.size() == 2);
  CHECK(v.aggregates[0].function == AggregateFunction::First);
  CHECK(v.aggregates[0].ignoreNulls);
  CHECK(v.aggregates[1].function == AggregateFunction::Last);
  CHECK_FALSE(v.aggregates[1].ignoreNulls);
}
