// User-defined SQL functions: the checks of CREATE FUNCTION, the functions a
// statement calls, and the inlining of a call (see user_function.h).
#include "planner/user_function.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/decimal.h"
#include "common/error.h"
#include "common/python/vectorized_call.h"
#include "parser/expr_walker.h"
#include "planner/binder.h"
#include "planner/catalog.h"
#include "planner/physical_plan.h"
#include "planner/planner.h"

namespace rtsql {

namespace {

constexpr int kMaxInlineDepth = 64;

void addCalled(const ast::Expr& e, const Catalog& catalog, std::vector<std::string>& out) {
  if (e.kind != ast::ExprKind::Call || !catalog.findFunction(e.name)) return;
  std::string key = toLower(e.name);
  if (std::find(out.begin(), out.end(), key) == out.end()) out.push_back(std::move(key));
}

int numericRank(TypeId t) {
  switch (t) {
    case TypeId::TinyInt:
      return 1;
    case TypeId::SmallInt:
      return 2;
    case TypeId::Int:
      return 3;
    case TypeId::BigInt:
      return 4;
    case TypeId::Float:
      return 5;
    case TypeId::Double:
      return 6;
    default:
      return 0;
  }
}

// The conversions the engine makes without being asked: NULL to anything, and
// numeric widening (TINYINT to SMALLINT to INT to BIGINT to FLOAT to DOUBLE;
// a DECIMAL to FLOAT or DOUBLE, and an integer or a DECIMAL to a DECIMAL with
// as many integer digits and scale, so that 2.5 is a DOUBLE argument). Anything
// else needs a CAST.
bool implicitlyConvertible(const DataType& from, const DataType& to) {
  if (from.id == TypeId::Null || from.equals(to)) return true;
  if (to.id == TypeId::Decimal && (from.id == TypeId::Decimal || from.isIntegral())) {
    const int scale = from.id == TypeId::Decimal ? from.scale : 0;
    const int digits = from.id == TypeId::Decimal    ? from.precision - from.scale
                       : from.id == TypeId::TinyInt  ? 3
                       : from.id == TypeId::SmallInt ? 5
                       : from.id == TypeId::Int      ? decimal::ofInt().precision
                                                     : decimal::ofBigInt().precision;
    return to.scale >= scale && to.precision - to.scale >= digits;
  }
  if (from.id == TypeId::Decimal) return to.id == TypeId::Float || to.id == TypeId::Double;
  int f = numericRank(from.id), t = numericRank(to.id);
  return f > 0 && t > 0 && f <= t;
}

std::string typeList(const std::vector<ExprPtr>& args) {
  std::string out;
  for (size_t i = 0; i < args.size(); ++i) {
    if (i) out += ", ";
    out += args[i]->type()->toString();
  }
  return out;
}

std::string parameterNames(const UserFunctionDef& def) {
  std::string out;
  for (const auto& p : def.params) out += (out.empty() ? "" : ", ") + p.name;
  return out;
}

// LANGUAGE PYTHON: the body between $$ compiled as the body of a def over
// the parameters. `def` holds the name, parameters and return type.
UserFunctionDef definePythonFunction(const ast::CreateFunction& stmt, UserFunctionDef def) {
  if (!stmt.dollarQuoted) {
    throw SqlError(sqlstate::kSyntaxError, "a Python function's body is written between $$",
                   stmt.body ? stmt.body->pos : stmt.namePos,
                   "write AS $$ return ... $$: the body of a def over the parameters");
  }
  std::vector<PythonFunction::Param> params;
  for (size_t i = 0; i < def.params.size(); ++i) {
    params.push_back(
        PythonFunction::Param{def.params[i].name, def.params[i].type, stmt.params[i].pos});
  }
  def.python = PythonFunction::compile(def.name, std::move(params), def.returns, stmt.bodyText,
                                       stmt.codePos, stmt.vectorized);
  def.vectorized = stmt.vectorized;
  def.bodyText = stmt.bodyText;
  def.sql = stmt.text;
  return def;
}

}  // namespace

// Names the binder resolves before any function table, or that are built-in
// functions: a user function of such a name could never be called.
bool isBuiltinFunctionName(const std::string& lname) {
  static const char* const kSpecial[] = {"window", "session_window", "row_number",
                                         "rank",   "dense_rank",     "neg"};
  for (const char* s : kSpecial) {
    if (lname == s) return true;
  }
  if (isAggregateFunction(lname)) return true;
  const std::vector<std::string> names = functionNames();
  return std::binary_search(names.begin(), names.end(), lname);
}

namespace {

// The expressions of `op` other than a Filter's or Project's, with what they
// are to the query, for the refusal of a vectorized call among them.
std::vector<std::pair<const ExprPtr*, const char*>> refusedPlaces(const OperatorSpec& op) {
  std::vector<std::pair<const ExprPtr*, const char*>> out;
  auto add = [&](const std::vector<ExprPtr>& v, const char* what) {
    for (const ExprPtr& e : v) out.emplace_back(&e, what);
  };
  auto addAggregates = [&](const std::vector<AggregateCall>& calls) {
    for (const AggregateCall& c : calls) {
      out.emplace_back(&c.arg, "an aggregate's argument");
      out.emplace_back(&c.filter, "an aggregate's FILTER");
    }
  };
  std::visit(
      [&](const auto& spec) {
        using Spec = std::decay_t<decltype(spec)>;
        if constexpr (std::is_same_v<Spec, BroadcastJoinSpec>) {
          add(spec.probeKeys, "a join condition");
          add(spec.buildKeys, "a join condition");
          out.emplace_back(&spec.residual, "a join condition");
        } else if constexpr (std::is_same_v<Spec, AggregateSpec>) {
          add(spec.groupKeys, "a GROUP BY key");
          addAggregates(spec.aggregates);
          out.emplace_back(&spec.window.time, "a window's time");
        } else if constexpr (std::is_same_v<Spec, DedupSpec>) {
          add(spec.dedupKeys, "a DISTINCT ON key");
          out.emplace_back(&spec.eventTime, "a DISTINCT ON event time");
        } else if constexpr (std::is_same_v<Spec, StreamJoinSpec>) {
          add(spec.leftKeys, "a join condition");
          add(spec.rightKeys, "a join condition");
          out.emplace_back(&spec.leftTime, "a join's time bound");
          out.emplace_back(&spec.rightTime, "a join's time bound");
          out.emplace_back(&spec.residual, "a join condition");
        } else if constexpr (std::is_same_v<Spec, TopNSpec>) {
          add(spec.partitionKeys, "a window function's PARTITION BY");
          add(spec.orderKeys, "a window function's ORDER BY");
        } else if constexpr (std::is_same_v<Spec, TransformSpec>) {
          add(spec.partitionKeys, "TRANSFORM's PARTITION BY");
        } else if constexpr (std::is_same_v<Spec, OverAggregateSpec>) {
          add(spec.partitionKeys, "a window function's PARTITION BY");
          add(spec.orderKeys, "a window function's ORDER BY");
          addAggregates(spec.aggregates);
        }
      },
      op.kind());
  return out;
}

[[noreturn]] void refuseVectorized(const VectorizedCall& call, const char* where) {
  throw SqlError(sqlstate::kFeatureNotSupported,
                 fmt::format("vectorized function {} cannot be called in {}", call.function, where),
                 call.pos,
                 "a vectorized Python function is called in a SELECT list or a WHERE; compute "
                 "it in a subquery's SELECT list and use its column here");
}

}  // namespace

void placeVectorizedBatches(PhysicalPlan& plan) {
  int nextId = 0;
  for (const StageSpec& stage : plan.stages) {
    for (const OperatorSpec& op : stage.operators) nextId = std::max(nextId, op.id() + 1);
  }
  for (StageSpec& stage : plan.stages) {
    std::vector<OperatorSpec> placed;
    placed.reserve(stage.operators.size());
    for (size_t o = 0; o < stage.operators.size(); ++o) {
      OperatorSpec& op = stage.operators[o];
      std::vector<ExprPtr> over;
      if (op.is<FilterSpec>()) {
        over.push_back(op.as<FilterSpec>().predicate);
      } else if (op.is<ProjectSpec>()) {
        over = op.as<ProjectSpec>().exprs;
      } else {
        for (const auto& [expr, where] : refusedPlaces(op)) {
          if (!*expr) continue;
          std::vector<VectorizedCall> calls = vectorizedCallsIn(**expr);
          if (!calls.empty()) refuseVectorized(calls.front(), where);
        }
      }
      if (vectorizedCallsIn(over).empty()) {
        placed.push_back(std::move(op));
        continue;
      }
      // The rows the operator reads, to which the batch appends a column per
      // call; the operator then reads the columns instead of calling.
      const Schema input =
          placed.empty()
              ? (stage.scan >= 0 ? plan.scans[static_cast<size_t>(stage.scan)].schema : Schema{})
              : placed.back().output();
      const int width = static_cast<int>(input.columns.size());
      VectorizedColumns columns = vectorizedColumns(over, width);
      VectorizedBatchSpec batch;
      batch.id = nextId++;
      batch.inputColumns = width;
      batch.output = input;
      for (const ExprPtr& call : columns.calls) {
        batch.output.columns.push_back(Column{call->toString(), call->type(), false});
      }
      batch.calls = std::move(columns.calls);
      const Schema widened = batch.output;
      placed.emplace_back(std::move(batch));
      if (op.is<ProjectSpec>()) {
        // A Project's output is its expressions: the appended columns end there.
        op.as<ProjectSpec>().exprs = std::move(columns.exprs);
        placed.push_back(std::move(op));
        continue;
      }
      FilterSpec& filter = op.as<FilterSpec>();
      filter.predicate = std::move(columns.exprs.front());
      filter.output = widened;
      placed.push_back(std::move(op));
      // A Filter passes its rows on whole: the columns are dropped after it,
      // unless a Project comes next and computes its own columns anyway.
      const bool projectNext =
          o + 1 < stage.operators.size() && stage.operators[o + 1].is<ProjectSpec>();
      if (!projectNext) {
        ProjectSpec strip;
        strip.id = nextId++;
        strip.output = input;
        for (int c = 0; c < width; ++c) {
          const Column& col = input.columns[static_cast<size_t>(c)];
          strip.exprs.push_back(makeColumnRef(c, col.type, col.name));
        }
        placed.emplace_back(std::move(strip));
      }
    }
    stage.operators = std::move(placed);
    for (const ExprPtr& key : stage.output.keys) {
      std::vector<VectorizedCall> calls = vectorizedCallsIn(*key);
      if (!calls.empty()) refuseVectorized(calls.front(), "a shuffle key");
    }
  }
}

std::string UserFunctionDef::signature() const {
  std::string out = name + "(";
  for (size_t i = 0; i < params.size(); ++i) {
    if (i) out += ", ";
    out += params[i].name + " " + params[i].type->toString();
  }
  return out + ")";
}

std::vector<std::string> userFunctionsCalled(const ast::Query& query, const Catalog& catalog) {
  std::vector<std::string> out;
  ast::enumerate(query, [&](const ast::Expr& e) { addCalled(e, catalog, out); });
  return out;
}

std::vector<std::string> userFunctionsCalled(const ast::Expr& expr, const Catalog& catalog) {
  std::vector<std::string> out;
  ast::enumerateAll(expr, [&](const ast::Expr& e) { addCalled(e, catalog, out); });
  return out;
}

UserFunctionDef defineUserFunction(const ast::CreateFunction& stmt, const Catalog& catalog) {
  UserFunctionDef def;
  def.name = stmt.name;
  const std::string lname = toLower(stmt.name);
  if (isBuiltinFunctionName(lname)) {
    throw SqlError(sqlstate::kDuplicateFunction,
                   fmt::format("function {} is a built-in function", stmt.name), stmt.namePos,
                   "a function cannot take a built-in function's name; choose another name "
                   "(SHOW FUNCTIONS lists the names in use)");
  }
  for (const auto& p : stmt.params) {
    for (const auto& seen : def.params) {
      if (iequals(seen.name, p.name)) {
        throw SqlError(sqlstate::kInvalidFunctionDefinition,
                       fmt::format("parameter name \"{}\" used more than once", p.name), p.pos,
                       "give each parameter its own name");
      }
    }
    def.params.push_back(UserFunctionParam{p.name, bindType(p.type)});
  }
  def.returns = bindType(stmt.returns);
  def.language = stmt.language;
  if (stmt.language == "python") return definePythonFunction(stmt, std::move(def));
  if (stmt.vectorized) {
    throw SqlError(sqlstate::kInvalidFunctionDefinition, "only a Python function can be VECTORIZED",
                   stmt.vectorizedPos,
                   "write LANGUAGE PYTHON VECTORIZED with a $$ body over lists, or leave out "
                   "VECTORIZED: a SQL function is inlined and costs nothing per call");
  }
  if (stmt.language != "sql") {
    throw SqlError(sqlstate::kFeatureNotSupported,
                   fmt::format("functions in LANGUAGE {} are not supported", stmt.language),
                   stmt.languagePos, "rtsql runs functions in LANGUAGE SQL and LANGUAGE PYTHON");
  }
  if (stmt.dollarQuoted) {
    throw SqlError(sqlstate::kSyntaxError, "a SQL function's body is an expression, not $$ text",
                   stmt.codePos - 2,
                   "write the expression without the $$, as in AS x + 1; LANGUAGE PYTHON "
                   "takes a $$ body");
  }
  if (!stmt.body) throw InternalError("CREATE FUNCTION without a body");
  const ast::Expr& body = *stmt.body;

  // What a body cannot hold, said in its own words before the binder would
  // say it in a query's.
  ast::enumerateAll(body, [&](const ast::Expr& e) {
    if (e.kind == ast::ExprKind::Subquery || e.kind == ast::ExprKind::InSubquery ||
        e.kind == ast::ExprKind::Exists) {
      throw SqlError(sqlstate::kFeatureNotSupported, "a function body cannot hold a subquery",
                     e.pos, "a SQL function is an expression over its parameters");
    }
    if (e.kind != ast::ExprKind::Call) return;
    if (e.over) {
      throw SqlError(sqlstate::kFeatureNotSupported,
                     "a function body cannot hold a window function", e.pos,
                     "a SQL function is an expression over its parameters; apply OVER (...) in "
                     "the query");
    }
    if (e.star || isAggregateFunction(e.name)) {
      throw SqlError(sqlstate::kGroupingError, "a function body cannot hold an aggregate", e.pos,
                     fmt::format("a SQL function computes one value per row; call it inside the "
                                 "aggregate instead, as in sum({}(x))",
                                 stmt.name));
    }
    if (iequals(e.name, stmt.name)) {
      throw SqlError(sqlstate::kInvalidFunctionDefinition,
                     fmt::format("function {} cannot call itself", stmt.name), e.pos,
                     "a SQL function is inlined where it is called, so it cannot recurse");
    }
  });

  // The body is bound as a query binds a call to it, with each parameter a
  // column of the row, and with the functions that exist now.
  planner_detail::Scope scope;
  for (size_t i = 0; i < def.params.size(); ++i) {
    const auto& p = def.params[i];
    scope.columns.push_back(planner_detail::ScopeColumn{
        "", p.name, p.type, false, makeColumnRef(static_cast<int>(i), p.type, p.name)});
  }
  ExprPtr bound;
  try {
    bound = planner_detail::ExprBinder(scope, planner_detail::ExprContext::General,
                                       planner_detail::UserFunctions{&catalog})
                .bind(body);
  } catch (SqlError& e) {
    if (e.sqlstate() == sqlstate::kUndefinedColumn && e.message().rfind("column ", 0) == 0) {
      e.withHint(def.params.empty()
                     ? std::string("a function without parameters can name no columns")
                     : fmt::format("a function body names only its parameters: {}",
                                   parameterNames(def)));
    }
    throw;
  }
  if (!implicitlyConvertible(*bound->type(), *def.returns)) {
    throw SqlError(sqlstate::kDatatypeMismatch,
                   fmt::format("function {} returns {} but its body is of type {}", stmt.name,
                               def.returns->toString(), bound->type()->toString()),
                   body.pos,
                   fmt::format("write CAST({} AS {}) as the body, or declare RETURNS {}",
                               stmt.bodyText, def.returns->toString(), bound->type()->toString()));
  }
  def.body = stmt.body;
  def.bodyText = stmt.bodyText;
  def.sql = stmt.text;
  def.calls = userFunctionsCalled(body, catalog);
  return def;
}

namespace planner_detail {

ExprPtr inlineUserFunction(const ast::Expr& call, const UserFunctions& functions,
                           const std::function<ExprPtr(const ast::Expr&)>& bindArg) {
  if (!functions.catalog) return nullptr;
  Catalog::FunctionPtr def = functions.catalog->findFunction(call.name);
  if (!def) return nullptr;
  std::vector<ExprPtr> args;
  args.reserve(call.args.size());
  for (const auto& a : call.args) args.push_back(bindArg(*a));
  auto notFound = [&](size_t pos, const std::string& hint) {
    return SqlError(
        sqlstate::kUndefinedFunction,
        fmt::format("function {}({}) does not exist", toLower(call.name), typeList(args)), pos,
        fmt::format("{} RETURNS {}: {}", def->signature(), def->returns->toString(), hint));
  };
  if (args.size() != def->params.size()) {
    throw notFound(call.pos, fmt::format("it takes {} argument{}, not {}", def->params.size(),
                                         def->params.size() == 1 ? "" : "s", args.size()));
  }
  for (size_t i = 0; i < args.size(); ++i) {
    const UserFunctionParam& p = def->params[i];
    if (args[i]->type()->equals(*p.type)) continue;
    if (!implicitlyConvertible(*args[i]->type(), *p.type)) {
      throw notFound(
          call.args[i]->pos,
          fmt::format("argument {} ({}) is {}, not {}; write CAST(... AS {})", i + 1, p.name,
                      args[i]->type()->toString(), p.type->toString(), p.type->toString()));
    }
    args[i] = makeCast(args[i], p.type, call.args[i]->pos);
  }
  // A Python function is called per row (a vectorized one per batch of rows),
  // never inlined.
  if (def->python) return makePythonCall(def->python, std::move(args), call.pos);
  if (functions.depth >= kMaxInlineDepth) {
    throw SqlError(sqlstate::kStatementTooComplex,
                   fmt::format("functions call each other more than {} deep", kMaxInlineDepth),
                   call.pos, "call fewer functions inside each other");
  }
  Scope scope;
  for (size_t i = 0; i < args.size(); ++i) {
    scope.columns.push_back(
        ScopeColumn{"", def->params[i].name, def->params[i].type, false, args[i]});
  }
  ExprPtr body;
  try {
    body = ExprBinder(scope, ExprContext::General,
                      UserFunctions{functions.catalog, functions.depth + 1, functions.lambdaSlots})
               .bind(*def->body);
  } catch (SqlError& e) {
    // The body was checked when it was created; what fails now fails for the
    // call (a position in the body's own text would point nowhere here).
    e.setPosition(call.pos);
    throw;
  }
  if (!body->type()->equals(*def->returns)) body = makeCast(body, def->returns, call.pos);
  return body;
}

std::string closeUserFunction(const std::string& name, const Catalog* catalog) {
  if (!catalog) return {};
  std::vector<std::string> names;
  for (const auto& f : catalog->functions()) names.push_back(f->name);
  std::string close = closestName(name, names);
  return close.empty() ? close : catalog->findFunction(close)->signature();
}

}  // namespace planner_detail

}  // namespace rtsql
