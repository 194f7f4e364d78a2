// Project: computes the output row from the input row, one expression per
// output column.
#pragma once

#include <vector>

#include "common/expr.h"
#include "executor/operators/operator.h"

namespace rtsql {

OperatorPtr makeProject(std::vector<ExprPtr> exprs);

}  // namespace rtsql
