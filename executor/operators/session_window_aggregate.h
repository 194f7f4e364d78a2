// SessionWindowAggregate: GROUP BY over session windows, the session half of
// the Aggregate operator (aggregate.h is the entry point and describes the
// output and the state layout).
//
// Each row at time t opens the interval [t, t + gap); per group key, intervals
// that overlap form one session [start, lastEvent + gap). A row that overlaps
// several sessions bridges them: they merge into one, with their accumulators
// merged. A session closes when the watermark reaches its end; a row whose own
// interval already ended at the watermark is late (StatefulOperator::late).
#pragma once

#include <memory>

#include "executor/operators/operator.h"
#include "executor/state/state_store.h"
#include "planner/physical_plan.h"

namespace rtsql {

OperatorPtr makeSessionWindowAggregate(const AggregateSpec& spec, std::unique_ptr<StateTable> state);

}  // namespace rtsql
