// Operators are the steps of a stage, fused inside one task: a source task
// pushes each decoded record into the first operator, which pushes what it
// produces into the next, down to the stage's terminal operator (the sink
// writer, later a shuffle writer). Pushing one record at a time keeps a record's
// latency to the work done on it; there is no batching delay anywhere.
//
// Every operator of a task runs on that task's thread only, so operators need no
// locks; the stats they keep are atomics because progress requests read them
// from other threads.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/value.h"

namespace rtsql {

// What travels with a row through the operators of a stage: the timestamps that
// latency metrics are computed from.
struct RecordContext {
  int64_t sourceTimestampMicros = 0;  // the input record's Kafka timestamp
  int64_t readMicros = 0;             // when the source task received it
};

struct OperatorStats {
  std::atomic<uint64_t> rowsIn{0};
  std::atomic<uint64_t> rowsOut{0};
};

class Operator {
 public:
  virtual ~Operator() = default;
  // Takes one row; may modify it in place and pass it on.
  virtual void push(Row& row, const RecordContext& ctx) = 0;
  virtual std::string name() const = 0;

  void setNext(Operator* next) { next_ = next; }
  const OperatorStats& stats() const { return stats_; }

 protected:
  void emit(Row& row, const RecordContext& ctx) {
    stats_.rowsOut.fetch_add(1, std::memory_order_relaxed);
    next_->push(row, ctx);
  }

  Operator* next_ = nullptr;
  OperatorStats stats_;
};

using OperatorPtr = std::unique_ptr<Operator>;

}  // namespace rtsql
