// Analytic functions OVER a window in a bounded query's SELECT list, bound as
// an AnalyticWindow (executor/operators/analytic_window.h):
//
//   SELECT k, x, lag(x) OVER w1, rank() OVER (PARTITION BY k ORDER BY x),
//          sum(x) OVER (PARTITION BY k ORDER BY x ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING)
//   FROM t
//
// As in over_aggregate_binder.cpp, the SELECT's other items, the partition
// keys, the order keys and the calls' arguments are computed into one row
// before the shuffle by the partition keys, the operator adds one column per
// call, and a Project puts the items in their order. Every call is a whole
// select item; each distinct PARTITION BY and ORDER BY is an operator of its
// own, one after the other (each call has its own frame). The frames and errors are Spark's: without a
// frame, a window with ORDER BY frames RANGE BETWEEN UNBOUNDED PRECEDING AND
// CURRENT ROW and one without frames the whole partition; the ranking and
// offset functions need an ORDER BY and take no frame.
//
// A flow does not compute them (see refuseAnalyticInFlow below and
// docs/sql.md, "Analytic functions").
#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "common/map_order.h"
#include "parser/expr_walker.h"
#include "planner/logical_plan.h"
#include "planner/pre_projection.h"

namespace rtsql::planner_detail {

namespace {

using Kind = AnalyticCall::Kind;

struct Analytic {
  const char* name;
  Kind kind;
  bool ordered;      // needs ORDER BY and takes no frame
  bool ignoreNulls;  // takes IGNORE NULLS
};

constexpr Analytic kAnalytics[] = {
    {"row_number", Kind::RowNumber, true, false},  {"rank", Kind::Rank, true, false},
    {"dense_rank", Kind::DenseRank, true, false},  {"percent_rank", Kind::PercentRank, true, false},
    {"cume_dist", Kind::CumeDist, true, false},    {"ntile", Kind::Ntile, true, false},
    {"lag", Kind::Lag, true, true},                {"lead", Kind::Lead, true, true},
    {"first_value", Kind::FirstValue, false, true}, {"last_value", Kind::LastValue, false, true},
    {"nth_value", Kind::NthValue, false, true},
};

const Analytic* analyticFunction(const std::string& name) {
  for (const Analytic& a : kAnalytics)
    if (iequals(name, a.name)) return &a;
  return nullptr;
}

bool isOverCall(const ast::Expr& e) { return e.kind == ast::ExprKind::Call && e.over != nullptr; }

// An integer literal argument (a leading minus taken), or nullopt.
std::optional<int64_t> integerLiteral(const ast::Expr& e) {
  if (e.kind == ast::ExprKind::Unary && e.op == "-" && e.args.size() == 1) {
    std::optional<int64_t> v = integerLiteral(*e.args[0]);
    if (v) return -*v;
    return std::nullopt;
  }
  if (e.kind != ast::ExprKind::Literal || e.literal.kind != ast::LiteralKind::Integer)
    return std::nullopt;
  if (e.literal.text.size() > 10) return std::nullopt;
  const int64_t v = std::stoll(e.literal.text);
  if (v > INT32_MAX) return std::nullopt;
  return v;
}

int64_t intArgument(const ast::Expr& call, size_t i, const std::string& fname, bool positive) {
  std::optional<int64_t> v = integerLiteral(*call.args[i]);
  if (!v || (positive && *v < 1)) {
    throw SqlError(sqlstate::kInvalidParameterValue,
                   fmt::format("argument {} of {}() must be {} integer literal", i + 1, fname,
                               positive ? "a positive" : "an"),
                   call.args[i]->pos);
  }
  return *v;
}

void arity(const ast::Expr& call, const std::string& fname, size_t least, size_t most) {
  const size_t n = call.args.size();
  if (call.star || n < least || n > most) {
    std::string want = least == most ? std::to_string(least)
                                     : fmt::format("{} to {}", least, most);
    throw SqlError(sqlstate::kUndefinedFunction,
                   fmt::format("{}() takes {} argument{}", fname, want, most == 1 ? "" : "s"),
                   call.pos);
  }
}

// The PARTITION BY and ORDER BY of a window as text, to tell two apart.
std::string windowText(const ast::Over& over, const Scope& scope, const UserFunctions& functions) {
  ExprBinder binder(scope, ExprContext::General, functions);
  std::string out = "partition";
  for (const auto& k : over.partitionBy) out += "|" + binder.bind(*k)->toString();
  out += "|order";
  for (const auto& o : over.orderBy)
    out += "|" + binder.bind(*o.expr)->toString() + (o.descending ? " DESC" : "");
  return out;
}

AnalyticCall::Bound bound(ast::Over::Bound kind, int64_t offset) {
  switch (kind) {
    case ast::Over::Bound::UnboundedPreceding:
    case ast::Over::Bound::UnboundedFollowing: return {true, 0};
    case ast::Over::Bound::Preceding: return {false, -offset};
    case ast::Over::Bound::Following: return {false, offset};
    case ast::Over::Bound::CurrentRow: break;
  }
  return {false, 0};
}

// The frame of `call` from its OVER clause: Spark's default without one.
void bindFrame(const ast::Over& over, const std::vector<ExprPtr>& orderExprs, AnalyticCall& call) {
  if (!over.hasFrame) {
    call.range = true;
    call.lower = {true, 0};
    call.upper = over.orderBy.empty() ? AnalyticCall::Bound{true, 0} : AnalyticCall::Bound{false, 0};
    return;
  }
  call.range = over.rangeFrame;
  call.lower = bound(over.lower, over.lowerOffset);
  call.upper = bound(over.upper, over.upperOffset);
  const bool valueBound = (!call.lower.unbounded && call.lower.offset != 0) ||
                          (!call.upper.unbounded && call.upper.offset != 0);
  if (!call.range || !valueBound) return;
  // RANGE n PRECEDING | FOLLOWING: one order key (NULLS FIRST | LAST adds
  // an IS NULL key before it), numeric or a date.
  const bool oneKey = over.orderBy.size() == 1 ||
                      (over.orderBy.size() == 2 && over.orderBy[0].expr->kind == ast::ExprKind::IsNull);
  if (!oneKey) {
    throw SqlError(sqlstate::kSyntaxError,
                   "a RANGE frame with an offset needs exactly one ORDER BY expression",
                   over.framePos)
        .withHint("order by one numeric expression, or use a ROWS frame");
  }
  const TypeId t = orderExprs.back()->type()->id;
  if (t != TypeId::Int && t != TypeId::BigInt && t != TypeId::Double && t != TypeId::Date &&
      t != TypeId::Decimal) {
    throw SqlError(sqlstate::kDatatypeMismatch,
                   fmt::format("a RANGE frame with an offset orders by a number or a date, not {}",
                               orderExprs.back()->type()->toString()),
                   over.framePos)
        .withHint("use a ROWS frame");
  }
}

}  // namespace

bool hasAnalyticCall(const ast::Select& s) {
  for (const auto& item : s.items) {
    if (item.expr->kind != ast::ExprKind::Star &&
        ast::findNode(*item.expr, [](const ast::Expr& n) { return isOverCall(n); }))
      return true;
  }
  return false;
}

bool isFlowAnalytic(const std::string& name) {
  return iequals(name, "first_value") || iequals(name, "last_value") || iequals(name, "lag");
}

int64_t flowLagOffset(const ast::Expr& e) {
  if (e.over && e.over->hasFrame) {
    throw SqlError(sqlstate::kSyntaxError, "lag() takes no window frame", e.over->framePos)
        .withHint("remove the ROWS | RANGE clause");
  }
  if (e.over && e.over->nullsPos != 0) {
    throw SqlError(sqlstate::kFeatureNotSupported, "lag() IGNORE NULLS OVER (...) in a flow",
                   e.over->nullsPos)
        .withHint("a bounded query computes it; a flow counts every row before the current one");
  }
  if (e.star || e.args.empty() || e.args.size() > 3) arity(e, "lag", 1, 3);
  if (e.args.size() < 2) return 1;
  const int64_t n = intArgument(e, 1, "lag", false);
  if (n < 0) {
    throw SqlError(sqlstate::kFeatureNotSupported, "lag() with a negative offset in a flow",
                   e.args[1]->pos)
        .withHint("that is lead(), whose row a flow has not seen when it emits the current one; "
                  "a bounded query computes it");
  }
  if (n > 1'000'000) {
    throw SqlError(sqlstate::kInvalidParameterValue, "lag() in a flow looks back at most "
                   "1000000 rows", e.args[1]->pos);
  }
  return n;
}

int bindFlowAnalytic(const ast::Expr& e, const Scope& scope, const UserFunctions& functions,
                     PreProjection& pre, std::vector<AggregateCall>& calls,
                     std::vector<int>& argCols) {
  const std::string fname = toLower(e.name);
  if (fname != "lag") {
    // first_value(x [, ignoreNulls]) is Spark's first(x [, ignoreNulls]) over the frame.
    AggregateCall call;
    bindAggregateCall(e, fname == "first_value" ? "first" : "last", scope, call, functions);
    if (e.over->ignoreNulls) call.ignoreNulls = true;
    argCols.push_back(pre.add(call.arg, *e.args[0]));
    calls.push_back(std::move(call));
    return -1;
  }
  // lag(x, n, default): count(*) and first(x) over the n rows before the row
  // and the row itself; the frame holds n + 1 rows when the row has n before it.
  AggregateCall count;
  count.function = AggregateFunction::CountStar;
  count.resultType = DataType::of(TypeId::BigInt);
  calls.push_back(std::move(count));
  argCols.push_back(-1);
  ExprPtr x = ExprBinder(scope, ExprContext::AggregateArg, functions).bind(*e.args[0]);
  AggregateCall first;
  first.function = AggregateFunction::First;
  first.resultType = x->type();
  first.arg = makeCall("struct", {x}, e.pos);
  argCols.push_back(pre.add(first.arg, *e.args[0]));
  calls.push_back(std::move(first));
  if (e.args.size() < 3) return -1;
  ExprPtr def = ExprBinder(scope, ExprContext::General, functions).bind(*e.args[2]);
  if (def->type()->id != TypeId::Null && def->type()->toString() != x->type()->toString())
    def = makeCast(def, x->type(), e.args[2]->pos);
  return pre.add(def, *e.args[2]);
}

ExprPtr flowLagValue(const ast::Expr& e, ExprPtr count, ExprPtr first, ExprPtr defaultValue) {
  const int64_t n = flowLagOffset(e);
  const DataTypePtr type = first->type();
  if (!defaultValue) defaultValue = makeLiteral(Value(), type);
  std::vector<std::pair<ExprPtr, ExprPtr>> whens;
  whens.emplace_back(makeLiteral(Value::bigint(n + 1), DataType::of(TypeId::BigInt)),
                     std::move(first));
  return makeCase(std::move(count), std::move(whens), std::move(defaultValue), e.pos);
}

void refuseAnalyticInFlow(const ast::Expr& e) {
  const Analytic* a = analyticFunction(e.name);
  if (!a || a->kind == Kind::RowNumber || isFlowAnalytic(e.name)) return;
  const std::string name = toLower(e.name);
  const std::string bounded =
      "a bounded query (SELECT over a view, a table or FROM source FOR OFFSETS) computes " + name +
      "()";
  std::string hint;
  switch (a->kind) {
    case Kind::Rank:
    case Kind::DenseRank:
      hint = "a flow keeps " + name + "() as a top-N: filter the rank in an enclosing query, "
             "SELECT * FROM (SELECT *, " + name +
             "() OVER (PARTITION BY k ORDER BY x DESC) AS r FROM s) WHERE r <= 3; " + bounded;
      break;
    case Kind::Ntile:
      hint = "ntile(n) cuts a partition into n buckets by its row count, so every new row "
             "moves rows from one bucket to the next and a stream would re-emit its whole "
             "partition on each row; " + bounded;
      break;
    case Kind::PercentRank:
    case Kind::CumeDist:
      hint = name + "() divides by the partition's row count, so every new row changes the "
             "value of every row of its partition and a stream would re-emit the whole "
             "partition on each row; " + bounded;
      break;
    default:
      hint = bounded + "; a flow takes lag, first_value, last_value and aggregates "
             "OVER (... ROWS BETWEEN n PRECEDING AND CURRENT ROW)";
      break;
  }
  throw SqlError(sqlstate::kFeatureNotSupported,
                 fmt::format("{}() OVER (...) in a flow or live query", name), e.pos)
      .withHint(hint);
}

BoundQuery QueryBinder::bindAnalyticWindow(const ast::Select& s, Relation rel) const {
  std::vector<bool> isOver(s.items.size(), false);
  // The distinct windows (PARTITION BY and ORDER BY), in order, and each
  // item's.
  std::vector<const ast::Over*> windows;
  std::vector<std::string> windowKeys;
  std::vector<size_t> windowOf(s.items.size(), 0);
  for (size_t i = 0; i < s.items.size(); ++i) {
    const ast::Expr& e = *s.items[i].expr;
    if (e.kind == ast::ExprKind::Star) continue;
    if (!isOverCall(e)) {
      if (const ast::Expr* f = ast::findNode(e, [](const ast::Expr& n) { return isOverCall(n); })) {
        unsupported("a function OVER (...) inside an expression", f->pos,
                    "compute it as a select item of a subquery and use it in the enclosing "
                    "query: SELECT x - p FROM (SELECT x, lag(x) OVER (...) AS p FROM t)");
      }
      continue;
    }
    isOver[i] = true;
    std::string key = windowText(*e.over, rel.scope, functions());
    const auto found = std::find(windowKeys.begin(), windowKeys.end(), key);
    windowOf[i] = static_cast<size_t>(found - windowKeys.begin());
    if (found == windowKeys.end()) {
      windows.push_back(e.over.get());
      windowKeys.push_back(std::move(key));
    }
  }
  if (windows.empty()) throw InternalError("an analytic window without a call OVER (...)");

  PreProjection pre;
  const std::vector<ItemColumns> itemColumns =
      bindItemsInto(s, rel.scope, pre.columns, [&isOver](size_t i) { return bool(isOver[i]); });
  const size_t nWindows = windows.size();
  std::vector<std::vector<int>> partitionCols(nWindows), orderCols(nWindows);
  std::vector<std::vector<bool>> descending(nWindows);
  std::vector<std::vector<ExprPtr>> orderExprsOf(nWindows);
  ExprBinder binder(rel.scope, ExprContext::General, functions());
  for (size_t w = 0; w < nWindows; ++w) {
    for (const auto& k : windows[w]->partitionBy) {
      ExprPtr key = binder.bind(*k);
      refuseMapValues(*key->type(), "PARTITION BY", k->pos, kPartitionByMapHint);
      partitionCols[w].push_back(pre.add(key, *k));
    }
    for (const auto& o : windows[w]->orderBy) {
      orderExprsOf[w].push_back(binder.bind(*o.expr));
      refuseMapValues(*orderExprsOf[w].back()->type(), "ORDER BY", o.expr->pos, kOrderByMapHint);
      orderCols[w].push_back(pre.add(orderExprsOf[w].back(), *o.expr));
      descending[w].push_back(o.descending);
    }
  }

  // Each call, its arguments as columns of the row.
  std::vector<AnalyticCall> calls;
  std::vector<int> argCols, defaultCols;
  std::vector<size_t> callWindow;
  std::vector<std::string> names;
  for (size_t i = 0; i < s.items.size(); ++i) {
    if (!isOver[i]) continue;
    const ast::Expr& e = *s.items[i].expr;
    const ast::Over& over = *e.over;
    const std::vector<ExprPtr>& orderExprs = orderExprsOf[windowOf[i]];
    const std::string fname = toLower(e.name);
    const Analytic* a = analyticFunction(fname);
    AnalyticCall call;
    int argCol = -1, defaultCol = -1;
    if (e.distinct) {
      unsupported(fmt::format("{}(DISTINCT ...) OVER (...)", fname), e.pos,
                  "deduplicate the rows in a subquery first");
    }
    if (e.filter) {
      unsupported(fmt::format("FILTER with {}() OVER (...)", fname), e.filterPos,
                  "aggregate a CASE expression: sum(CASE WHEN cond THEN x END) OVER (...)");
    }
    if (over.ignoreNulls && (!a || !a->ignoreNulls)) {
      throw SqlError(sqlstate::kSyntaxError, fmt::format("{}() takes no IGNORE NULLS", fname),
                     over.nullsPos)
          .withHint("lag, lead, first_value, last_value and nth_value take it");
    }
    if (!a) {
      if (!e.star && !isAggregateFunction(fname)) {
        throw SqlError(sqlstate::kWrongObjectType,
                       fmt::format("{}() is not a window function", fname), e.pos)
            .withHint("OVER (...) takes aggregates and lag, lead, first_value, last_value, "
                      "nth_value, row_number, rank, dense_rank, percent_rank, cume_dist, ntile");
      }
      call.kind = Kind::Aggregate;
      bindAggregateCall(e, fname, rel.scope, call.aggregate, functions());
      if (!e.star) argCol = pre.add(call.aggregate.arg, *e.args[0]);
      call.type = call.aggregate.resultType;
      bindFrame(over, orderExprs, call);
    } else {
      call.kind = a->kind;
      call.ignoreNulls = over.ignoreNulls;
      if (a->ordered) {
        if (over.orderBy.empty()) {
          throw SqlError(sqlstate::kSyntaxError,
                         fmt::format("{}() needs an ORDER BY in its window", fname), over.pos)
              .withHint(fmt::format("{}() OVER (PARTITION BY k ORDER BY x)", fname));
        }
        if (over.hasFrame) {
          throw SqlError(sqlstate::kSyntaxError, fmt::format("{}() takes no window frame", fname),
                         over.framePos)
              .withHint("remove the ROWS | RANGE clause");
        }
      }
      switch (a->kind) {
        case Kind::RowNumber:
        case Kind::Rank:
        case Kind::DenseRank:
          arity(e, fname, 0, 0);
          call.type = DataType::of(TypeId::Int);
          break;
        case Kind::PercentRank:
        case Kind::CumeDist:
          arity(e, fname, 0, 0);
          call.type = DataType::of(TypeId::Double);
          break;
        case Kind::Ntile:
          arity(e, fname, 1, 1);
          call.n = intArgument(e, 0, fname, true);
          call.type = DataType::of(TypeId::Int);
          break;
        case Kind::Lag:
        case Kind::Lead: {
          arity(e, fname, 1, 3);
          ExprPtr arg = binder.bind(*e.args[0]);
          call.type = arg->type();
          argCol = pre.add(arg, *e.args[0]);
          if (e.args.size() >= 2) call.n = intArgument(e, 1, fname, false);
          if (e.args.size() == 3) {
            ExprPtr def = binder.bind(*e.args[2]);
            if (def->type()->id != TypeId::Null && def->type()->toString() != call.type->toString())
              def = makeCast(def, call.type, e.args[2]->pos);
            defaultCol = pre.add(def, *e.args[2]);
          }
          break;
        }
        case Kind::FirstValue:
        case Kind::LastValue:
        case Kind::NthValue: {
          const bool nth = a->kind == Kind::NthValue;
          arity(e, fname, nth ? 2 : 1, 2);
          ExprPtr arg = binder.bind(*e.args[0]);
          call.type = arg->type();
          argCol = pre.add(arg, *e.args[0]);
          if (nth) {
            call.n = intArgument(e, 1, fname, true);
          } else if (e.args.size() == 2) {
            const ast::Expr& flag = *e.args[1];
            if (flag.kind != ast::ExprKind::Literal ||
                flag.literal.kind != ast::LiteralKind::Boolean) {
              throw SqlError(sqlstate::kInvalidParameterValue,
                             fmt::format("argument 2 of {}() must be TRUE or FALSE", fname),
                             flag.pos);
            }
            call.ignoreNulls = call.ignoreNulls || flag.literal.boolean;
          }
          bindFrame(over, orderExprs, call);
          break;
        }
        case Kind::Aggregate: break;
      }
    }
    const ast::SelectItem& item = s.items[i];
    names.push_back(!item.alias.empty() ? item.alias : !item.text.empty() ? item.text : fname);
    call.name = !item.text.empty() ? item.text : fname;
    calls.push_back(std::move(call));
    argCols.push_back(argCol);
    defaultCols.push_back(defaultCol);
    callWindow.push_back(windowOf[i]);
  }

  const NodePtr& preNode = pre.project(rel.node);
  for (size_t c = 0; c < calls.size(); ++c) {
    if (argCols[c] >= 0) {
      if (calls[c].kind == Kind::Aggregate)
        calls[c].aggregate.arg = pre.ref(argCols[c]);
      else
        calls[c].arg = pre.ref(argCols[c]);
    }
    if (defaultCols[c] >= 0) calls[c].defaultValue = pre.ref(defaultCols[c]);
  }
  // One operator per window, each adding its calls' columns to the row: the
  // pre-projection's columns stay where they are.
  NodePtr node = preNode;
  std::vector<size_t> columnOf(calls.size(), 0);
  for (size_t w = 0; w < nWindows; ++w) {
    OverAggregateSpec op;
    op.partitionKeys = pre.refs(partitionCols[w]);
    op.orderKeys = pre.refs(orderCols[w]);
    op.descending = descending[w];
    op.output = node->schema;
    for (size_t c = 0; c < calls.size(); ++c) {
      if (callWindow[c] != w) continue;
      columnOf[c] = op.output.columns.size();
      op.output.columns.push_back(Column{names[c], calls[c].type});
      op.analytic.push_back(calls[c]);
    }
    std::vector<ExprPtr> keys = op.partitionKeys;
    node = operatorNode({node}, std::move(op), {std::move(keys)});
  }

  BoundQuery out;
  size_t next = 0;
  for (size_t i = 0; i < s.items.size(); ++i) {
    if (isOver[i]) {
      const Column& c = node->schema.columns[columnOf[next]];
      out.outputs.push_back(OutputColumn{
          names[next], makeColumnRef(static_cast<int>(columnOf[next]), c.type, c.name),
          s.items[i].expr->pos});
      ++next;
    } else {
      for (size_t c = itemColumns[i].first; c < itemColumns[i].end; ++c) {
        const OutputColumn& p = pre.columns[c];
        out.outputs.push_back(OutputColumn{p.name, pre.ref(static_cast<int>(c)), p.pos});
      }
    }
  }
  out.node = node;
  out.sourceName = rel.sourceName;
  // A partition emitted again after an earlier epoch deletes its rows first.
  out.changelog = true;
  return out;
}

}  // namespace rtsql::planner_detail
