// A value's text with its declared type at hand: Value::toString's printer,
// walking into ARRAYs, STRUCTs and MAPs with their element types (a Value
// alone knows none), with a hook for the values whose text depends on their
// type. CAST(collection AS STRING) writes the intervals inside so.
#pragma once

#include <string>

#include "common/types.h"
#include "common/value.h"

namespace rtsql {

// `leaf`, when given, is asked first at each non-NULL value: it appends its
// own text and returns true, or returns false for Value::toString's.
using ValueTextLeaf = bool (*)(std::string& out, const Value& v, const DataType& t);
// Appends `v` (of type `t`) as Value::toString writes it, but for what
// `leaf` writes.
void appendValueText(std::string& out, const Value& v, const DataType& t, ValueTextLeaf leaf);

}  // namespace rtsql
