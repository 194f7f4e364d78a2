// What one epoch of a flow gathered from its tasks: metrics, offsets at the
// barriers, state operator figures and each operator's rows. It is its own
// home because two places meet on it: the epoch coordinator assembles it as
// the tasks end the epoch (and checkpoints from it), and the progress JSON
// (executor/metrics/progress_json.h) writes it, for a finished epoch or for
// the live one put together from what the tasks are doing now.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "executor/checkpoint.h"
#include "executor/connector_provider.h"
#include "executor/metrics/task_metrics.h"
#include "executor/operators/operator.h"

namespace rtsql {

// A stateful operator's figures (progress `stateOperators`), summed over its tasks.
struct StateOpSnapshot {
  std::string name;
  uint64_t numRowsTotal = 0;
  uint64_t numRowsUpdated = 0;
  uint64_t numRowsDroppedByWatermark = 0;
  uint64_t numLateRowsDeadLettered = 0;  // 'late.rows' = 'dead-letter'
  int64_t memoryUsedBytes = 0;

  void add(const OperatorStats& s);
  void add(const StateOpSnapshot& s);
};

// An operator's rows in an epoch (progress `operators`), summed over its tasks.
struct OperatorRows {
  int operatorId = 0;
  std::string name;
  uint64_t rowsIn = 0;
  uint64_t rowsOut = 0;
};

struct EpochSummary {
  uint64_t id = 0;
  int64_t startMicros = 0;
  int64_t endMicros = 0;     // 0 while the epoch runs
  int64_t commitMicros = 0;  // longest epoch-end work of a task (flushes, barriers)
  int64_t watermark = INT64_MIN;
  EpochMetrics metrics;
  std::vector<PartitionProgress> partitions;
  int64_t decodeErrors = 0;
  std::map<int, int64_t> deadLettersByScan;  // records sent to a source's dead-letter topic
  // Rows whose evaluation failed, since the tasks started ('on.error').
  uint64_t rowErrorsSkipped = 0;
  uint64_t rowErrorsDeadLettered = 0;
  std::map<int, StateOpSnapshot> stateOps;  // by operator id
  // By (stage, position of the operator in the stage): operator ids are
  // unique in a planned flow, positions are unique in any.
  std::map<std::pair<int, int>, OperatorRows> operatorRows;
  std::map<int, uint64_t> inputRowsByScan;
  std::vector<CheckpointPosition> positions;            // source offsets at the barriers
  std::vector<CheckpointTaskWatermark> taskWatermarks;  // task watermarks at the barriers

  // A task's stateful operators, as (operator id, operator): their figures now.
  void addStateOperators(const std::vector<std::pair<int, const Operator*>>& stateful);
  // A task's operators of stage `stage`'s plan, in order as (operator id,
  // operator), and their rows in the epoch (same order).
  void addOperatorRows(int stage, const std::vector<std::pair<int, const Operator*>>& counted,
                       const std::vector<RowCounts>& rows);
  // What one task reported for the epoch (a summary of its own): figures are
  // summed, offsets and watermarks appended, the epoch-end work is the longest.
  void add(const EpochSummary& task);
};

}  // namespace rtsql
