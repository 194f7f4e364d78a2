// One task of a running flow (FlowRuntime::Task): its connectors, its fused
// operator chain, its queue and watermark state, and how long its loop may
// wait. Shared by the files of the runtime that each do one job with a task:
// wiring it (flow_runtime.cpp), its loops (flow_source_task.cpp,
// flow_shuffle_task.cpp), its epoch end (flow_epoch_end.cpp), recovery
// (flow_recovery.cpp) and the progress (flow_progress.cpp). Nothing outside
// the runtime includes it.
#pragma once

#include <algorithm>
#include <atomic>
#include <memory>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "executor/barrier_aligner.h"
#include "executor/exchange.h"
#include "executor/flow_runtime.h"
#include "executor/metrics/task_metrics.h"
#include "executor/operators/operator.h"
#include "executor/row_errors.h"
#include "executor/shuffle.h"
#include "executor/watermark_tracker.h"

namespace rtsql {

struct FlowRuntime::Task {
  // Records a source task hands over at most per poll, and how long a poll (or
  // a shuffle task's wait) may block. A wait never delays a record, which is
  // handed over as soon as it is there. A source that can be woken
  // (SourceTask::wakes()) is woken for epoch ends, commits and stops, so it
  // waits kIdleWaitMs whenever nothing but its own records can change what the
  // task does: then an idle flow costs a wakeup a second. Shuffle tasks wait
  // as long: everything they act on comes through their queue or wakes it.
  // Otherwise (a source that cannot be woken; a source task whose partitions
  // may turn idle as the flow's other source tasks deliver) the wait is
  // kPollTimeoutMs, which bounds how late the task notices any of that.
  // Either wait ends early at the time an operator of the task asked to be
  // woken (Operator::wakeAtMillis(): a processor's processing-time timer, a
  // TTL to sweep), so that work fires on the clock while no input comes.
  static constexpr size_t kPollBatch = 512;
  static constexpr int kPollTimeoutMs = 50;
  static constexpr int kIdleWaitMs = 1000;

  // How long a task may wait for input: `waitMs`, or less when an operator of
  // its chain has work of its own at `wakeAt` (Operator::wakeAtMillis(),
  // wall-clock ms). A flow whose operators have none waits as long as ever.
  // Any wakeAt is taken, INT64_MIN ("now") included, without overflow.
  static int waitFor(int64_t wakeAt, int waitMs) {
    if (wakeAt == Operator::kNoWakeup) return waitMs;
    const int64_t now = nowMicros() / 1000;
    if (wakeAt <= now) return 0;
    return static_cast<int>(std::min<int64_t>(wakeAt - now, waitMs));
  }

  // Whether the time `wakeAt` has come: then the task ends a batch, with or
  // without records, which is when its operators do that work.
  static bool wakeDue(int64_t wakeAt) {
    return wakeAt != Operator::kNoWakeup && nowMicros() / 1000 >= wakeAt;
  }

  int stage = 0;
  int index = 0;
  bool isSource = false;
  bool outputsToSink = false;

  // Source tasks.
  int scanIndex = -1;
  const ScanSpec* scan = nullptr;
  std::unique_ptr<SourceTask> source;
  std::optional<PartitionWatermarks> partitionTimes;
  PendingOffsets uncommitted;  // barrier offsets of epochs not durable yet

  // Shuffle tasks.
  ShuffleQueue* queue = nullptr;
  int producers = 0;  // the tasks that feed this one's queue
  std::optional<InputWatermarks> inputTimes;
  BarrierAligner aligner;

  std::unique_ptr<SinkWriter> sink;
  // The sink is a materialized view's table (executor/state/view_table.h),
  // whose writes are held from the barrier to the checkpoint as state is.
  bool viewTable = false;
  // A sharded flow's front (executor/exchange.h): the writer into the
  // exchange topic, and the operator that ends the chain with it.
  std::unique_ptr<ExchangeOut> exchange;
  ExchangeWriter* exchangeOut = nullptr;
  // Its in-process shuffle of the copy's own rows (ExchangeSpec::local),
  // which shuffleOut then names.
  std::unique_ptr<ShuffleWriter> localShuffle;
  // 'late.rows' = 'dead-letter', in a task with an operator that sees late
  // rows: where they go. Declared before the operators, which point at it.
  std::unique_ptr<FlowDeadLetterWriter> lateRows;
  // 'on.error' other than 'fail': what becomes of a row whose evaluation
  // fails, and with 'dead-letter' where it goes (executor/row_errors.h).
  std::unique_ptr<FlowDeadLetterWriter> failedRows;
  std::unique_ptr<RowErrors> rowErrors;
  std::vector<OperatorPtr> operators;  // the fused chain; the last one writes the sink or shuffle
  ShuffleWriter* shuffleOut = nullptr;
  std::vector<std::pair<int, const Operator*>> stateful;  // (operator id, operator)
  std::vector<std::pair<int, const Operator*>> counted;   // the stage's plan operators, in order
  TaskMetricsSlot metrics;
  std::atomic<int64_t> watermark{INT64_MIN};
  std::thread thread;
  uint64_t epochsDone = 0;
  uint64_t commitsDone = 0;
  bool finished = false;  // ended the final epoch

  Operator* head() const { return operators.front().get(); }
};

}  // namespace rtsql
