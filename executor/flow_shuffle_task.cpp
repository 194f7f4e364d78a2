// A shuffle task's loop (FlowRuntime::runShuffleTask): take what the task's
// queue holds (executor/shuffle.h), align the producers' epoch barriers
// (executor/barrier_aligner.h), and push records and watermarks through the
// stage's fused operators.
#include <deque>

#include "common/error.h"
#include "common/interrupt.h"
#include "executor/epoch_coordinator.h"
#include "executor/flow_task.h"

namespace rtsql {

void FlowRuntime::runShuffleTask(Task& task) {
  std::deque<ShuffleMessage> inbox;
  task.inputTimes.emplace(static_cast<size_t>(task.producers), task.watermark.load());
  try {
    if (task.watermark.load() != INT64_MIN) task.head()->onWatermark(task.watermark.load());
    while (!stopping_.load(std::memory_order_relaxed) && !task.finished) {
      commitIfRequested(task);
      // Records, barriers and watermarks arrive through the queue, and commit
      // requests and the stop wake it: nothing else needs a short wait but
      // the time an operator asked to be woken at.
      const int64_t wakeAt = task.head()->wakeAtMillis();
      if (!task.queue->popAll(inbox, Task::waitFor(wakeAt, Task::kIdleWaitMs)) &&
          !Task::wakeDue(wakeAt)) {
        continue;
      }
      if (task.shuffleOut) task.shuffleOut->beginBatch();
      for (ShuffleMessage& msg : inbox) handleShuffleMessage(task, msg);
      task.head()->onBatchEnd();
      if (task.shuffleOut) task.shuffleOut->endBatch();
      inbox.clear();
    }
  } catch (const Interrupted&) {
    // The flow is stopping and a function saw it: nothing failed. A stop
    // still waiting for the final epoch, which this task will not reach,
    // stops the flow now.
    stopWithoutFinalEpoch();
  } catch (const SqlError& e) {
    fail(e);
  } catch (const std::exception& e) {
    fail(fmt::format("internal error in task {}.{}: {}", task.stage, task.index, e.what()));
  }
}

void FlowRuntime::handleShuffleMessage(Task& task, ShuffleMessage& msg) {
  // Barrier alignment: a producer whose barrier has arrived is blocked, and its
  // messages wait until every producer's barrier is in.
  if (task.aligner.hold(msg)) return;
  Operator* head = task.head();
  switch (msg.kind) {
    case ShuffleMessage::Kind::Record:
      try {
        if (msg.input == 0) {
          head->push(msg.row, msg.ctx);
        } else {
          head->pushRight(msg.row, msg.ctx);
        }
      } catch (const SqlError& e) {
        // The first operator's data error; the others' are taken in emit().
        if (!takeRowError(task.rowErrors.get(), e, *head, msg.row, msg.input)) throw;
      }
      return;
    case ShuffleMessage::Kind::Watermark:
    case ShuffleMessage::Kind::Idle: {
      // The minimum over the producers that are not idle.
      const bool advanced = msg.kind == ShuffleMessage::Kind::Watermark
                                ? task.inputTimes->watermark(msg.producer, msg.value)
                                : task.inputTimes->idle(msg.producer);
      if (advanced) {
        const int64_t wm = task.inputTimes->current();
        task.watermark.store(wm, std::memory_order_relaxed);
        head->onWatermark(wm);
      }
      return;
    }
    case ShuffleMessage::Kind::Barrier: {
      if (!task.aligner.barrier(msg.producer, static_cast<uint64_t>(msg.value))) return;
      bool final = epochs_.finalEpoch();
      endTaskEpoch(task, false);
      if (final) task.finished = true;
      // What waited is processed now, in arrival order.
      std::deque<ShuffleMessage> waiting;
      task.aligner.release(waiting);
      for (ShuffleMessage& m : waiting) handleShuffleMessage(task, m);
      return;
    }
  }
}

}  // namespace rtsql
