// A holder that could not answer a read of a view is not asked again for a
// while (server/views/holder_outages.h): the reads then go to the standby
// copy at once, until the window ends or another node holds the view.
#include <doctest/doctest.h>

#include "server/views/holder_outages.h"

using namespace rtsql;
using namespace std::chrono_literals;

namespace {
const HolderOutages::Clock::time_point t0{};
const std::string kError = "node \"a\", which cannot be reached, holds materialized view \"v\"";
}  // namespace

TEST_CASE("holder outages: a holder that failed is skipped within the window, then asked again") {
  HolderOutages outages(5s);
  CHECK_FALSE(outages.skip("v", "a", t0));
  outages.failed("v", "a", kError, t0);
  std::optional<std::string> why = outages.skip("V", "a", t0 + 1200ms);
  REQUIRE(why);
  CHECK(why->find(kError) == 0);
  CHECK(why->find("1200 ms ago") != std::string::npos);
  CHECK(outages.skip("v", "a", t0 + 4999ms));
  // Reads do not renew it.
  CHECK_FALSE(outages.skip("v", "a", t0 + 5s));
  CHECK_FALSE(outages.skip("v", "a", t0 + 5100ms));
}

TEST_CASE("holder outages: another holder of the view, another view, or a forgotten one is asked") {
  HolderOutages outages(5s);
  outages.failed("v", "a", kError, t0);
  outages.failed("w", "a", kError, t0);
  CHECK_FALSE(outages.skip("x", "a", t0 + 1s));
  // The view moved to node b: b is asked, and a is no longer remembered.
  CHECK_FALSE(outages.skip("v", "b", t0 + 1s));
  CHECK_FALSE(outages.skip("v", "a", t0 + 2s));
  CHECK(outages.skip("w", "a", t0 + 1s));
  outages.forget("W");
  CHECK_FALSE(outages.skip("w", "a", t0 + 1s));
}

TEST_CASE("holder outages: a read that began before the failure asks the holder") {
  HolderOutages outages(5s);
  outages.failed("v", "a", kError, t0 + 10s);
  CHECK_FALSE(outages.skip("v", "a", t0 + 9s));
  CHECK(outages.skip("v", "a", t0 + 11s));
}
