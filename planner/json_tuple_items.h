// json_tuple(json, 'k1', ...) as a select item: the generator yields exactly
// one row per input row, so the item becomes several output columns c0, c1,
// ... (as `*` becomes the columns of the FROM), each a field of the one
// STRUCT expression common/functions/json_tuple.h builds. It works the same in
// a flow and in a bounded query. Elsewhere (WHERE, inside another call) the
// name is unknown, as Spark refuses a generator there.
#pragma once

#include <functional>
#include <vector>

#include "parser/ast.h"
#include "planner/binder.h"
#include "planner/logical_plan.h"

namespace rtsql::planner_detail {

// Whether `item` is a json_tuple call; if it is, appends its columns to `out`.
// An alias names the column of a call with one key; with several keys it is
// 42601 (Spark's `AS (a, b)` form is not in the grammar).
bool expandJsonTuple(const ast::SelectItem& item, const ExprBinder& binder,
                     std::vector<OutputColumn>& out);

// The same for a select list without FROM (server/select_statement.cpp), whose
// items `bind` binds; empty when `item` is not a json_tuple call.
std::vector<OutputColumn> jsonTupleColumns(const ast::SelectItem& item,
                                           const std::function<ExprPtr(const ast::Expr&)>& bind);

}  // namespace rtsql::planner_detail
