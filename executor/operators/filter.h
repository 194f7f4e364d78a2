// Filter: passes on the rows for which the predicate is TRUE (NULL and FALSE
// drop the row, as in SQL's WHERE).
#pragma once

#include "common/expr.h"
#include "executor/operators/operator.h"

namespace rtsql {

OperatorPtr makeFilter(ExprPtr predicate);

}  // namespace rtsql
