// Latency percentiles of the last few seconds, beside the epoch's. An epoch
// lasts minutes (five by default), so its percentiles move slowly and say
// little about what happened just now; a chart of a flow's latency needs a
// value per short interval. Each task keeps the processing, source queuing and
// end-to-end latency of the interval it is in and of the one before, intervals being
// aligned on the wall clock (kIntervalMicros each), so that a reader can
// merge the tasks' last complete interval into one figure for the flow.
//
// The task thread records without locks, like LatencyHistogram; it takes the
// mutex only when a record falls into a new interval (at most once per
// interval), to turn its histograms over. Readers take the mutex.
#pragma once

#include <cstdint>
#include <mutex>

#include "executor/metrics/histogram.h"

namespace rtsql {

// One interval's latencies: of one task, or merged over a flow's tasks.
struct IntervalLatency {
  int64_t index = -1;           // the interval's start / kIntervalMicros; -1 for none
  LatencyHistogram processing;     // sink write - source read
  LatencyHistogram sourceQueuing;  // source read - Kafka timestamp
  LatencyHistogram e2e;            // sink write - Kafka timestamp

  void reset(int64_t newIndex);
  void mergeFrom(const IntervalLatency& o);
};

class RecentLatency {
 public:
  static constexpr int64_t kIntervalMicros = 5'000'000;

  // Task thread: one row written at `nowMicros` with these latencies.
  void record(int64_t nowMicros, int64_t processingMicros, int64_t sourceQueuingMicros,
              int64_t e2eMicros) {
    const int64_t index = nowMicros / kIntervalMicros;
    if (index != current_->index) turnOver(index);
    current_->processing.record(processingMicros);
    current_->sourceQueuing.record(sourceQueuingMicros);
    current_->e2e.record(e2eMicros);
  }

  // Any thread: merges into `out` this task's figures of the last interval
  // complete at `nowMicros` (the one before the interval `nowMicros` is in).
  // A task that wrote nothing in it adds nothing.
  void mergeLastComplete(int64_t nowMicros, IntervalLatency& out) const;

 private:
  void turnOver(int64_t index);

  mutable std::mutex mu_;
  IntervalLatency slots_[2];
  IntervalLatency* current_ = &slots_[0];
  IntervalLatency* previous_ = &slots_[1];
};

}  // namespace rtsql
