// Per-task, per-epoch counters and latency histograms. The task thread writes
// the current epoch's metrics without locks; a progress request on another
// thread reads them live. At epoch end the task swaps in a fresh EpochMetrics
// and hands the finished one to the flow's coordinator, which merges the tasks'
// epochs into the published progress.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>

#include "executor/metrics/histogram.h"

namespace rtsql {

struct EpochMetrics {
  std::atomic<uint64_t> inputRows{0};
  std::atomic<uint64_t> outputRows{0};
  std::atomic<uint64_t> droppedRows{0};  // filtered out or skipped as undecodable
  std::atomic<int64_t> maxEventTimeMicros{INT64_MIN};
  LatencyHistogram processingLatency;   // sink write - source read
  LatencyHistogram sourceQueuingLatency;  // source read - Kafka timestamp
  LatencyHistogram e2eLatency;          // sink write - Kafka timestamp

  void mergeFrom(const EpochMetrics& o);
};

// Owned by one task. current() is for the task thread; withCurrent() lets any
// thread read the live epoch safely while the task may be rotating it.
class TaskMetricsSlot {
 public:
  TaskMetricsSlot() : current_(std::make_unique<EpochMetrics>()), raw_(current_.get()) {}

  EpochMetrics& current() { return *raw_; }

  // Task thread: replaces the current epoch's metrics and returns the finished ones.
  std::unique_ptr<EpochMetrics> rotate() {
    auto fresh = std::make_unique<EpochMetrics>();
    std::lock_guard lock(mu_);
    std::swap(fresh, current_);
    raw_ = current_.get();
    return fresh;
  }

  template <typename F>
  void withCurrent(F&& f) const {
    std::lock_guard lock(mu_);
    f(*current_);
  }

 private:
  mutable std::mutex mu_;
  std::unique_ptr<EpochMetrics> current_;
  EpochMetrics* raw_;
};

}  // namespace rtsql
