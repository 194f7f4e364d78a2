// Binding of lambdas: `transform(arr, x -> x + 1)` and the other calls of a
// higher-order function. The arguments before a lambda are bound first, since
// they give its parameters their types (the element type of the array, the
// type of aggregate's start value); the body is then bound with the
// parameters in scope, ahead of the query's columns, as Spark resolves them.
//
// Each parameter gets a slot (common/expr.h) that no lambda around it uses.
// The slots are counted across every binder at work on the expression, not
// per ExprBinder: a user function's body is bound by a binder of its own, and
// a lambda inside it must not reuse the slot of a lambda the call is inside
// of. The binder of the body is handed the count (UserFunctions::lambdaSlots).
#include <fmt/format.h>

#include "common/lambda.h"
#include "planner/binder.h"

namespace rtsql::planner_detail {

bool isLambda(const ast::Expr& e) { return e.kind == ast::ExprKind::Call && e.name == "->"; }

void refuseLambda(const ast::Expr& e) {
  throw SqlError(sqlstate::kSyntaxError,
                 "a lambda function is only allowed as an argument of a higher-order function",
                 e.pos)
      .withHint("transform(arr, x -> x + 1), filter(arr, x -> x > 0), aggregate(arr, 0, (acc, x) "
                "-> acc + x)");
}

UserFunctions ExprBinder::functionsInside() const {
  UserFunctions inside = functions_;
  inside.lambdaSlots += static_cast<int>(lambdaVariables_.size());
  return inside;
}

ExprPtr ExprBinder::lambdaVariable(const std::string& name, size_t pos) const {
  for (auto it = lambdaVariables_.rbegin(); it != lambdaVariables_.rend(); ++it) {
    if (iequals(it->name, name)) return makeLambdaVariable(it->slot, it->type, it->name);
  }
  (void)pos;
  return nullptr;
}

ExprPtr ExprBinder::bindLambda(const ast::Expr& lambda,
                               const std::vector<DataTypePtr>& types) const {
  const std::vector<std::string>& names = lambda.parts;
  for (size_t i = 0; i < names.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (iequals(names[i], names[j])) {
        throw SqlError(sqlstate::kDuplicateColumn,
                       fmt::format("the lambda function names its parameter \"{}\" twice", names[i]),
                       lambda.pos);
      }
    }
  }
  // The slots of the lambdas around this one are taken; this one's are
  // given back when its body is bound (or fails to).
  const size_t outer = lambdaVariables_.size();
  const int first = functions_.lambdaSlots + static_cast<int>(outer);
  if (first + static_cast<int>(names.size()) > kMaxLambdaSlots) {
    throw SqlError(sqlstate::kStatementTooComplex,
                   fmt::format("lambda functions nest too deeply: {} parameters at most",
                               kMaxLambdaSlots),
                   lambda.pos);
  }
  std::vector<int> numbers;
  for (size_t i = 0; i < names.size(); ++i) {
    numbers.push_back(first + static_cast<int>(i));
    lambdaVariables_.push_back({names[i], types[i], numbers.back()});
  }
  ExprPtr body;
  try {
    body = bind(*lambda.args.at(0));
  } catch (...) {
    lambdaVariables_.resize(outer);
    throw;
  }
  lambdaVariables_.resize(outer);
  return makeLambda(std::move(numbers), names, std::move(body));
}

ExprPtr ExprBinder::bindHigherOrderCall(const std::string& name, const ast::Expr& e) const {
  std::vector<ExprPtr> args;
  args.reserve(e.args.size());
  for (size_t i = 0; i < e.args.size(); ++i) {
    const ast::Expr& a = *e.args[i];
    if (!isLambda(a)) {
      args.push_back(bind(a));
      continue;
    }
    std::vector<DataTypePtr> types = lambdaParameterTypes(name, args, i, a.parts.size(), a.pos);
    args.push_back(bindLambda(a, types));
  }
  return makeCall(name, std::move(args), e.pos);
}

}  // namespace rtsql::planner_detail
