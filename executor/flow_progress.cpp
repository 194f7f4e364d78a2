// What a running flow reports about itself (FlowRuntime::progressJson,
// recentLatency): the live epoch assembled from the coordinator's finished
// part and each task's counters now, rendered by
// executor/metrics/progress_json.h.
#include "common/clock.h"
#include "executor/flow_task.h"
#include "executor/metrics/epoch_summary.h"
#include "executor/metrics/progress_json.h"
#include "executor/source_fetch_mode.h"

namespace rtsql {

int64_t FlowRuntime::currentWatermark() const {
  // The flow's watermark is the one its last stages act on.
  FlowWatermark wm;
  for (const auto& t : tasks_) {
    if (t->outputsToSink) wm.add(t->watermark.load(std::memory_order_relaxed));
  }
  return wm.value();
}

void FlowRuntime::recentLatency(IntervalLatency& out) const {
  std::lock_guard lock(mu_);
  const int64_t now = nowMicros();
  out.index = now / RecentLatency::kIntervalMicros - 1;
  if (state_ != FlowState::Running) return;
  for (const auto& t : tasks_) t->metrics.recent().mergeLastComplete(now, out);
}

std::string FlowRuntime::progressJson() const {
  std::lock_guard lock(mu_);
  return epochs_.read([&](const EpochCoordinator::View& epochs) {
    ProgressContext c{flowId_, runId_, plan_, {}, {}, epochs.lastCheckpoint, restored_, restoredMicros_,
                      recoveries_, skipped_, resetRun_};
    for (size_t si = 0; si < plan_.scans.size(); ++si) {
      std::string description = plan_.scans[si].name;
      std::string fetchMode;
      bool described = false;
      for (const auto& t : tasks_) {
        if (t->scan != &plan_.scans[si] || !t->source) continue;
        if (!described) description = t->source->description();
        described = true;
        // The tasks of a source on a node switch together; one that has
        // moved to batching already speaks for the rest.
        const auto* modes = dynamic_cast<const SourceFetchMode*>(t->source.get());
        std::string mode = modes ? modes->fetchMode() : std::string();
        if (fetchMode.empty() || mode == "batching") fetchMode = std::move(mode);
      }
      c.sourceDescriptions.push_back(std::move(description));
      c.sourceFetchModes.push_back(std::move(fetchMode));
    }
    c.sinkDescription = plan_.sink.name;
    for (const auto& t : tasks_) {
      if (t->sink) {
        c.sinkDescription = t->sink->description();
        break;
      }
    }
    // A failed flow keeps its tasks until it is stopped or restarted: report
    // what its epoch got to (records read, decode errors, offsets), not an
    // empty one.
    bool failedWithTasks = state_ == FlowState::Failed && !tasks_.empty();
    if ((state_ != FlowState::Running && !failedWithTasks) || !epochs.pending) {
      if (epochs.last) return rtsql::progressJson(c, *epochs.last, false, nullptr);
      EpochSummary empty;
      empty.id = epochs.epoch;
      empty.startMicros = epochs.epochStartMicros;
      empty.endMicros = epochs.epochStartMicros;
      return rtsql::progressJson(c, empty, false, nullptr);
    }
    // The live epoch: what the tasks have finished of it plus what they are doing now.
    const EpochSummary& pending = *epochs.pending;
    EpochSummary live;
    live.id = pending.id;
    live.startMicros = pending.startMicros;
    live.metrics.mergeFrom(pending.metrics);
    live.decodeErrors = pending.decodeErrors;
    live.deadLettersByScan = pending.deadLettersByScan;
    live.inputRowsByScan = pending.inputRowsByScan;
    live.operatorRows = pending.operatorRows;
    live.watermark = currentWatermark();
    IntervalLatency recent;
    const int64_t now = nowMicros();
    for (const auto& t : tasks_) {
      t->metrics.recent().mergeLastComplete(now, recent);
      std::vector<RowCounts> rows = operatorRows(*t);
      t->metrics.withCurrent([&](const EpochMetrics& m, const std::vector<RowCounts>& atStart) {
        live.metrics.mergeFrom(m);
        if (t->isSource) live.inputRowsByScan[t->scanIndex] += m.inputRows.load();
        for (size_t k = 0; k < rows.size() && k < atStart.size(); ++k) {
          rows[k] = {rows[k].in - atStart[k].in, rows[k].out - atStart[k].out};
        }
      });
      live.addOperatorRows(t->stage, t->counted, rows);
      if (t->source) {
        auto parts = t->source->progress();
        live.partitions.insert(live.partitions.end(), parts.begin(), parts.end());
        live.decodeErrors += t->source->decodeErrors();
        live.deadLettersByScan[t->scanIndex] += t->source->deadLetters();
      }
      // Counted since the tasks started: what each task has now.
      if (t->rowErrors) {
        live.rowErrorsSkipped += t->rowErrors->skipped();
        live.rowErrorsDeadLettered += t->rowErrors->deadLettered();
      }
      live.addStateOperators(t->stateful);
    }
    if (state_ == FlowState::Running) c.recent = &recent;
    return rtsql::progressJson(c, live, state_ == FlowState::Running, epochs.last);
  });
}

std::vector<RowCounts> FlowRuntime::operatorRows(const Task& task) {
  std::vector<RowCounts> rows;
  rows.reserve(task.counted.size());
  for (const auto& [id, op] : task.counted) {
    rows.push_back({op->stats().rowsIn.load(std::memory_order_relaxed),
                    op->stats().rowsOut.load(std::memory_order_relaxed)});
  }
  return rows;
}

}  // namespace rtsql
