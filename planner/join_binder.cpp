// Binding of joins. A stream joined with a static table is a broadcast hash
// join that runs in the stream's stage: the table's rows travel with the plan.
// Two streams join in a stage of their own, each shuffled by its join keys.
// When the ON condition bounds the time between matching rows, `ON a.id = b.id
// AND b.ts BETWEEN a.ts AND a.ts + INTERVAL '1' MINUTE` (or the same with >= /
// <=, offsets on either side), it is an interval join whose state the
// watermark drops; without a bound on both sides it is a regular join that
// keeps every row of both sides (or drops them by the flow's 'state.ttl'),
// which may be an outer join of any kind and may read a changelog (the
// result of an aggregation or of another regular join, or a changelog source
// such as debezium-json, whose retractions are found in the join's state
// without the hidden Kafka columns of the record that carried them).
//
// The ON condition is split into conjuncts. An equality between an expression
// of one side and one of the other is a key; for two streams, a comparison
// between the two sides' TIMESTAMP expressions (plus or minus constant
// intervals) is a time bound; everything else is the residual, evaluated on
// the joined row.
#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "planner/logical_plan.h"

namespace rtsql::planner_detail {

namespace {

enum class Side { None, Left, Right, Both };

bool bindsIn(const ast::Expr& e, const Scope& scope, const UserFunctions& functions) {
  try {
    ExprBinder(scope, ExprContext::JoinOn, functions).bind(e);
    return true;
  } catch (const SqlError&) {
    return false;
  }
}

// Which side's columns an expression reads: None for a constant, Both when it
// needs columns of both sides.
Side sideOf(const ast::Expr& e, const Scope& left, const Scope& right,
            const UserFunctions& functions) {
  bool l = bindsIn(e, left, functions), r = bindsIn(e, right, functions);
  if (l && r) return Side::None;
  if (l) return Side::Left;
  if (r) return Side::Right;
  return Side::Both;
}

bool isEquality(const ast::Expr& e) {
  return e.kind == ast::ExprKind::Binary && e.args.size() == 2 && (e.op == "=" || e.op == "==");
}

// Join keys compare equal only with equal types: numeric keys are widened.
void alignKeys(ExprPtr& a, ExprPtr& b, size_t pos) {
  const DataTypePtr &ta = a->type(), &tb = b->type();
  if (ta->equals(*tb) || ta->id == TypeId::Null || tb->id == TypeId::Null) return;
  if (ta->isNumeric() && tb->isNumeric()) {
    DataTypePtr t = widerNumericType(*ta, *tb);
    if (!ta->equals(*t)) a = makeCast(a, t, pos);
    if (!tb->equals(*t)) b = makeCast(b, t, pos);
    return;
  }
  throw SqlError(sqlstate::kDatatypeMismatch,
                 fmt::format("join keys of types {} and {} cannot be compared", ta->toString(),
                             tb->toString()),
                 pos, "CAST one side to the other's type");
}

void checkBoolean(const ExprPtr& e, size_t pos) {
  TypeId t = e->type()->id;
  if (t != TypeId::Boolean && t != TypeId::Null) {
    throw SqlError(sqlstate::kDatatypeMismatch,
                   fmt::format("argument of JOIN/ON must be type BOOLEAN, not type {}",
                               e->type()->toString()),
                   pos);
  }
}

ExprPtr conjunction(const std::vector<ExprPtr>& parts) {
  ExprPtr out;
  for (const auto& p : parts) out = out ? makeAnd(out, p, SqlError::npos) : p;
  return out;
}

std::string joinText(const std::vector<std::string>& parts, const char* sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out += sep;
    out += parts[i];
  }
  return out;
}

// `t`, `t + INTERVAL ...`, `t - INTERVAL ...` or `INTERVAL ... + t`, t a
// TIMESTAMP expression over one side.
struct TimeTerm {
  Side side = Side::None;
  const ast::Expr* time = nullptr;
  int64_t offset = 0;
  // TIMESTAMP or TIMESTAMP_NTZ: both sides' times must be of one, so that a
  // bound is a difference of instants, or of wall clocks, never of a mix.
  TypeId type = TypeId::Timestamp;
};

std::optional<int64_t> constantInterval(const ast::Expr& e, const UserFunctions& functions) {
  try {
    const Scope empty;
    ExprPtr v = ExprBinder(empty, ExprContext::JoinOn, functions).bind(e);
    if (v->isConstant() && v->type()->id == TypeId::Interval) {
      Value x = v->eval(Row{});
      if (!x.isNull()) return x.asInt();
    }
  } catch (const SqlError&) {
  }
  return std::nullopt;
}

// Positions on the side's rows of its hidden Kafka metadata columns
// (StreamJoinSpec::leftRecordColumns): what a retraction does not compare.
std::vector<int> recordColumns(const Scope& scope) {
  std::vector<int> out;
  for (const ScopeColumn& c : scope.columns) {
    if (!c.hidden || !c.expr) continue;
    bool meta = false;
    for (const char* name : {kMetaKey, kMetaTimestamp, kMetaPartition, kMetaOffset, kMetaHeaders})
      meta = meta || iequals(c.name, name);
    const int at = columnRefIndex(*c.expr);
    if (meta && at >= 0 && std::find(out.begin(), out.end(), at) == out.end()) out.push_back(at);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

Relation QueryBinder::bindJoin(const ast::TableRef& ref) const {
  if (!ref.left || !ref.right) throw InternalError("join without two sides");
  Relation left = bindFrom(*ref.left);
  Relation right = bindFrom(*ref.right);
  size_t pos = ref.right->pos;
  if (ref.joinType == ast::JoinType::Cross || !ref.on) {
    unsupported("a join without ON", pos, "join on an equality: JOIN t ON s.k = t.k");
  }
  if (left.table && right.table) {
    unsupported("a join of two static tables", pos, "a flow joins a source's rows with a table");
  }
  if ((left.table || right.table) && (left.changelog || right.changelog)) {
    unsupported("a join of a static table with the result of an aggregation", pos,
                "join the sources first, then aggregate");
  }
  if (left.table || right.table) return bindBroadcastJoin(ref, std::move(left), std::move(right));
  return bindStreamJoin(ref, std::move(left), std::move(right));
}

Relation QueryBinder::bindBroadcastJoin(const ast::TableRef& ref, Relation left,
                                        Relation right) const {
  const bool tableLeft = left.table != nullptr;
  const Relation& stream = tableLeft ? right : left;
  const Relation& table = tableLeft ? left : right;
  size_t pos = ref.right->pos;
  bool outer = false;
  switch (ref.joinType) {
    case ast::JoinType::Inner:
    case ast::JoinType::Cross:
      break;
    case ast::JoinType::Left:
    case ast::JoinType::Right:
      if ((ref.joinType == ast::JoinType::Left) == tableLeft) {
        throw SqlError(sqlstate::kFeatureNotSupported,
                       fmt::format("an outer join that keeps every row of static table \"{}\" is "
                                   "not supported",
                                   table.table->name),
                       pos)
            .withHint(fmt::format("keep the stream's rows instead: FROM {} LEFT JOIN {} ON ...",
                                  stream.name.empty() ? "<source>" : stream.name, table.name));
      }
      outer = true;
      break;
    case ast::JoinType::Full:
      unsupported("FULL JOIN with a static table", pos, "use LEFT JOIN with the stream on the left");
  }

  // The joined row is the stream's row followed by the table's columns; the
  // scope keeps the order the query wrote (for `*`).
  const int width = static_cast<int>(stream.node->schema.size());
  Scope tableInJoin = table.scope;
  for (size_t i = 0; i < tableInJoin.columns.size(); ++i) {
    ScopeColumn& c = tableInJoin.columns[i];
    c.expr = makeColumnRef(width + static_cast<int>(i), c.type, c.name);
  }
  Scope joined;
  const Scope& first = tableLeft ? tableInJoin : stream.scope;
  const Scope& second = tableLeft ? stream.scope : tableInJoin;
  joined.columns = first.columns;
  joined.columns.insert(joined.columns.end(), second.columns.begin(), second.columns.end());
  const Scope display = displayScope(joined);

  std::vector<const ast::Expr*> conjuncts;
  splitConjuncts(*ref.on, conjuncts);
  BroadcastJoinSpec op;
  std::vector<ExprPtr> residuals;
  std::vector<std::string> keyLabels, residualLabels;
  for (const ast::Expr* c : conjuncts) {
    ExprPtr whole = ExprBinder(joined, ExprContext::JoinOn, functions()).bind(*c);
    checkBoolean(whole, c->pos);
    std::string text = ExprBinder(display, ExprContext::JoinOn, functions()).bind(*c)->toString();
    if (isEquality(*c)) {
      Side a = sideOf(*c->args[0], stream.scope, table.scope, functions());
      Side b = sideOf(*c->args[1], stream.scope, table.scope, functions());
      if ((a == Side::Left && b == Side::Right) || (a == Side::Right && b == Side::Left)) {
        const ast::Expr& s = a == Side::Left ? *c->args[0] : *c->args[1];
        const ast::Expr& t = a == Side::Left ? *c->args[1] : *c->args[0];
        ExprPtr probe = ExprBinder(stream.scope, ExprContext::JoinOn, functions()).bind(s);
        ExprPtr build = ExprBinder(table.scope, ExprContext::JoinOn, functions()).bind(t);
        alignKeys(probe, build, c->pos);
        op.probeKeys.push_back(probe);
        op.buildKeys.push_back(build);
        // `c.merchant_id = m.id`, the stream side first.
        const ExprBinder shown(display, ExprContext::JoinOn, functions());
        keyLabels.push_back(shown.bind(s)->toString() + " = " + shown.bind(t)->toString());
        continue;
      }
    }
    residuals.push_back(whole);
    residualLabels.push_back(text);
  }
  if (op.probeKeys.empty()) {
    throw SqlError(sqlstate::kFeatureNotSupported,
                   fmt::format("a join with static table \"{}\" needs an equality between a "
                               "column of the stream and a column of the table",
                               table.table->name),
                   ref.on->pos)
        .withHint(fmt::format("JOIN {0} ON <stream column> = {0}.<column>", table.name));
  }
  op.tableRows = table.table->rows ? table.table->rows
                                   : std::make_shared<const std::vector<Row>>();
  op.tableSchema = table.table->schema;
  op.tableName = table.table->name;
  op.leftOuter = outer;
  op.residual = conjunction(residuals);
  op.output = stream.node->schema;
  for (const Column& c : table.table->schema.columns) op.output.columns.push_back(c);
  op.label = "on [" + joinText(keyLabels, ", ") + "]";
  if (!residualLabels.empty()) op.label += " and " + joinText(residualLabels, " AND ");

  Relation out;
  out.node = operatorNode({stream.node}, std::move(op));
  out.scope = std::move(joined);
  out.eventTime = stream.eventTime;
  out.sourceName = stream.sourceName;
  out.identity = stream.identity && !tableLeft;
  out.pos = stream.pos;
  return out;
}

Relation QueryBinder::bindStreamJoin(const ast::TableRef& ref, Relation left,
                                     Relation rightIn) const {
  size_t pos = ref.right->pos;
  // The right side's rows take its scope's shape, so that its columns can be
  // named by position after the left row's.
  const Relation right = materialize(rightIn);
  const int leftWidth = static_cast<int>(left.node->schema.size());
  const int rightWidth = static_cast<int>(right.node->schema.size());
  Scope rightInJoin = right.scope;
  for (size_t i = 0; i < rightInJoin.columns.size(); ++i) {
    ScopeColumn& c = rightInJoin.columns[i];
    c.expr = makeColumnRef(leftWidth + static_cast<int>(i), c.type, c.name);
  }
  Scope joined = left.scope;
  joined.columns.insert(joined.columns.end(), rightInJoin.columns.begin(),
                        rightInJoin.columns.end());
  const Scope display = displayScope(joined);
  const Scope leftDisplay = displayScope(left.scope);
  const Scope rightDisplay = displayScope(right.scope);
  auto shown = [this](const Scope& scope, const ast::Expr& e) {
    return ExprBinder(scope, ExprContext::JoinOn, functions()).bind(e)->toString();
  };

  // Time terms: the side is decided by which side's columns the expression reads.
  std::function<std::optional<TimeTerm>(const ast::Expr&)> timeTerm =
      [&](const ast::Expr& e) -> std::optional<TimeTerm> {
    if (e.kind == ast::ExprKind::Binary && e.args.size() == 2 && (e.op == "+" || e.op == "-")) {
      if (auto iv = constantInterval(*e.args[1], functions())) {
        if (auto t = timeTerm(*e.args[0])) {
          t->offset += e.op == "+" ? *iv : -*iv;
          return t;
        }
      }
      if (e.op == "+") {
        if (auto iv = constantInterval(*e.args[0], functions())) {
          if (auto t = timeTerm(*e.args[1])) {
            t->offset += *iv;
            return t;
          }
        }
      }
    }
    Side side = sideOf(e, left.scope, right.scope, functions());
    if (side != Side::Left && side != Side::Right) return std::nullopt;
    ExprPtr bound =
        ExprBinder(side == Side::Left ? left.scope : right.scope, ExprContext::JoinOn, functions())
            .bind(e);
    const TypeId type = bound->type()->id;
    if (type != TypeId::Timestamp && type != TypeId::TimestampNtz) return std::nullopt;
    return TimeTerm{side, &e, 0, type};
  };

  const ast::Expr* leftTime = nullptr;
  const ast::Expr* rightTime = nullptr;
  std::string leftTimeText, rightTimeText;
  std::optional<int64_t> lower, upper;
  // Records `x op y` as a bound on rightTime - leftTime; false when it is not
  // a comparison of the two sides' times (it is then a residual).
  auto canBound = [&](const TimeTerm& x, const TimeTerm& y) {
    if (x.side == y.side || x.type != y.type) return false;
    const TimeTerm& l = x.side == Side::Left ? x : y;
    const TimeTerm& r = x.side == Side::Left ? y : x;
    std::string lt = shown(leftDisplay, *l.time), rt = shown(rightDisplay, *r.time);
    return (leftTimeText.empty() || lt == leftTimeText) &&
           (rightTimeText.empty() || rt == rightTimeText);
  };
  auto addBound = [&](const TimeTerm& x, std::string op, const TimeTerm& y) {
    // Normalise to `right op left + d`.
    const TimeTerm& l = x.side == Side::Left ? x : y;
    const TimeTerm& r = x.side == Side::Left ? y : x;
    if (x.side == Side::Left) {
      if (op == "<") op = ">";
      else if (op == ">") op = "<";
      else if (op == "<=") op = ">=";
      else if (op == ">=") op = "<=";
    }
    if (!leftTime) {
      leftTime = l.time;
      rightTime = r.time;
      leftTimeText = shown(leftDisplay, *l.time);
      rightTimeText = shown(rightDisplay, *r.time);
    }
    int64_t d = l.offset - r.offset;
    auto raise = [&](int64_t v) { lower = lower ? std::max(*lower, v) : v; };
    auto cap = [&](int64_t v) { upper = upper ? std::min(*upper, v) : v; };
    if (op == ">=") raise(d);
    if (op == ">") raise(d + 1);
    if (op == "<=") cap(d);
    if (op == "<") cap(d - 1);
    if (op == "=") {
      raise(d);
      cap(d);
    }
  };

  StreamJoinSpec op;
  std::vector<ExprPtr> residuals;
  std::vector<std::string> keyLabels, residualLabels;
  // The conjuncts taken as time bounds: residuals after all when the bound
  // is not closed on both sides (the join is then a regular one).
  std::vector<ExprPtr> boundParts;
  std::vector<std::string> boundLabels;
  auto bounded = [&](const ExprPtr& whole, const ast::Expr& c) {
    boundParts.push_back(whole);
    boundLabels.push_back(shown(display, c));
  };
  std::vector<const ast::Expr*> conjuncts;
  splitConjuncts(*ref.on, conjuncts);
  for (const ast::Expr* c : conjuncts) {
    ExprPtr whole = ExprBinder(joined, ExprContext::JoinOn, functions()).bind(*c);
    checkBoolean(whole, c->pos);
    if (isEquality(*c)) {
      // `b.ts = a.ts + INTERVAL ...` is a (point) time bound; other equalities
      // between the sides are keys.
      auto x = timeTerm(*c->args[0]);
      auto y = timeTerm(*c->args[1]);
      if (x && y && (x->offset != 0 || y->offset != 0) && canBound(*x, *y)) {
        addBound(*x, "=", *y);
        bounded(whole, *c);
        continue;
      }
      Side a = sideOf(*c->args[0], left.scope, right.scope, functions());
      Side b = sideOf(*c->args[1], left.scope, right.scope, functions());
      if ((a == Side::Left && b == Side::Right) || (a == Side::Right && b == Side::Left)) {
        const ast::Expr& l = a == Side::Left ? *c->args[0] : *c->args[1];
        const ast::Expr& r = a == Side::Left ? *c->args[1] : *c->args[0];
        ExprPtr lk = ExprBinder(left.scope, ExprContext::JoinOn, functions()).bind(l);
        ExprPtr rk = ExprBinder(right.scope, ExprContext::JoinOn, functions()).bind(r);
        alignKeys(lk, rk, c->pos);
        op.leftKeys.push_back(lk);
        op.rightKeys.push_back(rk);
        keyLabels.push_back(shown(leftDisplay, l) + " = " + shown(rightDisplay, r));
        continue;
      }
    }
    if (c->kind == ast::ExprKind::Binary && c->args.size() == 2 &&
        (c->op == "<" || c->op == "<=" || c->op == ">" || c->op == ">=")) {
      auto x = timeTerm(*c->args[0]);
      auto y = timeTerm(*c->args[1]);
      if (x && y && canBound(*x, *y)) {
        addBound(*x, c->op, *y);
        bounded(whole, *c);
        continue;
      }
    }
    if (c->kind == ast::ExprKind::Between && !c->negated && c->args.size() == 3) {
      auto v = timeTerm(*c->args[0]);
      auto lo = timeTerm(*c->args[1]);
      auto hi = timeTerm(*c->args[2]);
      // Both ends must name the same time: `b.ts BETWEEN a.ts AND a.expires`
      // bounds b.ts by two different columns of a, which is no interval.
      auto timeText = [&](const TimeTerm& t) {
        return shown(t.side == Side::Left ? leftDisplay : rightDisplay, *t.time);
      };
      if (v && lo && hi && canBound(*v, *lo) && canBound(*v, *hi) &&
          (lo->side != hi->side || timeText(*lo) == timeText(*hi))) {
        addBound(*v, ">=", *lo);
        addBound(*v, "<=", *hi);
        bounded(whole, *c);
        continue;
      }
    }
    residuals.push_back(whole);
    residualLabels.push_back(shown(display, *c));
  }

  const std::string l = left.name.empty() ? "a" : left.name;
  const std::string r = right.name.empty() ? "b" : right.name;
  const std::string example =
      left.eventTime && right.eventTime
          ? fmt::format(
                "ON {0}.id = {1}.id AND {1}.{3} BETWEEN {0}.{2} AND {0}.{2} + INTERVAL "
                "'1' MINUTE",
                l, r, left.eventTime->toString(), right.eventTime->toString())
          : fmt::format("ON {0}.id = {1}.id", l, r);
  if (op.leftKeys.empty()) {
    throw SqlError(sqlstate::kFeatureNotSupported,
                   "a join of two streams needs an equality between a column of each", ref.on->pos)
        .withHint(example);
  }
  op.leftWidth = leftWidth;
  op.rightWidth = rightWidth;
  op.output = left.node->schema;
  for (const Column& c : right.node->schema.columns) op.output.columns.push_back(c);
  // The rows of the output: a changelog when an outer side's NULL row may be
  // replaced or an input row retracted.
  bool changelog = false;
  ExprPtr eventTime = left.eventTime;

  if (!lower || !upper) {
    // A regular join: no bound closes on both sides, so a condition on the
    // times only filters the pairs.
    residuals.insert(residuals.end(), boundParts.begin(), boundParts.end());
    residualLabels.insert(residualLabels.end(), boundLabels.begin(), boundLabels.end());
    op.unbounded = true;
    // The watermark columns, for 'state.ttl'.
    op.leftTime = left.eventTime;
    op.rightTime = right.eventTime;
    op.leftOuter = ref.joinType == ast::JoinType::Left || ref.joinType == ast::JoinType::Full;
    op.rightOuter = ref.joinType == ast::JoinType::Right || ref.joinType == ast::JoinType::Full;
    op.leftRecordColumns = recordColumns(left.scope);
    op.rightRecordColumns = recordColumns(right.scope);
    changelog = left.changelog || right.changelog || op.leftOuter || op.rightOuter;
    // A row may pair with one of the other side that arrives any time
    // later, far behind the watermark: the output has no event time that a
    // watermark could bound (a window over it is refused, not fed late rows).
    eventTime = nullptr;
    op.residual = conjunction(residuals);
    op.label = fmt::format("on [{}]", joinText(keyLabels, ", "));
    if (!residualLabels.empty()) op.label += " and " + joinText(residualLabels, " AND ");
  } else {
    if (left.changelog || right.changelog) {
      throw SqlError(sqlstate::kFeatureNotSupported,
                     "a join with a time bound cannot read the result of an aggregation that "
                     "updates its rows",
                     left.changelog ? ref.left->pos : pos)
          .withHint(
              "aggregate with EMIT ON WINDOW CLOSE (its rows are final), or move the "
              "time condition from ON to WHERE to join without a bound");
    }
    if (ref.joinType == ast::JoinType::Right || ref.joinType == ast::JoinType::Full) {
      unsupported(fmt::format("{} JOIN of two streams with a time bound",
                              ref.joinType == ast::JoinType::Right ? "RIGHT" : "FULL"),
                  pos, "swap the sides and use LEFT JOIN");
    }
    auto needTime = [&](const Relation& side, size_t at) {
      if (side.eventTime) return;
      Catalog::SourcePtr source =
          ctx_.catalog ? ctx_.catalog->findSource(side.sourceName) : nullptr;
      if (!source || !source->watermark)
        throwNeedsWatermark("stream-stream join", side.sourceName, at);
      // The source has a watermark, but these rows do not carry its column.
      throw SqlError(sqlstate::kInvalidColumnReference,
                     fmt::format("a join with a time bound needs the event time of both sides, "
                                 "and the rows of \"{}\" have none",
                                 side.name.empty() ? side.sourceName : side.name),
                     at)
          .withHint(
              "an aggregation's or a regular join's rows have no event time: move the "
              "time condition from ON to WHERE to join without a bound");
    };
    needTime(left, ref.left->pos);
    needTime(right, pos);
    if (*lower > *upper) {
      throw SqlError(sqlstate::kInvalidParameterValue,
                     "the join's time bound is empty: no pair of rows can match", ref.on->pos);
    }

    op.leftTime = ExprBinder(left.scope, ExprContext::JoinOn, functions()).bind(*leftTime);
    op.rightTime = ExprBinder(right.scope, ExprContext::JoinOn, functions()).bind(*rightTime);
    op.lowerBoundMicros = *lower;
    op.upperBoundMicros = *upper;
    op.leftOuter = ref.joinType == ast::JoinType::Left;
    op.residual = conjunction(residuals);
    auto offset = [&](int64_t micros) {
      return fmt::format("{} {} {}", leftTimeText, micros < 0 ? "-" : "+",
                         formatDuration(micros < 0 ? -micros : micros));
    };
    op.label = fmt::format("on [{}] {} in [{}, {}]", joinText(keyLabels, ", "), rightTimeText,
                           offset(*lower), offset(*upper));
    if (!residualLabels.empty()) op.label += " and " + joinText(residualLabels, " AND ");
  }

  std::vector<std::vector<ExprPtr>> keys = {op.leftKeys, op.rightKeys};
  NodePtr node = operatorNode({left.node, right.node}, std::move(op), std::move(keys));

  Relation out;
  out.node = node;
  out.scope = std::move(joined);
  out.eventTime = eventTime;
  out.changelog = changelog;
  out.sourceName = left.sourceName;
  out.identity = left.identity;
  out.pos = left.pos;
  return out;
}

}  // namespace rtsql::planner_detail
