// Filter: passes on the rows for which the predicate is TRUE (NULL and FALSE
// drop the row, as in SQL's WHERE).
#pragma once

#include "executor/operators/operator.h"
#include "planner/operator_spec.h"

namespace rtsql {

OperatorPtr makeFilter(const FilterSpec& spec);

}  // namespace rtsql
