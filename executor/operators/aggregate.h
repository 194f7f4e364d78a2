// Aggregate: GROUP BY with count(*), count(x), sum, min, max and avg, without a
// window or over tumbling, sliding or session windows on event time.
//
// Output mode is Spark's update mode: every input row updates the accumulators
// of its group (of each of its windows) in the state table and the group's new
// output row is emitted at once. With EMIT ON WINDOW CLOSE nothing is emitted on
// input; each window emits its one final row when the watermark passes its end.
// Output rows are laid out as the group key values, then the window struct
// STRUCT<start: TIMESTAMP, end: TIMESTAMP> when windowed, then one value per
// aggregate.
//
// State (one TimeIndexedTable per operator and task, time_indexed_table.h)
// uses these families, where `g` is the order-preserving key encoding of the
// group key values:
//   'G' keyed         g                  non-windowed group -> accumulators
//   'W' time-ordered  end, g             tumbling/sliding window -> accumulators
//   'S' keyed         g                  the group's open sessions -> their
//                                        bounds and accumulators
//   'T' time-ordered  end, g + start     session time index -> empty
// so the bytes of a key are the tag, then encodeKeyInt(end) for the
// time-ordered families, then the rest ('T': g, then encodeKeyInt(start)).
// Windows and the session time index are ordered by window end: expiring what
// the watermark passed is one ordered scan up to the watermark, never a full
// scan. A row costs one get and one put per window it updates. The value
// layouts are described in window_aggregate.cpp and
// session_window_aggregate.cpp; state_layout_test.cpp pins all of it.
//
// Rows emitted when a window closes carry the RecordContext of the last input
// row that updated that window (kept in its state value), so the latency of a
// final row is measured from the input that last changed it.
#pragma once

#include <memory>

#include "executor/operators/operator.h"
#include "executor/state/state_store.h"
#include "planner/physical_plan.h"

namespace rtsql {

// `state` is the operator's own table; the window kind picks the operator.
// Throws InternalError on a malformed spec (e.g. a window without a size).
OperatorPtr makeAggregate(const AggregateSpec& spec, std::unique_ptr<StateTable> state);

}  // namespace rtsql
