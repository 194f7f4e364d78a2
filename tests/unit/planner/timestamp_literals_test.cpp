// TIMESTAMP literals in flows (planner/timestamp_literals.h): read in the
// flow's zone, its option 'timezone'; a flow recorded before that (its
// setting "off", as a restart gives it) reads them in UTC still.
#include <doctest/doctest.h>

#include "planner/timestamp_literals.h"
#include "planner_fixture.h"

using namespace rtsql;
using rtsql::testing::PlannerFixture;

namespace {

const char* kFlow =
    "CREATE FLOW f INTO alerts WITH ('timezone' = 'America/New_York') AS "
    "SELECT user_id FROM clicks WHERE ts >= TIMESTAMP '2024-01-01 00:00:00'";

}  // namespace

TEST_CASE("timestamp literals: a flow reads them in its zone") {
  PlannerFixture f;
  rtsql::testing::addClicksAndSinks(f);
  const std::string plan = f.flow(kFlow).explain();
  // Midnight in New York is 05:00 UTC, as EXPLAIN prints an instant.
  CHECK_MESSAGE(plan.find("TIMESTAMP '2024-01-01 05:00:00'") != std::string::npos, plan);
}

TEST_CASE("timestamp literals: a flow recorded before reads them in UTC") {
  PlannerFixture f;
  rtsql::testing::addClicksAndSinks(f);
  f.ctx.session.set(kTimestampLiteralsSetting, "off");
  const std::string plan = f.flow(kFlow).explain();
  CHECK_MESSAGE(plan.find("TIMESTAMP '2024-01-01 00:00:00'") != std::string::npos, plan);
}
