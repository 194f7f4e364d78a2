// Spark neither orders nor compares a MAP, nor a value that holds one (an
// array of maps, a struct with a map field): such a value is no comparison
// operand, IN or BETWEEN operand, ORDER BY, DISTINCT or GROUP BY key. The
// binder refuses it there (42804) with this test.
#pragma once

#include <cstddef>
#include <string_view>

#include "common/types.h"

namespace rtsql {

// Whether a MAP is `type` or inside it (an array's element, a struct's field).
bool containsMap(const DataType& type);

// The hint of a DISTINCT over a map, for the two places that bind one (a
// query with FROM, QueryBinder::bindDedup, and one without).
inline constexpr std::string_view kDistinctMapHint =
    "deduplicate by its entries: DISTINCT m['key'], or map_entries(m)";

// Throws SqlError 42804 at `pos`, "`what` cannot compare TYPE values: a MAP
// has no order or equality", with `hint`, when `type` holds a map.
void refuseMapValues(const DataType& type, std::string_view what, size_t pos,
                     std::string_view hint);

}  // namespace rtsql
