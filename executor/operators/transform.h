// Transform: TRANSFORM(input PARTITION BY keys USING PROCESSOR p WITH (...)),
// a user's Python processor run per partition key with state of its own
// (common/functions/python_processor.h has the Python side, docs/udf.md the
// API). Each input row is one call of handle_input_rows(key, rows,
// timer_values) with that row; every row the call yields is emitted as the
// key columns then the RETURNS columns.
//
// State (TimeIndexedTable families):
//   'S' key-then-time: key = encodeKey(partition values...), time = 0,
//       rest = the state's name (UTF-8)  -> pickle of (updated_ms, value)
// The time part is unused (always 0): the family is a key-then-time one so
// that one range scan reads every state of a key, which is what a call needs.
// A name is UTF-8 and never holds the byte 0xff, which keeps it inside the
// range scanKey() reads. The value bytes are the processor's (Python's pickle
// protocol 4 of the pair); rtsql stores them as they are. Checkpoints hold
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
