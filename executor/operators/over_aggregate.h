// OverAggregate: `agg(x) OVER (PARTITION BY k ORDER BY o ROWS BETWEEN n
// PRECEDING AND CURRENT ROW)`, an aggregate per input row over the frame of
// its partition: the rows ordered by the order keys, from n rows before the
// row to the row itself (every row before it with UNBOUNDED PRECEDING).
//
// Rows with equal order keys are ordered by arrival (a later row after an
// earlier one), so the frames are deterministic for a given input order. Each
// input row is emitted once with its aggregates (Insert). A row that lands
// before others of its partition enters the frames of the n rows after it,
// whose aggregates change: each such row is updated (UpdateBefore with the old
// aggregates, UpdateAfter with the new ones); a row whose aggregates come out
// equal is not re-emitted. When the input retracts (UpdateBefore/Delete), the
// row is found by its key, order key and equal values and taken out: it is
// deleted with the aggregates it was emitted with, and the n rows after it are
// updated as their frames now reach one row further back.
//
// Every row of a partition is kept, without bound: a row may arrive before any
// row already kept, and a retraction needs the rows before the row it removes
// to refill the frames after it. The aggregates are computed from the kept
// rows, in frame order, each time they are needed; none is stored, so an
// update's old aggregates are exactly the ones emitted before.
//
// State (TimeIndexedTable families, kept by executor/state/ordered_partition.h),
// the layout of top_n.h:
//   'R' key-then-time: key = encodeKey(partition values...), time = 0,
//       rest = order bytes + encodeKeyInt(seq)  -> encodeRow(input row)
//   'S' keyed: empty key -> encodeKeyInt(next sequence number)
// The order bytes are encodeKey() of each order value, every byte inverted
// for a DESC key, so that a scan of one partition key reads its rows in frame
// order (NULL first for ASC, last for DESC); the sequence number orders equal
// order keys by arrival. The time part is unused (always 0). A rest never
// begins with 0xff, which keeps it inside the range scanKey() reads.
// Checkpoints hold these bytes; state_layout_test.cpp pins them.
#pragma once

#include <memory>

#include "executor/operators/operator.h"
#include "executor/state/state_store.h"
#include "planner/physical_plan.h"

namespace rtsql {

// Uses spec.partitionKeys, orderKeys, descending, precedingRows, aggregates,
// the output schema (the input row's columns, then one per aggregate) and
// spec.input (whether retracted rows arrive).
OperatorPtr makeOverAggregate(const OverAggregateSpec& spec, std::unique_ptr<StateTable> state);

}  // namespace rtsql
