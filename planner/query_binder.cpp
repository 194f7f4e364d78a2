// The query binder: SELECT terms, UNION ALL, FROM items, DISTINCT and
// DISTINCT ON, into logical nodes (see logical_plan.h). Aggregation is bound in
// aggregate_binder.cpp and joins in join_binder.cpp.
#include <fmt/format.h>

#include <algorithm>

#include "common/map_order.h"
#include "common/pg_session.h"
#include "planner/bounded_relation.h"
#include "planner/json_tuple_items.h"
#include "planner/logical_plan.h"
#include "planner/pre_projection.h"
#include "planner/processor.h"
#include "planner/view_input.h"
#include "planner/format_floats.h"
#include "planner/row_subquery.h"
#include "planner/set_functions.h"

namespace rtsql::planner_detail {

// ---------------------------------------------------------------- nodes

NodePtr scanNode(Catalog::SourcePtr source) {
  auto node = std::make_shared<Node>();
  node->kind = Node::Kind::Scan;
  node->schema = source->schema;
  node->source = std::move(source);
  return node;
}

bool readsChangelogSource(const NodePtr& node) {
  if (!node) return false;
  if (node->kind == Node::Kind::Scan) return node->source && changelogFormat(node->source->format);
  for (const NodePtr& in : node->inputs) {
    if (readsChangelogSource(in)) return true;
  }
  return false;
}

NodePtr operatorNode(std::vector<NodePtr> inputs, OperatorSpec op,
                     std::vector<std::vector<ExprPtr>> shuffleKeys) {
  if (op.stateful() ? shuffleKeys.size() != inputs.size() : !shuffleKeys.empty()) {
    throw InternalError("shuffle keys that do not match the inputs of " + op.describe());
  }
  auto node = std::make_shared<Node>();
  node->kind = Node::Kind::Operator;
  node->schema = op.output();
  node->op = std::move(op);
  node->inputs = std::move(inputs);
  node->shuffleKeys = std::move(shuffleKeys);
  return node;
}

NodePtr filterNode(NodePtr input, ExprPtr predicate) {
  FilterSpec op;
  op.predicate = std::move(predicate);
  op.output = input->schema;
  return operatorNode({std::move(input)}, std::move(op));
}

NodePtr projectNode(NodePtr input, const std::vector<OutputColumn>& outputs) {
  ProjectSpec op;
  for (const auto& o : outputs) op.exprs.push_back(o.expr);
  op.output = outputSchema(outputs);
  return operatorNode({std::move(input)}, std::move(op));
}

// ---------------------------------------------------------------- helpers

Schema outputSchema(const std::vector<OutputColumn>& outputs) {
  Schema schema;
  for (const auto& o : outputs) schema.columns.push_back(Column{o.name, o.expr->type(), false});
  return schema;
}

std::string outputName(const ast::SelectItem& item, const Expr& bound) {
  if (!item.alias.empty()) return item.alias;
  const ast::Expr& e = *item.expr;
  if (e.kind == ast::ExprKind::Column && !e.parts.empty()) return e.parts.back();
  if (e.kind == ast::ExprKind::Field) return e.name;
  if (!item.text.empty()) return item.text;
  return bound.toString();
}

void expandStar(const Scope& scope, const ast::Expr& star, std::vector<OutputColumn>& out) {
  const std::string* qualifier = star.parts.empty() ? nullptr : &star.parts.back();
  if (qualifier && !scope.hasQualifier(*qualifier)) {
    throw SqlError(sqlstate::kUndefinedTable,
                   fmt::format("missing FROM-clause entry for table \"{}\"", *qualifier),
                   star.pos);
  }
  for (const ScopeColumn& c : scope.columns) {
    if (c.hidden) continue;
    if (qualifier && !iequals(c.qualifier, *qualifier)) continue;
    out.push_back(OutputColumn{c.name, c.expr, star.pos});
  }
}

// A flow's rows become JSON objects (or raw sink fields by name), so every
// output column needs its own name.
void checkUniqueNames(const std::vector<OutputColumn>& outputs) {
  for (size_t i = 0; i < outputs.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (iequals(outputs[i].name, outputs[j].name)) {
        throw SqlError(sqlstate::kDuplicateColumn,
                       fmt::format("column \"{}\" specified more than once", outputs[i].name),
                       outputs[i].pos,
                       fmt::format("give one of them another name: ... AS {}_2", outputs[i].name));
      }
    }
  }
}

Scope fingerprintScope(const Scope& scope) {
  Scope out = scope;
  for (size_t i = 0; i < out.columns.size(); ++i) {
    out.columns[i].expr =
        makeColumnRef(static_cast<int>(i), out.columns[i].type, "$" + std::to_string(i));
  }
  return out;
}

Scope displayScope(const Scope& scope) {
  Scope out = scope;
  for (size_t i = 0; i < out.columns.size(); ++i) {
    const ScopeColumn& c = out.columns[i];
    std::string name = c.qualifier.empty() ? c.name : c.qualifier + "." + c.name;
    out.columns[i].expr = makeColumnRef(static_cast<int>(i), c.type, std::move(name));
  }
  return out;
}

