// The source-side watermark: the minimum over partitions, idle partitions left
// out only when caught up and quiet for the idle timeout of delivery time, so
// that pauses, lulls and the order in which partitions are read never let one
// partition move the watermark past another's on-time records.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <vector>

#include "executor/watermark_tracker.h"

using namespace rtsql;

namespace {

constexpr int64_t kSecond = 1000 * 1000;
constexpr int64_t kTimeout = 10 * kSecond;
constexpr int64_t kDelay = 2 * kSecond;

// One source task polled by hand: `poll` delivers the given records
// (partition -> event time) at monotonic time `now` and updates the tracker.
struct Task {
  explicit Task(std::vector<int32_t> partitions, ActivityClock* shared = nullptr)
      : ownClock(kTimeout / 10), clock(shared ? *shared : ownClock), times(kDelay, kTimeout) {
    for (int32_t p : partitions) {
      times.at(p, clock.now());
      caughtUp[p] = true;
    }
  }

  PartitionWatermarks::Result poll(int64_t now, const std::vector<std::pair<int32_t, int64_t>>& records) {
    for (const auto& [p, t] : records) PartitionWatermarks::record(times.at(p, clock.now()), t);
    if (!records.empty()) clock.delivered(now);
    last = times.update(clock.now(), [&](int32_t p) { return caughtUp.at(p); });
    return last;
  }

  ActivityClock ownClock;
  ActivityClock& clock;
  PartitionWatermarks times;
  std::map<int32_t, bool> caughtUp;
  PartitionWatermarks::Result last;
};

}  // namespace

