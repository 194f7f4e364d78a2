// TopN: `ROW_NUMBER() OVER (PARTITION BY k ORDER BY o) ... WHERE rn <= N`, the
// streaming top N per key (and, with N = 1, deduplication that keeps the first
// or the last row of each key, as its ORDER BY says); and the same with
// `RANK()` or `DENSE_RANK()`, whose ties share a rank.
//
// Per partition key the operator keeps the rows ranked 1..N in order. A new
// row that ranks within the top is inserted; the row it pushes to rank N + 1
// is deleted; with the rank column selected, every row between them moves
// down a rank, which is an update (UpdateBefore with the old rank, UpdateAfter
// with the new one). Rows with equal order keys rank by arrival: a later row
// ranks after an earlier one, so the result is deterministic for a given
// input order. Changes are emitted in an order under which (key, rank) names
// one row at any time: the row leaving a rank is retracted before another
// takes it.
//
// When the input retracts (spec.input is not append), every row is kept, not
// only the top N: a retracted row is found by its key, order key and equal
// values and removed; the rows below it move up a rank and the row ranked
// N + 1 enters the top. UpdateBefore/Delete input retracts, Insert/UpdateAfter
// input adds.
//
// RANK() and DENSE_RANK() keep every row whose rank is at most N: rows with
// equal order keys share a rank, so RANK's top may hold more than N rows (all
// the rows tied at a rank <= N) and DENSE_RANK's holds the rows of the first N
// distinct order keys. A row's RANK is 1 + the rows ordered strictly before it,
// its DENSE_RANK 1 + the distinct order keys before it. On each input row the
// operator ranks the partition's kept rows before and after the change (only
// as far as rank N) and emits the difference: a Delete for each row that
// left the top, then, with the rank column selected, an UpdateBefore /
// UpdateAfter pair for each row whose rank changed, then an Insert for each
// row that entered. (key, rank) does not name one row, so the output has no
// unique key. Over append-only input a row ranked past N never returns (the
// rows before it only grow), so only the rows ranked 1..N are kept, ties
// included; over retracting input every row is kept, as for ROW_NUMBER.
//
// State (TimeIndexedTable families, kept by executor/state/ordered_partition.h):
//   'R' key-then-time: key = encodeKey(partition values...), time = 0,
//       rest = order bytes + encodeKeyInt(seq)  -> encodeRow(input row)
//   'S' keyed: empty key -> encodeKeyInt(next sequence number)
// The order bytes are encodeKey() of each order value, every byte inverted
// for a DESC key: encodeKey is order-preserving and no encoding is a prefix of
// another, so the inverted bytes sort in the reverse order and the
// concatenation sorts by the order keys in turn (NULL first for ASC, last for
// DESC, as Flink SQL orders them). The sequence number makes equal order keys
// distinct and ranks them by arrival. A scan of one partition key therefore
// reads its rows in rank order. The time part is unused (always 0): the
// family is a key-then-time one so that a partition reads as one range scan.
// A rest never begins with 0xff (an encodeKey tag is at most 0x58, inverted at
// least 0xa7; a sequence number starts 0x80), which keeps it inside the range
// scanKey() reads. The three functions share this layout (the rank is
// computed from the order bytes, never stored). Checkpoints hold these bytes;
// state_layout_test.cpp pins them.
#pragma once

#include <memory>

#include "executor/operators/operator.h"
#include "executor/state/state_store.h"
#include "planner/physical_plan.h"

namespace rtsql {

// Uses spec.function, partitionKeys, orderKeys, descending, limit, rankColumn, the
// output schema (the input row's columns, then the rank when rankColumn) and
// spec.input (whether retracted rows arrive).
OperatorPtr makeTopN(const TopNSpec& spec, std::unique_ptr<StateTable> state);

}  // namespace rtsql