Relation materialize(const Relation& rel) {
  if (rel.identity) return rel;
  std::vector<OutputColumn> outputs;
  int timeIndex = -1;
  for (size_t i = 0; i < rel.scope.columns.size(); ++i) {
    const ScopeColumn& c = rel.scope.columns[i];
    if (rel.eventTime && c.expr == rel.eventTime && timeIndex < 0) timeIndex = static_cast<int>(i);
    outputs.push_back(OutputColumn{c.name, c.expr, SqlError::npos});
  }
  if (rel.eventTime && timeIndex < 0) {
    timeIndex = static_cast<int>(outputs.size());
    outputs.push_back(OutputColumn{rel.eventTime->toString(), rel.eventTime, SqlError::npos});
  }
  Relation out = rel;
  out.node = projectNode(rel.node, outputs);
  out.keyRefs.clear();  // the sink's key only follows an aggregate's own columns
  for (size_t i = 0; i < out.scope.columns.size(); ++i) {
    ScopeColumn& c = out.scope.columns[i];
    c.expr = makeColumnRef(static_cast<int>(i), c.type, c.name);
  }
  out.eventTime = nullptr;
  if (timeIndex >= 0 && static_cast<size_t>(timeIndex) < out.scope.columns.size()) {
    out.eventTime = out.scope.columns[static_cast<size_t>(timeIndex)].expr;
  } else if (timeIndex >= 0) {
    out.eventTime = makeColumnRef(timeIndex, rel.eventTime->type(),
                                  outputs[static_cast<size_t>(timeIndex)].name);
  }
  out.identity = true;
  return out;
}

void splitConjuncts(const ast::Expr& e, std::vector<const ast::Expr*>& out) {
  if (e.kind == ast::ExprKind::Binary && iequals(e.op, "AND") && e.args.size() == 2) {
    splitConjuncts(*e.args[0], out);
    splitConjuncts(*e.args[1], out);
    return;
  }
  out.push_back(&e);
}

void throwNeedsWatermark(const std::string& what, const std::string& source, size_t pos) {
  throw SqlError(sqlstate::kInvalidColumnReference,
                 fmt::format("{} on source \"{}\" needs a WATERMARK", what, source), pos)
      .withHint(fmt::format("declare one on the source: CREATE SOURCE {} (..., WATERMARK FOR ts "
                            "AS ts - INTERVAL '10' SECOND) ...; it is what lets rtsql drop old "
                            "state",
                            source));
}

// ---------------------------------------------------------------- queries

void QueryBinder::unsupported(const std::string& what, size_t pos, const std::string& hint) const {
  SqlError err(sqlstate::kFeatureNotSupported,
               fmt::format("{} is not supported in {} yet", what,
                           mode_ == Mode::Flow ? "flows" : "queries"),
               pos);
  if (!hint.empty()) err.withHint(hint);
  throw err;
}

BoundQuery QueryBinder::bindQuery(const ast::Query& q, bool top, size_t limitPos) const {
  if (q.terms.empty()) throw InternalError("query without a SELECT");
  // A bounded query's top ORDER BY sorts its collected result
  // (server/bounded_query.cpp); a stream has no order to give.
  if (!q.orderBy.empty() && !(top && ctx_.boundedRelation)) {
    unsupported("ORDER BY", q.orderBy[0].expr->pos);
  }
  if (q.offset && !(top && ctx_.boundedRelation)) {
    unsupported("OFFSET", q.offsetPos,
                "OFFSET skips rows of a bounded query's sorted result (a SELECT over tables or "
                "FROM source FOR OFFSETS BETWEEN ...)");
  }
  if (q.limit && (mode_ == Mode::Flow || !top)) {
    SqlError err(sqlstate::kFeatureNotSupported,
                 top ? "LIMIT is not allowed in a flow" : "LIMIT is not supported in a subquery",
                 top ? limitPos : q.pos);
    if (top) err.withHint("a flow runs until it is stopped; use LIMIT in a live SELECT");
    throw err;
  }
  if (q.terms.size() > 1) return bindUnion(q, top);
  return bindSelect(q.terms[0], top, &q.orderBy);
}

void QueryBinder::bindOrderColumns(const std::vector<ast::OrderItem>& order, const Scope& scope,
                                   BoundQuery& out) const {
  ExprBinder binder(scope, ExprContext::SelectList, functions());
  for (size_t i = 0; i < order.size(); ++i) {
    const ast::Expr& e = *order[i].expr;
    // A position and a selected column's name are the result's own
    // (server/bounded_query.cpp sorts by them).
    if (e.kind == ast::ExprKind::Literal) continue;
    if (e.kind == ast::ExprKind::Column && !e.parts.empty() &&
        std::any_of(out.outputs.begin(), out.outputs.end(),
                    [&](const OutputColumn& o) { return iequals(o.name, e.parts.back()); })) {
      continue;
    }
    ExprPtr bound;
    try {
      bound = binder.bind(e);
    } catch (const SqlError&) {
      continue;  // the sort binds it over the result, and says what is wrong
    }
    out.outputs.push_back(OutputColumn{orderColumnName(i), std::move(bound), e.pos});
    ++out.hiddenOutputs;
  }
}

