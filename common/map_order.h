// Spark neither orders nor compares a MAP, nor a value that holds one (an
// array of maps, a struct with a map field): such a value is no comparison
// operand, IN or BETWEEN operand, ORDER BY, DISTINCT or GROUP BY key, no
// window's PARTITION BY or ORDER BY key (a top-N's too), no argument of an
// aggregate that orders or deduplicates (min, max, the ordering of max_by and
// min_by, collect_set) nor of a function that compares, sorts or hashes the
// values it is given (array_distinct, sort_array, greatest, hash, ...). The
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

// The hints of an ORDER BY and a PARTITION BY over a map, for the places that
// bind one (a bounded query's ORDER BY, each kind of window, a top-N).
inline constexpr std::string_view kOrderByMapHint = "sort by one of its entries: ORDER BY m['key']";
inline constexpr std::string_view kPartitionByMapHint =
    "partition by one of its entries: PARTITION BY m['key']";

// The hint of an aggregate or a function that would order, compare or hash a
// map (min(m), collect_set(m), array_distinct(array(m)), hash(m)).
inline constexpr std::string_view kMapArgumentHint =
    "pass one of its entries (m['key']), or map_entries(m) to order or compare them";

// Throws SqlError 42804 at `pos`, "`what` cannot compare TYPE values: a MAP
// has no order or equality", with `hint`, when `type` holds a map.
void refuseMapValues(const DataType& type, std::string_view what, size_t pos,
                     std::string_view hint);

}  // namespace rtsql
