// The progress JSON of a flow (SHOW PROGRESS, GET /flows/<name>/progress):
// Spark's StreamingQueryProgress field names, plus rtsql's latencies,
// operators, checkpoint and recovery. It is its own home so that the one
// document users and tools read is written in one place, from plain data
// (an EpochSummary and a ProgressContext), apart from the runtime that
// gathers it. docs/operations.md ("Progress JSON") documents every field.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "executor/checkpoint.h"
#include "executor/metrics/epoch_summary.h"
#include "planner/physical_plan.h"

namespace rtsql {

// What the progress says besides the epoch's own figures.
struct ProgressContext {
  const std::string& flowId;
  const std::string& runId;
  const PhysicalPlan& plan;
  std::vector<std::string> sourceDescriptions;  // by scan
  std::string sinkDescription;
  const std::optional<CheckpointInfo>& lastCheckpoint;  // the newest complete checkpoint
  const std::optional<CheckpointInfo>& restored;        // what the current run started from
  int64_t restoredMicros = 0;                           // how long the restore took
  int recoveries = 0;
  const std::vector<CheckpointSearch::Skipped>& skipped;  // damaged checkpoints passed over
  bool resetRun = false;                                  // the run started from a reset
  // The flow's tasks' last complete interval of recent_latency.h, merged;
  // null when the flow is not running.
  const IntervalLatency* recent = nullptr;
  // By scan, how its source fetches now (SourceTask::fetchMode); empty: no
  // such modes.
  std::vector<std::string> sourceFetchModes = {};
};

class JsonWriter;
class LatencyHistogram;

// One latency object of the progress JSON, `name`: {"P0": ms, "P50": ms,
// "P90": ms, "P95": ms, "P99": ms}.
void writeLatencyPercentiles(JsonWriter& w, const char* name, const LatencyHistogram& h);

// The progress of epoch `e`. With `live`, `e` is the epoch in progress and
// `last` (null before the first epoch ends) goes under "lastEpoch".
std::string progressJson(const ProgressContext& c, const EpochSummary& e, bool live,
                         const EpochSummary* last);

}  // namespace rtsql
