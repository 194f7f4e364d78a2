// Set-returning functions in a bounded query's select list, as PostgreSQL
// runs them: `SELECT indexrelid, unnest(indkey) AS attnum,
// generate_subscripts(indkey, 1) AS ord FROM pg_index` gives a row per
// element, and several such functions in one list run side by side (zip),
// for as many rows as the longest gives, the others NULL past their end.
// SQLAlchemy's inspector and pgjdbc's DatabaseMetaData send them to read a
// relation's key and indexes. The calls become an Expand operator after the
// FROM's rows (ExpandSpec, planner/operator_spec.h) and each call a column of
// its rows, which the select items then read.
//
// The functions: unnest(array), generate_series(start, stop[, step]) over
// integers, generate_subscripts(array, dim) (0-based, the subscripts a[i]
// reads, as PostgreSQL's int2vector pg_index.indkey has them) and information_schema._pg_expandarray(array), whose rows are (x, n): the
// element and its 1-based position.
#pragma once

#include <string>

#include "parser/ast.h"
#include "planner/binder.h"
#include "planner/logical_plan.h"

namespace rtsql::planner_detail {

// Whether `name` (a call's, lower case) is one of the functions above.
bool isSetFunction(const std::string& name);

struct SetFunctionPlan {
  NodePtr node;  // the input, then the Expand; the input itself without a call
  BindHook hook; // each call of the list -> its column of node's rows; null without a call
};

// The Expand of the set-returning calls in `s`'s select list over `input`,
// whose rows `scope` names (the Expand keeps them as they are, so the scope
// still names them). 0A000 for a call nested in another's arguments,
// 42883 for arguments the function does not take.
SetFunctionPlan planSetFunctions(const ast::Select& s, const Scope& scope, NodePtr input,
                                 const UserFunctions& functions);

}  // namespace rtsql::planner_detail
