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
#include <vector>

#include "executor/metrics/histogram.h"
#include "executor/metrics/owned_counter.h"
#include "executor/metrics/recent_latency.h"

namespace rtsql {

// The counters are written by the owning task thread only (addOwned) and
// read by any thread.
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

// An operator's rowsIn/rowsOut (OperatorStats), as counted since its task started.
struct RowCounts {
  uint64_t in = 0;
  uint64_t out = 0;
};

// Owned by one task. current() is for the task thread; withCurrent() lets any
// thread read the live epoch safely while the task may be rotating it.
//
// It also keeps each operator's row counts at the start of the epoch: an
// operator counts its rows once, since the task started, and an epoch's rows
// are its counts now minus those. So per-epoch row counts cost the record path
// nothing.
class TaskMetricsSlot {
 public:
  TaskMetricsSlot() : current_(std::make_unique<EpochMetrics>()), raw_(current_.get()) {}

  EpochMetrics& current() { return *raw_; }
  // The latencies of the last seconds, across epochs (recent_latency.h).
  RecentLatency& recent() { return recent_; }
  const RecentLatency& recent() const { return recent_; }

  // Task thread: replaces the current epoch's metrics and returns the finished
  // ones. `rows` holds the operators' counts now; it is given back as the
  // finished epoch's rows, and the next epoch starts from the counts now.
  std::unique_ptr<EpochMetrics> rotate(std::vector<RowCounts>& rows) {
    auto fresh = std::make_unique<EpochMetrics>();
    std::lock_guard lock(mu_);
    std::swap(fresh, current_);
    raw_ = current_.get();
    rowsAtStart_.resize(rows.size());
    for (size_t i = 0; i < rows.size(); ++i) {
      const RowCounts now = rows[i];
      rows[i] = {now.in - rowsAtStart_[i].in, now.out - rowsAtStart_[i].out};
      rowsAtStart_[i] = now;
    }
    return fresh;
  }

  // f(the live epoch's metrics, each operator's counts when it began).
  template <typename F>
  void withCurrent(F&& f) const {
    std::lock_guard lock(mu_);
    f(*current_, rowsAtStart_);
  }

 private:
  mutable std::mutex mu_;
  std::unique_ptr<EpochMetrics> current_;
  EpochMetrics* raw_;
  std::vector<RowCounts> rowsAtStart_;
  RecentLatency recent_;
};

}  // namespace rtsql
