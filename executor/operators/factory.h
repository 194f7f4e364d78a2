// Builds the operator a spec describes. Stateful operators get their own
// StateTable from the flow's store: one key space per operator and task.
#pragma once

#include "executor/operators/operator.h"
#include "planner/physical_plan.h"

namespace rtsql {

class StateStore;

bool isStateful(const OperatorSpec& spec);
// `store` may be null when the plan has no stateful operator.
OperatorPtr makeOperator(const OperatorSpec& spec, StateStore* store, int task);

}  // namespace rtsql
