// Subqueries in WHERE, planned as joins. Only an uncorrelated subquery (one
// that names no column of the enclosing query) that stands in a WHERE is
// planned; everywhere else a subquery is refused (refuseSubquery(), called by
// the expression binder).
//
// `WHERE a.x IN (SELECT y FROM b ...)`, a conjunct of WHERE, is an inner
// regular join of the outer rows with `SELECT y FROM (SELECT y FROM b ...)
// GROUP BY y` on a.x = y: the grouping leaves one row per value, so an outer
// row matches at most once (a semi join), and a value leaving the subquery's
// result (its group emptied by retractions) retracts the outer rows it let
// through.
//
// `WHERE a.v > (SELECT max(p) FROM b ...)`: a scalar subquery must be one
// aggregate without GROUP BY, so it has at most one row. That row is joined to
// every outer row on a constant key, and the condition, with the subquery
// replaced by the joined column, filters the joined rows. Outer rows that come
// before the aggregate has a row wait in the join's state; when the aggregate
// changes, the rows it let through are retracted and those it now lets through
// are emitted.
//
// The joins are regular joins (see join_binder.cpp): their state is kept
// without bound, and the aggregation feeding them emits retractions, so the
// flow's output is a changelog.
#include <fmt/format.h>

#include <algorithm>

#include "parser/expr_walker.h"
#include "planner/logical_plan.h"

