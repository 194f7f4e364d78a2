// Internal to the planner: name scopes and the expression binder. A Scope lists
// the columns a query can name, each with the qualifier it can be reached by
// (the relation's alias or name) and the bound expression that computes it from
// the scanned row. For a source that expression is a column reference; for a
// column of a subquery in FROM it is the subquery's own projection, which is how
// stateless subqueries are flattened into a single scan -> filter -> project.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "common/expr.h"
#include "common/schema.h"
#include "parser/ast.h"

namespace rtsql {
class Catalog;
}  // namespace rtsql

namespace rtsql::planner_detail {

// The user functions an expression may call: those of `catalog` (null: none,
// as in INSERT VALUES), handed to every ExprBinder by whoever plans the
// statement. `depth` counts the inlined bodies the binder is inside of:
// functions cannot form a cycle, so it only bounds a very long chain of them.
// `lambdaSlots` counts the lambda parameter slots (common/expr.h) the
// binders around it hold: an inlined body is bound by a binder of its own,
// and a lambda inside it must not reuse the slot of a lambda the call is in.
struct UserFunctions {
  const Catalog* catalog = nullptr;
  int depth = 0;
  int lambdaSlots = 0;
};

struct ScopeColumn {
  std::string qualifier;  // alias or relation name; empty when unnamed
  std::string name;
  DataTypePtr type;
  bool hidden = false;  // reachable by name, not part of `*`
  ExprPtr expr;         // computes the column from the scanned row
};

struct Scope {
  std::vector<ScopeColumn> columns;

  bool hasQualifier(std::string_view q) const;
  // Names of the visible columns, for hints.
  std::vector<std::string> visibleNames() const;
};

// Every column of `schema` as a column reference, reachable through `qualifier`.
Scope scopeFromSchema(const Schema& schema, const std::string& qualifier);

// Where an expression appears decides the message of a misplaced aggregate
// (a grouping error, 42803, that names the clause).
enum class ExprContext { General, Where, SelectList, GroupBy, JoinOn, DistinctOn, AggregateArg };

// Replaces the binding of a subtree before the binder looks at it: returns the
// bound expression, or null to let the binder bind the node itself (and call the
// hook again on its children). Grouped queries use it to turn aggregate calls and
// grouping expressions into references to the aggregate's output columns.
using BindHook = std::function<ExprPtr(const ast::Expr&)>;

class ExprBinder {
 public:
  ExprBinder(const Scope& scope, ExprContext context, const UserFunctions& functions,
             BindHook hook = nullptr)
      : scope_(scope), context_(context), functions_(functions), hook_(std::move(hook)) {}

  // Binds an expression (never a bare `*`), folding constant subtrees.
  ExprPtr bind(const ast::Expr& e) const;

 private:
  ExprPtr bindNode(const ast::Expr& e) const;
  ExprPtr bindColumn(const ast::Expr& e) const;
  ExprPtr bindLiteral(const ast::Expr& e) const;
  ExprPtr bindCall(const ast::Expr& e) const;
  [[noreturn]] void throwUnknownColumn(const std::string& name, size_t pos) const;
  // Lambdas (lambda_binder.cpp): a call with a lambda argument, a lambda's
  // body with its parameters in scope, and the innermost parameter of a name.
  ExprPtr bindHigherOrderCall(const std::string& name, const ast::Expr& e) const;
  ExprPtr bindLambda(const ast::Expr& lambda, const std::vector<DataTypePtr>& types) const;
  ExprPtr lambdaVariable(const std::string& name, size_t pos) const;

  // The user functions as an inlined body bound inside this binder sees
  // them: with the lambda slots of this binder's lambdas added.
  UserFunctions functionsInside() const;

  // A parameter of a lambda the binder is inside of: it shadows a column of
  // the same name, as in Spark. Each holds one slot, after the
  // `functions_.lambdaSlots` the binders around this one hold.
  struct LambdaVariable {
    std::string name;
    DataTypePtr type;
    int slot;
  };

  const Scope& scope_;
  ExprContext context_;
  UserFunctions functions_;
  BindHook hook_;
  mutable std::vector<LambdaVariable> lambdaVariables_;
};

// A lambda, `x -> body` (parsed as a call of `->`, parser/ast_builder.cpp),
// and the 42601 for one that is not an argument of a higher-order function
// (lambda_binder.cpp).
bool isLambda(const ast::Expr& e);
[[noreturn]] void refuseLambda(const ast::Expr& e);

// 0A000 for a subquery where none is planned (subquery_binder.cpp).
[[noreturn]] void refuseSubquery(const ast::Expr& e, ExprContext context);

// True when the expression contains an aggregate call (count(*), sum(x), ...).
bool containsAggregate(const ast::Expr& e);
// True when the expression contains window() or session_window().
bool containsWindow(const ast::Expr& e);

// The candidate closest to `name` when it is close enough to be a likely typo,
// else empty.
std::string closestName(std::string_view name, const std::vector<std::string>& candidates);

}  // namespace rtsql::planner_detail
