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