std::vector<OutputColumn> QueryBinder::bindItems(const ast::Select& s, const Scope& scope,
                                                 const BindHook& calls) const {
  std::vector<OutputColumn> outputs;
  bindItemsInto(s, scope, outputs, [](size_t) { return false; }, calls);
  return outputs;
}

std::vector<ItemColumns> QueryBinder::bindItemsInto(const ast::Select& s, const Scope& scope,
                                                    std::vector<OutputColumn>& out,
                                                    const std::function<bool(size_t)>& skip,
                                                    const BindHook& calls) const {
  std::vector<ItemColumns> taken(s.items.size());
  // A bounded query's subqueries in the select list are evaluated per row
  // over the finite relations they read (row_subquery.h).
  BindHook subqueries = calls;
  if (ctx_.boundedRelation) {
    subqueries = [this, &scope, &calls](const ast::Expr& e) -> ExprPtr {
      if (calls) {
        if (ExprPtr call = calls(e)) return call;
      }
      if (e.kind != ast::ExprKind::Subquery) return nullptr;
      return bindRowSubquery(e, scope, ctx_, functions());
    };
  }
  ExprBinder binder(scope, ExprContext::SelectList, functions(), subqueries);
  for (size_t i = 0; i < s.items.size(); ++i) {
    taken[i].first = out.size();
    taken[i].end = out.size();
    if (skip(i)) continue;
    const ast::SelectItem& item = s.items[i];
    const ast::Expr& e = *item.expr;
    // Checked as the list grows, so an overlong list is refused before all of
    // it is bound.
    checkSelectListLength(out.size() + 1, e.pos);
    if (e.kind == ast::ExprKind::Star) {
      expandStar(scope, e, out);
      checkSelectListLength(out.size(), e.pos);
    } else if (expandJsonTuple(item, binder, out)) {
      checkSelectListLength(out.size(), e.pos);
    } else {
      ExprPtr bound = binder.bind(e);
      out.push_back(OutputColumn{outputName(item, *bound), bound, e.pos});
    }
    taken[i].end = out.size();
  }
  return taken;
}

BoundQuery QueryBinder::bindSelect(const ast::Select& s, bool top,
                                   const std::vector<ast::OrderItem>* order) const {
  if (!s.from) {
    throw SqlError(sqlstate::kFeatureNotSupported,
                   mode_ == Mode::Flow ? "a flow must read FROM a source"
                                       : "a query without FROM cannot be planned as a stream",
                   s.pos, "add FROM <source>");
  }
  checkHints(s);
  checkWindowFunctions(s);
  // A FROM subquery ranking its rows binds with the WHERE conjuncts on the
  // rank; `where` keeps the others.
  std::vector<const ast::Expr*> where;
  const bool ranked = ranksRows(s);
  Relation rel = ranked ? bindTopN(s, where) : bindFrom(*s.from);
  if (!ranked && s.where) where.push_back(s.where.get());
  if (rel.table) {
    throw SqlError(sqlstate::kFeatureNotSupported,
                   fmt::format("\"{}\" is a static table; a {} reads from a source",
                               rel.table->name, mode_ == Mode::Flow ? "flow" : "live query"),
                   rel.pos, "tables are joined to a source's rows: FROM s JOIN t ON ...");
  }
  std::vector<ast::ExprPtr> rewritten;  // WHERE conditions whose subqueries became columns
  rel = bindWhereSubqueries(std::move(rel), where, rewritten);

  for (const ast::Expr* w : where) {
    ExprPtr pred = ExprBinder(rel.scope, ExprContext::Where, functions()).bind(*w);
    TypeId t = pred->type()->id;
    if (t != TypeId::Boolean && t != TypeId::Null) {
      throw SqlError(sqlstate::kDatatypeMismatch,
                     fmt::format("argument of WHERE must be type BOOLEAN, not type {}",
                                 pred->type()->toString()),
                     w->pos);
    }
    rel.node = filterNode(rel.node, std::move(pred));
  }

  bool aggregate = !s.groupBy.empty() || s.having != nullptr;
  for (const auto& item : s.items) {
    if (item.expr->kind != ast::ExprKind::Star && containsAggregate(*item.expr)) aggregate = true;
  }
  bool dedup = s.distinct || !s.distinctOn.empty();

  BoundQuery out;
  if (hasOverAggregate(s)) {
    if (aggregate) {
      unsupported("an OVER aggregate with GROUP BY or another aggregate in the same SELECT",
                  s.groupBy.empty() ? s.pos : s.groupBy[0]->pos,
                  "aggregate in a subquery and compute the OVER aggregate over its rows in the "
                  "enclosing query");
    }
    if (dedup) {
      unsupported("DISTINCT with an OVER aggregate",
                  s.distinctOn.empty() ? s.pos : s.distinctOn[0]->pos,
                  "deduplicate the rows in a subquery first");
    }
    if (s.emitOnWindowClose) {
      throw SqlError(sqlstate::kFeatureNotSupported,
                     "EMIT ON WINDOW CLOSE needs a windowed aggregation", s.pos)
          .withHint("GROUP BY window(ts, '1 minute'), ... EMIT ON WINDOW CLOSE");
    }
    out = bindOverAggregate(s, std::move(rel));
  } else if (aggregate) {
    if (dedup) {
      unsupported("DISTINCT over an aggregation", s.distinctOn.empty() ? s.pos : s.distinctOn[0]->pos,
                  "an aggregation already gives one row per group");
    }
    out = bindAggregate(s, std::move(rel));
  } else {
    if (s.emitOnWindowClose) {
      throw SqlError(sqlstate::kFeatureNotSupported,
                     "EMIT ON WINDOW CLOSE needs a windowed aggregation", s.pos)
          .withHint("GROUP BY window(ts, '1 minute'), ... EMIT ON WINDOW CLOSE");
    }
    if (dedup) {
      out = bindDedup(s, std::move(rel));
    } else {
      // A bounded query's set-returning calls make rows (set_functions.h).
      SetFunctionPlan expand;
      if (ctx_.boundedRelation) expand = planSetFunctions(s, rel.scope, rel.node, functions());
      if (expand.hook) rel.node = expand.node;
      out.outputs = bindItems(s, rel.scope, expand.hook);
      out.node = rel.node;
      out.eventTime = rel.eventTime;
      out.sourceName = rel.sourceName;
      out.changelog = rel.changelog;
      out.keyRefs = rel.keyRefs;
      // A bounded query may sort by columns it does not select (PostgreSQL's
      // ORDER BY a.attnum): computed as hidden outputs.
      if (order && top && ctx_.boundedRelation) bindOrderColumns(*order, rel.scope, out);
    }
  }
  // The grouped and DISTINCT paths bind the list themselves.
  if (out.outputs.size() > kMaxSelectListEntries) {
    checkSelectListLength(out.outputs.size(), out.outputs[kMaxSelectListEntries].pos);
  }
  if (top && mode_ == Mode::Flow) checkUniqueNames(out.outputs);
  return out;
}

