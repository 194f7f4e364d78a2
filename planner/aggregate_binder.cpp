// Binding of grouped queries: GROUP BY keys and windows, aggregate calls in the
// select list and HAVING, and the grouping rule (every column outside an
// aggregate must be a group key, 42803).
//
// The plan is [input -> Project(keys, window time, aggregate arguments)]
// =shuffle(keys)=> [Aggregate -> Filter(HAVING) -> ...]. The select list and
// HAVING are bound against the aggregate's output: a hook on the expression
// binder replaces aggregate calls and grouping expressions by references to
// the aggregate's output columns before the binder descends into them.
#include <fmt/format.h>

#include <optional>

#include "planner/logical_plan.h"

namespace rtsql::planner_detail {

namespace {

DataTypePtr windowType() {
  static const DataTypePtr type = DataType::structOf(
      {{"start", DataType::of(TypeId::Timestamp)}, {"end", DataType::of(TypeId::Timestamp)}});
  return type;
}

bool isWindowCall(const ast::Expr& e) {
  return e.kind == ast::ExprKind::Call &&
         (iequals(e.name, "window") || iequals(e.name, "session_window"));
}

bool scopeHasName(const Scope& scope, std::string_view name) {
  for (const auto& c : scope.columns) {
    if (iequals(c.name, name)) return true;
  }
  return scope.hasQualifier(name);
}

std::string columnText(const ast::Expr& e) {
  std::string out;
  for (size_t i = 0; i < e.parts.size(); ++i) {
    if (i) out += '.';
    out += e.parts[i];
  }
  return out;
}

struct BoundWindow {
  WindowSpec spec;      // time over the input relation's rows
  std::string fingerprint;
  size_t pos = SqlError::npos;
};

// window(time, size [, slide]) or session_window(time, gap).
BoundWindow bindWindow(const ast::Expr& call, const Scope& scope, const Scope& fingerprints) {
  std::string name = toLower(call.name);
  bool session = name == "session_window";
  const char* usage = session ? "session_window(ts, '5 minutes')"
                              : "window(ts, '10 seconds') or window(ts, '1 minute', '10 seconds')";
  if (!session && call.args.size() == 4) {
    throw SqlError(sqlstate::kFeatureNotSupported,
                   "window() with a start offset is not supported yet", call.args[3]->pos);
  }
  if (call.args.size() < 2 || call.args.size() > (session ? 2u : 3u)) {
    throw SqlError(sqlstate::kUndefinedFunction,
                   fmt::format("{}() takes {} arguments", name, session ? "2" : "2 or 3"),
                   call.pos, fmt::format("write {}", usage));
  }
  BoundWindow out;
  out.pos = call.pos;
  ExprPtr time = ExprBinder(scope, ExprContext::GroupBy).bind(*call.args[0]);
  if (time->type()->id != TypeId::Timestamp) {
    throw SqlError(sqlstate::kDatatypeMismatch,
                   fmt::format("the time column of {}() must be TIMESTAMP, not {}", name,
                               time->type()->toString()),
                   call.args[0]->pos, "use the source's event-time column, e.g. the WATERMARK column");
  }
  auto interval = [&](const ast::Expr& a, const char* what) -> int64_t {
    ExprPtr v = ExprBinder(scope, ExprContext::GroupBy).bind(a);
    int64_t micros = 0;
    if (v->isConstant() && v->type()->id == TypeId::String) {
      micros = parseInterval(v->eval(Row{}).asString(), "", a.pos);
    } else if (v->isConstant() && v->type()->id == TypeId::Interval) {
      micros = v->eval(Row{}).asInt();
    } else {
      throw SqlError(sqlstate::kDatatypeMismatch,
                     fmt::format("the {} of {}() must be a constant interval such as '10 seconds'",
                                 what, name),
                     a.pos);
    }
    if (micros <= 0) {
      throw SqlError(sqlstate::kInvalidParameterValue,
                     fmt::format("the {} of {}() must be positive", what, name), a.pos);
    }
    return micros;
  };
  if (session) {
    out.spec.kind = WindowKind::Session;
    out.spec.gapMicros = interval(*call.args[1], "gap");
  } else {
    out.spec.sizeMicros = interval(*call.args[1], "size");
    out.spec.slideMicros =
        call.args.size() == 3 ? interval(*call.args[2], "slide") : out.spec.sizeMicros;
    if (out.spec.slideMicros > out.spec.sizeMicros) {
      throw SqlError(sqlstate::kInvalidParameterValue,
                     "the slide of window() must not be longer than its size", call.args[2]->pos,
                     "rows between two windows would belong to none; use a slide <= the size");
    }
    out.spec.kind =
        out.spec.slideMicros == out.spec.sizeMicros ? WindowKind::Tumbling : WindowKind::Sliding;
  }
  out.spec.time = time;
  out.fingerprint = fmt::format(
      "{}({},{},{},{})", name,
      ExprBinder(fingerprints, ExprContext::General).bind(*call.args[0])->toString(),
      out.spec.sizeMicros, out.spec.slideMicros, out.spec.gapMicros);
  return out;
}

struct GroupKey {
  std::string name;
  ExprPtr expr;  // over the input relation's rows
  std::string fingerprint;
};

struct BoundAggregate {
  AggregateCall call;  // arg and filter over the input relation's rows
  std::string fingerprint;
  std::string argFingerprint;
  std::string filterFingerprint;    // empty without FILTER
  std::string argText, filterText;  // how EXPLAIN names the argument and the filter
  std::string name;
  ExprPtr ref;  // the column of the aggregate's output
};

}  // namespace

bool readsSessionUpdates(const NodePtr& node) {
  if (!node) return false;
  if (node->kind == Node::Kind::Operator && node->op.is<AggregateSpec>()) {
    const AggregateSpec& a = node->op.as<AggregateSpec>();
    if (a.window.kind == WindowKind::Session && !a.emitOnWindowClose) return true;
  }
  for (const NodePtr& in : node->inputs) {
    if (readsSessionUpdates(in)) return true;
  }
  return false;
}

void bindAggregateCall(const ast::Expr& e, const std::string& fname, const Scope& scope,
                       AggregateCall& call) {
  if (e.star) {
    if (fname != "count") {
      throw SqlError(sqlstate::kSyntaxError, fmt::format("{}(*) is not allowed", fname), e.pos,
                     "only count(*) takes *");
    }
    call.function = AggregateFunction::CountStar;
    call.resultType = DataType::of(TypeId::BigInt);
    return;
  }
  if (e.args.size() != 1) {
    throw SqlError(sqlstate::kUndefinedFunction,
                   fmt::format("{}() takes exactly one argument", fname), e.pos);
  }
  ExprPtr arg = ExprBinder(scope, ExprContext::AggregateArg).bind(*e.args[0]);
  const DataTypePtr& t = arg->type();
  auto mismatch = [&](const char* wanted) {
    return SqlError(sqlstate::kDatatypeMismatch,
                    fmt::format("function {}() needs {}, not {}", fname, wanted, t->toString()),
                    e.args[0]->pos);
  };
  if (fname == "count") {
    call.function = AggregateFunction::Count;
    call.resultType = DataType::of(TypeId::BigInt);
  } else if (fname == "sum") {
    call.function = AggregateFunction::Sum;
    if (t->isIntegral() || t->id == TypeId::Null) {
      call.resultType = DataType::of(TypeId::BigInt);
    } else if (t->id == TypeId::Double) {
      call.resultType = DataType::of(TypeId::Double);
    } else if (t->id == TypeId::Decimal) {
      // Spark: DECIMAL(p, s) sums to DECIMAL(p + 10, s), at most 38 digits.
      auto r = decimal::sumType({t->precision, t->scale});
      call.resultType = DataType::decimal(r.precision, r.scale);
    } else {
      throw mismatch("a number");
    }
  } else if (fname == "avg") {
    call.function = AggregateFunction::Avg;
    if (!t->isNumeric() && t->id != TypeId::Null) throw mismatch("a number");
    if (t->id == TypeId::Decimal) {
      // Spark: the average of DECIMAL(p, s) is DECIMAL(p + 4, s + 4).
      auto r = decimal::avgType({t->precision, t->scale});
      call.resultType = DataType::decimal(r.precision, r.scale);
    } else {
      call.resultType = DataType::of(TypeId::Double);
    }
  } else {
    call.function = fname == "min" ? AggregateFunction::Min : AggregateFunction::Max;
    if (t->id == TypeId::Array || t->id == TypeId::Struct) throw mismatch("a comparable value");
    call.resultType = t;
  }
  call.arg = std::move(arg);
}

BoundQuery QueryBinder::bindAggregate(const ast::Select& s, Relation rel,
                                      RankedAggregate* ranked) const {
  size_t groupPos = s.groupBy.empty() ? s.pos : s.groupBy[0]->pos;
  if (rel.changelog && readsSessionUpdates(rel.node)) {
    unsupported("an aggregation over the updates of a session-window aggregation", groupPos,
                "add EMIT ON WINDOW CLOSE to the session-window aggregation, so that it emits "
                "each session once");
  }
  const Scope fpScope = fingerprintScope(rel.scope);
  // Over an aggregation's result, the columns of the relation are references
  // to the inner aggregation's output, whose text is the inner call
  // (`count(*)`): calls print their arguments by the relation's names instead.
  const Scope shownScope = displayScope(rel.scope);
  auto shown = [&](const ast::Expr& e, const ExprPtr& bound) {
    return rel.changelog ? ExprBinder(shownScope, ExprContext::AggregateArg).bind(e)->toString()
                         : bound->toString();
  };
  auto fingerprint = [&](const ast::Expr& e) {
    return ExprBinder(fpScope, ExprContext::General).bind(e)->toString();
  };

  // GROUP BY items: expressions, a select item's alias or its ordinal (as in
  // Spark), and at most one window.
  std::vector<GroupKey> keys;
  std::optional<BoundWindow> window;
  size_t windowAt = 0;  // how many keys precede the window in GROUP BY
  for (const auto& item : s.groupBy) {
    const ast::Expr* e = item.get();
    if (e->kind == ast::ExprKind::Literal && e->literal.kind == ast::LiteralKind::Integer) {
      size_t ordinal = 0;
      try {
        ordinal = std::stoul(e->literal.text);
      } catch (const std::exception&) {
        ordinal = 0;
      }
      if (ordinal < 1 || ordinal > s.items.size() ||
          s.items[ordinal - 1].expr->kind == ast::ExprKind::Star) {
        throw SqlError(sqlstate::kInvalidColumnReference,
                       fmt::format("GROUP BY position {} is not in select list", e->literal.text),
                       e->pos);
      }
      e = s.items[ordinal - 1].expr.get();
    } else if (e->kind == ast::ExprKind::Column && e->parts.size() == 1 &&
               !scopeHasName(rel.scope, e->parts[0])) {
      for (const auto& si : s.items) {
        if (iequals(si.alias, e->parts[0])) {
          e = si.expr.get();
          break;
        }
      }
    }
    if (isWindowCall(*e)) {
      if (window) {
        throw SqlError(sqlstate::kFeatureNotSupported, "only one window per GROUP BY is supported",
                       e->pos);
      }
      window = bindWindow(*e, rel.scope, fpScope);
      windowAt = keys.size();
      continue;
    }
    ExprPtr key = ExprBinder(rel.scope, ExprContext::GroupBy).bind(*e);
    std::string fp = fingerprint(*e);
    bool duplicate = false;
    for (const auto& k : keys) duplicate = duplicate || k.fingerprint == fp;
    if (duplicate) continue;
    std::string name = e->kind == ast::ExprKind::Column && !e->parts.empty() ? e->parts.back()
                       : e->kind == ast::ExprKind::Field                     ? e->name
                                                                             : key->toString();
    keys.push_back(GroupKey{name, key, fp});
  }
  if (window && rel.changelog) {
    unsupported("a windowed aggregation over the result of another aggregation", window->pos,
                "window the inner aggregation with EMIT ON WINDOW CLOSE, so that its rows are "
                "final, or drop the outer window");
  }
  if (window && !rel.eventTime) {
    throwNeedsWatermark("windowed aggregation", rel.sourceName, window->pos);
  }
  if (s.emitOnWindowClose && !window) {
    throw SqlError(sqlstate::kFeatureNotSupported,
                   "EMIT ON WINDOW CLOSE needs a window in GROUP BY", groupPos)
        .withHint("GROUP BY window(ts, '1 minute'), ... EMIT ON WINDOW CLOSE");
  }

  // References to the aggregate's output: keys, the window, then aggregates.
  const int keyCount = static_cast<int>(keys.size());
  const int aggBase = keyCount + (window ? 1 : 0);
  std::vector<ExprPtr> keyRefs;
  for (int i = 0; i < keyCount; ++i) {
    const GroupKey& k = keys[static_cast<size_t>(i)];
    keyRefs.push_back(makeColumnRef(i, k.expr->type(), k.name));
  }
  ExprPtr windowRef = window ? makeColumnRef(keyCount, windowType(), "window") : nullptr;

  std::vector<BoundAggregate> aggregates;
  auto aggregateRef = [&](const ast::Expr& e) -> ExprPtr {
    std::string fname = toLower(e.name);
    BoundAggregate agg;
    if (e.distinct && window) {
      unsupported(fmt::format("{}(DISTINCT ...) in a windowed aggregation", fname), e.pos,
                  "deduplicate first: SELECT window, k, count(*) FROM (SELECT DISTINCT ON (k, x) "
                  "* FROM ...) GROUP BY window(...), k");
    }
    bindAggregateCall(e, fname, rel.scope, agg.call);
    if (e.star) {
      agg.fingerprint = "count(*)";
      agg.name = "count(*)";
    } else {
      AggregateCall& call = agg.call;
      const ExprPtr& arg = call.arg;
      // min/max of the distinct values are those of all values.
      call.distinct = e.distinct && call.function != AggregateFunction::Min &&
                      call.function != AggregateFunction::Max;
      const char* distinct = call.distinct ? "DISTINCT " : "";
      agg.argFingerprint = fingerprint(*e.args[0]);
      agg.fingerprint = fname + "(" + distinct + agg.argFingerprint + ")";
      agg.argText = shown(*e.args[0], arg);
      agg.name = fname + "(" + distinct + agg.argText + ")";
    }
    if (e.filter) {
      ExprPtr filter = ExprBinder(rel.scope, ExprContext::AggregateArg).bind(*e.filter);
      TypeId t = filter->type()->id;
      if (t != TypeId::Boolean && t != TypeId::Null) {
        throw SqlError(sqlstate::kDatatypeMismatch,
                       fmt::format("argument of FILTER must be type BOOLEAN, not type {}",
                                   filter->type()->toString()),
                       e.filter->pos);
      }
      agg.call.filter = filter;
      agg.filterFingerprint = fingerprint(*e.filter);
      agg.fingerprint += " FILTER (WHERE " + agg.filterFingerprint + ")";
      agg.filterText = shown(*e.filter, filter);
      agg.name += " FILTER (WHERE " + filterConditionText(agg.filterText) + ")";
    }
    for (const auto& a : aggregates) {
      if (a.fingerprint == agg.fingerprint) return a.ref;
    }
    agg.ref = makeColumnRef(aggBase + static_cast<int>(aggregates.size()), agg.call.resultType,
                            agg.name);
    aggregates.push_back(agg);
    return agg.ref;
  };

  auto notGrouped = [&](const std::string& text, size_t pos) {
    return SqlError(sqlstate::kGroupingError,
                    fmt::format("expression \"{}\" is neither in GROUP BY nor an aggregate", text),
                    pos)
        .withHint(fmt::format("add it to GROUP BY, or aggregate it: max({})", text));
  };
  auto keyFor = [&](const std::string& fp) -> ExprPtr {
    for (size_t i = 0; i < keys.size(); ++i) {
      if (keys[i].fingerprint == fp) return keyRefs[i];
    }
    return nullptr;
  };

  BindHook hook = [&](const ast::Expr& e) -> ExprPtr {
    if (e.kind == ast::ExprKind::Call && (e.star || isAggregateFunction(e.name))) {
      return aggregateRef(e);
    }
    if (isWindowCall(e)) {
      if (window && bindWindow(e, rel.scope, fpScope).fingerprint == window->fingerprint) {
        return windowRef;
      }
      throw SqlError(sqlstate::kGroupingError,
                     fmt::format("{}() here is not the window of GROUP BY", toLower(e.name)), e.pos)
          .withHint("name the grouped window as `window`: SELECT window.start, window.end, ...");
    }
    if (window && e.kind == ast::ExprKind::Column && !e.parts.empty() &&
        iequals(e.parts[0], "window") && !scopeHasName(rel.scope, "window")) {
      ExprPtr r = windowRef;
      for (size_t i = 1; i < e.parts.size(); ++i) r = makeFieldAccess(r, e.parts[i], e.pos);
      return r;
    }
    if (e.kind == ast::ExprKind::Literal || containsAggregate(e) || containsWindow(e)) {
      return nullptr;
    }
    if (e.kind != ast::ExprKind::Column) {
      // An expression over group keys or `window`: a match as a whole, else
      // its parts are bound one by one (where an unknown name is reported).
      try {
        if (ExprPtr key = keyFor(fingerprint(e))) return key;
      } catch (const SqlError&) {
      }
      return nullptr;
    }
    if (ExprPtr key = keyFor(fingerprint(e))) return key;
    // `info.zip` when grouping by the struct `info`.
    for (size_t n = e.parts.size() - 1; n >= 1; --n) {
      ast::Expr prefix;
      prefix.kind = ast::ExprKind::Column;
      prefix.pos = e.pos;
      prefix.parts.assign(e.parts.begin(), e.parts.begin() + static_cast<long>(n));
      std::string fp;
      try {
        fp = fingerprint(prefix);
      } catch (const SqlError&) {
        continue;
      }
      if (ExprPtr key = keyFor(fp)) {
        for (size_t i = n; i < e.parts.size(); ++i) key = makeFieldAccess(key, e.parts[i], e.pos);
        return key;
      }
    }
    throw notGrouped(columnText(e), e.pos);
  };

  const Scope empty;
  ExprBinder post(empty, ExprContext::SelectList, hook);
  std::vector<OutputColumn> outputs;
  for (size_t i = 0; i < s.items.size(); ++i) {
    const ast::SelectItem& item = s.items[i];
    const ast::Expr& e = *item.expr;
    if (ranked && i == ranked->rankItem) {
      ranked->outputsBefore = outputs.size();
      continue;
    }
    if (e.kind == ast::ExprKind::Star) {
      std::vector<OutputColumn> expanded;
      expandStar(rel.scope, e, expanded);
      for (auto& o : expanded) {
        ExprPtr key;
        for (size_t i = 0; i < rel.scope.columns.size() && !key; ++i) {
          if (rel.scope.columns[i].expr == o.expr) key = keyFor(fpScope.columns[i].expr->toString());
        }
        if (!key) throw notGrouped(o.name, e.pos);
        outputs.push_back(OutputColumn{o.name, key, e.pos});
      }
      continue;
    }
    ExprPtr bound = post.bind(e);
    std::string name = item.alias.empty() && isWindowCall(e) ? "window" : outputName(item, *bound);
    outputs.push_back(OutputColumn{name, bound, e.pos});
  }
  if (ranked) {
    for (const ast::Expr* e : ranked->extra) ranked->extraBound.push_back(post.bind(*e));
  }
  ExprPtr having;
  if (s.having) {
    having = post.bind(*s.having);
    TypeId t = having->type()->id;
    if (t != TypeId::Boolean && t != TypeId::Null) {
      throw SqlError(sqlstate::kDatatypeMismatch,
                     fmt::format("argument of HAVING must be type BOOLEAN, not type {}",
                                 having->type()->toString()),
                     s.having->pos);
    }
  }

  // The source side computes what the aggregate reads: keys, window time,
  // each distinct aggregate argument once.
  std::vector<OutputColumn> pre;
  for (const auto& k : keys) pre.push_back(OutputColumn{k.name, k.expr, SqlError::npos});
  if (window) {
    pre.push_back(OutputColumn{window->spec.time->toString(), window->spec.time, SqlError::npos});
  }
  std::vector<int> argColumn;
  for (size_t a = 0; a < aggregates.size(); ++a) {
    int column = -1;
    if (aggregates[a].call.arg) {
      for (size_t b = 0; b < a && column < 0; ++b) {
        if (aggregates[b].call.arg && aggregates[b].argFingerprint == aggregates[a].argFingerprint) {
          column = argColumn[b];
        }
      }
      if (column < 0) {
        column = static_cast<int>(pre.size());
        pre.push_back(OutputColumn{aggregates[a].argText, aggregates[a].call.arg, SqlError::npos});
      }
    }
    argColumn.push_back(column);
  }
  // Each distinct FILTER condition once, after the arguments.
  std::vector<int> filterColumn;
  for (size_t a = 0; a < aggregates.size(); ++a) {
    int column = -1;
    if (aggregates[a].call.filter) {
      for (size_t b = 0; b < a && column < 0; ++b) {
        if (aggregates[b].call.filter &&
            aggregates[b].filterFingerprint == aggregates[a].filterFingerprint) {
          column = filterColumn[b];
        }
      }
      if (column < 0) {
        column = static_cast<int>(pre.size());
        pre.push_back(
            OutputColumn{aggregates[a].filterText, aggregates[a].call.filter, SqlError::npos});
      }
    }
    filterColumn.push_back(column);
  }
  NodePtr preNode = projectNode(rel.node, pre);
  auto inputRef = [&](int i) {
    const Column& c = preNode->schema.columns[static_cast<size_t>(i)];
    return makeColumnRef(i, c.type, c.name);
  };

  AggregateSpec op;
  for (int i = 0; i < keyCount; ++i) {
    op.groupKeys.push_back(inputRef(i));
    op.output.columns.push_back(
        Column{keys[static_cast<size_t>(i)].name, keys[static_cast<size_t>(i)].expr->type(), false});
  }
  if (window) {
    op.window = window->spec;
    op.window.time = inputRef(keyCount);
    op.emitOnWindowClose = s.emitOnWindowClose;
    op.output.columns.push_back(Column{"window", windowType(), false});
  }
  for (size_t a = 0; a < aggregates.size(); ++a) {
    AggregateCall call = aggregates[a].call;
    if (call.arg) call.arg = inputRef(argColumn[a]);
    if (call.filter) call.filter = inputRef(filterColumn[a]);
    op.aggregates.push_back(call);
    op.output.columns.push_back(Column{aggregates[a].name, call.resultType, false});
  }

  std::vector<ExprPtr> shuffleKeys = op.groupKeys;
  NodePtr node = operatorNode({preNode}, std::move(op), {std::move(shuffleKeys)});

  BoundQuery out;
  out.node = having ? filterNode(node, having) : node;
  out.outputs = std::move(outputs);
  out.sourceName = rel.sourceName;
  // Final rows of closed windows are an append-only stream; updates are not.
  out.changelog = !s.emitOnWindowClose;
  for (size_t i = 0; i <= keyRefs.size(); ++i) {
    if (window && i == windowAt) out.keyRefs.push_back(windowRef);
    if (i < keyRefs.size()) out.keyRefs.push_back(keyRefs[i]);
  }
  return out;
}

}  // namespace rtsql::planner_detail
