// Operators are the steps of a stage, fused inside one task: a source task
// pushes each decoded record into the first operator, which pushes what it
// produces into the next, down to the stage's terminal operator (the sink
// writer, later a shuffle writer). Pushing one record at a time keeps a record's
// latency to the work done on it; there is no batching delay anywhere.
//
// Every operator of a task runs on that task's thread only, so operators need no
// locks; the stats they keep are atomics because progress requests read them
// from other threads. Only the owning task thread writes them, so a count is a
// relaxed load and store (count()), never a locked read-modify-write: the
// per-record cost stays that of a plain increment.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/error.h"
#include "common/row_kind.h"
#include "common/value.h"
#include "executor/metrics/owned_counter.h"

namespace rtsql {

class Operator;
class RowErrors;
bool takeRowError(RowErrors* errors, const SqlError& e, const Operator& op, const Row& row,
                  int input);

// What travels with a row through the operators of a stage: the timestamps that
// latency metrics are computed from, and what the row means to the operator
// that takes it (an insert unless the stream carries retractions).
struct RecordContext {
  int64_t sourceTimestampMicros = 0;  // the input record's Kafka timestamp
  int64_t readMicros = 0;             // when the source task received it
  RowKind kind = RowKind::Insert;
};

struct OperatorStats {
  // Adds one to a stat that only the owning task thread writes. Other threads
  // may read it at any time (a relaxed load sees a recent value), but a second
  // writer would lose counts.
  static void count(std::atomic<uint64_t>& stat) { addOwned<uint64_t>(stat); }

  std::atomic<uint64_t> rowsIn{0};
  std::atomic<uint64_t> rowsOut{0};
  // Stateful operators only (progress JSON `stateOperators`).
  std::atomic<uint64_t> numRowsTotal{0};               // keys/rows held in state now
  std::atomic<uint64_t> numRowsUpdated{0};             // state rows written, since the epoch began
  std::atomic<uint64_t> numRowsDroppedByWatermark{0};  // late input rows dropped
  // Late input rows written to the flow's 'late.rows.topic' instead.
  std::atomic<uint64_t> numLateRowsDeadLettered{0};
  std::atomic<int64_t> memoryUsedBytes{0};  // state held in memory now
};

class Operator {
 public:
  virtual ~Operator() = default;
  // Takes one row; may modify it in place and pass it on.
  virtual void push(Row& row, const RecordContext& ctx) = 0;
  // The second input of a two-input operator (the right side of a stream-stream
  // join). Other operators never receive it.
  virtual void pushRight(Row& row, const RecordContext& ctx);
  // Event time advanced: `watermarkMicros` is the task's new watermark (the
  // minimum over its inputs). Stateful operators emit what became final, drop
  // what the watermark passed, then forward the call.
  virtual void onWatermark(int64_t watermarkMicros) {
    if (next_) next_->onWatermark(watermarkMicros);
  }
  // The task is through the records it took together (a poll's records, or
  // a shuffle inbox): an operator that holds a change to pair it with the
  // next one (filter.cpp, the sink's change encoders) releases it now, so
  // that nothing waits for a record that may not come. Called once per batch,
  // and also with no records when the time wakeAtMillis() gave has come.
  virtual void onBatchEnd() {
    if (next_) next_->onBatchEnd();
  }
  // The wall-clock time (ms since the Unix epoch) at which an operator of the
  // chain, this one or one after it, has work to do that no input brings (a
  // processor's processing-time timer, a TTL to sweep): the task bounds its
  // wait for input by it and ends a batch then, even an empty one. INT64_MAX
  // when there is none, which is every operator but those that override it,
  // so a flow without them waits as it always did. Asked by the task before
  // each wait, so an answer is cheap: a value the operator keeps, not a state
  // lookup. A time in the past means now; an early answer only costs a
  // wakeup that finds nothing to do.
  virtual int64_t wakeAtMillis() { return next_ ? next_->wakeAtMillis() : kNoWakeup; }
  static constexpr int64_t kNoWakeup = INT64_MAX;
  // Epoch end: stateful operators make their state durable in the state store
  // (StateTable::flush), then forward the call. numRowsUpdated restarts at 0.
  virtual void onEpochEnd() {
    if (next_) next_->onEpochEnd();
  }
  // The rows pushed into this operator are its own: whoever pushes them
  // reads nothing of a row once push() has returned (or thrown), so a column
  // may be taken from it rather than copied. The flow runtime says so to the
  // first operator of each task, whose input is the record the task decoded
  // or took from its shuffle queue; nobody else does (an operator may pass on
  // a row it keeps, or push the same row twice).
  virtual void takeInputRows() {}
  // True for the operators that keep state across records, which are exactly
  // the subclasses of StatefulOperator (stateful_operator.h, which owns the
  // watermark and epoch-end steps above for them).
  virtual bool stateful() const { return false; }
  // Whether an error this operator raises in push() is the pushed row's own,
  // for the flow's 'on.error'. An operator that evaluates rows together
  // (VectorizedBatch) says no: its error belongs to a batch of rows and fails
  // the flow whatever the option says.
  virtual bool errorsAreRows() const { return true; }
  virtual std::string name() const = 0;

  void setNext(Operator* next) { next_ = next; }
  // The flow's 'on.error' when it is not 'fail' (executor/row_errors.h): what
  // becomes of a row the next operator fails on with a data error.
  void sendRowErrorsTo(RowErrors* errors) { rowErrors_ = errors; }
  const OperatorStats& stats() const { return stats_; }

 protected:
  // Counts a row taken by push() or pushRight().
  void countIn() { OperatorStats::count(stats_.rowsIn); }
  // Counts a row passed on (emit() does it for the rows it pushes).
  void countOut() { OperatorStats::count(stats_.rowsOut); }
  // A data error of the next operator on this row is taken here, at that
  // operator's boundary, by the flow's 'on.error' (executor/row_errors.h);
  // with 'fail', or any other error, it goes on up and fails the flow.
  void emit(Row& row, const RecordContext& ctx) {
    countOut();
    try {
      next_->push(row, ctx);
    } catch (const SqlError& e) {
      if (!takeRowError(rowErrors_, e, *next_, row, 0)) throw;
    }
  }

  Operator* next_ = nullptr;
  RowErrors* rowErrors_ = nullptr;
  OperatorStats stats_;
};

inline void Operator::pushRight(Row&, const RecordContext&) {
  throw InternalError(name() + " has no second input");
}

using OperatorPtr = std::unique_ptr<Operator>;

}  // namespace rtsql
