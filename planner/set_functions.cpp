#include "planner/set_functions.h"

#include <fmt/format.h>

#include <map>

#include "parser/expr_walker.h"

namespace rtsql::planner_detail {
namespace {

using Function = ExpandSpec::Function;

std::optional<Function> functionOf(const std::string& name) {
  if (name == "unnest") return Function::Unnest;
  if (name == "generate_series") return Function::Series;
  if (name == "generate_subscripts") return Function::Subscripts;
  if (name == "_pg_expandarray") return Function::ExpandArray;
  return std::nullopt;
}

[[noreturn]] void noSuchCall(const ast::Expr& call, const std::vector<ExprPtr>& args) {
  std::string types;
  for (const ExprPtr& a : args) types += (types.empty() ? "" : ", ") + a->type()->toString();
  throw SqlError(sqlstate::kUndefinedFunction,
                 fmt::format("function {}({}) does not exist", call.name, types), call.pos)
      .withHint(
          "unnest(array), generate_series(start, stop [, step]) over integers, "
          "generate_subscripts(array, 1), information_schema._pg_expandarray(array)");
}

bool isArray(const ExprPtr& e) { return e->type()->id == TypeId::Array; }
bool isInteger(const ExprPtr& e) { return e->type()->isIntegral() || e->type()->id == TypeId::Null; }

// The type of a call's column, after checking its arguments.
DataTypePtr columnType(const ast::Expr& call, Function f, const std::vector<ExprPtr>& args) {
  switch (f) {
    case Function::Unnest:
      if (args.size() != 1 || !isArray(args[0])) noSuchCall(call, args);
      return args[0]->type()->element;
    case Function::ExpandArray:
      if (args.size() != 1 || !isArray(args[0])) noSuchCall(call, args);
      return DataType::structOf(
          {StructField{"x", args[0]->type()->element}, StructField{"n", DataType::of(TypeId::Int)}});
    case Function::Subscripts:
      if (args.size() != 2 || !isArray(args[0]) || !isInteger(args[1])) noSuchCall(call, args);
      return DataType::of(TypeId::Int);
    case Function::Series: {
      if (args.size() < 2 || args.size() > 3) noSuchCall(call, args);
      bool big = false;
      for (const ExprPtr& a : args) {
        if (!isInteger(a)) noSuchCall(call, args);
        big = big || a->type()->id == TypeId::BigInt;
      }
      return DataType::of(big ? TypeId::BigInt : TypeId::Int);
    }
  }
  noSuchCall(call, args);
}

}  // namespace

bool isSetFunction(const std::string& name) { return functionOf(name).has_value(); }

SetFunctionPlan planSetFunctions(const ast::Select& s, const Scope& scope, NodePtr input,
                                 const UserFunctions& functions) {
  std::vector<const ast::Expr*> calls;
  for (const ast::SelectItem& item : s.items) {
    if (item.expr->kind == ast::ExprKind::Star) continue;
    ast::enumerate(*item.expr, [&](const ast::Expr& e) {
      if (e.kind == ast::ExprKind::Call && isSetFunction(e.name)) calls.push_back(&e);
    });
  }
  SetFunctionPlan out;
  out.node = input;
  if (calls.empty()) return out;

  ExpandSpec op;
  op.inputColumns = static_cast<int>(input->schema.columns.size());
  op.output = input->schema;
  ExprBinder binder(scope, ExprContext::SelectList, functions);
  std::map<const ast::Expr*, ExprPtr> columns;
  for (const ast::Expr* call : calls) {
    for (const ast::ExprPtr& a : call->args) {
      const ast::Expr* inner = ast::findNode(*a, [](const ast::Expr& e) {
        return e.kind == ast::ExprKind::Call && isSetFunction(e.name);
      });
      if (inner) {
        throw SqlError(sqlstate::kFeatureNotSupported,
                       fmt::format("{}() in the arguments of {}()", inner->name, call->name),
                       inner->pos)
            .withHint("call it in a subquery in FROM: FROM (SELECT " + inner->name + "(...) AS x "
                      "FROM ...) s");
      }
    }
    ExpandSpec::Call bound;
    bound.function = *functionOf(call->name);
    for (const ast::ExprPtr& a : call->args) bound.args.push_back(binder.bind(*a));
    DataTypePtr type = columnType(*call, bound.function, bound.args);
    const int index = static_cast<int>(op.output.columns.size());
    const std::string name = call->name + "_" + std::to_string(columns.size() + 1);
    op.output.columns.push_back(Column{name, type, false});
    columns[call] = makeColumnRef(index, type, name);
    op.calls.push_back(std::move(bound));
  }
  out.node = operatorNode({std::move(input)}, std::move(op));
  out.hook = [columns = std::move(columns)](const ast::Expr& e) -> ExprPtr {
    auto it = columns.find(&e);
    return it == columns.end() ? nullptr : it->second;
  };
  return out;
}

}  // namespace rtsql::planner_detail
