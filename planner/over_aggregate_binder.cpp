// Aggregate functions OVER a window of rows in a SELECT list, bound as an
// OverAggregate operator:
//
//   SELECT seller, avg(price) OVER (PARTITION BY seller ORDER BY date_time
//                                   ROWS BETWEEN 10 PRECEDING AND CURRENT ROW) AS a
//   FROM s
//
// The SELECT's FROM and WHERE bind as usual; its other items, the partition
// keys, the order keys and the aggregates' arguments are computed into one
// row before the shuffle by the partition keys; the OverAggregate stage adds
// one column per aggregate; a Project puts the items in their order. Every
// OVER aggregate of a SELECT shares one window (one operator), is a whole
// select item, and has an ORDER BY and a ROWS frame: the default frame
// (RANGE ... CURRENT ROW) also takes the rows with equal order keys, which
// rtsql does not compute.
#include <fmt/format.h>

#include <string>
#include <vector>

#include "common/map_order.h"
#include "parser/expr_walker.h"
#include "planner/logical_plan.h"
#include "planner/pre_projection.h"

namespace rtsql::planner_detail {

namespace {

const char* kFrameHint =
    "write OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN 10 PRECEDING AND CURRENT ROW), or "
    "ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW for a running aggregate";

bool isOverAggregateCall(const ast::Expr& e) {
  return e.kind == ast::ExprKind::Call && e.over &&
         (e.star || isAggregateFunction(e.name) || isFlowAnalytic(e.name));
}

// ROW_NUMBER() OVER (PARTITION BY ... ORDER BY ...) whose rank no enclosing
// query filters (window_function_binder.cpp binds the filtered top-N). In a
// bounded query it is count(*) over the rows of its partition up to the row
// itself, in the window's order: each row's number, ties by arrival, as
// PostgreSQL leaves them in no particular order. A stream would re-rank every
// row of a key on each new one, which a flow does not do.
bool isRowNumberCall(const ast::Expr& e) {
  return e.kind == ast::ExprKind::Call && e.over && iequals(e.name, "row_number");
}

// The first call with OVER inside `e` (e itself included), or null.
const ast::Expr* findOver(const ast::Expr& e) {
  return ast::findNode(e,
                       [](const ast::Expr& n) { return n.kind == ast::ExprKind::Call && n.over; });
}

// The window of an OVER clause as text, to tell two windows apart.
std::string windowText(const ast::Over& over, int64_t precedingRows, const Scope& scope,
                       const UserFunctions& functions) {
  ExprBinder binder(scope, ExprContext::General, functions);
  std::string out = "partition";
  for (const auto& k : over.partitionBy) out += "|" + binder.bind(*k)->toString();
  out += "|order";
  for (const auto& o : over.orderBy)
    out += "|" + binder.bind(*o.expr)->toString() + (o.descending ? " DESC" : "");
  return out + "|rows " + std::to_string(precedingRows);
}

}  // namespace

bool QueryBinder::hasOverAggregate(const ast::Select& s) const {
  // A bounded query computes every function OVER (...) (analytic_window_binder.cpp).
  if (ctx_.boundedRelation) return hasAnalyticCall(s);
  for (const auto& item : s.items) {
    if (item.expr->kind == ast::ExprKind::Star) continue;
    const ast::Expr* f = findOver(*item.expr);
    if (f && (f->star || isAggregateFunction(f->name) || isFlowAnalytic(f->name))) return true;
    if (ctx_.boundedRelation && isRowNumberCall(*item.expr)) return true;
  }
  return false;
}

BoundQuery QueryBinder::bindOverAggregate(const ast::Select& s, Relation rel) const {
  if (ctx_.boundedRelation) return bindAnalyticWindow(s, std::move(rel));
  // The OVER aggregates, each a whole select item, all over one window.
  const ast::Over* window = nullptr;
  int64_t preceding = -1;
  std::string windowKey;
  std::vector<bool> isOver(s.items.size(), false);
  for (size_t i = 0; i < s.items.size(); ++i) {
    const ast::Expr& e = *s.items[i].expr;
    if (e.kind == ast::ExprKind::Star) continue;
    const bool rowNumber = ctx_.boundedRelation && isRowNumberCall(e);
    if (!isOverAggregateCall(e) && !rowNumber) {
      if (const ast::Expr* f = findOver(e)) {
        unsupported("a function OVER (...) inside an expression", f->pos,
                    "compute it as a select item of a subquery and use it in the enclosing query: "
                    "SELECT x - a FROM (SELECT x, avg(x) OVER (...) AS a FROM s)");
      }
      continue;
    }
    isOver[i] = true;
    const ast::Over& over = *e.over;
    const std::string fname = toLower(e.name);
    if (e.distinct) {
      unsupported(fmt::format("{}(DISTINCT ...) OVER (...)", fname), e.pos,
                  "deduplicate the rows in a subquery first: SELECT DISTINCT ON (k, x) * FROM s");
    }
    if (e.filter) {
      unsupported(fmt::format("FILTER with {}() OVER (...)", fname), e.filterPos,
                  "filter the rows in WHERE, or aggregate a CASE expression");
    }
    if (rowNumber) {
      if (!e.args.empty()) {
        throw SqlError(sqlstate::kSyntaxError, "ROW_NUMBER() takes no arguments", e.args[0]->pos);
      }
      if (over.hasFrame) {
        throw SqlError(sqlstate::kSyntaxError, "ROW_NUMBER() takes no window frame",
                       over.framePos)
            .withHint("remove the ROWS BETWEEN ... clause");
      }
    }
    if (over.orderBy.empty()) {
      unsupported(fmt::format("{}() OVER (...) without ORDER BY", fname), over.pos,
                  "a window of rows needs an order: " + std::string(kFrameHint));
    }
    if (over.hasFrame && !over.flowFrame) {
      unsupported(fmt::format("{}() OVER (...) with a RANGE frame or one ending after the "
                              "current row",
                              fname),
                  over.framePos,
                  "a flow emits each row once its frame is known: " + std::string(kFrameHint));
    }
    // lag(x, n) is first(x) of the frame of n rows before the row, when it
    // holds n + 1 rows; first_value and last_value are first and last.
    const int64_t rows = iequals(fname, "lag") ? flowLagOffset(e) : over.precedingRows;
    if (over.nullsPos != 0 && !isFlowAnalytic(fname)) {
      unsupported(fmt::format("{}() IGNORE NULLS OVER (...)", fname), over.nullsPos,
                  "first(x, true) and last(x, true) skip NULLs");
    }
    if (!over.hasFrame && !rowNumber && !iequals(fname, "lag")) {
      unsupported(fmt::format("{}() OVER (...) without a ROWS frame", fname), over.pos,
                  "the default frame also takes the rows whose order keys equal the current "
                  "row's; " +
                      std::string(kFrameHint));
    }
    std::string key = windowText(over, rows, rel.scope, functions());
    if (!window) {
      window = &over;
      preceding = rows;
      windowKey = key;
    } else if (key != windowKey) {
      unsupported("a second window in one SELECT", over.pos,
                  "give every OVER (...) of a SELECT the same PARTITION BY, ORDER BY and frame, "
                  "or compute the other window in a subquery");
    }
  }
  if (!window) throw InternalError("an OVER aggregation without an OVER aggregate");

  // One row per input row: the items but the OVER aggregates, then the
  // partition keys, order keys and arguments.
  PreProjection pre;
  const std::vector<ItemColumns> itemColumns =
      bindItemsInto(s, rel.scope, pre.columns, [&isOver](size_t i) { return bool(isOver[i]); });
  std::vector<int> partitionCols, orderCols;
  std::vector<bool> descending;
  {
    ExprBinder binder(rel.scope, ExprContext::General, functions());
    for (const auto& k : window->partitionBy) {
      ExprPtr key = binder.bind(*k);
      refuseMapValues(*key->type(), "PARTITION BY", k->pos, kPartitionByMapHint);
      partitionCols.push_back(pre.add(key, *k));
    }
    for (const auto& o : window->orderBy) {
      ExprPtr key = binder.bind(*o.expr);
      refuseMapValues(*key->type(), "ORDER BY", o.expr->pos, kOrderByMapHint);
      orderCols.push_back(pre.add(key, *o.expr));
      descending.push_back(o.descending);
    }
  }
  // The aggregate calls, their arguments as columns of the row.
  std::vector<AggregateCall> calls;
  std::vector<int> argCols;
  std::vector<int> lagDefaults;  // per item OVER: lag's default column, -1 for none or no lag
  for (size_t i = 0; i < s.items.size(); ++i) {
    if (!isOver[i]) continue;
    const ast::Expr& e = *s.items[i].expr;
    AggregateCall call;
    if (isRowNumberCall(e)) {
      ast::Expr countStar;
      countStar.kind = ast::ExprKind::Call;
      countStar.pos = e.pos;
      countStar.name = "count";
      countStar.star = true;
      bindAggregateCall(countStar, "count", rel.scope, call, functions());
      calls.push_back(call);
      argCols.push_back(-1);
      lagDefaults.push_back(-1);
      continue;
    }
    const std::string fname = toLower(e.name);
    if (isFlowAnalytic(fname)) {
      lagDefaults.push_back(bindFlowAnalytic(e, rel.scope, functions(), pre, calls, argCols));
      continue;
    }
    bindAggregateCall(e, fname, rel.scope, call, functions());
    const int argCol = e.star ? -1 : pre.add(call.arg, *e.args[0]);
    calls.push_back(call);
    argCols.push_back(argCol);
    lagDefaults.push_back(-1);
  }

  const NodePtr& preNode = pre.project(rel.node);
  auto ref = [&](int i) { return pre.ref(i); };
  OverAggregateSpec op;
  op.partitionKeys = pre.refs(partitionCols);
  op.orderKeys = pre.refs(orderCols);
  op.descending = descending;
  op.precedingRows = preceding;
  for (size_t a = 0; a < calls.size(); ++a) {
    if (argCols[a] >= 0) calls[a].arg = ref(argCols[a]);
    op.aggregates.push_back(calls[a]);
  }
  op.output = preNode->schema;
  const size_t aggBase = op.output.columns.size();
  std::vector<std::string> aggNames;
  for (size_t i = 0, agg = 0; i < s.items.size(); ++i) {
    if (!isOver[i]) continue;
    const ast::SelectItem& item = s.items[i];
    std::string name = !item.alias.empty()  ? item.alias
                       : !item.text.empty() ? item.text
                                            : toLower(item.expr->name);
    aggNames.push_back(name);
    const bool lag = iequals(item.expr->name, "lag");
    for (int k = 0; k < (lag ? 2 : 1); ++k, ++agg) {
      op.output.columns.push_back(
          Column{k == 0 ? name : name + "$first", op.aggregates[agg].resultType});
    }
  }
  std::vector<ExprPtr> keys = op.partitionKeys;
  NodePtr node = operatorNode({preNode}, std::move(op), {std::move(keys)});

  // The items in their order over the operator's rows.
  BoundQuery out;
  size_t nextAgg = 0, nextItem = 0;
  for (size_t i = 0; i < s.items.size(); ++i) {
    if (isOver[i]) {
      const Column& c = node->schema.columns[aggBase + nextAgg];
      ExprPtr value = makeColumnRef(static_cast<int>(aggBase + nextAgg), c.type, c.name);
      if (iequals(s.items[i].expr->name, "lag")) {
        const Column& f = node->schema.columns[aggBase + nextAgg + 1];
        value = flowLagValue(*s.items[i].expr, std::move(value),
                             makeColumnRef(static_cast<int>(aggBase + nextAgg + 1), f.type, f.name),
                             lagDefaults[nextItem] < 0 ? nullptr : ref(lagDefaults[nextItem]));
        ++nextAgg;
      }
      out.outputs.push_back(OutputColumn{aggNames[nextItem], std::move(value), s.items[i].expr->pos});
      ++nextAgg;
      ++nextItem;
    } else {
      for (size_t c = itemColumns[i].first; c < itemColumns[i].end; ++c) {
        const OutputColumn& p = pre.columns[c];
        out.outputs.push_back(OutputColumn{p.name, ref(static_cast<int>(c)), p.pos});
      }
    }
  }
  out.node = node;
  out.sourceName = rel.sourceName;
  // A row landing before others updates their aggregates: the rows retract.
  out.changelog = true;
  return out;
}

}  // namespace rtsql::planner_detail
