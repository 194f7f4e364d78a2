// Builds the operator a spec describes, each kind from its own spec type.
// Stateful operators get their own StateTable from the flow's store: one key
// space per operator and task.
#pragma once

#include "executor/operators/operator.h"
#include "planner/physical_plan.h"

namespace rtsql {

class StateStore;

// `store` may be null when the plan has no stateful operator (no spec whose
// stateful() is true). Throws InternalError when the operator built disagrees
// with its spec about being stateful.
OperatorPtr makeOperator(const OperatorSpec& spec, StateStore* store, int task);

}  // namespace rtsql
