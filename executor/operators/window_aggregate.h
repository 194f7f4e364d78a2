// WindowAggregate: GROUP BY over tumbling or sliding event-time windows, the
// windowed half of the Aggregate operator (aggregate.h is the entry point and
// describes the output and the state layout).
//
// A row at time t belongs to every window [k*slide, k*slide + size) that
// contains t (one window when tumbling, size/slide when sliding). Windows whose
// end is at or before the watermark are closed: rows for them are skipped, and a
// row all of whose windows are closed is late (StatefulOperator::late). When the
// watermark passes a window's end its state is dropped, after emitting its
// final row with EMIT ON WINDOW CLOSE.
#pragma once

#include <memory>

#include "executor/operators/operator.h"
#include "executor/state/state_store.h"
#include "planner/physical_plan.h"

namespace rtsql {

OperatorPtr makeWindowAggregate(const AggregateSpec& spec, std::unique_ptr<StateTable> state);

}  // namespace rtsql
