// The state plan of CREATE OR REPLACE FLOW (planner/state_plan.h): which
// operators keep their state, and how the kept state moves to new ids.
#include <doctest/doctest.h>

#include "planner/state_plan.h"
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

}  // namespace

TEST_CASE_FIXTURE(Fixture, "a filter before a GROUP BY moves its state to the new id") {
  PhysicalPlan a = flow("CREATE FLOW f INTO alerts AS SELECT user_id, count(*) AS n FROM clicks GROUP BY user_id");
  PhysicalPlan b = flow(
      "CREATE FLOW f INTO alerts AS SELECT user_id, count(*) AS n FROM clicks WHERE amount > 0 GROUP BY user_id");
  StatePlan p = planStateChange(a, b);
  REQUIRE(p.operators.size() == 1);
  CHECK(p.operators[0].fate == StateFate::Kept);
  CHECK(p.operators[0].oldId != p.operators[0].newId);
  CHECK(p.compatible());
  StateMigration m = p.migration();
  CHECK(m.operators.at(p.operators[0].oldId) == p.operators[0].newId);
  CHECK(m.scans.at(0) == 0);
  CHECK_FALSE(planStateChange(a, a).operators.empty());
  CHECK(planStateChange(a, a).unchanged);
}

TEST_CASE_FIXTURE(Fixture, "a changed GROUP BY key is incompatible until reset") {
  PhysicalPlan a = flow("CREATE FLOW f INTO alerts AS SELECT user_id, count(*) AS n FROM clicks GROUP BY user_id");
  PhysicalPlan b = flow("CREATE FLOW f INTO alerts AS SELECT url, count(*) AS n FROM clicks GROUP BY url");
  StatePlan p = planStateChange(a, b);
  REQUIRE(p.operators.size() == 1);
  CHECK(p.operators[0].fate == StateFate::Incompatible);
  CHECK(p.reasonsText().find("the GROUP BY key changed from (user_id) to (url)") != std::string::npos);
  CHECK_THROWS_AS(p.reset({99}, 0), SqlError);
  p.reset({p.operators[0].newId}, 0);
  CHECK(p.compatible());
  CHECK(p.migration().operators.empty());
}

TEST_CASE("a state migration is kept as one line of text") {
  StateMigration m;
  m.lastOldEpoch = 42;
  m.operators = {{1, 2}, {3, 5}};
  m.scans = {{0, 1}};
  auto back = StateMigration::parse(m.format());
  REQUIRE(back.has_value());
  CHECK(back->lastOldEpoch == 42);
  CHECK(back->operators == m.operators);
  CHECK(back->scans == m.scans);
  CHECK(back->stages.empty());
  CHECK_FALSE(StateMigration::parse("x;1:2;-;-").has_value());
  CHECK_FALSE(StateMigration::parse("1;1-2;-;-").has_value());
  CHECK_FALSE(StateMigration::parse("1;-;-").has_value());
}

namespace {

// The same source twice: the narrow types a flow ran with, then the wide ones
// its source has after a widening (a schema registry's int to long, say).
struct WideningFixture {
  PlannerFixture narrow;
  PlannerFixture wide;