// DISTINCT ON (keys): the source stage computes the select items, the keys not
// among them and the event time into one row, shuffled by the keys; the dedup
// stage passes the first row per key.
BoundQuery QueryBinder::bindDedup(const ast::Select& s, Relation rel) const {
  size_t pos = s.distinctOn.empty() ? s.pos : s.distinctOn[0]->pos;
  if (rel.changelog || readsChangelogSource(rel.node)) {
    unsupported("DISTINCT over rows that may be retracted (the result of an aggregation, an "
                "outer join or a top-N, or a debezium-json source's changes)",
                pos, "a GROUP BY of the columns gives one row per distinct value and follows "
                     "retractions");
  }
  if (s.withinWatermark && !rel.eventTime) {
    throwNeedsWatermark("DISTINCT ON ... WITHIN WATERMARK", rel.sourceName, pos);
  }
  std::vector<OutputColumn> items = bindItems(s, rel.scope);
  PreProjection pre;
  pre.columns = items;
  std::vector<int> keyIndexes;
  // Spark's DISTINCT (and UNION, a DISTINCT of a UNION ALL) compares no MAP.
  auto checkKey = [](const ExprPtr& key, size_t keyPos) {
    refuseMapValues(*key->type(), "DISTINCT", keyPos, kDistinctMapHint);
  };
  if (s.distinctOn.empty()) {
    for (size_t i = 0; i < items.size(); ++i) {
      checkKey(items[i].expr, items[i].pos == SqlError::npos ? pos : items[i].pos);
      keyIndexes.push_back(static_cast<int>(i));
    }
  } else {
    ExprBinder binder(rel.scope, ExprContext::DistinctOn, functions());
    for (const auto& k : s.distinctOn) {
      ExprPtr key = binder.bind(*k);
      checkKey(key, k->pos);
      keyIndexes.push_back(pre.findOrAdd(std::move(key), *k));
    }
  }
  int timeIndex = -1;
  if (rel.eventTime) {
    timeIndex = pre.find(rel.eventTime);
    if (timeIndex < 0) {
      timeIndex = static_cast<int>(pre.columns.size());
      pre.columns.push_back(
          OutputColumn{rel.eventTime->toString(), rel.eventTime, SqlError::npos});
    }
  }
  const NodePtr& preNode = pre.project(rel.node);
  auto ref = [&](int i) { return pre.ref(i); };

  DedupSpec op;
  op.dedupKeys = pre.refs(keyIndexes);
  op.withinWatermark = s.withinWatermark;
  if (s.withinWatermark) op.eventTime = ref(timeIndex);
  op.output = preNode->schema;

  std::vector<ExprPtr> keys = op.dedupKeys;
  NodePtr node = operatorNode({preNode}, std::move(op), {std::move(keys)});

  BoundQuery out;
  out.node = node;
  for (size_t i = 0; i < items.size(); ++i) {
    out.outputs.push_back(OutputColumn{items[i].name, ref(static_cast<int>(i)), items[i].pos});
  }
  if (timeIndex >= 0) out.eventTime = ref(timeIndex);
  out.sourceName = rel.sourceName;
  return out;
}

