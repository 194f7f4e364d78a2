// StatefulOperator: the base of every operator that keeps state across
// records (aggregates, dedup, the stream-stream join). It owns what they all
// do the same way, so that each operator holds only its own logic:
//
// - the state, a TimeIndexedTable over the operator's StateTable, whose key
//   layout each operator documents at its top;
// - the watermark step: when the task's watermark advances, the operator's
//   expire() hook emits what became final and drops what the watermark
//   passed, then the state statistics are refreshed and the watermark is
//   forwarded;
// - the epoch-end step: beforeFlush() lets the operator write what it keeps
//   outside the table, the table is made durable (StateTable::flush),
//   numRowsUpdated restarts at 0 and the call is forwarded;
// - the state statistics of the progress JSON (`stateOperators`): rows held
//   (numRowsTotal, from stateRows()), rows updated and dropped as late, and
//   the memory the table holds;
// - late rows: a row the operator can no longer take (late()) is dropped, or
//   with the flow's 'late.rows' = 'dead-letter' handed to the task's
//   FlowDeadLetterWriter (sendLateRowsTo()), as the operator received it.
//
// Being a StatefulOperator is what makes an operator stateful(). The plan's
// answer is its spec's (planner/operator_spec.h), which the flow runtime uses;
// the factory checks, when it builds an operator, that the two agree.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "common/schema.h"
#include "executor/operators/operator.h"
#include "executor/state/state_store.h"
#include "executor/state/time_indexed_table.h"

namespace rtsql {

class FlowDeadLetterWriter;

class StatefulOperator : public Operator {
 public:
  bool stateful() const final { return true; }
  // Advances the watermark (a watermark at or below the current one only is
  // forwarded), expires, refreshes the statistics, forwards.
  void onWatermark(int64_t watermarkMicros) final;
  // Flushes the state, restarts numRowsUpdated, forwards.
  void onEpochEnd() final;
  // 'late.rows' = 'dead-letter': late rows go to `writer` (the task's, which
  // outlives the operator's use of it) rather than being dropped. `inputs`
  // holds the schema of each input (a join's left, then right) and `id` the
  // operator's id in the plan, for the dead letter's headers.
  void sendLateRowsTo(FlowDeadLetterWriter* writer, std::vector<Schema> inputs, int id);

 protected:
  // Throws InternalError when `state` is null.
  explicit StatefulOperator(std::unique_ptr<StateTable> state);

  // Called when the watermark advanced to `watermark` (watermark_ is set
  // already): emits what became final and drops what no later row can reach.
  virtual void expire(int64_t watermark) = 0;
  // Called at epoch end before the flush, to store what the operator keeps in
  // memory only (the stream join's next sequence number). Default: nothing.
  virtual void beforeFlush() {}
  // The rows the operator holds (numRowsTotal): by default the table's
  // entries. An operator whose rows take several entries, or one entry for
  // several rows, says how many rows it holds.
  virtual uint64_t stateRows() const { return state_.size(); }

  // Stores numRowsTotal and memoryUsedBytes.
  void refreshStats();
  // Counts one state row written (numRowsUpdated).
  void countUpdate() { OperatorStats::count(stats_.numRowsUpdated); }
  // An input row at event time `eventTime` below what the operator can still
  // take, on input `input` (a join's 1 is its right side): written to the
  // late-row writer and counted in numLateRowsDeadLettered when there is one,
  // else dropped and counted in numRowsDroppedByWatermark.
  void late(const Row& row, int64_t eventTime, int input = 0);

  TimeIndexedTable state_;
  // The task's watermark as last seen by onWatermark().
  int64_t watermark_ = std::numeric_limits<int64_t>::min();

 private:
  FlowDeadLetterWriter* lateRows_ = nullptr;
  std::vector<Schema> lateInputs_;
  int id_ = 0;
};

}  // namespace rtsql
