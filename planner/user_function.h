// User-defined SQL functions: what CREATE FUNCTION defines, the checks made
// when it is created, and how the binder inlines a call.
//
// A SQL function is an expression over its parameters. It is never called at
// run time: the binder replaces `f(x + 1, y)` by the function's body bound with
// each parameter standing for its argument (cast to the parameter's type), cast
// to the return type, so a flow that calls a function costs per record exactly
// what the same expression written out would, and EXPLAIN shows that
// expression. Because bodies are inlined where they are called, a function may
// call only functions created before it, and never itself.
//
// A Python function (LANGUAGE PYTHON, docs/udf.md) is the exception: it is
// compiled by the embedded CPython when it is created, and a call binds to a
// node that calls it once per row (common/python/function.h). It is
// never inlined and never computed at plan time.
//
// The binder finds the catalog's functions in the UserFunctions every
// ExprBinder is given (planner/binder.h): planning (planFlow, planQuery) hands
// over its context's catalog, the server's constant SELECT the session's.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/expr.h"
#include "common/python/function.h"
#include "common/python/vectorized_call.h"
#include "common/types.h"
#include "parser/ast.h"

namespace rtsql {

class Catalog;

struct UserFunctionParam {
  std::string name;
  DataTypePtr type;
};

struct UserFunctionDef {
  std::string name;  // as declared
  std::vector<UserFunctionParam> params;
  DataTypePtr returns;
  // "sql" or "python", as SHOW USER FUNCTIONS shows it.
  std::string language = "sql";
  // A SQL function's body as parsed from `sql` (its positions are offsets in
  // that text); null for a Python function.
  std::shared_ptr<const ast::Expr> body;
  // LANGUAGE PYTHON VECTORIZED: called once per batch of rows, over lists.
  bool vectorized = false;
  // A Python function as compiled; null for a SQL function.
  std::shared_ptr<const PythonFunction> python;
  std::string bodyText;  // the body as written
  std::string sql;       // the CREATE FUNCTION statement, for durability
  // The user who created it: who may replace or drop it and read its body,
  // besides the superusers; empty for a function made before owners were
  // recorded, which is the superusers' alone (server/privileges.h).
  std::string owner;
  // The user functions the body calls, lower-cased, each once: a function
  // cannot be dropped or replaced while another calls it.
  std::vector<std::string> calls;
  // Creation order, set by the catalog: a function is always created after
  // those it calls, so replaying the catalog in this order rebuilds them.
  uint64_t sequence = 0;

  // `name(a INT, b STRING)`.
  std::string signature() const;
};

// Whether `lname` (lower-cased) is a built-in function's name, or a name the
// binder resolves before any function table: a user function of such a name
// could never be called. A release that adds built-in functions may take the
// name of a user function made before (server/catalog_replay.cpp).
bool isBuiltinFunctionName(const std::string& lname);

// Checks a CREATE FUNCTION against the functions of `catalog` and returns its
// definition: the name may not be a built-in function's (42723); parameter
// names are distinct (42P13); the body names only parameters (42703), has no
// aggregate (42803), window function or subquery (0A000), calls only
// functions that exist (42883) and not the function itself (42P13); its type
// must convert implicitly to RETURNS (42804). Every error points into the
// statement and says how to fix it. LANGUAGE PYTHON compiles the $$ body
// instead (42P13 with Python's message when it does not compile); any other
// language is 0A000.
UserFunctionDef defineUserFunction(const ast::CreateFunction& stmt, const Catalog& catalog);

// The user functions of `catalog` that `query` (or `expr`) calls by name,
// lower-cased, each once. A flow keeps this list so that its functions cannot
// be dropped under it.
std::vector<std::string> userFunctionsCalled(const ast::Query& query, const Catalog& catalog);
std::vector<std::string> userFunctionsCalled(const ast::Expr& expr, const Catalog& catalog);

struct PhysicalPlan;

// Places a VectorizedBatch step before each Filter and Project of `plan` that
// calls a vectorized Python function, so that each such call is made once per
// batch of rows: the step appends each call's results to the rows as a column
// and the operator's calls become references to those columns (named as the
// call is written). A Project drops the columns by computing its own; after a
// Filter a Project of the input's columns drops them, unless a Project comes
// next. The binder computes aggregates' arguments and grouping keys
// in the Project before the shuffle, so those are batched there. A vectorized
// call anywhere else (a join condition, an expression a stateful operator
// evaluates itself) is 0A000 at the call. A plan without vectorized calls is
// left as it is.
void placeVectorizedBatches(PhysicalPlan& plan);

namespace planner_detail {

struct UserFunctions;  // planner/binder.h

// The inlined body of `call` when it names a user function of `functions`,
// else null. `bindArg` binds an argument in the caller's scope. Throws 42883
// when the arguments do not fit the parameters.
ExprPtr inlineUserFunction(const ast::Expr& call, const UserFunctions& functions,
                           const std::function<ExprPtr(const ast::Expr&)>& bindArg);

// The signature of the user function of `catalog` whose name is closest to
// `name` when it is close enough to be a typo, else empty: the hint of an
// unknown function.
std::string closeUserFunction(const std::string& name, const Catalog* catalog);

}  // namespace planner_detail

}  // namespace rtsql