namespace {

// The widest of two types a UNION ALL column can take, or null when none.
DataTypePtr unionType(const DataTypePtr& a, const DataTypePtr& b) {
  if (a->equals(*b) || b->id == TypeId::Null) return a;
  if (a->id == TypeId::Null) return b;
  if (a->isNumeric() && b->isNumeric()) return widerNumericType(*a, *b);
  return nullptr;
}

}  // namespace

// UNION ALL: each term is planned as its own branch, reshaped to the common
// column types; the branches meet at whatever follows (the sink, or the
// shuffle into a stateful operator).
BoundQuery QueryBinder::bindUnion(const ast::Query& q, bool top) const {
  std::vector<BoundQuery> terms;
  for (const auto& term : q.terms) terms.push_back(bindSelect(term, false));
  const size_t width = terms[0].outputs.size();
  for (size_t t = 1; t < terms.size(); ++t) {
    if (terms[t].outputs.size() != width) {
      throw SqlError(sqlstate::kSyntaxError,
                     fmt::format("each UNION ALL query must have the same number of columns: "
                                 "the first has {}, query {} has {}",
                                 width, t + 1, terms[t].outputs.size()),
                     q.terms[t].pos);
    }
  }
  std::vector<DataTypePtr> types;
  for (size_t c = 0; c < width; ++c) {
    DataTypePtr type = terms[0].outputs[c].expr->type();
    for (size_t t = 1; t < terms.size(); ++t) {
      const OutputColumn& o = terms[t].outputs[c];
      DataTypePtr next = unionType(type, o.expr->type());
      if (!next) {
        throw SqlError(sqlstate::kDatatypeMismatch,
                       fmt::format("UNION ALL column {} (\"{}\") is {} in the first query and {} "
                                   "in query {}",
                                   c + 1, terms[0].outputs[c].name, type->toString(),
                                   o.expr->type()->toString(), t + 1),
                       o.pos, "CAST one of them to the other's type");
      }
      type = next;
    }
    types.push_back(type);
  }

  // The event time survives the union when every term selects its own
  // watermark column at the same place.
  int timeIndex = -1;
  for (size_t c = 0; c < width && timeIndex < 0; ++c) {
    bool all = true;
    for (const auto& term : terms) {
      all = all && term.eventTime && term.outputs[c].expr == term.eventTime &&
            term.outputs[c].expr->type()->equals(*types[c]);
    }
    if (all) timeIndex = static_cast<int>(c);
  }

  auto node = std::make_shared<Node>();
  node->kind = Node::Kind::Union;
  for (size_t t = 0; t < terms.size(); ++t) {
    std::vector<OutputColumn> shaped;
    for (size_t c = 0; c < width; ++c) {
      const OutputColumn& o = terms[t].outputs[c];
      ExprPtr e = o.expr;
      if (!e->type()->equals(*types[c])) e = makeCast(e, types[c], o.pos);
      shaped.push_back(OutputColumn{terms[0].outputs[c].name, e, o.pos});
    }
    node->inputs.push_back(projectNode(terms[t].node, shaped));
  }
  node->schema = node->inputs[0]->schema;

  BoundQuery out;
  out.node = node;
  for (size_t c = 0; c < width; ++c) {
    out.outputs.push_back(OutputColumn{terms[0].outputs[c].name,
                                       makeColumnRef(static_cast<int>(c), types[c],
                                                     terms[0].outputs[c].name),
                                       terms[0].outputs[c].pos});
  }
  if (timeIndex >= 0) out.eventTime = out.outputs[static_cast<size_t>(timeIndex)].expr;
  out.sourceName = terms[0].sourceName;
  for (const auto& t : terms) out.changelog = out.changelog || t.changelog;
  out.shaped = true;
  // The grouped and DISTINCT paths bind the list themselves.
  if (out.outputs.size() > kMaxSelectListEntries) {
    checkSelectListLength(out.outputs.size(), out.outputs[kMaxSelectListEntries].pos);
  }
  if (top && mode_ == Mode::Flow) checkUniqueNames(out.outputs);
  return out;
}

namespace {

void relationNames(const ast::TableRef& ref, std::vector<std::string>& out) {
  switch (ref.kind) {
    case ast::TableRef::Kind::Named:
      out.push_back(ref.name);
      if (!ref.alias.empty()) out.push_back(ref.alias);
      break;
    case ast::TableRef::Kind::Subquery:
      if (!ref.alias.empty()) out.push_back(ref.alias);
      break;
    case ast::TableRef::Kind::Join:
      if (ref.left) relationNames(*ref.left, out);
      if (ref.right) relationNames(*ref.right, out);
      break;
    case ast::TableRef::Kind::Transform:
      if (!ref.alias.empty()) out.push_back(ref.alias);
      if (ref.left) relationNames(*ref.left, out);
      break;
  }
}

}  // namespace

