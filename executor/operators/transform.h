// Transform: TRANSFORM(input PARTITION BY keys USING PROCESSOR p WITH (...)),
// a user's Python processor run per partition key with state of its own
// (common/python/processor.h has the Python side, docs/udf.md the
// API). Each input row is one call of handle_input_rows(key, rows,
// timer_values) with that row; every row the call yields is emitted as the
// key columns then the RETURNS columns. A timer that expires is one call of
// handle_expired_timer(key, timer_values, expired): event-time timers when
// the watermark reaches them, processing-time timers when the wall clock
// does. The operator keeps the time of its next processing-time work (the
// first processing-time timer, the first TTL expiry) and reports it through
// wakeAtMillis(), so the task wakes for it while no input comes
// (the task loops, executor/flow_source_task.cpp and
// flow_shuffle_task.cpp, bound their wait by it).
//
// State (TimeIndexedTable families):
//   'S' key-then-time: key = encodeKey(partition values...), time = 0,
//       rest = the state's name (UTF-8)
//       -> 0x01 + encodeKeyInt(expiry ms, INT64_MAX without TTL)
//          + pickle of (updated_ms, value)
// The time part is unused (always 0): the family is a key-then-time one so
// that one range scan reads every state of a key, which is what a call needs.
// A name is UTF-8 and never holds the byte 0xff, which keeps it inside the
// range scanKey() reads. The pickle is the processor's (Python's pickle
// protocol 4 of the pair); rtsql stores it as it is. The first byte is the
// value's layout: 0x01 is the one above. A value written before expiry
// times were kept is the pickle alone, whose first byte is 0x80 (pickle's
// PROTO opcode): it is read as it is, with no expiry known (its TTL is still
// applied when it is read) and takes the layout above at its next write. Any
// other first byte is an InternalError naming the operator, never a
// silent misreading.
//   'E' time-ordered: time = an 'S' entry's expiry (ms), rest =
//       encodeKey(partition values...) + the state's name  -> the name
// 'E' holds exactly one entry per 'S' entry with a TTL: a write that moves
// the expiry moves the 'E' entry, an erase erases it. The clock expires it
// in one ordered scan and erases the 'S' entry with it, so an entry whose
// key is never called for again is deleted all the same.
//   'T' time-ordered: time = the timer's time (ms), rest = encodeKey(partition
//       values...)  -> encodeRow(partition values)
//   'K' key-then-time: key = encodeKey(partition values...), time = the
//       timer's time (ms), rest = empty  -> empty
// 'T' is the timers in time order, which the watermark (event-time timers)
// or the clock (processing-time timers) expires in one ordered scan; its
// value gives back the key's values for the call. 'K' lists a key's timers
// (list_timers()). Checkpoints hold
// these bytes; transform_test.cpp pins them.
#pragma once

#include <memory>

#include "executor/operators/operator.h"
#include "executor/state/state_store.h"
#include "planner/physical_plan.h"

namespace rtsql {

// Uses spec.partitionKeys, inputColumns, inputSchema, processor, options and
// the output schema (the keys, then the RETURNS columns).
OperatorPtr makeTransform(const TransformSpec& spec, std::unique_ptr<StateTable> state);

}  // namespace rtsql
