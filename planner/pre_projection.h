// Internal to the planner: the Project a stateful operator reads from. A
// top-N, an aggregate OVER (...), a dedup and a GROUP BY aggregation compute
// over keys (PARTITION BY, ORDER BY, DISTINCT ON, GROUP BY, an aggregate's
// argument or FILTER) that may be any expression;
// the binder computes each as a column of a Project right before the
// operator, after the columns the operator passes on, so that the operator's
// own expressions are column references and a shuffle can hash them.
#pragma once

#include <vector>

#include "planner/logical_plan.h"

namespace rtsql::planner_detail {

class PreProjection {
 public:
  // The columns so far: the binder appends the ones the operator passes on
  // (the select items) directly, then the keys through add().
  std::vector<OutputColumn> columns;

  // The column whose expression is `e` itself (the same bound node), or -1.
  int find(const ExprPtr& e) const;
  // Appends `e`, bound from `written`, as a column: named as `written` names
  // its column when it is one, else by the expression's text. Its index.
  int add(const ExprPtr& e, const ast::Expr& written);
  // find(e), or add(e, written) when no column computes it yet.
  int findOrAdd(const ExprPtr& e, const ast::Expr& written);

  // The Project of `columns` over `input`; ref() reads its columns after it.
  const NodePtr& project(NodePtr input);
  const NodePtr& node() const { return node_; }
  // A reference to column `i` of the Project's rows.
  ExprPtr ref(int i) const;
  // ref() of each of `columns`, in order: the operator's keys.
  std::vector<ExprPtr> refs(const std::vector<int>& columns) const;

 private:
  NodePtr node_;
};

}  // namespace rtsql::planner_detail
