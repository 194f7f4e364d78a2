// Filter: passes on the rows for which the predicate is TRUE (NULL and FALSE
// drop the row, as in SQL's WHERE). Over a retracting input it turns an
// update whose old or new row alone passes into a delete or an insert
// (filter.cpp), so that what follows never keeps a row the filter now drops.
#pragma once

#include "executor/operators/operator.h"
#include "planner/operator_spec.h"

namespace rtsql {

OperatorPtr makeFilter(const FilterSpec& spec);

}  // namespace rtsql
