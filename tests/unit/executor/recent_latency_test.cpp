// RecentLatency: which interval a reader gets as "the last complete one",
// across the task's turnovers, gaps with no rows, and several tasks merged.
// Times are given explicitly: nothing here depends on the clock.
#include "executor/metrics/recent_latency.h"

#include <doctest/doctest.h>

#include <thread>

using namespace rtsql;

namespace {

constexpr int64_t kI = RecentLatency::kIntervalMicros;

// The start of interval `n` plus `offset` microseconds.
int64_t at(int64_t n, int64_t offset = 0) {
  return n * kI + offset;
}

}  // namespace

TEST_CASE("the last complete interval is the one before the reader's") {
  RecentLatency r;
  r.record(at(10, 1), 100, 900, 1000);
  r.record(at(10, 2), 300, 2700, 3000);
  r.record(at(11, 1), 7, 63, 70);  // the task has moved on to interval 11

  IntervalLatency during;  // read during interval 11: interval 10 is complete
  r.mergeLastComplete(at(11, 5), during);
  CHECK(during.index == 10);
  CHECK(during.e2e.count() == 2);
  CHECK(during.processing.min() == 100);
  CHECK(during.processing.max() == 300);
  CHECK(during.e2e.max() == 3000);
  CHECK(during.sourceQueuing.count() == 2);
  CHECK(during.sourceQueuing.max() == 2700);

  IntervalLatency later;  // read during interval 12: interval 11 holds the one row
  r.mergeLastComplete(at(12, 5), later);
  CHECK(later.index == 11);
  CHECK(later.e2e.count() == 1);
  CHECK(later.e2e.max() == 70);
}

TEST_CASE("an interval with no rows reads as empty, not as an older one") {
  RecentLatency r;
  r.record(at(20), 5, 45, 50);
  r.record(at(23), 6, 54, 60);  // nothing in 21 and 22

  IntervalLatency gap;
  r.mergeLastComplete(at(23, 1), gap);  // interval 22: no rows
  CHECK(gap.index == 22);
  CHECK(gap.e2e.count() == 0);

  IntervalLatency stale;
  r.mergeLastComplete(at(30), stale);  // interval 29: long after the last row
  CHECK(stale.index == 29);
  CHECK(stale.e2e.count() == 0);

  IntervalLatency before;
  r.mergeLastComplete(at(21), before);  // interval 20 was turned over at 23
  CHECK(before.e2e.count() == 0);
}

TEST_CASE("the tasks' intervals merge into the flow's") {
  RecentLatency a, b, idle;
  for (int i = 1; i <= 90; ++i) a.record(at(40, i), i, 9 * i, 10 * i);
  for (int i = 1; i <= 10; ++i) b.record(at(40, i), 1000 + i, 99000, 100000 + i);
  a.record(at(41), 1, 0, 1);

  IntervalLatency flow;
  for (const RecentLatency* t : {&a, &b, &idle}) t->mergeLastComplete(at(41, 10), flow);
  CHECK(flow.index == 40);
  CHECK(flow.e2e.count() == 100);
  CHECK(flow.processing.min() == 1);
  CHECK(flow.processing.max() == 1010);
  // 90 of the 100 rows are the fast task's: the median is among them, the
  // 99th percentile among the slow task's (within the histogram's 3%).
  CHECK(flow.e2e.percentile(0.5) <= 900);
  CHECK(flow.e2e.percentile(0.99) >= 97000);
}

TEST_CASE("a reader merges while the task records and turns over") {
  RecentLatency r;
  std::thread task([&] {
    for (int n = 0; n < 200; ++n) {
      for (int i = 0; i < 50; ++i) r.record(at(n, i), i, 0, i);
    }
  });
  uint64_t seen = 0;
  for (int n = 1; n <= 200; ++n) {
    IntervalLatency out;
    r.mergeLastComplete(at(n), out);
    CHECK(out.e2e.count() <= 50);
    seen += out.e2e.count();
  }
  task.join();
  IntervalLatency last;
  r.mergeLastComplete(at(200), last);
  CHECK(last.index == 199);
  CHECK(last.e2e.count() == 50);
  CHECK(seen <= 200u * 50);
}
