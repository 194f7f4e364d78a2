// A source task's loop (FlowRuntime::runSourceTask): poll the task's
// partitions, push each record through the stage's fused operators, move the
// watermark (executor/watermark_tracker.h), and end an epoch or commit when
// the coordinator asks. The per-record path of every flow starts here.
#include "common/error.h"
#include "common/interrupt.h"
#include "executor/epoch_coordinator.h"
#include "executor/flow_task.h"

namespace rtsql {

void FlowRuntime::runSourceTask(Task& task) {
  std::vector<SourceRecord> batch;
  batch.reserve(Task::kPollBatch);
  Operator* head = task.head();
  const int eventTimeColumn = task.scan->eventTimeColumn;
  ActivityClock& activity = *activity_;
  PartitionWatermarks& times = task.partitionTimes.emplace(
      task.scan->watermarkDelayMicros, task.scan->idleTimeoutMicros, task.watermark.load());
  ForwardedWatermark ownStep(task.watermark.load());
  int32_t lastPartition = -1;
  PartitionWatermarks::Partition* lastTime = nullptr;
  try {
    // Every partition the task reads holds the watermark from the start, not
    // only from its first record: the first partition to deliver must not
    // move the watermark past the records the others are about to deliver.
    for (const PartitionProgress& p : task.source->progress()) times.at(p.partition, activity.now());
    if (task.watermark.load() != INT64_MIN) head->onWatermark(task.watermark.load());
    // Whether the task's partitions can turn idle while it waits: only when
    // another source task delivers (the delivery clock moves) and one of its
    // own partitions is not idle yet.
    const bool othersMoveTheClock = sourceTasks_ > 1;
    bool allIdle = false;
    while (!stopping_.load(std::memory_order_relaxed)) {
      if (task.finished) {
        // The final epoch is ended; wait for the flow to commit it and stop
        // (the coordinator and stop() wake the task).
        commitIfRequested(task);
        std::unique_lock lock(wakeMu_);
        wakeCv_.wait_for(lock, std::chrono::milliseconds(Task::kIdleWaitMs), [&] {
          return stopping_.load() || epochs_.committable() > task.commitsDone;
        });
        continue;
      }
      batch.clear();
      const bool longWait = task.source->wakes() && (!othersMoveTheClock || allIdle);
      const int64_t wakeAt = head->wakeAtMillis();
      task.source->poll(batch, Task::kPollBatch,
                        Task::waitFor(wakeAt, longWait ? Task::kIdleWaitMs : Task::kPollTimeoutMs));
      int64_t now = monotonicMicros();
      EpochMetrics& m = task.metrics.current();
      // The records of a poll arrived together: the shuffle hands them over
      // together once the task is through them (shuffle.h).
      if (task.shuffleOut) task.shuffleOut->beginBatch();
      for (SourceRecord& rec : batch) {
        addOwned<uint64_t>(m.inputRows);
        m.sourceQueuingLatency.record(rec.readMicros - rec.timestampMicros);
        // Records of a batch mostly come from one partition: skip the map
        // lookup while it stays the same (map nodes never move).
        if (rec.partition != lastPartition || !lastTime) {
          lastPartition = rec.partition;
          lastTime = &times.at(rec.partition, activity.now());
        }
        if (eventTimeColumn >= 0) {
          const Value& ts = rec.row[static_cast<size_t>(eventTimeColumn)];
          if (ts.isNull()) {
            PartitionWatermarks::record(*lastTime);
          } else {
            PartitionWatermarks::record(*lastTime, ts.asInt());
            if (ts.asInt() > m.maxEventTimeMicros.load(std::memory_order_relaxed)) {
              m.maxEventTimeMicros.store(ts.asInt(), std::memory_order_relaxed);
            }
          }
        } else {
          PartitionWatermarks::record(*lastTime);
        }
        RecordContext ctx{rec.timestampMicros, rec.readMicros};
        ctx.kind = rec.kind;
        if (task.exchangeOut) task.exchangeOut->setOrigin(rec.partition, rec.offset);
        try {
          head->push(rec.row, ctx);
        } catch (const SqlError& e) {
          // The first operator's data error; the others' are taken in emit().
          if (!takeRowError(task.rowErrors.get(), e, *head, rec.row, 0)) throw;
        }
      }
      if (!batch.empty() || Task::wakeDue(wakeAt)) head->onBatchEnd();
      if (task.shuffleOut) task.shuffleOut->endBatch();
      if (!batch.empty()) activity.delivered(now);

      // Watermark: the slowest partition that is not idle
      // (executor/watermark_tracker.h), or what the source says of its
      // producers (a sharded flow's exchange).
      const bool announcesIdle = task.shuffleOut != nullptr || task.exchangeOut != nullptr;
      PartitionWatermarks::Step step;
      if (const auto own = task.source->ownWatermark()) {
        step = ownStep.step(own->watermark, own->allIdle, announcesIdle);
        allIdle = own->allIdle;
      } else {
        step = times.step(activity.now(), announcesIdle,
                          [&](int32_t p) { return task.source->caughtUp(p); });
        allIdle = std::all_of(times.partitions().begin(), times.partitions().end(),
                              [](const auto& p) { return p.second.idle; });
      }
      if (step.kind == PartitionWatermarks::Step::Kind::Idle) {
        if (task.shuffleOut) task.shuffleOut->broadcast(ShuffleMessage::Kind::Idle, 0);
        if (task.exchangeOut) task.exchangeOut->onIdle();
      } else if (step.kind == PartitionWatermarks::Step::Kind::Watermark) {
        task.watermark.store(step.watermark, std::memory_order_relaxed);
        head->onWatermark(step.watermark);
      }

      if (epochs_.endRequested(task.epochsDone)) {
        bool final = epochs_.finalEpoch();
        endTaskEpoch(task, true);
        if (final) task.finished = true;
      }
      commitIfRequested(task);
    }
    commitIfRequested(task);
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

}  // namespace rtsql
