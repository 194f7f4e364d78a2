// The rate detector that chooses a Kafka source's fetch mode
// (connectors/kafka/fetch_rate.h): batching only after the rate stayed high
// for some windows, prompt again only after it stayed below half of it, and
// an idle source's polls without records close its windows.
#include <doctest/doctest.h>

#include "connectors/kafka/fetch_rate.h"

using namespace rtsql::kafka;

namespace {

constexpr int64_t kSecond = 1'000'000;

FetchRateDetector::Settings settingsAt(int64_t rate) {
  FetchRateDetector::Settings s;
  s.rate = rate;
  return s;
}

// Feeds `perSecond` records a second for `seconds` seconds from `start`, in
// polls of 10 ms; returns the mode after the last and moves `start` on.
FetchMode feed(FetchRateDetector& d, int64_t& start, int64_t perSecond, int seconds) {
  FetchMode mode = d.mode();
  for (int i = 0; i < seconds * 100; ++i) {
    mode = d.add(perSecond / 100, start);
    start += kSecond / 100;
  }
  return mode;
}

}  // namespace

TEST_CASE("fetch rate: batching after three fast windows in a row, not before") {
  FetchRateDetector d(settingsAt(5000));
  int64_t now = 0;
  CHECK(feed(d, now, 10000, 3) == FetchMode::Prompt);  // the third window is not closed yet
  CHECK(d.add(0, now) == FetchMode::Batching);
}

TEST_CASE("fetch rate: a slow window breaks the streak") {
  FetchRateDetector d(settingsAt(5000));
  int64_t now = 0;
  feed(d, now, 10000, 2);
  feed(d, now, 1000, 1);
  CHECK(feed(d, now, 10000, 2) == FetchMode::Prompt);
  CHECK(feed(d, now, 10000, 2) == FetchMode::Batching);
}

TEST_CASE("fetch rate: below the threshold but above half of it keeps batching") {
  FetchRateDetector d(settingsAt(5000));
  int64_t now = 0;
  feed(d, now, 8000, 4);
  REQUIRE(d.mode() == FetchMode::Batching);
  // 3,000 a second: no longer fast, not yet slow.
  CHECK(feed(d, now, 3000, 10) == FetchMode::Batching);
  CHECK(feed(d, now, 2000, 3) == FetchMode::Prompt);
}

TEST_CASE("fetch rate: an idle source goes back to prompt fetches by its empty polls") {
  FetchRateDetector d(settingsAt(5000));
  int64_t now = 0;
  feed(d, now, 20000, 4);
  REQUIRE(d.mode() == FetchMode::Batching);
  // Polls that find nothing return about once a second: the first closes
  // the window of the last records, the next two are slow ones.
  CHECK(d.add(0, now += kSecond) == FetchMode::Batching);
  CHECK(d.add(0, now += kSecond) == FetchMode::Batching);
  CHECK(d.add(0, now += kSecond) == FetchMode::Prompt);
}

TEST_CASE("fetch rate: a long gap counts as that many windows") {
  FetchRateDetector d(settingsAt(5000));
  int64_t now = 0;
  feed(d, now, 20000, 4);
  REQUIRE(d.mode() == FetchMode::Batching);
  d.add(0, now);
  CHECK(d.add(0, now + 5 * kSecond) == FetchMode::Prompt);
}

TEST_CASE("fetch rate: a burst shorter than the windows never switches") {
  FetchRateDetector d(settingsAt(5000));
  int64_t now = 0;
  // A backlog of 100,000 records read in 0.2 s, then a trickle.
  for (int i = 0; i < 20; ++i) d.add(5000, now += kSecond / 100);
  CHECK(feed(d, now, 100, 5) == FetchMode::Prompt);
}

TEST_CASE("fetch rate: a rate of 0 never batches") {
  FetchRateDetector d(settingsAt(0));
  int64_t now = 0;
  CHECK(feed(d, now, 1'000'000, 10) == FetchMode::Prompt);
}
