// A task's end of an epoch and its commit (FlowRuntime::endTaskEpoch,
// commitIfRequested): what the task reports to the coordinator
// (executor/epoch_coordinator.h) once everything before its barrier is
// flushed, and what it releases once the epoch is durable. See "Epochs and
// checkpoints" in executor/flow_runtime.h.
#include "common/clock.h"
#include "executor/flow_task.h"
#include "executor/metrics/epoch_summary.h"
#include "executor/state/state_store.h"
#include "executor/state/view_table.h"

namespace rtsql {

namespace {

// How long an epoch end waits for a sink, a dead-letter writer or the
// exchange to acknowledge what it was given.
constexpr int kSinkFlushTimeoutMs = 30000;

}  // namespace

void FlowRuntime::endTaskEpoch(Task& task, bool isSource) {
  int64_t t0 = nowMicros();
  // The coordinator asks for one epoch end at a time, after the one before
  // is durable: that one is committable now, even when this task has not
  // seen it yet (the end of the next one, the final one of a stop in
  // particular, can come in the same turn). It is taken first, so that the
  // sink's rows held back since its barrier go into this epoch's transaction
  // before the flush below (a final epoch never resumes the sink after it),
  // and the state writes held since then are in this epoch's checkpoint.
  commitIfRequested(task);
  uint64_t epoch = task.epochsDone;
  // What this task reports for the epoch, as a summary of its own.
  EpochSummary mine;
  mine.taskWatermarks.push_back({task.stage, task.index, task.watermark.load(std::memory_order_relaxed)});
  if (isSource) {
    // Dead letters are acknowledged before the offsets past them are taken.
    task.source->flushDeadLetters(kSinkFlushTimeoutMs);
    mine.partitions = task.source->progress();
    task.uncommitted.add(epoch, mine.partitions);
    for (const auto& p : mine.partitions) {
      if (p.endOffset >= 0) {
        mine.positions.push_back({task.scanIndex, p.topic, p.partition, p.endOffset, p.position});
      }
    }
  }
  // Late rows are acknowledged before the task reports the epoch: at least
  // once, as the sink's rows.
  if (task.lateRows) task.lateRows->flush(kSinkFlushTimeoutMs);
  if (task.failedRows) task.failedRows->flush(kSinkFlushTimeoutMs);
  // State figures before the flush, which restarts numRowsUpdated.
  mine.addStateOperators(task.stateful);
  // Operators flush their state; then the sink is flushed or the barrier sent,
  // so everything before the barrier is durable below before it is reported.
  task.head()->onEpochEnd();
  if (task.sink) {
    task.sink->flush(kSinkFlushTimeoutMs);
    // The epoch's transaction closes once every task is here: later rows wait.
    if (transaction_) task.sink->pause();
  }
  // A front's rows are in the exchange topic before its positions are taken
  // as the checkpoint's (at least once; the backs drop repeats).
  if (task.exchangeOut) task.exchangeOut->flush(kSinkFlushTimeoutMs);
  if (checkpoints_ && stateStore_) {
    // RocksDB now holds this task's state at the barrier; keep it so until the
    // checkpoint is taken.
    for (const auto& [id, op] : task.stateful) stateStore_->holdWrites(id, task.index, true);
    if (task.viewTable) stateStore_->holdWrites(kViewTableOperatorId, task.index, true);
  }
  if (task.shuffleOut) task.shuffleOut->broadcast(ShuffleMessage::Kind::Barrier, static_cast<int64_t>(epoch));
  std::vector<RowCounts> rows = operatorRows(task);
  std::unique_ptr<EpochMetrics> finished = task.metrics.rotate(rows);
  mine.addOperatorRows(task.stage, task.counted, rows);
  mine.metrics.mergeFrom(*finished);
  if (isSource) {
    mine.decodeErrors = task.source->decodeErrors();
    mine.deadLettersByScan[task.scanIndex] = task.source->deadLetters();
    mine.inputRowsByScan[task.scanIndex] = finished->inputRows.load();
  }
  if (task.rowErrors) {
    mine.rowErrorsSkipped = task.rowErrors->skipped();
    mine.rowErrorsDeadLettered = task.rowErrors->deadLettered();
  }
  mine.commitMicros = nowMicros() - t0;
  ++task.epochsDone;

  epochs_.report(mine);
}

void FlowRuntime::commitIfRequested(Task& task) {
  uint64_t complete = epochs_.committable();
  if (complete <= task.commitsDone) return;
  // Commit the newest complete epoch's barrier offsets; older ones are covered.
  std::optional<std::vector<PartitionProgress>> upTo = task.uncommitted.take(complete);
  if (upTo && plan_.commitOffsets) task.source->commit(*upTo);
  task.commitsDone = complete;
  if (checkpoints_ && stateStore_) {
    for (const auto& [id, op] : task.stateful) stateStore_->holdWrites(id, task.index, false);
    if (task.viewTable) stateStore_->holdWrites(kViewTableOperatorId, task.index, false);
  }
  if (transaction_ && task.sink && !task.finished) task.sink->resume();
}

}  // namespace rtsql
