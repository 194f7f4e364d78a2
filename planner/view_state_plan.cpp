// A materialized view's table in the state plan of CREATE OR REPLACE
// MATERIALIZED VIEW (state_plan.h, ViewTableChange). The table holds each
// key's latest row under the order-preserving encoding of its key columns,
// the row in the row codec's encoding of the view's columns, in the key space
// of the sink task the key hashes to, and beside it the changelog the view's
// readers follow. Rows kept are read by the new plan as its own and updated
// or retracted by it, so they must be rows of the new plan: the same columns
// (names and types, in order), the same key, written by as many tasks.
#include <fmt/format.h>

#include "planner/state_plan.h"

namespace rtsql {

namespace {

int sinkTasks(const PhysicalPlan& plan) {
  for (const StageSpec& stage : plan.stages) {
    if (stage.output.kind == StageOutput::Kind::Sink) return stage.tasks;
  }
  return 1;
}

std::string keyNames(const SinkSpec& sink) {
  std::string out;
  for (int k : sink.keyColumns) {
    out += out.empty() ? "" : ", ";
    out += k >= 0 && static_cast<size_t>(k) < sink.input.columns.size()
               ? sink.input.columns[static_cast<size_t>(k)].name
               : "?";
  }
  return "(" + out + ")";
}

}  // namespace

std::optional<ViewTableChange> planViewTableChange(const PhysicalPlan& running,
                                                   const PhysicalPlan& next) {
  if (running.sink.connector != kViewSinkConnector || next.sink.connector != kViewSinkConnector)
    return std::nullopt;
  ViewTableChange change;
  change.text = fmt::format("view table {} key={} columns {}", next.sink.name,
                            keyNames(next.sink), next.sink.input.toString());
  const std::string keyBefore = keyNames(running.sink);
  const std::string keyAfter = keyNames(next.sink);
  if (keyBefore != keyAfter) {
    change.reasons.push_back(fmt::format(
        "the view's key changed from {} to {}: its rows are stored under their key", keyBefore,
        keyAfter));
  }
  const std::string before = running.sink.input.toString();
  const std::string after = next.sink.input.toString();
  if (before != after) {
    change.reasons.push_back(fmt::format(
        "the view's columns changed from {} to {}: its stored rows hold the old columns", before,
        after));
  }
  if (sinkTasks(running) != sinkTasks(next)) {
    change.reasons.push_back(fmt::format(
        "the view is written by {} tasks instead of {}: each row lives in the task its key's hash "
        "picks",
        sinkTasks(next), sinkTasks(running)));
  }
  if (!change.reasons.empty()) change.fate = StateFate::Incompatible;
  return change;
}

}  // namespace rtsql
