// A FLOAT read into a DOUBLE: how a column declared DOUBLE over an avro or
// protobuf float (as sources were declared before such floats read as
// FLOAT), or a flow recorded before (planner/format_floats.h), reads it.
// Kept out of decode_util.cpp, whose textToValue is the json and csv
// decoders' hot path: more code in its unit changes what GCC inlines there.
#pragma once

#include "common/types.h"
#include "common/value.h"

namespace rtsql::format {

// Whether `column` is a field's SQL type `field` with some of its FLOATs (at
// the top, in struct fields, in array items) DOUBLE instead: how a source
// declared before avro and protobuf floats read as FLOAT, or a flow recorded
// before (planner/format_floats.h), reads the field. Equal types are not.
bool floatsWidened(const DataType& field, const DataType& column);
// `v`, a value of a field's type, as a value of `column` where floatsWidened().
void widenFloats(Value& v, const DataType& column);

}  // namespace rtsql::format
