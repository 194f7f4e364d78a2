// Writes the progress JSON (executor/metrics/progress_json.h).
#include "executor/metrics/progress_json.h"

#include <algorithm>
#include <map>

#include "common/clock.h"
#include "executor/metrics/json_writer.h"
#include "planner/late_rows.h"
#include "planner/row_errors.h"

namespace rtsql {

void writeLatencyPercentiles(JsonWriter& w, const char* name, const LatencyHistogram& h) {
  w.key(name).beginObject();
  static constexpr std::pair<const char*, double> kQuantiles[] = {
      {"P0", 0.0}, {"P50", 0.5}, {"P90", 0.9}, {"P95", 0.95}, {"P99", 0.99}};
  for (const auto& [label, q] : kQuantiles) {
    w.key(label).value(static_cast<double>(h.percentile(q)) / 1000.0);
  }
  w.endObject();
}

namespace {

// The progress's recovery.skipped: the checkpoints a start passed over.
void writeSkipped(JsonWriter& w, const std::vector<CheckpointSearch::Skipped>& skipped) {
  w.key("skipped").beginArray();
  for (const auto& sk : skipped) {
    w.beginObject();
    w.key("epoch").value(sk.epoch);
    w.key("reason").value(sk.reason);
    w.endObject();
  }
  w.endArray();
}

// One epoch's object; `nested` leaves out what belongs to the flow, not the
// epoch (checkpoint, recovery), for lastEpoch.
void writeEpoch(JsonWriter& w, const ProgressContext& c, const EpochSummary& e, bool live,
                bool nested, const EpochSummary* last) {
  const PhysicalPlan& plan = c.plan;
  int64_t end = e.endMicros ? e.endMicros : nowMicros();
  double seconds = std::max(1e-3, static_cast<double>(end - e.startMicros) / 1e6);
  uint64_t in = e.metrics.inputRows.load();
  // A sharded copy's back reads again, from the exchange topic, rows its
  // front (or another copy's) took in already: the flow's input is what the
  // sources gave.
  for (size_t si = 0; si < plan.scans.size(); ++si) {
    if (plan.scans[si].exchange.topic.empty()) continue;
    auto it = e.inputRowsByScan.find(static_cast<int>(si));
    if (it != e.inputRowsByScan.end()) in -= std::min(in, it->second);
  }
  uint64_t out = e.metrics.outputRows.load();

  w.beginObject();
  w.key("id").value(c.flowId);
  w.key("runId").value(c.runId);
  w.key("name").value(plan.flowName);
  w.key("timestamp").value(formatTimestamp(e.startMicros, true));
  w.key("batchId").value(e.id);
  w.key("live").value(live);
  w.key("numInputRows").value(in);
  w.key("inputRowsPerSecond").value(static_cast<double>(in) / seconds);
  w.key("processedRowsPerSecond").value(static_cast<double>(in) / seconds);
  w.key("durationMs").beginObject();
  w.key("triggerExecution").value((end - e.startMicros) / 1000);
  w.key("commitOffsets").value(e.commitMicros / 1000);
  w.endObject();
  w.key("eventTime").beginObject();
  int64_t maxEvent = e.metrics.maxEventTimeMicros.load();
  if (maxEvent != INT64_MIN) w.key("max").value(formatTimestamp(maxEvent, true));
  if (e.watermark != INT64_MIN) w.key("watermark").value(formatTimestamp(e.watermark, true));
  w.endObject();
  w.key("stateOperators").beginArray();
  const bool lateRowsOut = plan.lateRowsDeadLettered;
  for (const auto& [id, s] : e.stateOps) {
    w.beginObject().key("operatorName").value(s.name).key("operatorId").value(id);
    w.key("numRowsTotal").value(s.numRowsTotal).key("numRowsUpdated").value(s.numRowsUpdated);
    w.key("numRowsDroppedByWatermark").value(s.numRowsDroppedByWatermark);
    // Only a flow with 'late.rows' = 'dead-letter' has the count.
    if (lateRowsOut) w.key("numLateRowsDeadLettered").value(s.numLateRowsDeadLettered);
    w.key("memoryUsedBytes").value(s.memoryUsedBytes).endObject();
  }
  w.endArray();
  // Every operator of the plan, per stage in plan order: its rows in the epoch.
  w.key("operators").beginArray();
  for (const auto& [at, r] : e.operatorRows) {
    w.beginObject().key("stage").value(at.first).key("operatorId").value(r.operatorId);
    w.key("operatorName").value(r.name).key("rowsIn").value(r.rowsIn);
    w.key("rowsOut").value(r.rowsOut).endObject();
  }
  w.endArray();

  // One entry per source, its partitions grouped by topic as Spark prints Kafka offsets.
  w.key("sources").beginArray();
  for (size_t si = 0; si < plan.scans.size(); ++si) {
    const ScanSpec& scan = plan.scans[si];
    const std::string& description =
        si < c.sourceDescriptions.size() ? c.sourceDescriptions[si] : scan.name;
    // Partitions belong to this source when their topic is one of its topics;
    // with a single source every partition is its own.
    auto mine = [&](const PartitionProgress& p) {
      if (plan.scans.size() == 1) return true;
      // A sharded flow's back reads its exchange topic.
      if (!scan.exchange.topic.empty()) return p.topic == scan.exchange.topic;
      if (p.topic.empty() || !scan.parsed) return false;
      const std::vector<std::string>& topics = scan.parsed->topics;
      return std::find(topics.begin(), topics.end(), p.topic) != topics.end();
    };
    auto offsets = [&](const char* key, int64_t PartitionProgress::*field) {
      std::map<std::string, std::map<int32_t, int64_t>> byTopic;
      for (const auto& p : e.partitions) {
        if (mine(p)) byTopic[p.topic.empty() ? scan.name : p.topic][p.partition] = p.*field;
      }
      w.key(key).beginObject();
      for (const auto& [topic, parts] : byTopic) {
        w.key(topic).beginObject();
        for (const auto& [partition, offset] : parts)
          w.key(std::to_string(partition)).value(offset);
        w.endObject();
      }
      w.endObject();
    };
    w.beginObject();
    w.key("description").value(description);
    if (si < c.sourceFetchModes.size() && !c.sourceFetchModes[si].empty()) {
      w.key("fetchMode").value(c.sourceFetchModes[si]);
    }
    offsets("startOffset", &PartitionProgress::startOffset);
    offsets("endOffset", &PartitionProgress::endOffset);
    offsets("latestOffset", &PartitionProgress::latestOffset);
    offsets("offsetsSkipped", &PartitionProgress::offsetsSkipped);
    auto it = e.inputRowsByScan.find(static_cast<int>(si));
    uint64_t scanIn = it == e.inputRowsByScan.end() ? 0 : it->second;
    w.key("numInputRows").value(scanIn);
    w.key("inputRowsPerSecond").value(static_cast<double>(scanIn) / seconds);
    w.key("processedRowsPerSecond").value(static_cast<double>(scanIn) / seconds);
    // Decode errors are counted per flow; with one source they are its own.
    if (plan.scans.size() == 1) w.key("numDecodeErrors").value(e.decodeErrors);
    // Only a source with on.error = 'dead-letter' has the count.
    if (scan.parsed && scan.parsed->onError == RowErrorPolicy::DeadLetter) {
      auto dl = e.deadLettersByScan.find(static_cast<int>(si));
      w.key("numDeadLetters").value(dl == e.deadLettersByScan.end() ? int64_t{0} : dl->second);
    }
    w.endObject();
  }
  w.endArray();
  if (plan.scans.size() > 1) w.key("numDecodeErrors").value(e.decodeErrors);
  // Only a flow whose 'on.error' skips or dead-letters failed rows has the count.
  switch (plan.onError) {
    case RowErrorPolicy::Fail:
      break;
    case RowErrorPolicy::Skip:
      w.key("numRowErrorsSkipped").value(e.rowErrorsSkipped);
      break;
    case RowErrorPolicy::DeadLetter:
      w.key("numRowErrorsDeadLettered").value(e.rowErrorsDeadLettered);
      break;
  }

  w.key("sink").beginObject();
  w.key("description").value(c.sinkDescription.empty() ? plan.sink.name : c.sinkDescription);
  w.key("numOutputRows").value(out);
  w.endObject();
  w.key("rtmMetrics").beginObject();
  writeLatencyPercentiles(w, "processingLatencyMs", e.metrics.processingLatency);
  writeLatencyPercentiles(w, "sourceQueuingLatencyMs", e.metrics.sourceQueuingLatency);
  writeLatencyPercentiles(w, "e2eLatencyMs", e.metrics.e2eLatency);
  w.endObject();
  if (!nested && c.recent) {
    // The last complete interval of a few seconds (recent_latency.h): what a
    // chart of the flow's latency plots, where the epoch's figures move slowly.
    const IntervalLatency& r = *c.recent;
    w.key("recentMetrics").beginObject();
    w.key("intervalStart").value(formatTimestamp(r.index * RecentLatency::kIntervalMicros, true));
    w.key("intervalMs").value(RecentLatency::kIntervalMicros / 1000);
    w.key("numOutputRows").value(r.e2e.count());
    writeLatencyPercentiles(w, "processingLatencyMs", r.processing);
    writeLatencyPercentiles(w, "sourceQueuingLatencyMs", r.sourceQueuing);
    writeLatencyPercentiles(w, "e2eLatencyMs", r.e2e);
    w.endObject();
  }
  if (!nested) {
    // Durability: the newest complete checkpoint and the last recovery.
    w.key("checkpoint");
    if (c.lastCheckpoint) {
      const CheckpointInfo& cp = *c.lastCheckpoint;
      w.beginObject();
      w.key("epoch").value(cp.epoch);
      w.key("timestamp").value(formatTimestamp(cp.writtenMicros, true));
      w.key("durationMs").value(static_cast<double>(cp.durationMicros) / 1000.0);
      w.key("stateBytes").value(cp.stateBytes);
      w.endObject();
    } else {
      w.null();
    }
    w.key("recovery");
    if (c.restored) {
      w.beginObject();
      w.key("fromEpoch").value(c.restored->epoch);
      w.key("restoreMs").value(static_cast<double>(c.restoredMicros) / 1000.0);
      w.key("recoveries").value(c.recoveries);
      writeSkipped(w, c.skipped);
      w.key("reset").value(false);
      w.endObject();
    } else if (!c.skipped.empty() || c.resetRun) {
      // No checkpoint was restored, and that is worth saying: damaged ones
      // were passed over (a stateless flow going on from its committed
      // offsets), or the state was reset.
      w.beginObject();
      w.key("fromEpoch").null();
      w.key("restoreMs").null();
      w.key("recoveries").value(c.recoveries);
      writeSkipped(w, c.skipped);
      w.key("reset").value(c.resetRun);
      w.endObject();
    } else {
      w.null();
    }
  }
  if (live) {
    w.key("lastEpoch");
    if (last) {
      writeEpoch(w, c, *last, false, true, nullptr);
    } else {
      w.null();
    }
  }
  w.endObject();
}

}  // namespace

std::string progressJson(const ProgressContext& c, const EpochSummary& e, bool live,
                         const EpochSummary* last) {
  JsonWriter w;
  writeEpoch(w, c, e, live, false, last);
  return w.take();
}

}  // namespace rtsql
