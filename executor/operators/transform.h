// Transform: TRANSFORM(input PARTITION BY keys USING PROCESSOR p WITH (...)),
// a user's Python processor run per partition key with state of its own
// (common/functions/python_processor.h has the Python side, docs/udf.md the
// API). Each input row is one call of handle_input_rows(key, rows,
// timer_values) with that row; every row the call yields is emitted as the
// key columns then the RETURNS columns. A timer that expires is one call of
// handle_expired_timer(key, timer_values, expired): event-time timers when
// the watermark reaches them, processing-time timers when the task next
// handles a batch of rows or a watermark at or after their time.
//
// State (TimeIndexedTable families):
//   'S' key-then-time: key = encodeKey(partition values...), time = 0,
//       rest = the state's name (UTF-8)  -> pickle of (updated_ms, value)
// The time part is unused (always 0): the family is a key-then-time one so
// that one range scan reads every state of a key, which is what a call needs.
// A name is UTF-8 and never holds the byte 0xff, which keeps it inside the
// range scanKey() reads. The value bytes are the processor's (Python's pickle
// protocol 4 of the pair); rtsql stores them as they are.
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
