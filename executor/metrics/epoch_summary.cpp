// Summing tasks' figures into an epoch's summary (executor/metrics/epoch_summary.h).
#include "executor/metrics/epoch_summary.h"

#include <algorithm>

namespace rtsql {

void StateOpSnapshot::add(const OperatorStats& s) {
  numRowsTotal += s.numRowsTotal.load(std::memory_order_relaxed);
  numRowsUpdated += s.numRowsUpdated.load(std::memory_order_relaxed);
  numRowsDroppedByWatermark += s.numRowsDroppedByWatermark.load(std::memory_order_relaxed);
  numLateRowsDeadLettered += s.numLateRowsDeadLettered.load(std::memory_order_relaxed);
  memoryUsedBytes += s.memoryUsedBytes.load(std::memory_order_relaxed);
}

void StateOpSnapshot::add(const StateOpSnapshot& s) {
  name = s.name;
  numRowsTotal += s.numRowsTotal;
  numRowsUpdated += s.numRowsUpdated;
  numRowsDroppedByWatermark += s.numRowsDroppedByWatermark;
  numLateRowsDeadLettered += s.numLateRowsDeadLettered;
  memoryUsedBytes += s.memoryUsedBytes;
}

void EpochSummary::addStateOperators(const std::vector<std::pair<int, const Operator*>>& stateful) {
  for (const auto& [id, op] : stateful) {
    StateOpSnapshot& snap = stateOps[id];
    snap.name = op->name();
    snap.add(op->stats());
  }
}

void EpochSummary::addOperatorRows(int stage,
                                   const std::vector<std::pair<int, const Operator*>>& counted,
                                   const std::vector<RowCounts>& rows) {
  for (size_t k = 0; k < counted.size() && k < rows.size(); ++k) {
    OperatorRows& r = operatorRows[{stage, static_cast<int>(k)}];
    r.operatorId = counted[k].first;
    r.name = counted[k].second->name();
    r.rowsIn += rows[k].in;
    r.rowsOut += rows[k].out;
  }
}

void EpochSummary::add(const EpochSummary& task) {
  metrics.mergeFrom(task.metrics);
  partitions.insert(partitions.end(), task.partitions.begin(), task.partitions.end());
  positions.insert(positions.end(), task.positions.begin(), task.positions.end());
  taskWatermarks.insert(taskWatermarks.end(), task.taskWatermarks.begin(),
                        task.taskWatermarks.end());
  decodeErrors += task.decodeErrors;
  rowErrorsSkipped += task.rowErrorsSkipped;
  rowErrorsDeadLettered += task.rowErrorsDeadLettered;
  for (const auto& [scan, n] : task.deadLettersByScan) deadLettersByScan[scan] += n;
  for (const auto& [scan, rows] : task.inputRowsByScan) inputRowsByScan[scan] += rows;
  commitMicros = std::max(commitMicros, task.commitMicros);
  for (const auto& [id, snap] : task.stateOps) stateOps[id].add(snap);
  for (const auto& [at, rows] : task.operatorRows) {
    OperatorRows& into = operatorRows[at];
    into.operatorId = rows.operatorId;
    into.name = rows.name;
    into.rowsIn += rows.rowsIn;
    into.rowsOut += rows.rowsOut;
  }
}

}  // namespace rtsql
