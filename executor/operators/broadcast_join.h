// Broadcast hash join: a stream joined with a static table (a CREATE TABLE of
// the catalog, small enough to copy into every task). The hash table over the
// table rows is built once, when the operator is created; each stream row then
// costs one lookup. Inner and left outer joins are supported: with leftOuter,
// a stream row without a matching table row is emitted once with NULL table
// columns. Output rows are the stream row's columns followed by the table's.
#pragma once

#include "executor/operators/operator.h"
#include "planner/physical_plan.h"

namespace rtsql {

// Uses spec.tableRows, tableSchema, probeKeys, buildKeys, leftOuter, residual.
OperatorPtr makeBroadcastJoin(const BroadcastJoinSpec& spec);

}  // namespace rtsql
