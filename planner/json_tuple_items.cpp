#include "planner/json_tuple_items.h"

#include "common/functions/json_tuple.h"
#include "common/schema.h"

namespace rtsql::planner_detail {

std::vector<OutputColumn> jsonTupleColumns(const ast::SelectItem& item,
                                           const std::function<ExprPtr(const ast::Expr&)>& bind) {
  std::vector<OutputColumn> out;
  const ast::Expr& e = *item.expr;
  if (e.kind != ast::ExprKind::Call || toLower(e.name) != "json_tuple") return out;
  std::vector<ExprPtr> args;
  for (const ast::ExprPtr& a : e.args) args.push_back(bind(*a));
  ExprPtr tuple = makeJsonTuple(std::move(args), e.pos);
  const size_t n = tuple->type()->fields.size();
  if (!item.alias.empty() && n != 1)
    throw SqlError(sqlstate::kSyntaxError,
                   "json_tuple with several keys makes several columns: one alias cannot name them",
                   e.pos,
                   "omit the alias (the columns are c0, c1, ...) and rename in an outer query");
  for (size_t i = 0; i < n; ++i) {
    std::string field = jsonTupleColumn(i);
    out.push_back(OutputColumn{item.alias.empty() ? field : item.alias,
                               makeFieldAccess(tuple, field, e.pos), e.pos});
  }
  return out;
}

bool expandJsonTuple(const ast::SelectItem& item, const ExprBinder& binder,
                     std::vector<OutputColumn>& out) {
  std::vector<OutputColumn> columns =
      jsonTupleColumns(item, [&](const ast::Expr& a) { return binder.bind(a); });
  if (columns.empty()) return false;
  out.insert(out.end(), columns.begin(), columns.end());
  return true;
}

}  // namespace rtsql::planner_detail
