// Stream-stream join: two streams joined on equal keys within an event-time
// bound, `leftTime + lowerBound <= rightTime <= leftTime + upperBound`, plus an
// optional residual condition on the joined row. Inner and left outer.
//
// Both sides are kept in operator state until the watermark makes a future
// match impossible: a left row can still meet a right row while
// leftTime + upperBound >= watermark (later right rows are not below the
// watermark), a right row while rightTime >= watermark + lowerBound. At that
// point the row is dropped; with leftOuter a left row that never matched is
// emitted once, with NULL right columns, exactly then. Rows already below the
// watermark when they arrive are late: dropped and counted in
// numRowsDroppedByWatermark. Rows with a NULL key or NULL time can never match:
// a left one is emitted at once with NULLs by a left outer join, otherwise they
// are dropped.
//
// push() takes left rows, pushRight() right rows; output rows are the left
// columns followed by the right columns.
#pragma once

#include <memory>

#include "executor/operators/operator.h"
#include "executor/state/state_store.h"
#include "planner/physical_plan.h"

namespace rtsql {

// Uses spec.leftKeys, rightKeys, leftTime, rightTime, lowerBoundMicros,
// upperBoundMicros, residual, leftOuter, leftWidth, rightWidth, and the column
// types of spec.output (left columns then right columns) to decode stored rows.
OperatorPtr makeStreamJoin(const StreamJoinSpec& spec, std::unique_ptr<StateTable> state);

}  // namespace rtsql