// /*+ BROADCAST(t) */ is accepted as Spark accepts it: every join with a
// static table is a broadcast join anyway. A hint that names nothing in FROM
// is a mistake worth reporting; hints rtsql does not know are ignored.
void QueryBinder::checkHints(const ast::Select& s) const {
  if (s.hints.empty() || !s.from) return;
  std::vector<std::string> names;
  relationNames(*s.from, names);
  for (const auto& hint : s.hints) {
    std::string name = toUpper(hint.name);
    if (name != "BROADCAST" && name != "BROADCASTJOIN" && name != "MAPJOIN") continue;
    for (const auto& arg : hint.args) {
      bool found = false;
      for (const auto& n : names) found = found || iequals(n, arg);
      if (!found) {
        SqlError err(sqlstate::kUndefinedTable,
                     fmt::format("{} hint names \"{}\", which is not in FROM", name, arg),
                     hint.pos);
        std::string close = closestName(arg, names);
        err.withHint(close.empty() ? std::string("name a table of the join by its name or alias")
                                   : fmt::format("perhaps you meant \"{}\"", close));
        throw err;
      }
    }
  }
}

// ---------------------------------------------------------------- FROM

Relation QueryBinder::bindFrom(const ast::TableRef& ref) const {
  switch (ref.kind) {
    case ast::TableRef::Kind::Join:
      return bindJoin(ref);
    case ast::TableRef::Kind::Subquery: {
      if (!ref.subquery) throw InternalError("subquery reference without a query");
      // Flattening: the outer query's references to the subquery's columns
      // become the subquery's own expressions over its rows. A
      // non-deterministic expression (rand()) referenced twice outside is
      // therefore evaluated twice.
      BoundQuery inner = bindQuery(*ref.subquery, false, SqlError::npos);
      Relation rel;
      rel.node = inner.node;
      for (auto& o : inner.outputs) {
        rel.scope.columns.push_back(ScopeColumn{ref.alias, o.name, o.expr->type(), false, o.expr});
      }
      rel.eventTime = inner.eventTime;
      rel.sourceName = inner.sourceName;
      rel.changelog = inner.changelog;
      rel.keyRefs = inner.keyRefs;
      rel.name = ref.alias;
      rel.pos = ref.pos;
      return rel;
    }
    case ast::TableRef::Kind::Transform:
      return bindTransform(ref);
    case ast::TableRef::Kind::Named:
      break;
  }
  return bindNamed(ref);
}

// TRANSFORM(input PARTITION BY keys USING PROCESSOR p WITH (...)): the input
// stage computes the input's visible columns then the keys into one row,
// shuffled by the keys; the Transform stage calls the processor. Its rows are
// the keys (named as the input names them), then the RETURNS columns.
Relation QueryBinder::bindTransform(const ast::TableRef& ref) const {
  if (!ref.left) throw InternalError("TRANSFORM without an input");
  Relation in = bindFrom(*ref.left);
  if (!in.node) {
    unsupported("TRANSFORM over a static table", ref.left->pos,
                "TRANSFORM reads a stream: name a source or a subquery over one");
  }
  if (in.changelog || readsChangelogSource(in.node)) {
    unsupported("TRANSFORM over rows that may be retracted (the result of an aggregation, an "
                "outer join or a top-N, or a debezium-json source's changes)",
                ref.left->pos, "a processor takes appended rows; aggregate in the processor instead");
  }
  Catalog::ProcessorPtr processor = ctx_.catalog->findProcessor(ref.processor);
  if (!processor) {
    SqlError err(sqlstate::kUndefinedObject,
                 fmt::format("processor {} does not exist", ref.processor), ref.processorPos);
    std::vector<std::string> names;
    for (const auto& p : ctx_.catalog->processors()) names.push_back(p->name);
    std::string close = closestName(ref.processor, names);
    err.withHint(close.empty() ? std::string("CREATE PROCESSOR makes one; SHOW PROCESSORS "
                                             "lists them")
                               : fmt::format("perhaps you meant \"{}\"", close));
    throw err;
  }
  PreProjection pre;
  for (const ScopeColumn& c : in.scope.columns) {
    if (!c.hidden) pre.columns.push_back(OutputColumn{c.name, c.expr, SqlError::npos});
  }
  const int inputColumns = static_cast<int>(pre.columns.size());
  std::vector<std::string> keyNames;
  ExprBinder binder(in.scope, ExprContext::GroupBy, functions());
  for (const auto& k : ref.partitionBy) {
    const int at = pre.add(binder.bind(*k), *k);
    keyNames.push_back(pre.columns[static_cast<size_t>(at)].name);
  }
  const NodePtr& preNode = pre.project(in.node);

  TransformSpec op;
  for (int i = 0; i < inputColumns; ++i) {
    op.inputSchema.columns.push_back(preNode->schema.columns[static_cast<size_t>(i)]);
  }
  op.inputColumns = inputColumns;
  for (size_t i = 0; i < keyNames.size(); ++i) {
    const int at = inputColumns + static_cast<int>(i);
    const Column& c = preNode->schema.columns[static_cast<size_t>(at)];
    op.partitionKeys.push_back(pre.ref(at));
    op.output.columns.push_back(Column{keyNames[i], c.type, false});
  }
  for (const Column& c : processor->returns.columns) {
    for (size_t i = 0; i < keyNames.size(); ++i) {
      if (iequals(keyNames[i], c.name)) {
        throw SqlError(sqlstate::kDuplicateColumn,
                       fmt::format("column \"{}\" is both a partition key and a column processor "
                                   "{} returns",
                                   c.name, processor->name),
                       ref.partitionBy[i]->pos,
                       "partition by an expression with another name, e.g. a subquery's "
                       "column renamed with AS");
      }
    }
    op.output.columns.push_back(c);
  }
  op.processor = processor->python;
  for (const auto& o : ref.options) op.options.emplace_back(o.key, o.value);
  std::vector<ExprPtr> keys = op.partitionKeys;
  Schema output = op.output;
  NodePtr node = operatorNode({preNode}, std::move(op), {std::move(keys)});

  Relation rel;
  rel.node = node;
  rel.name = ref.alias.empty() ? processor->name : ref.alias;
  rel.scope = scopeFromSchema(output, rel.name);
  rel.sourceName = in.sourceName;
  rel.identity = true;
  rel.pos = ref.pos;
  return rel;
}

