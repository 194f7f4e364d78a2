// 'late.rows' (see late_rows.h).
#include "planner/late_rows.h"

#include <fmt/format.h>

#include "common/error.h"
#include "planner/catalog.h"
#include "planner/flow_dead_letters.h"

namespace rtsql {

bool deadLettersLateRows(const Options& flowOptions) {
  return iequals(flowOptions.getString(kLateRowsOption, "drop"), "dead-letter");
}

bool seesLateRows(const OperatorSpec& op) {
  if (op.is<AggregateSpec>()) return op.as<AggregateSpec>().window.kind != WindowKind::None;
  if (op.is<DedupSpec>()) return op.as<DedupSpec>().withinWatermark;
  if (op.is<StreamJoinSpec>()) return !op.as<StreamJoinSpec>().unbounded;
  return false;
}

void checkLateRows(const PhysicalPlan& plan, const SinkDef& sink, const Options& flowOptions) {
  flowOptions.getEnum(kLateRowsOption, "drop", {"drop", "dead-letter"});
  checkFlowDeadLetters(kLateRowsDeadLetters, deadLettersLateRows(flowOptions), sink, flowOptions);
  if (!deadLettersLateRows(flowOptions)) return;
  for (const StageSpec& stage : plan.stages) {
    for (const OperatorSpec& op : stage.operators) {
      if (seesLateRows(op)) return;
    }
  }
  throw SqlError(sqlstate::kInvalidParameterValue,
                 "'late.rows' = 'dead-letter' applies to a flow that drops rows below the "
                 "watermark, and this flow drops none",
                 flowOptions.find(kLateRowsOption)->valuePos,
                 "only a window, DISTINCT ON ... WITHIN WATERMARK or a stream-stream join with a "
                 "time bound drops late rows; remove 'late.rows' and 'late.rows.topic'");
}

}  // namespace rtsql
