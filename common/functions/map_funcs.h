// The MAP functions' entry points that other parts of the function layer
// reach: the map value builder every constructor goes through (it enforces
// Spark's rules for keys), and the map forms of size, element_at and `m[k]`.
#pragma once

#include <string>
#include <vector>

#include "common/functions/internal.h"

namespace rtsql::expr_internal {

void registerMapFunctions(FunctionTable& t);

// A MAP of keys and values in turn (k1, v1, k2, v2, ...). A NULL key raises
// 2200E and a key given twice 23505, as Spark 4 does by default
// (spark.sql.mapKeyDedupPolicy EXCEPTION); `fn` names the function in the
// message.
Value makeMapValue(ValueList keysAndValues, const char* fn);

// Throws 42804 when a map's key type `kt` is or holds a MAP (Spark's
// INVALID_MAP_KEY_TYPE): keys must have an equality.
void requireKeyType(const std::string& name, const std::vector<ExprPtr>& args, const DataType& kt,
                    size_t pos);

// size(m) and cardinality(m): the number of entries.
ExprPtr buildMapSize(const std::string& name, std::vector<ExprPtr>& args, size_t pos);
// element_at(m, k), try_element_at(m, k) and m[k]: the value of key k, NULL when
// the map has no such key (Spark 4 answers NULL for a missing map key, ANSI or not).
ExprPtr buildMapLookup(const std::string& name, std::vector<ExprPtr>& args, size_t pos);

}  // namespace rtsql::expr_internal