// FROM s FOR OFFSETS BETWEEN 'earliest' AND 'latest': a bounded query's read
// of a Kafka source from its earliest offsets to the end offsets it has when
// the query starts (connectors/kafka/bounded_source.h).
void QueryBinder::checkOffsetRange(const ast::TableRef& ref) const {
  const Catalog& catalog = *ctx_.catalog;
  if (!ctx_.boundedRelation) {
    const std::string where = mode_ == Mode::Flow ? "flow" : "live query";
    unsupported("FOR OFFSETS BETWEEN in a " + where, ref.offsetRangePos,
                mode_ == Mode::Flow
                    ? "a flow reads a source as it grows; FOR OFFSETS BETWEEN is for a SELECT"
                    : "a bounded SELECT reads only tables and sources FOR OFFSETS BETWEEN ...; "
                      "read every source of the query that way");
  }
  Catalog::SourcePtr source = catalog.findSource(ref.name);
  if (!source) {
    if (catalog.findTable(ref.name) || ctx_.boundedRelation(ref.name)) {
      throw SqlError(sqlstate::kWrongObjectType,
                     fmt::format("\"{}\" is not a source: FOR OFFSETS BETWEEN reads a source",
                                 ref.name),
                     ref.pos, "a table is read whole: drop FOR OFFSETS BETWEEN ...");
    }
    return;  // "does not exist", below
  }
  if (!iequals(source->connector, "kafka")) {
    unsupported(fmt::format("FOR OFFSETS BETWEEN over a {} source", source->connector), ref.pos,
                "it reads a Kafka source's partitions");
  }
  if (!iequals(ref.fromOffsets, "earliest")) {
    throw SqlError(sqlstate::kInvalidParameterValue,
                   fmt::format("FOR OFFSETS BETWEEN starts at 'earliest', not '{}'",
                               ref.fromOffsets),
                   ref.fromOffsetsPos, "FOR OFFSETS BETWEEN 'earliest' AND 'latest'");
  }
  if (!iequals(ref.toOffsets, "latest")) {
    throw SqlError(sqlstate::kInvalidParameterValue,
                   fmt::format("FOR OFFSETS BETWEEN ends at 'latest', not '{}'", ref.toOffsets),
                   ref.toOffsetsPos,
                   "'latest' is each partition's end offset when the query starts");
  }
}

