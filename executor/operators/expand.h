// Expand: the set-returning functions of a bounded query's select list
// (unnest, generate_series, generate_subscripts, _pg_expandarray), which make
// several rows of one (planner/operator_spec.h, ExpandSpec, says how).
#pragma once

#include "executor/operators/operator.h"
#include "planner/operator_spec.h"

namespace rtsql {

OperatorPtr makeExpand(const ExpandSpec& spec);

}  // namespace rtsql