TEST_CASE("the activity clock counts deliveries, and a pause only up to its cap") {
  ActivityClock c(kSecond);
  CHECK(c.now() == 0);
  c.delivered(100 * kSecond);  // the first delivery starts it
  CHECK(c.now() == 0);
  c.delivered(100 * kSecond + 300'000);
  CHECK(c.now() == 300'000);
  c.delivered(160 * kSecond);  // a minute of nothing counts as one second
  CHECK(c.now() == 1'300'000);
  c.delivered(150 * kSecond);  // an earlier time (another task's) adds nothing
  CHECK(c.now() == 1'300'000);
}

TEST_CASE("a partition that has not delivered yet holds the watermark") {
  Task t({0, 1});
  auto r = t.poll(0, {{0, 100 * kSecond}});
  CHECK(r.watermark == INT64_MIN);
  CHECK_FALSE(r.allIdle);
  r = t.poll(1000, {{1, 50 * kSecond}});
  CHECK(r.watermark == 48 * kSecond);
  r = t.poll(2000, {{1, 200 * kSecond}});
  CHECK(r.watermark == 98 * kSecond);
}

TEST_CASE("after a lull longer than the idle timeout, the first partition back does not run ahead") {
  Task t({0, 1});
  int64_t now = 0;
  for (int i = 0; i < 10; ++i) {
    t.poll(now, {{0, i * kSecond}, {1, i * kSecond}});
    now += 100'000;
  }
  CHECK(t.last.watermark == 7 * kSecond);
  // 15 seconds of nothing at all, polled every 50 ms.
  for (int i = 0; i < 300; ++i) {
    now += 50'000;
    CHECK(t.poll(now, {}).watermark == 7 * kSecond);
  }
  // The burst: partition 0 is read first, all of it, before partition 1.
  for (int i = 10; i < 210; ++i) {
    now += 1000;
    auto r = t.poll(now, {{0, i * kSecond}});
    REQUIRE(r.watermark == 7 * kSecond);  // partition 1 still holds it
  }
  auto r = t.poll(now + 1000, {{1, 10 * kSecond}});
  CHECK(r.watermark == 8 * kSecond);
}

TEST_CASE("a partition quiet while the others deliver is idle only once caught up") {
  Task t({0, 1});
  int64_t now = 0;
  t.poll(now, {{0, 0}, {1, 0}});
  int64_t event = 0;
  // Partition 1 has records it has not read: slow, not idle, however long.
  t.caughtUp[1] = false;
  for (int i = 0; i < 400; ++i) {
    now += 100'000;
    event += kSecond;
    REQUIRE(t.poll(now, {{0, event}}).watermark == -kDelay);
  }
  // Caught up: it has been quiet for 40 s of delivery time, so it is idle.
  t.caughtUp[1] = true;
  now += 100'000;
  event += kSecond;
  auto r = t.poll(now, {{0, event}});
  CHECK(r.watermark == event - kDelay);
  CHECK(t.times.partitions().at(1).idle);
  CHECK_FALSE(r.allIdle);
  // The broker shows records again: it holds the watermark where it is.
  t.caughtUp[1] = false;
  now += 100'000;
  r = t.poll(now, {{0, event + kSecond}});
  CHECK(r.watermark == -kDelay);  // the task keeps its own watermark monotonic
  CHECK_FALSE(t.times.partitions().at(1).idle);
  // It delivers: back in the minimum at once.
  r = t.poll(now + 1000, {{1, 5 * kSecond}});
  CHECK(r.watermark == 3 * kSecond);
}

TEST_CASE("a partition quiet for less than the timeout of delivery time is not idle") {
  Task t({0, 1});
  int64_t now = 0;
  t.poll(now, {{0, 0}, {1, 0}});
  // Partition 0 delivers every 2 s for 16 s; the gaps count 1 s each.
  for (int i = 1; i <= 8; ++i) {
    now += 2 * kSecond;
    REQUIRE(t.poll(now, {{0, i * kSecond}}).watermark == -kDelay);
  }
  CHECK(t.clock.now() == 8 * kSecond);
  // Two more deliveries make ten seconds of delivery time: idle.
  now += 2 * kSecond;
  t.poll(now, {{0, 9 * kSecond}});
  now += 2 * kSecond;
  CHECK(t.poll(now, {{0, 10 * kSecond}}).watermark == 8 * kSecond);
}

TEST_CASE("when every partition is idle the watermark does not move") {
  Task t({0, 1});
  int64_t now = 0;
  t.poll(now, {{0, 5 * kSecond}, {1, 5 * kSecond}});
  CHECK(t.last.watermark == 3 * kSecond);
  for (int i = 0; i < 1000; ++i) {
    now += kSecond;
    auto r = t.poll(now, {});
    REQUIRE_FALSE(r.allIdle);  // nothing delivered: no delivery time passes
    REQUIRE(r.watermark == 3 * kSecond);
  }
  // A task without partitions is idle from the start.
  Task none({});
  auto r = none.poll(0, {});
  CHECK(r.allIdle);
  CHECK(r.watermark == INT64_MIN);
}

TEST_CASE("an empty task of a source goes idle only while the flow's other tasks deliver") {
  ActivityClock shared(kTimeout / 10);
  Task busy({0}, &shared);
  Task empty({1}, &shared);
  int64_t now = 0;
  for (int i = 0; i < 99; ++i) {
    now += 100'000;
    busy.poll(now, {{0, i * kSecond}});
    REQUIRE_FALSE(empty.poll(now, {}).allIdle);
  }
  now += 100'000;
  busy.poll(now, {{0, 100 * kSecond}});
  now += 100'000;
  busy.poll(now, {{0, 101 * kSecond}});
  CHECK(empty.poll(now, {}).allIdle);
  // Its first record brings it back.
  auto r = empty.poll(now + 1, {{1, 100 * kSecond}});
  CHECK_FALSE(r.allIdle);
  CHECK(r.watermark == 98 * kSecond);
}

TEST_CASE("partitions going quiet and resuming in every order never drop an on-time row") {
  // Three partitions with ordered event times (one per second of event time
  // per step). In each scenario some partitions go quiet for a while (less
  // than the idle timeout of delivery time, with lulls of any length between),
  // then resume in a given order. An on-time row is one at or above its own
  // partition's max - delay; it must never be below the watermark.
  std::vector<int32_t> order = {0, 1, 2};
  int scenarios = 0;
  do {
    for (int quiet = 1; quiet < 8; ++quiet) {  // which partitions go quiet (bit mask)
      for (int64_t lull : {int64_t(0), 3 * kSecond, 30 * kSecond}) {
        Task t({0, 1, 2});
        std::map<int32_t, int64_t> next = {{0, 0}, {1, 0}, {2, 0}};
        int64_t now = 0;
        auto deliver = [&](int32_t p) {
          now += 10'000;
          int64_t ts = next[p];
          next[p] += kSecond;
          auto before = t.last.watermark;
          REQUIRE(ts >= before);  // on time against the watermark it meets
          t.poll(now, {{p, ts}});
          REQUIRE(t.last.watermark >= before);
        };
        for (int i = 0; i < 5; ++i)
          for (int32_t p : {0, 1, 2}) deliver(p);
        // The quiet ones stop; the others go on for 5 s of delivery time.
        for (int i = 0; i < 50; ++i) {
          now += 100'000;
          for (int32_t p : {0, 1, 2})
            if (!(quiet & (1 << p))) deliver(p);
          if (quiet == 7) t.poll(now, {});
        }
        now += lull;
        t.poll(now, {});
        // They resume in `order`, each catching up on its backlog at once,
        // then everyone goes on.
        for (int32_t p : order) {
          if (!(quiet & (1 << p))) continue;
          while (next[p] < std::max({next[0], next[1], next[2]})) deliver(p);
        }
        for (int i = 0; i < 5; ++i)
          for (int32_t p : order) deliver(p);
        CHECK(t.last.watermark == std::min({next[0], next[1], next[2]}) - kSecond - kDelay);
        ++scenarios;
      }
    }
  } while (std::next_permutation(order.begin(), order.end()));
  CHECK(scenarios == 6 * 7 * 3);
}

TEST_CASE("a source task's step: the watermark only grows, idle is said once, and back from idle says the watermark") {
  Task t({0});
  PartitionWatermarks times(kDelay, kTimeout, 5 * kSecond);  // restored at 5 s
  times.at(0, t.clock.now());
  auto caughtUp = [](int32_t) { return true; };
  using Kind = PartitionWatermarks::Step::Kind;

  // Below the restored watermark: nothing to say.
  PartitionWatermarks::record(times.at(0, t.clock.now()), 6 * kSecond);
  t.clock.delivered(1 * kSecond);
  CHECK(times.step(t.clock.now(), true, caughtUp).kind == Kind::None);
  CHECK(times.current() == 5 * kSecond);

  PartitionWatermarks::record(times.at(0, t.clock.now()), 9 * kSecond);
  t.clock.delivered(1 * kSecond + 1000);
  PartitionWatermarks::Step s = times.step(t.clock.now(), true, caughtUp);
  CHECK(s.kind == Kind::Watermark);
  CHECK(s.watermark == 7 * kSecond);
  CHECK(times.step(t.clock.now(), true, caughtUp).kind == Kind::None);

  // Quiet for the idle timeout of delivery time (another task delivers).
  for (int i = 1; i <= 12; ++i) t.clock.delivered(1 * kSecond + 1000 + i * kSecond);
  s = times.step(t.clock.now(), true, caughtUp);
  CHECK(s.kind == Kind::Idle);
  CHECK(times.step(t.clock.now(), true, caughtUp).kind == Kind::None);  // said once
  CHECK(times.current() == 7 * kSecond);

  // Back with an older record: the watermark stays, but is said again.
  PartitionWatermarks::record(times.at(0, t.clock.now()), 8 * kSecond);
  s = times.step(t.clock.now(), true, caughtUp);
  CHECK(s.kind == Kind::Watermark);
  CHECK(s.watermark == 7 * kSecond);
}

TEST_CASE("a task that writes the sink never says it is idle") {
  Task t({0});
  PartitionWatermarks times(kDelay, kTimeout);
  times.at(0, t.clock.now());
  for (int i = 0; i <= 12; ++i) t.clock.delivered(i * kSecond);
  CHECK(times.step(t.clock.now(), false, [](int32_t) { return true; }).kind ==
        PartitionWatermarks::Step::Kind::None);
}

TEST_CASE("a shuffle task's watermark is the minimum over its producers that are not idle") {
  InputWatermarks in(3);
  CHECK_FALSE(in.watermark(0, 100));
  CHECK_FALSE(in.watermark(1, 50));  // producer 2 has none yet
  CHECK(in.current() == INT64_MIN);
  CHECK(in.watermark(2, 70));
  CHECK(in.current() == 50);
  CHECK_FALSE(in.watermark(1, 40));  // a producer never goes back
  CHECK(in.watermark(1, 80));
  CHECK(in.current() == 70);
  // Producer 2 idle: the others decide.
  CHECK(in.idle(2));
  CHECK(in.current() == 80);
  // Back from idle with an older watermark: the task's stays.
  CHECK_FALSE(in.watermark(2, 75));
  CHECK(in.current() == 80);
  CHECK_FALSE(in.watermark(2, 200));  // producer 1 holds it at 80
  CHECK(in.watermark(1, 150));
  CHECK(in.current() == 100);
}

TEST_CASE("with every producer idle a shuffle task's watermark does not move") {
  InputWatermarks in(2, 30);  // restored at 30
  CHECK_FALSE(in.watermark(0, 20));
  CHECK_FALSE(in.idle(1));
  CHECK(in.watermark(0, 60));
  CHECK(in.current() == 60);
  CHECK_FALSE(in.idle(0));
  CHECK(in.current() == 60);
  CHECK(in.watermark(1, 90));  // producer 0 stays idle
  CHECK(in.current() == 90);
}

TEST_CASE("the flow's watermark is the minimum over its last tasks that have one") {
  FlowWatermark none;
  CHECK(none.value() == INT64_MIN);
  FlowWatermark wm;
  wm.add(INT64_MIN);  // a task that has seen no event time yet
  CHECK(wm.value() == INT64_MIN);
  wm.add(300);
  wm.add(INT64_MIN);
  wm.add(200);
  CHECK(wm.value() == 200);
}