Relation QueryBinder::bindNamed(const ast::TableRef& ref) const {
  const Catalog& catalog = *ctx_.catalog;
  // FROM pg_catalog.pg_class is qualified as pg_class, as in PostgreSQL
  // (pg_class.relname, or pg_catalog.pg_class.relname: ExprBinder::bindColumn).
  const std::string qualifier =
      ref.alias.empty() ? ref.name.substr(ref.name.rfind('.') + 1) : ref.alias;
  Relation rel;
  rel.name = qualifier;
  rel.pos = ref.pos;
  if (ref.on) {  // a set-returning function (ast_builder.cpp)
    unsupported(fmt::format("a set-returning function ({}) in FROM", ref.name),
                ref.pos,
                "it is read in a subquery of a bounded SELECT's select list: "
                "ARRAY(SELECT x FROM unnest(a) x)");
  }
  if (ref.offsetRange) checkOffsetRange(ref);
  if (ctx_.boundedRelation) {
    // A bounded query reads a finite relation as a source of its own
    // (planner/bounded_relation.h), whose rows the same operators take.
    if (std::shared_ptr<const BoundedRelation> bounded = ctx_.boundedRelation(ref.name)) {
      auto def = std::make_shared<SourceDef>();
      def->name = ref.name;
      def->connector = kBoundedConnector;
      def->schema = bounded->schema();
      rel.node = scanNode(def);
      rel.scope = scopeFromSchema(def->schema, qualifier);
      rel.sourceName = def->name;
      rel.identity = true;
      return rel;
    }
  }
  if (Catalog::SourcePtr source = catalog.findSource(ref.name)) {
    // A flow recorded before avro and protobuf floats were FLOATs reads them
    // as DOUBLEs still (format_floats.h).
    const OptionEntry* floats = ctx_.session.find(kFormatFloatsSetting);
    if (mode_ == Mode::Flow && floats && floats->value == "off")
      source = withDoubleFormatFloats(source);
    rel.node = scanNode(source);
    rel.scope = scopeFromSchema(source->schema, qualifier);
    if (source->watermark && source->watermark->column >= 0 &&
        static_cast<size_t>(source->watermark->column) < rel.scope.columns.size()) {
      rel.eventTime = rel.scope.columns[static_cast<size_t>(source->watermark->column)].expr;
    }
    rel.sourceName = source->name;
    rel.identity = true;
    return rel;
  }
  if (Catalog::TablePtr table = catalog.findTable(ref.name)) {
    rel.table = table;
    rel.scope = scopeFromSchema(table->schema, qualifier);
    return rel;
  }
  if (Catalog::FlowPtr view = catalog.findFlow(ref.name); view && view->materializedView) {
    // A flow (or another view) reads the view's changelog (planner/view_input.h).
    if (mode_ == Mode::Flow) {
      Catalog::SourcePtr source = viewInputSource(*view, ctx_);
      rel.node = scanNode(source);
      rel.scope = scopeFromSchema(source->schema, qualifier);
      rel.sourceName = source->name;
      rel.identity = true;
      return rel;
    }
    // A bounded query reads a view through its lookup (above); a live query
    // cannot yet.
    throw SqlError(sqlstate::kFeatureNotSupported,
                   fmt::format("materialized view \"{}\" cannot be read by a live query yet",
                               ref.name),
                   ref.pos,
                   "read the view with a SELECT of its own (docs/sql.md, \"Materialized views\")");
  }
  // pg_catalog.pg_class, information_schema.tables, and pg_class alone when
  // the catalog has no such name: the catalog as PostgreSQL shows it, a
  // static table computed for this query by the session (common/pg_session.h).
  if (const PgSession* pg = currentPgSession()) {
    if (std::optional<PgSession::Relation> sys = pg->systemRelation(ref.name)) {
      auto table = std::make_shared<TableDef>();
      table->name = ref.name.substr(ref.name.find('.') + 1);
      table->schema = std::move(sys->columns);
      table->rows = std::move(sys->rows);
      rel.name = ref.alias.empty() ? table->name : ref.alias;
      rel.scope = scopeFromSchema(table->schema, rel.name);
      rel.table = std::move(table);
      return rel;
    }
  }
  SqlError err(sqlstate::kUndefinedTable, fmt::format("relation \"{}\" does not exist", ref.name),
               ref.pos);
  if (catalog.findSink(ref.name)) {
    err.withHint(fmt::format("\"{}\" is a sink: flows write INTO sinks", ref.name));
  } else if (Catalog::FlowPtr flow = catalog.findFlow(ref.name)) {
    // A flow keeps no rows to read: they are in its sink.
    std::string where;
    if (Catalog::SinkPtr sink = catalog.findSink(flow->sink)) {
      for (const char* key : {"topic", "path"}) {
        if (sink->options.has(key)) {
          where = fmt::format(" ({} '{}')", key, sink->options.getString(key));
          break;
        }
      }
    }
    err.withHint(fmt::format("\"{}\" is a flow: its rows go to sink \"{}\"{}; read them with a "
                             "source on that topic",
                             flow->name, flow->sink, where));
  } else {
    std::vector<std::string> names;
    for (const auto& s : catalog.sources()) names.push_back(s->name);
    for (const auto& t : catalog.tables()) names.push_back(t->name);
    std::string close = closestName(ref.name, names);
    if (!close.empty()) err.withHint(fmt::format("perhaps you meant \"{}\"", close));
  }
  throw err;
}

}  // namespace rtsql::planner_detail

namespace rtsql {

void checkSelectListLength(size_t count, size_t firstExtraPos) {
  if (count <= kMaxSelectListEntries) return;
  throw SqlError(sqlstate::kTooManyColumns,
                 fmt::format("target lists can have at most {} entries", kMaxSelectListEntries),
                 firstExtraPos, "Select fewer columns.");
}

}  // namespace rtsql