  WideningFixture() {
    add(narrow, "user_id INT, qty INT, price DECIMAL(5,2)");
    add(wide, "user_id BIGINT, qty BIGINT, price DECIMAL(9,2)");
  }
  static void add(PlannerFixture& f, const std::string& columns) {
    f.partitions = 4;
    f.ddl("CREATE SOURCE orders (" + columns +
          ", ts TIMESTAMP, WATERMARK FOR ts AS ts - INTERVAL '10' SECOND) WITH (connector = "
          "'kafka', 'kafka.bootstrap.servers' = 'embedded', subscribe = 'orders', format = "
          "'json'); CREATE SINK alerts WITH (connector = 'kafka', 'kafka.bootstrap.servers' = "
          "'embedded', topic = 'alerts', format = 'json');");
  }
};

bool has(const std::vector<std::string>& lines, const std::string& text) {
  for (const auto& l : lines)
    if (l.find(text) != std::string::npos) return true;
  return false;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

}  // namespace

TEST_CASE_FIXTURE(WideningFixture, "widened GROUP BY keys, sums, averages and counts keep their state") {
  const std::string sql =
      "CREATE FLOW f INTO alerts AS SELECT user_id, count(*) AS n, sum(qty) AS s, avg(qty) AS a, "
      "count(DISTINCT qty) AS c, sum(price) AS p, avg(price) AS ap FROM orders GROUP BY user_id";
  StatePlan p = planStateChange(narrow.flow(sql), wide.flow(sql));
  const auto lines = p.lines();
  INFO(joined(lines));
  REQUIRE(p.operators.size() == 1);
  CHECK(p.operators[0].fate == StateFate::Kept);
  CHECK(p.compatible());
  CHECK(p.migration().operators.size() == 1);
  CHECK(has(lines, ": state kept; the GROUP BY key user_id widened from INT to BIGINT: its stored keys read as BIGINT"));
  CHECK(has(lines, "; the argument of sum(qty) widened from INT to BIGINT: its accumulator reads as is"));
  CHECK(has(lines, "; the argument of avg(qty) widened from INT to BIGINT: its accumulator reads as is"));
  CHECK(has(lines, "; the argument of count(DISTINCT qty) widened from INT to BIGINT: its accumulator reads as is"));
  CHECK(has(lines, "; the argument of sum(price) widened from DECIMAL(5,2) to DECIMAL(9,2): its accumulator reads as is"));
  CHECK(has(lines, "; the argument of avg(price) widened from DECIMAL(5,2) to DECIMAL(9,2)"));
  CHECK(lines.back() == "the change keeps what the plan says and can be applied");
}

TEST_CASE_FIXTURE(WideningFixture, "narrowed keys and arguments are incompatible") {
  const std::string sql =
      "CREATE FLOW f INTO alerts AS SELECT user_id, sum(qty) AS s, sum(price) AS p FROM orders GROUP BY user_id";
  StatePlan p = planStateChange(wide.flow(sql), narrow.flow(sql));
  INFO(joined(p.lines()));
  REQUIRE(p.operators.size() == 1);
  CHECK(p.operators[0].fate == StateFate::Incompatible);
  const std::string why = p.reasonsText();
  CHECK(why.find("the GROUP BY key user_id narrowed from BIGINT to INT: a stored key may not fit the narrower type") != std::string::npos);
  CHECK(why.find("the argument of sum(qty) narrowed from BIGINT to INT: state is kept only for a widened type") != std::string::npos);
  CHECK(why.find("the argument of sum(price) narrowed from DECIMAL(9,2) to DECIMAL(5,2)") != std::string::npos);

  // Dropping a widening CAST again narrows as well.
  StatePlan back = planStateChange(
      narrow.flow("CREATE FLOW f INTO alerts AS SELECT CAST(user_id AS BIGINT) AS u, count(*) AS n "
                  "FROM orders GROUP BY CAST(user_id AS BIGINT)"),
      narrow.flow("CREATE FLOW f INTO alerts AS SELECT user_id AS u, count(*) AS n FROM orders GROUP BY user_id"));
  INFO(joined(back.lines()));
  CHECK(back.reasonsText() == "operator 1 (Aggregate): the GROUP BY key user_id narrowed from BIGINT to INT: a stored key may not fit the narrower type");
}

TEST_CASE_FIXTURE(WideningFixture, "a widening CAST keeps state where the encoding is the same, and says why not elsewhere") {
  PhysicalPlan a = narrow.flow(
      "CREATE FLOW f INTO alerts AS SELECT user_id, sum(qty) AS s, avg(qty) AS a FROM orders GROUP BY user_id");
  StatePlan kept = planStateChange(
      a, narrow.flow("CREATE FLOW f INTO alerts AS SELECT CAST(user_id AS BIGINT) AS user_id, "
                     "sum(CAST(qty AS BIGINT)) AS s, avg(CAST(qty AS DOUBLE)) AS a FROM orders "
                     "GROUP BY CAST(user_id AS BIGINT)"));
  INFO(joined(kept.lines()));
  REQUIRE(kept.operators.size() == 1);
  CHECK(kept.operators[0].fate == StateFate::Kept);
  CHECK(has(kept.lines(), "the GROUP BY key user_id widened from INT to BIGINT"));
  CHECK(has(kept.lines(), "the argument of avg(qty) widened from INT to DOUBLE: its accumulator reads as is"));

  StatePlan refused = planStateChange(
      a, narrow.flow("CREATE FLOW f INTO alerts AS SELECT CAST(user_id AS DOUBLE) AS user_id, "
                     "sum(CAST(qty AS DOUBLE)) AS s, avg(qty) AS a FROM orders "
                     "GROUP BY CAST(user_id AS DOUBLE)"));
  INFO(joined(refused.lines()));
  REQUIRE(refused.operators.size() == 1);
  CHECK(refused.operators[0].fate == StateFate::Incompatible);
  const std::string why = refused.reasonsText();
  CHECK(why.find("the GROUP BY key user_id widened from INT to DOUBLE, but keys are stored in their type's encoding, and DOUBLE's differs from INT's") != std::string::npos);
  CHECK(why.find("the argument of sum(qty) widened from INT to DOUBLE, but the accumulator is a BIGINT for INT and a DOUBLE for DOUBLE: the encoding differs") != std::string::npos);
  CHECK(has(refused.lines(), "the change is refused without RESET STATE"));
}

TEST_CASE_FIXTURE(WideningFixture, "widening is refused where the state keeps values of the old type") {
  StatePlan distinct = planStateChange(
      narrow.flow("CREATE FLOW f INTO alerts AS SELECT user_id, count(DISTINCT price) AS c FROM orders GROUP BY user_id"),
      narrow.flow("CREATE FLOW f INTO alerts AS SELECT user_id, "
                  "count(DISTINCT CAST(price AS DECIMAL(7,3))) AS c FROM orders GROUP BY user_id"));
  INFO(joined(distinct.lines()));
  REQUIRE(distinct.operators.size() == 1);
  CHECK(distinct.operators[0].fate == StateFate::Incompatible);
  CHECK(distinct.reasonsText().find("the argument of count(DISTINCT price) widened from DECIMAL(5,2) to DECIMAL(7,3), but DISTINCT keeps each value in its type's key encoding") != std::string::npos);

  const std::string windowed =
      "CREATE FLOW f INTO alerts AS SELECT window.start, user_id, count(*) AS n FROM orders "
      "GROUP BY window(ts, '1 minute'), user_id EMIT ON WINDOW CLOSE";
  StatePlan closing = planStateChange(narrow.flow(windowed), wide.flow(windowed));
  INFO(joined(closing.lines()));
  REQUIRE(closing.operators.size() == 1);
  CHECK(closing.operators[0].fate == StateFate::Incompatible);
  CHECK(closing.reasonsText().find("the GROUP BY key user_id widened from INT to BIGINT, but EMIT ON WINDOW CLOSE keeps each window's key values with their old type") != std::string::npos);

  const std::string dedup = "CREATE FLOW f INTO alerts AS SELECT DISTINCT ON (user_id) user_id, qty FROM orders";
  StatePlan distinctOn = planStateChange(narrow.flow(dedup), wide.flow(dedup));
  INFO(joined(distinctOn.lines()));
  REQUIRE(distinctOn.operators.size() == 1);
  CHECK(distinctOn.operators[0].fate == StateFate::Kept);
  CHECK(has(distinctOn.lines(), "the DISTINCT ON key user_id widened from INT to BIGINT: its stored keys read as BIGINT"));
}

TEST_CASE_FIXTURE(WideningFixture, "min and max keep their values when the argument widens") {
  PhysicalPlan a = narrow.flow(
      "CREATE FLOW f INTO alerts AS SELECT user_id, min(qty) AS lo, max(qty) AS hi, "
      "min(price) AS lp, max(price) AS hp, count(qty) AS c FROM orders GROUP BY user_id");
  StatePlan kept = planStateChange(
      a, narrow.flow("CREATE FLOW f INTO alerts AS SELECT user_id, min(CAST(qty AS BIGINT)) AS lo, "
                     "max(CAST(qty AS DECIMAL(12,2))) AS hi, min(CAST(price AS DECIMAL(9,4))) AS lp, "
                     "max(price) AS hp, count(CAST(qty AS DECIMAL(10,0))) AS c "
                     "FROM orders GROUP BY user_id"));
  INFO(joined(kept.lines()));
  REQUIRE(kept.operators.size() == 1);
  CHECK(kept.operators[0].fate == StateFate::Kept);
  CHECK(has(kept.lines(), "the argument of min(qty) widened from INT to BIGINT: its kept values read as BIGINT"));
  CHECK(has(kept.lines(), "the argument of max(qty) widened from INT to DECIMAL(12,2): its kept values read as DECIMAL(12,2)"));
  CHECK(has(kept.lines(), "the argument of min(price) widened from DECIMAL(5,2) to DECIMAL(9,4): its kept values read as DECIMAL(9,4)"));
  CHECK(has(kept.lines(), "the argument of count(qty) widened from INT to DECIMAL(10,0)"));

  // A DOUBLE holds every DECIMAL(5,2) only approximately: no widening.
  StatePlan toDouble = planStateChange(
      a, narrow.flow("CREATE FLOW f INTO alerts AS SELECT user_id, min(qty) AS lo, max(qty) AS hi, "
                     "min(price) AS lp, max(CAST(price AS DOUBLE)) AS hp, count(qty) AS c "
                     "FROM orders GROUP BY user_id"));
  INFO(joined(toDouble.lines()));
  CHECK(toDouble.operators[0].fate == StateFate::Incompatible);
  CHECK(toDouble.reasonsText().find("the argument of max(price) changed from DECIMAL(5,2) to DOUBLE, which is no widening") != std::string::npos);
}

TEST_CASE_FIXTURE(WideningFixture, "INT to DECIMAL and a DECIMAL's scale keep state only where the encoding stays") {
  PhysicalPlan a = narrow.flow(
      "CREATE FLOW f INTO alerts AS SELECT user_id, sum(qty) AS s, sum(price) AS p FROM orders GROUP BY user_id");
  StatePlan refused = planStateChange(
      a, narrow.flow("CREATE FLOW f INTO alerts AS SELECT CAST(user_id AS DECIMAL(10,0)) AS user_id, "
                     "sum(CAST(qty AS DECIMAL(12,2))) AS s, sum(CAST(price AS DECIMAL(9,4))) AS p "
                     "FROM orders GROUP BY CAST(user_id AS DECIMAL(10,0))"));
  INFO(joined(refused.lines()));
  REQUIRE(refused.operators.size() == 1);
  CHECK(refused.operators[0].fate == StateFate::Incompatible);
  const std::string why = refused.reasonsText();
  CHECK(why.find("the GROUP BY key user_id widened from INT to DECIMAL(10,0), but keys are stored in their type's encoding") != std::string::npos);
  CHECK(why.find("the argument of sum(qty) widened from INT to DECIMAL(12,2), but the accumulator is a BIGINT for INT and an unscaled DECIMAL at scale 2 for DECIMAL(12,2)") != std::string::npos);
  CHECK(why.find("the argument of sum(price) widened from DECIMAL(5,2) to DECIMAL(9,4), but the accumulator is an unscaled DECIMAL at scale 2") != std::string::npos);

  // An INT needs 10 digits before the point: DECIMAL(9,0) is no widening.
  StatePlan tooNarrow = planStateChange(
      a, narrow.flow("CREATE FLOW f INTO alerts AS SELECT user_id, sum(qty) AS s, sum(price) AS p, "
                     "max(CAST(qty AS DECIMAL(9,0))) AS m FROM orders GROUP BY user_id"));
  CHECK(tooNarrow.operators[0].fate == StateFate::Kept);  // an appended aggregate starts empty
  StatePlan minNarrow = planStateChange(
      narrow.flow("CREATE FLOW f INTO alerts AS SELECT user_id, max(qty) AS m FROM orders GROUP BY user_id"),
      narrow.flow("CREATE FLOW f INTO alerts AS SELECT user_id, max(CAST(qty AS DECIMAL(9,0))) AS m "
                  "FROM orders GROUP BY user_id"));
  INFO(joined(minNarrow.lines()));
  CHECK(minNarrow.operators[0].fate == StateFate::Incompatible);
  CHECK(minNarrow.reasonsText().find("the argument of max(qty) changed from INT to DECIMAL(9,0), which is no widening") != std::string::npos);
}

TEST_CASE_FIXTURE(WideningFixture, "over a retracting input, min and max widen only within a key encoding") {
  // A GROUP BY over a GROUP BY's updates: the outer min keeps every value,
  // and the sink takes its retractions.
  narrow.ddl("CREATE SINK changes WITH (connector = 'kafka', 'kafka.bootstrap.servers' = "
             "'embedded', topic = 'changes', format = 'debezium-json');");
  const std::string inner = "SELECT user_id, sum(qty) AS s, max(qty) AS q FROM orders GROUP BY user_id";
  StatePlan p = planStateChange(
      narrow.flow("CREATE FLOW f INTO changes AS SELECT s, min(q) AS m FROM (" + inner + ") t GROUP BY s"),
      narrow.flow("CREATE FLOW f INTO changes AS SELECT s, min(CAST(q AS DECIMAL(12,2))) AS m FROM (" + inner +
                  ") t GROUP BY s"));
  INFO(joined(p.lines()));
  CHECK_FALSE(p.compatible());
  CHECK(p.reasonsText().find("the argument of min(t.q) widened from INT to DECIMAL(12,2), but over a retracting input min() keeps every value in its type's key encoding") != std::string::npos);
  StatePlan same = planStateChange(
      narrow.flow("CREATE FLOW f INTO changes AS SELECT s, min(q) AS m FROM (" + inner + ") t GROUP BY s"),
      narrow.flow("CREATE FLOW f INTO changes AS SELECT s, min(CAST(q AS BIGINT)) AS m FROM (" + inner +
                  ") t GROUP BY s"));
  INFO(joined(same.lines()));
  CHECK(same.compatible());
  CHECK(has(same.lines(), "the argument of min(t.q) widened from INT to BIGINT: its kept values read as BIGINT"));
}
