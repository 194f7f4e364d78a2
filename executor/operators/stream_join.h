// Stream-stream join: two streams joined on equal keys, plus an optional
// residual condition on the joined row. An interval join also bounds the
// event times, `leftTime + lowerBound <= rightTime <= leftTime + upperBound`,
// and is inner or left outer; a regular join (below) has no bound.
//
// Both sides are kept in operator state until the watermark makes a future
// match impossible: a left row can still meet a right row while
// leftTime + upperBound >= watermark (later right rows are not below the
// watermark), a right row while rightTime >= watermark + lowerBound. At that
// point the row is dropped; with leftOuter a left row that never matched is
// emitted once, with NULL right columns, exactly then. Rows already below the
// watermark when they arrive are late: dropped, or written out with the flow's
// 'late.rows' (StatefulOperator::late). Rows with a NULL key or NULL time can never match:
// a left one is emitted at once with NULLs by a left outer join, otherwise they
// are dropped.
//
// Without a time bound (spec.unbounded) it is a regular join: every row of
// both sides is kept per join key, and each arriving row pairs with the other
// side's rows of its key. Nothing expires unless the flow sets 'state.ttl':
// then a row is dropped once the watermark passes its event time plus the TTL,
// and pairs that would have needed it are missed. A row of an outer side (left
// for LEFT, right for RIGHT, both for FULL) that has no pair is emitted at once
// with NULLs (Insert); its first pair retracts that row (Delete) before it is
// emitted, and when its last pair is retracted the NULL row is emitted again.
// An input row that retracts (UpdateBefore or Delete, from a changelog input)
// takes one equal kept row of its side out and retracts every pair it had
// (Delete); added rows emit Insert. Equal means equal but for the hidden Kafka
// metadata columns (spec.leftRecordColumns, rightRecordColumns), which belong
// to the record that carried a change, not to the row: a debezium-json
// source's delete finds the row its insert kept, and the pairs are retracted
// as they were emitted.
//
// push() takes left rows, pushRight() right rows; output rows are the left
// columns followed by the right columns. Both layouts of the state are at the
// top of stream_join.cpp.
#pragma once

#include <memory>

#include "executor/operators/operator.h"
#include "executor/state/state_store.h"
#include "planner/physical_plan.h"

namespace rtsql {

// Uses spec.leftKeys, rightKeys, leftTime, rightTime, lowerBoundMicros,
// upperBoundMicros, residual, leftOuter, leftWidth, rightWidth, and the column
// types of spec.output (left columns then right columns) to decode stored rows;
// with spec.unbounded, rightOuter and stateTtlMicros instead of the bounds.
OperatorPtr makeStreamJoin(const StreamJoinSpec& spec, std::unique_ptr<StateTable> state);

}  // namespace rtsql
