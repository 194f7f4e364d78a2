// Window functions in a SELECT list: ROW_NUMBER() OVER (PARTITION BY ...
// ORDER BY ...) in a subquery whose rank the enclosing query filters to
// `rn <= N` (or `rn < N`, `rn = 1`), bound as a TopN operator:
//
//   SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY x DESC)
//                  AS rn FROM s) WHERE rn <= 3
//
// The subquery's FROM and WHERE bind as usual; its items (but the rank), the
// partition keys and the order keys are computed into one row before the
// shuffle by the partition keys; the TopN stage ranks them. The rank column is
// computed only when the enclosing query reads it (a `*`, a select item, a
// WHERE conjunct other than the limit): without it a change of rank is no
// change of the output, so only rows entering and leaving the top are emitted.
// Without a filter on the rank, every row would stay in state and every new
// row would re-rank its key, so that is refused.
//
// The ranked rows may retract (an outer regular join, a changelog source, an
// aggregation): the TopN then keeps every row of a key. A subquery with GROUP
// BY ranks its groups in one flow: the aggregation is bound without the rank
// item, the window's PARTITION BY and ORDER BY expressions bound over its rows
// like the other items (`ORDER BY sum(x) DESC` names the aggregate), and the
// TopN reads its retractions.
#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string>

#include "common/map_order.h"
#include "parser/expr_walker.h"
#include "planner/logical_plan.h"
#include "planner/pre_projection.h"