namespace rtsql::planner_detail {

namespace {

bool isSubquery(const ast::Expr& e) {
  return e.kind == ast::ExprKind::Subquery || e.kind == ast::ExprKind::InSubquery ||
         e.kind == ast::ExprKind::Exists;
}

bool containsSubquery(const ast::Expr& e) {
  return ast::findNode(e, isSubquery) != nullptr;
}

// A copy of `e` in which the expressions of `replace` become the column
// references they map to.
ast::ExprPtr copyReplacing(const ast::Expr& e,
                           const std::vector<std::pair<const ast::Expr*, ast::Expr*>>& replace) {
  for (const auto& [from, to] : replace) {
    if (from == &e) return copyReplacing(*to, {});
  }
  auto out = std::make_unique<ast::Expr>();
  out->kind = e.kind;
  out->pos = e.pos;
  out->literal = e.literal;
  out->parts = e.parts;
  out->op = e.op;
  out->name = e.name;
  for (const auto& a : e.args) out->args.push_back(a ? copyReplacing(*a, replace) : nullptr);
  out->negated = e.negated;
  out->star = e.star;
  out->distinct = e.distinct;
  out->hasOperand = e.hasOperand;
  for (const auto& [w, t] : e.whens)
    out->whens.emplace_back(copyReplacing(*w, replace), copyReplacing(*t, replace));
  if (e.elseExpr) out->elseExpr = copyReplacing(*e.elseExpr, replace);
  out->castType = e.castType;
  if (e.filter) out->filter = copyReplacing(*e.filter, replace);
  out->filterPos = e.filterPos;
  out->over = e.over;
  out->subquery = e.subquery;
  out->endPos = e.endPos;
  return out;
}

ast::ExprPtr columnExpr(std::string qualifier, std::string name, size_t pos) {
  auto c = std::make_unique<ast::Expr>();
  c->kind = ast::ExprKind::Column;
  c->pos = pos;
  c->endPos = pos;
  c->parts = {std::move(qualifier), std::move(name)};
  return c;
}

const char* kRewriteIn =
    "rewrite it as a join with the distinct values: FROM a JOIN (SELECT y FROM b GROUP BY y) AS "
    "s ON a.x = s.y";

}  // namespace

[[noreturn]] void refuseSubquery(const ast::Expr& e, ExprContext context) {
  std::string where;
  std::string hint;
  switch (context) {
    case ExprContext::SelectList:
      where = "in the select list or HAVING";
      hint = "join the subquery's result in FROM: FROM a JOIN (SELECT ...) AS s ON ...";
      break;
    case ExprContext::JoinOn:
      where = "in a join condition";
      hint = "move the condition to WHERE, or join the subquery's result in FROM";
      break;
    case ExprContext::GroupBy:
      where = "in GROUP BY";
      break;
    case ExprContext::DistinctOn:
      where = "in DISTINCT ON";
      break;
    case ExprContext::AggregateArg:
      where = "in an aggregate's argument";
      break;
    case ExprContext::Where:
      where = "inside this WHERE condition";
      break;
    case ExprContext::General:
      where = "here";
      break;
  }
  if (hint.empty()) {
    hint =
        "a subquery is planned only in WHERE: x IN (SELECT ...) as a condition joined with AND, "
        "or a comparison with (SELECT <aggregate> FROM ...)";
  }
  const char* what = e.kind == ast::ExprKind::Exists       ? "EXISTS (subquery)"
                     : e.kind == ast::ExprKind::InSubquery ? "IN (subquery)"
                                                           : "a scalar subquery";
  throw SqlError(sqlstate::kFeatureNotSupported, fmt::format("{} {} is not supported", what, where),
                 e.pos, hint);
}

namespace {

// `err`, raised binding subquery `q`, as the refusal of a correlated
// subquery when the name it could not find is one of the enclosing query's.
void throwIfCorrelated(const SqlError& err, const ast::Query& q, const Scope& outer,
                       const UserFunctions& functions) {
  if (err.sqlstate() != sqlstate::kUndefinedColumn || !err.hasPosition()) return;
  const ast::Expr* column = nullptr;
  ast::enumerate(q, [&](const ast::Expr& n) {
    if (n.kind == ast::ExprKind::Column && n.pos == err.position()) column = &n;
  });
  if (column == nullptr) return;
  try {
    ExprBinder(outer, ExprContext::Where, functions).bind(*column);
  } catch (const SqlError&) {
    return;
  }
  std::string name;
  for (const auto& p : column->parts) name += (name.empty() ? "" : ".") + p;
  throw SqlError(sqlstate::kFeatureNotSupported,
                 fmt::format("a correlated subquery (it reads \"{}\" of the enclosing query) is "
                             "not supported",
                             name),
                 column->pos,
                 "join instead: FROM a JOIN (SELECT k, ... FROM b GROUP BY k) AS s ON a.k = s.k");
}

}  // namespace

BoundQuery QueryBinder::bindSubquery(const ast::Expr& e, const Scope& outer) const {
  try {
    return bindQuery(*e.subquery, false, SqlError::npos);
  } catch (const SqlError& err) {
    throwIfCorrelated(err, *e.subquery, outer, functions());
    throw;
  }
}

Relation QueryBinder::bindWhereSubqueries(Relation rel, std::vector<const ast::Expr*>& where,
                                          std::vector<ast::ExprPtr>& rewritten) const {
  bool any = false;
  for (const ast::Expr* w : where) any = any || containsSubquery(*w);
  if (!any) return rel;

  std::vector<const ast::Expr*> conjuncts;
  for (const ast::Expr* w : where) splitConjuncts(*w, conjuncts);
  std::vector<const ast::Expr*> plain, withSubquery;
  for (const ast::Expr* c : conjuncts) (containsSubquery(*c) ? withSubquery : plain).push_back(c);

  // The conditions on the outer rows alone filter them before any join.
  for (const ast::Expr* c : plain) {
    ExprPtr pred = ExprBinder(rel.scope, ExprContext::Where, functions()).bind(*c);
    TypeId t = pred->type()->id;
    if (t != TypeId::Boolean && t != TypeId::Null) {
      throw SqlError(sqlstate::kDatatypeMismatch,
                     fmt::format("argument of WHERE must be type BOOLEAN, not type {}",
                                 pred->type()->toString()),
                     c->pos);
    }
    rel.node = filterNode(rel.node, std::move(pred));
  }

  where.clear();
  int n = 0;
  for (const ast::Expr* c : withSubquery) {
    if (c->kind == ast::ExprKind::InSubquery && !c->negated) {
      rel = bindInSubquery(*c, std::move(rel), ++n);
      continue;
    }
    std::vector<std::pair<const ast::Expr*, ast::Expr*>> replace;
    std::vector<ast::ExprPtr> columns;
    ast::enumerate(*c, [&](const ast::Expr& e) {
      if (e.kind == ast::ExprKind::InSubquery && e.negated) {
        throw SqlError(sqlstate::kFeatureNotSupported, "NOT IN (subquery) is not supported", e.pos,
                       "an anti join is not planned, and NOT IN is NULL when the subquery yields "
                       "a NULL; rewrite it as FROM a LEFT JOIN (SELECT y FROM b GROUP BY y) AS s "
                       "ON a.x = s.y WHERE s.y IS NULL");
      }
      if (e.kind == ast::ExprKind::Exists) {
        throw SqlError(sqlstate::kFeatureNotSupported, "EXISTS (subquery) is not supported", e.pos,
                       "rewrite it as a join: FROM a JOIN (SELECT k FROM b GROUP BY k) AS s ON "
                       "a.k = s.k (NOT EXISTS: LEFT JOIN ... WHERE s.k IS NULL)");
      }
      if (e.kind == ast::ExprKind::InSubquery) {
        throw SqlError(sqlstate::kFeatureNotSupported,
                       "IN (subquery) under OR, NOT or CASE is not supported", e.pos,
                       std::string("only an IN (subquery) that is a condition of WHERE joined "
                                   "with AND is planned (as a join); ") +
                           kRewriteIn);
      }
      if (e.kind == ast::ExprKind::Subquery) {
        const std::string qualifier = fmt::format("$subquery{}", ++n);
        std::string name;
        rel = bindScalarSubquery(e, std::move(rel), qualifier, name);
        columns.push_back(columnExpr(qualifier, name, e.pos));
        replace.emplace_back(&e, columns.back().get());
      }
    });
    rewritten.push_back(copyReplacing(*c, replace));
    where.push_back(rewritten.back().get());
  }
  return rel;
}

namespace {

// The synthetic join `left JOIN right ON <leftKey> = <rightKey>` whose ON
// names hidden columns of the two scopes.
ast::TableRef joinRef(size_t leftPos, size_t rightPos, ast::ExprPtr leftKey,
                      ast::ExprPtr rightKey) {
  ast::TableRef ref;
  ref.kind = ast::TableRef::Kind::Join;
  ref.joinType = ast::JoinType::Inner;
  ref.pos = leftPos;
  ref.left = std::make_unique<ast::TableRef>();
  ref.left->pos = leftPos;
  ref.right = std::make_unique<ast::TableRef>();
  ref.right->pos = rightPos;
  auto on = std::make_unique<ast::Expr>();
  on->kind = ast::ExprKind::Binary;
  on->op = "=";
  on->pos = rightPos;
  on->args.push_back(std::move(leftKey));
  on->args.push_back(std::move(rightKey));
  ref.on = std::move(on);
  return ref;
}

// IN compares like `=`: equal types, or numbers (widened by the join).
void checkComparable(const DataTypePtr& outer, const DataTypePtr& inner, const ast::Expr& in) {
  if (outer->equals(*inner) || outer->id == TypeId::Null || inner->id == TypeId::Null ||
      (outer->isNumeric() && inner->isNumeric())) {
    return;
  }
  throw SqlError(
      sqlstate::kDatatypeMismatch,
      fmt::format("IN compares {} with a subquery of {}", outer->toString(), inner->toString()),
      in.pos, "CAST one side to the other's type");
}

// `rel` with the join's EXPLAIN label replaced.
template <typename Spec>
void relabel(Relation& rel, std::string label) {
  auto node = std::make_shared<Node>(*rel.node);
  node->op.as<Spec>().label = std::move(label);
  rel.node = node;
}

}  // namespace

Relation QueryBinder::bindInSubquery(const ast::Expr& in, Relation rel, int n) const {
  const ast::Query& q = *in.subquery;
  for (const auto& term : q.terms) {
    for (const auto& item : term.items) {
      if (item.expr->kind == ast::ExprKind::Star) {
        throw SqlError(sqlstate::kFeatureNotSupported, "IN (SELECT * ...) is not supported",
                       item.expr->pos, "select the one column to compare with");
      }
    }
  }
  if (Catalog::TablePtr table = staticSubqueryTable(q))
    return bindStaticInSubquery(in, std::move(rel), n, table);
  BoundQuery inner = bindSubquery(in, rel.scope);
  if (inner.outputs.size() != 1) {
    throw SqlError(sqlstate::kSyntaxError,
                   fmt::format("subquery has too many columns: IN compares with one, it has {}",
                               inner.outputs.size()),
                   q.terms[0].items.size() > 1 ? q.terms[0].items[1].expr->pos : q.pos,
                   "select the one column to compare with");
  }
  const std::string qualifier = fmt::format("$subquery{}", n);
  const std::string value = "$in";
  // The subquery's rows as a relation, then grouped by its one column. In the
  // joined rows that column is hidden under a name no query can clash with.
  Relation sub;
  sub.node = inner.node;
  const std::string innerName = inner.outputs[0].name;
  sub.scope.columns.push_back(ScopeColumn{qualifier, innerName, inner.outputs[0].expr->type(),
                                          false, inner.outputs[0].expr});
  sub.eventTime = inner.eventTime;
  sub.sourceName = inner.sourceName;
  sub.changelog = inner.changelog;
  sub.name = qualifier;
  sub.pos = q.pos;
  ast::Select distinct;
  distinct.pos = q.pos;
  ast::SelectItem item;
  item.expr = columnExpr(qualifier, innerName, q.pos);
  distinct.items.push_back(std::move(item));
  distinct.groupBy.push_back(columnExpr(qualifier, innerName, q.pos));
  BoundQuery grouped = bindAggregate(distinct, std::move(sub));

  Relation right;
  right.node = grouped.node;
  right.scope.columns.push_back(ScopeColumn{qualifier, value, grouped.outputs[0].expr->type(), true,
                                            grouped.outputs[0].expr});
  right.eventTime = grouped.eventTime;
  right.sourceName = grouped.sourceName;
  right.changelog = grouped.changelog;
  right.name = qualifier;
  right.pos = q.pos;

  // The outer value as a hidden column of the outer rows, so that the ON
  // condition names both sides by column.
  const std::string outerQualifier = fmt::format("$outer{}", n);
  ExprPtr key = ExprBinder(rel.scope, ExprContext::Where, functions()).bind(*in.args[0]);
  checkComparable(key->type(), inner.outputs[0].expr->type(), in);
  const std::string keyText =
      ExprBinder(displayScope(rel.scope), ExprContext::Where, functions())
          .bind(*in.args[0])
          ->toString();
  rel.scope.columns.push_back(ScopeColumn{outerQualifier, "$key", key->type(), true, key});
  rel.identity = false;
  ast::TableRef ref = joinRef(in.args[0]->pos, q.pos, columnExpr(outerQualifier, "$key", in.pos),
                              columnExpr(qualifier, value, q.pos));
  Relation out = bindStreamJoin(ref, std::move(rel), std::move(right));
  relabel<StreamJoinSpec>(out, fmt::format("on [{} = {}] for IN (SELECT DISTINCT {} ...)", keyText,
                                           innerName, innerName));
  return out;
}

// A subquery that reads one static table without aggregating: its values
// are known when the flow is planned, as a join with a static table's rows is.
Catalog::TablePtr QueryBinder::staticSubqueryTable(const ast::Query& q) const {
  if (q.terms.size() != 1 || q.limit || !q.orderBy.empty() || !ctx_.catalog) return nullptr;
  const ast::Select& s = q.terms[0];
  if (!s.from || s.from->kind != ast::TableRef::Kind::Named || !s.groupBy.empty() || s.having ||
      !s.distinctOn.empty() || s.items.size() != 1 ||
      s.items[0].expr->kind == ast::ExprKind::Star || containsAggregate(*s.items[0].expr)) {
    return nullptr;
  }
  if (ctx_.catalog->findSource(s.from->name)) return nullptr;
  return ctx_.catalog->findTable(s.from->name);
}

// `x IN (SELECT y FROM t WHERE ...)` over a static table t: the distinct
// non-NULL values of y are computed now and the outer rows probe them in a
// broadcast join, which keeps no state and emits no retraction.
Relation QueryBinder::bindStaticInSubquery(const ast::Expr& in, Relation rel, int n,
                                           const Catalog::TablePtr& table) const {
  const ast::Query& q = *in.subquery;
  const ast::Select& s = q.terms[0];
  const std::string alias = s.from->alias.empty() ? s.from->name : s.from->alias;
  const Scope scope = scopeFromSchema(table->schema, alias);
  ExprPtr value, cond;
  try {
    value = ExprBinder(scope, ExprContext::SelectList, functions()).bind(*s.items[0].expr);
    if (s.where) cond = ExprBinder(scope, ExprContext::Where, functions()).bind(*s.where);
  } catch (const SqlError& err) {
    throwIfCorrelated(err, q, rel.scope, functions());
    throw;
  }
  if (cond && cond->type()->id != TypeId::Boolean && cond->type()->id != TypeId::Null) {
    throw SqlError(sqlstate::kDatatypeMismatch,
                   fmt::format("argument of WHERE must be type BOOLEAN, not type {}",
                               cond->type()->toString()),
                   s.where->pos);
  }
  auto rows = std::make_shared<std::vector<Row>>();
  if (table->rows) {
    for (const Row& r : *table->rows) {
      if (cond) {
        Value c = cond->eval(r);
        if (c.isNull() || !c.asBool()) continue;
      }
      Value v = value->eval(r);
      if (!v.isNull()) rows->push_back(Row{std::move(v)});  // NULL matches nothing
    }
  }
  std::sort(rows->begin(), rows->end(),
            [](const Row& a, const Row& b) { return a[0].compare(b[0]) < 0; });
  rows->erase(std::unique(rows->begin(), rows->end(),
                          [](const Row& a, const Row& b) { return a[0] == b[0]; }),
              rows->end());

  const std::string qualifier = fmt::format("$subquery{}", n);
  auto values = std::make_shared<TableDef>();
  values->name = table->name;
  values->schema.columns.push_back(Column{"$in", value->type(), true});
  values->rows = rows;
  Relation right;
  right.table = values;
  right.scope = scopeFromSchema(values->schema, qualifier);
  right.name = alias;
  right.pos = q.pos;

  const std::string outerQualifier = fmt::format("$outer{}", n);
  ExprPtr key = ExprBinder(rel.scope, ExprContext::Where, functions()).bind(*in.args[0]);
  checkComparable(key->type(), value->type(), in);
  const std::string keyText =
      ExprBinder(displayScope(rel.scope), ExprContext::Where, functions())
          .bind(*in.args[0])
          ->toString();
  rel.scope.columns.push_back(ScopeColumn{outerQualifier, "$key", key->type(), true, key});
  rel.identity = false;
  ast::TableRef ref = joinRef(in.args[0]->pos, q.pos, columnExpr(outerQualifier, "$key", in.pos),
                              columnExpr(qualifier, "$in", q.pos));
  Relation out = bindBroadcastJoin(ref, std::move(rel), std::move(right));
  const std::string shown = s.items[0].alias.empty() ? s.items[0].text : s.items[0].alias;
  relabel<BroadcastJoinSpec>(
      out, fmt::format("on [{} = {}] for IN (SELECT DISTINCT {} ...)", keyText, shown, shown));
  return out;
}

Relation QueryBinder::bindScalarSubquery(const ast::Expr& e, Relation rel,
                                         const std::string& qualifier, std::string& name) const {
  const ast::Query& q = *e.subquery;
  // At most one row: one aggregate of the whole stream.
  const bool oneAggregate = q.terms.size() == 1 && q.terms[0].groupBy.empty() &&
                            q.terms[0].items.size() == 1 &&
                            q.terms[0].items[0].expr->kind != ast::ExprKind::Star &&
                            containsAggregate(*q.terms[0].items[0].expr);
  if (!oneAggregate) {
    size_t pos = q.pos;
    if (q.terms.size() == 1 && !q.terms[0].groupBy.empty()) pos = q.terms[0].groupBy[0]->pos;
    throw SqlError(sqlstate::kFeatureNotSupported,
                   "a scalar subquery that may return more than one row is not supported", pos,
                   "a scalar subquery is planned when it is one aggregate without GROUP BY, "
                   "which has one row: (SELECT max(x) FROM b WHERE ...)");
  }
  BoundQuery inner = bindSubquery(e, rel.scope);
  const ast::SelectItem& item = q.terms[0].items[0];
  name = fmt::format("(SELECT {})", item.alias.empty() ? item.text : item.alias);

  // Both sides carry the constant key 1: every outer row meets the one row.
  const ExprPtr one = makeLiteral(Value::bigint(1), DataType::of(TypeId::BigInt));
  Relation right;
  right.node = inner.node;
  right.scope.columns.push_back(
      ScopeColumn{qualifier, name, inner.outputs[0].expr->type(), true, inner.outputs[0].expr});
  right.scope.columns.push_back(ScopeColumn{qualifier, "$key", one->type(), true, one});
  right.sourceName = inner.sourceName;
  right.changelog = inner.changelog;
  right.name = qualifier;
  right.pos = q.pos;

  const std::string outerQualifier = "$outer" + qualifier.substr(std::string("$subquery").size());
  rel.scope.columns.push_back(ScopeColumn{outerQualifier, "$key", one->type(), true, one});
  rel.identity = false;
  ast::TableRef ref =
      joinRef(rel.pos == SqlError::npos ? e.pos : rel.pos, e.pos,
              columnExpr(outerQualifier, "$key", e.pos), columnExpr(qualifier, "$key", e.pos));
  Relation out = bindStreamJoin(ref, std::move(rel), std::move(right));
  relabel<StreamJoinSpec>(out, fmt::format("with the one row of {}", name));
  // Every row has the one key: both sides go to a single task, as a global
  // aggregate's rows do, rather than to one of several tasks that would only
  // hold slots.
  auto single = std::make_shared<Node>(*out.node);
  for (auto& keys : single->shuffleKeys) keys.clear();
  out.node = single;
  return out;
}

}  // namespace rtsql::planner_detail
