// json_tuple(json, 'k1', 'k2', ...): Spark's generator of one row of STRING
// columns c0, c1, ..., the top-level fields k1, k2, ... of a JSON object (a
// string field's text, another value's JSON text; NULL for a missing key, a
// JSON null, a NULL key or text that is not a JSON object). It yields exactly
// one row per input row, so the planner makes it a projection into several
// columns (planner/query_binder.cpp); here it is one expression whose value is
// the STRUCT of those columns, parsed once per row with the same parser and
// bounds as get_json_object (simdjson's depth limit; values at most
// kMaxValueBytes).
#pragma once

#include <string>
#include <vector>

#include "common/expr.h"

namespace rtsql {

// The STRUCT<c0 STRING, c1 STRING, ...> expression over bound `args` (the JSON
// text, then the keys); 42883 with fewer than two arguments, 42804 for an
// argument that is not text.
ExprPtr makeJsonTuple(std::vector<ExprPtr> args, size_t pos);

// The names of its columns: c0, c1, ...
std::string jsonTupleColumn(size_t i);

}  // namespace rtsql