namespace rtsql::planner_detail {

namespace {

// A top-N keeps at most this many rows per key.
constexpr int64_t kMaxTopN = 10000;

const char* kRankHint =
    "filter the rank in an enclosing query: SELECT * FROM (SELECT *, ROW_NUMBER() OVER "
    "(PARTITION BY k ORDER BY x DESC) AS rn FROM s) WHERE rn <= 3";

// The select item of `s` that calls a function OVER (...) other than an
// aggregate or lag, first_value, last_value (which over_aggregate_binder.cpp
// binds), or -1.
int overItem(const ast::Select& s) {
  for (size_t i = 0; i < s.items.size(); ++i) {
    const ast::Expr& e = *s.items[i].expr;
    if (e.kind == ast::ExprKind::Call && e.over && !e.star && !isAggregateFunction(e.name) &&
        !isFlowAnalytic(e.name))
      return static_cast<int>(i);
  }
  return -1;
}

// Whether `e` names the rank column `name` (of the subquery `alias`).
bool namesRank(const ast::Expr& e, const std::string& name, const std::string& alias) {
  if (e.kind != ast::ExprKind::Column || e.parts.empty()) return false;
  if (e.parts.size() == 1) return iequals(e.parts[0], name);
  return e.parts.size() == 2 && !alias.empty() && iequals(e.parts[0], alias) &&
         iequals(e.parts[1], name);
}

bool readsRank(const ast::Expr& e, const std::string& name, const std::string& alias) {
  return ast::findNode(e, [&](const ast::Expr& n) {
           if (n.kind == ast::ExprKind::Star) {
             return n.parts.empty() || (!alias.empty() && iequals(n.parts.back(), alias));
           }
           return namesRank(n, name, alias);
         }) != nullptr;
}

// The largest rank a conjunct `rank <op> n` (or `n <op> rank`) admits, or
// nullopt when the conjunct is no such bound. `exact` is set for `rank = n`, which
// admits only rank n.
std::optional<int64_t> rankBound(const ast::Expr& c, const std::string& name,
                                 const std::string& alias, bool* exact) {
  *exact = false;
  if (c.kind != ast::ExprKind::Binary || c.args.size() != 2) return std::nullopt;
  std::string op = c.op;
  const ast::Expr* rank = c.args[0].get();
  const ast::Expr* lit = c.args[1].get();
  if (!namesRank(*rank, name, alias)) {
    std::swap(rank, lit);
    if (op == ">=")
      op = "<=";
    else if (op == ">")
      op = "<";
    else if (op != "=")
      return std::nullopt;
  }
  if (!namesRank(*rank, name, alias)) return std::nullopt;
  if (lit->kind != ast::ExprKind::Literal || lit->literal.kind != ast::LiteralKind::Integer)
    return std::nullopt;
  int64_t n = 0;
  const std::string& digits = lit->literal.text;
  if (digits.size() > 12) {
    n = kMaxTopN + 2;  // too large either way
  } else {
    n = std::stoll(digits);
  }
  if (op == "<=") return n;
  if (op == "<") return n - 1;
  if (op == "=") {
    *exact = true;
    return n;
  }
  return std::nullopt;
}

}  // namespace

bool QueryBinder::ranksRows(const ast::Select& s) const {
  if (!s.from || s.from->kind != ast::TableRef::Kind::Subquery || !s.from->subquery) return false;
  const ast::Query& q = *s.from->subquery;
  return q.terms.size() == 1 && q.orderBy.empty() && !q.limit && overItem(q.terms[0]) >= 0;
}

void QueryBinder::checkWindowFunctions(const ast::Select& s) const {
  int i = overItem(s);
  if (i < 0) return;
  const ast::Expr& e = *s.items[static_cast<size_t>(i)].expr;
  // A bounded query numbers its rows (over_aggregate_binder.cpp).
  if (iequals(e.name, "row_number") && !ctx_.boundedRelation) {
    unsupported("ROW_NUMBER() without a filter on its rank", e.pos, kRankHint);
  }
  if (!ctx_.boundedRelation) refuseAnalyticInFlow(e);
  // Other functions reach ExprBinder::bindCall, which refuses OVER.
}

Relation QueryBinder::bindTopN(const ast::Select& outer,
                               std::vector<const ast::Expr*>& rest) const {
  const ast::TableRef& ref = *outer.from;
  const ast::Select& s = ref.subquery->terms[0];
  const size_t rankIndex = static_cast<size_t>(overItem(s));
  const ast::SelectItem& rankItem = s.items[rankIndex];
  const ast::Expr& call = *rankItem.expr;
  const ast::Over& over = *call.over;
  // A bounded query computes any function OVER (...) and then filters it,
  // unless it is one ROW_NUMBER() a top-N keeps (analytic_window_binder.cpp).
  if (ctx_.boundedRelation &&
      (!iequals(call.name, "row_number") || over.hasFrame || !call.args.empty() ||
       std::count_if(s.items.begin(), s.items.end(), [](const ast::SelectItem& i) {
         return i.expr->kind == ast::ExprKind::Call && i.expr->over;
       }) != 1)) {
    if (outer.where) splitConjuncts(*outer.where, rest);
    return bindFrom(ref);
  }
  const std::string fname = toLower(call.name);
  TopNSpec::Function function = TopNSpec::Function::RowNumber;
  if (fname == "rank") {
    function = TopNSpec::Function::Rank;
  } else if (fname == "dense_rank") {
    function = TopNSpec::Function::DenseRank;
  } else if (fname != "row_number") {
    refuseAnalyticInFlow(call);
    unsupported(fmt::format("{}() OVER (...)", fname), call.pos, kRankHint);
  }
  const std::string upper = toUpper(fname);
  if (!call.args.empty()) {
    throw SqlError(sqlstate::kSyntaxError, fmt::format("{}() takes no arguments", upper),
                   call.args[0]->pos);
  }
  if (over.hasFrame) {
    throw SqlError(sqlstate::kSyntaxError, fmt::format("{}() takes no window frame", upper),
                   over.framePos)
        .withHint("remove the ROWS BETWEEN ... clause");
  }
  if (function != TopNSpec::Function::RowNumber && over.orderBy.empty()) {
    throw SqlError(sqlstate::kSyntaxError,
                   fmt::format("{}() needs an ORDER BY in its window", upper), over.pos)
        .withHint(fmt::format("{}() OVER (PARTITION BY k ORDER BY x DESC)", fname));
  }
  for (size_t i = 0; i < s.items.size(); ++i) {
    const ast::Expr& e = *s.items[i].expr;
    if (i != rankIndex && e.kind == ast::ExprKind::Call && e.over) {
      unsupported("a second function OVER (...) in a ranking query", e.pos, kRankHint);
    }
  }
  std::string rankName = !rankItem.alias.empty() ? rankItem.alias : fname;

  // The limit: the conjuncts of the enclosing WHERE that bound the rank.
  std::vector<const ast::Expr*> conjuncts;
  if (outer.where) splitConjuncts(*outer.where, conjuncts);
  int64_t limit = -1;
  for (const ast::Expr* c : conjuncts) {
    bool exact = false;
    std::optional<int64_t> n = rankBound(*c, rankName, ref.alias, &exact);
    if (!n) {
      rest.push_back(c);
      continue;
    }
    if (*n < 1) {
      throw SqlError(sqlstate::kInvalidParameterValue,
                     "this bound on the rank admits no row: a top-N keeps at least 1 row per key",
                     c->pos);
    }
    if (*n > kMaxTopN) {
      throw SqlError(sqlstate::kInvalidParameterValue,
                     fmt::format("a top-N keeps at most {} rows per key", kMaxTopN), c->pos)
          .withHint("lower the bound on the rank");
    }
    // `rank = n` keeps the top n and then only rank n.
    if (exact && *n > 1) rest.push_back(c);
    if (limit < 0 || *n < limit) limit = *n;
  }
  if (limit < 0) {
    // A bounded query reads the subquery as it is, numbering every row (its
    // conjuncts are all in `rest`).
    if (ctx_.boundedRelation) return bindFrom(ref);
    unsupported(fmt::format("{}() without a filter on its rank", upper), call.pos, kRankHint);
  }

  bool rankRead = false;
  for (const auto& item : outer.items)
    rankRead = rankRead || readsRank(*item.expr, rankName, ref.alias);
  for (const ast::Expr* c : rest) rankRead = rankRead || readsRank(*c, rankName, ref.alias);
  for (const auto& g : outer.groupBy) rankRead = rankRead || readsRank(*g, rankName, ref.alias);
  if (outer.having) rankRead = rankRead || readsRank(*outer.having, rankName, ref.alias);
  for (const auto& d : outer.distinctOn) rankRead = rankRead || readsRank(*d, rankName, ref.alias);

  // The ranked query itself: FROM and WHERE as in any SELECT.
  if (!s.from) {
    throw SqlError(sqlstate::kFeatureNotSupported,
                   mode_ == Mode::Flow ? "a flow must read FROM a source"
                                       : "a query without FROM cannot be planned as a stream",
                   s.pos, "add FROM <source>");
  }
  checkHints(s);
  bool grouped = !s.groupBy.empty() || s.having != nullptr || s.emitOnWindowClose;
  for (const auto& item : s.items) {
    if (item.expr->kind != ast::ExprKind::Star && !item.expr->over && containsAggregate(*item.expr))
      grouped = true;
  }
  if (s.distinct || !s.distinctOn.empty()) {
    unsupported(fmt::format("DISTINCT with {}()", upper), s.pos,
                "ROW_NUMBER() ... WHERE rn = 1 keeps one row per key");
  }
  Relation rel = bindFrom(*s.from);
  if (rel.table) {
    throw SqlError(sqlstate::kFeatureNotSupported,
                   fmt::format("\"{}\" is a static table; a {} reads from a source",
                               rel.table->name, mode_ == Mode::Flow ? "flow" : "live query"),
                   rel.pos, "tables are joined to a source's rows: FROM s JOIN t ON ...");
  }
  if (s.where) {
    ExprPtr pred = ExprBinder(rel.scope, ExprContext::Where, functions()).bind(*s.where);
    TypeId t = pred->type()->id;
    if (t != TypeId::Boolean && t != TypeId::Null) {
      throw SqlError(sqlstate::kDatatypeMismatch,
                     fmt::format("argument of WHERE must be type BOOLEAN, not type {}",
                                 pred->type()->toString()),
                     s.where->pos);
    }
    rel.node = filterNode(rel.node, std::move(pred));
  }

  // One row per input row: the items but the rank, then the keys not among
  // them. A grouped query ranks the aggregation's rows: its items and the
  // window's expressions are bound over them.
  PreProjection pre;
  size_t itemsBefore = 0;  // columns of `pre` from the items before the rank
  std::vector<ExprPtr> windowExprs;  // PARTITION BY, then ORDER BY, over the ranked rows
  if (grouped) {
    RankedAggregate ranked;
    ranked.rankItem = rankIndex;
    for (const auto& k : over.partitionBy) ranked.extra.push_back(k.get());
    for (const auto& o : over.orderBy) ranked.extra.push_back(o.expr.get());
    BoundQuery agg = bindAggregate(s, std::move(rel), &ranked);
    if (readsSessionUpdates(agg.node)) {
      unsupported(fmt::format("{}() over the updates of a session-window aggregation", upper), call.pos,
                  "add EMIT ON WINDOW CLOSE to the session-window aggregation, so that it emits "
                  "each session once");
    }
    rel = Relation{};
    rel.node = agg.node;
    rel.sourceName = agg.sourceName;
    rel.changelog = agg.changelog;
    pre.columns = std::move(agg.outputs);
    itemsBefore = ranked.outputsBefore;
    windowExprs = std::move(ranked.extraBound);
  } else {
    if (rel.changelog && readsSessionUpdates(rel.node)) {
      unsupported(fmt::format("{}() over the updates of a session-window aggregation", upper), call.pos,
                  "add EMIT ON WINDOW CLOSE to the session-window aggregation, so that it emits "
                  "each session once");
    }
    itemsBefore = bindItemsInto(s, rel.scope, pre.columns, [rankIndex](size_t i) {
                    return i == rankIndex;
                  })[rankIndex].first;
  }
  const size_t items = pre.columns.size();
  if (!grouped) {
    ExprBinder binder(rel.scope, ExprContext::General, functions());
    for (const auto& k : over.partitionBy) windowExprs.push_back(binder.bind(*k));
    for (const auto& o : over.orderBy) windowExprs.push_back(binder.bind(*o.expr));
  }
  std::vector<int> partitionCols, orderCols;
  std::vector<bool> descending;
  size_t w = 0;
  for (const auto& k : over.partitionBy) {
    refuseMapValues(*windowExprs[w]->type(), "PARTITION BY", k->pos, kPartitionByMapHint);
    partitionCols.push_back(pre.findOrAdd(windowExprs[w++], *k));
  }
  for (const auto& o : over.orderBy) {
    refuseMapValues(*windowExprs[w]->type(), "ORDER BY", o.expr->pos, kOrderByMapHint);
    orderCols.push_back(pre.findOrAdd(windowExprs[w++], *o.expr));
    descending.push_back(o.descending);
  }
  const NodePtr& preNode = pre.project(rel.node);
  auto ref_ = [&](int i) { return pre.ref(i); };

  TopNSpec op;
  op.function = function;
  op.partitionKeys = pre.refs(partitionCols);
  op.orderKeys = pre.refs(orderCols);
  op.descending = descending;
  op.limit = limit;
  op.rankColumn = rankRead;
  op.output = preNode->schema;
  const int rankColumn = static_cast<int>(op.output.columns.size());
  if (rankRead) op.output.columns.push_back(Column{rankName, DataType::of(TypeId::BigInt), false});
  std::vector<ExprPtr> keys = op.partitionKeys;
  NodePtr node = operatorNode({preNode}, std::move(op), {std::move(keys)});

  // The subquery's columns as the enclosing query names them, the rank at
  // its place among the items.
  Relation out;
  out.node = node;
  auto add = [&](const std::string& name, ExprPtr e) {
    out.scope.columns.push_back(ScopeColumn{ref.alias, name, e->type(), false, std::move(e)});
  };
  size_t next = 0;
  for (; next < itemsBefore; ++next) add(pre.columns[next].name, ref_(static_cast<int>(next)));
  if (rankRead) {
    add(rankName, makeColumnRef(rankColumn, DataType::of(TypeId::BigInt), rankName));
  }
  for (; next < items; ++next) add(pre.columns[next].name, ref_(static_cast<int>(next)));
  out.sourceName = rel.sourceName;
  // The rows retract: no operator that takes only appends may read them.
  out.changelog = true;
  out.name = ref.alias;
  out.pos = ref.pos;
  return out;
}

}  // namespace rtsql::planner_detail
