// Project: computes the output row from the input row, one expression per
// output column.
#pragma once

#include "executor/operators/operator.h"
#include "planner/operator_spec.h"

namespace rtsql {

OperatorPtr makeProject(const ProjectSpec& spec);

}  // namespace rtsql
