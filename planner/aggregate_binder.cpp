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

#include <map>
#include <optional>

#include "common/map_order.h"
#include "planner/logical_plan.h"
#include "planner/pre_projection.h"

namespace rtsql::planner_detail {

namespace {

// The window column: STRUCT<start, end> of the time column's type (TIMESTAMP
// or TIMESTAMP_NTZ, as Spark's window() and session_window() give).
DataTypePtr windowType(TypeId time) {
  static const DataTypePtr instant = DataType::structOf(
      {{"start", DataType::of(TypeId::Timestamp)}, {"end", DataType::of(TypeId::Timestamp)}});
  static const DataTypePtr wallClock = DataType::structOf(
      {{"start", DataType::of(TypeId::TimestampNtz)}, {"end", DataType::of(TypeId::TimestampNtz)}});
  return time == TypeId::TimestampNtz ? wallClock : instant;
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
BoundWindow bindWindow(const ast::Expr& call, const Scope& scope, const Scope& fingerprints,
                       const UserFunctions& functions) {
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
  ExprPtr time = ExprBinder(scope, ExprContext::GroupBy, functions).bind(*call.args[0]);
  if (time->type()->id != TypeId::Timestamp && time->type()->id != TypeId::TimestampNtz) {
    throw SqlError(sqlstate::kDatatypeMismatch,
                   fmt::format("the time column of {}() must be TIMESTAMP or TIMESTAMP_NTZ, not {}",
                               name,
                               time->type()->toString()),
                   call.args[0]->pos, "use the source's event-time column, e.g. the WATERMARK column");
  }
  auto interval = [&](const ast::Expr& a, const char* what) -> int64_t {
    ExprPtr v = ExprBinder(scope, ExprContext::GroupBy, functions).bind(a);
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
      ExprBinder(fingerprints, ExprContext::General, functions).bind(*call.args[0])->toString(),
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

// Whether DISTINCT changes the aggregate's answer (it does not for the
// extremes, the booleans, a set, or the first and last value).
bool distinctMatters(AggregateFunction f) {
  switch (f) {
    case AggregateFunction::Min:
    case AggregateFunction::Max:
    case AggregateFunction::BoolAnd:
    case AggregateFunction::BoolOr:
    case AggregateFunction::MaxBy:
    case AggregateFunction::MinBy:
    case AggregateFunction::First:
    case AggregateFunction::Last:
    case AggregateFunction::CollectSet:
    case AggregateFunction::ApproxCountDistinct:
      return false;
    default:
      return true;
  }
}

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

namespace {

// A constant argument of an aggregate (ignoreNulls, a
// separator): bound without columns and evaluated once.
Value constantArg(const ast::Expr& a, const std::string& fname, const char* what) {
  const Scope none;
  ExprPtr v;
  try {
    v = ExprBinder(none, ExprContext::General, UserFunctions{}).bind(a);
  } catch (const SqlError&) {
    v = nullptr;
  }
  if (!v || !v->isConstant()) {
    throw SqlError(sqlstate::kDatatypeMismatch,
                   fmt::format("the {} of {}() must be a constant", what, fname), a.pos);
  }
  return v->eval(Row{});
}

// percentile(x, p) and percentile_approx(x, p[, accuracy]): p a constant in
// [0, 1] or an array of them, accuracy a positive constant, as Spark has them.
void bindPercentileCall(const ast::Expr& e, const std::string& fname, ExprPtr& arg,
                        AggregateCall& call) {
  const bool approx = call.function == AggregateFunction::PercentileApprox;
  DataTypePtr t = arg->type();
  const bool dateLike = t->id == TypeId::Date || t->id == TypeId::Timestamp;
  if (t->id == TypeId::Null) {
    arg = makeCast(arg, DataType::of(TypeId::Double), e.pos);
    t = arg->type();
  } else if (!t->isNumeric() && !(approx && dateLike)) {
    throw SqlError(sqlstate::kDatatypeMismatch,
                   fmt::format("function {}() needs a number{}, not {}", fname,
                               approx ? ", DATE or TIMESTAMP" : "", t->toString()),
                   e.args[0]->pos);
  }
  Value p = constantArg(*e.args[1], fname, "percentage");
  auto percentage = [&](const Value& v) {
    if (v.isNull() || !DataType::of(v.type())->isNumeric() || !(v.toDouble() >= 0.0) ||
        v.toDouble() > 1.0) {
      throw SqlError(sqlstate::kInvalidParameterValue,
                     fmt::format("the percentage of {}() must be between 0.0 and 1.0", fname),
                     e.args[1]->pos);
    }
    call.percentages.push_back(v.toDouble());
  };
  if (p.type() == TypeId::Array) {
    call.percentagesArray = true;
    for (const Value& v : p.asList()) percentage(v);
  } else {
    percentage(p);
  }
  if (e.args.size() == 3) {
    Value a = constantArg(*e.args[2], fname, "accuracy");
    if (a.isNull() || (a.type() != TypeId::Int && a.type() != TypeId::BigInt) || a.asInt() <= 0 ||
        a.asInt() > INT32_MAX) {
      throw SqlError(sqlstate::kInvalidParameterValue,
                     fmt::format("the accuracy of {}() must be a positive INT", fname),
                     e.args[2]->pos)
          .withHint("the default, 10000, answers within 1/10000 of the rank");
    }
    call.accuracy = a.asInt();
  }
  DataTypePtr one = approx ? t : DataType::of(TypeId::Double);
  call.resultType = call.percentagesArray ? DataType::arrayOf(one) : one;
}

struct AggregateName {
  const char* name;
  AggregateFunction function;
};

// Every name of an aggregate, Spark's aliases included.
constexpr AggregateName kAggregateNames[] = {
    {"count", AggregateFunction::Count},
    {"sum", AggregateFunction::Sum},
    {"avg", AggregateFunction::Avg},
    {"min", AggregateFunction::Min},
    {"max", AggregateFunction::Max},
    {"count_if", AggregateFunction::CountIf},
    {"stddev", AggregateFunction::StddevSamp},
    {"std", AggregateFunction::StddevSamp},
    {"stddev_samp", AggregateFunction::StddevSamp},
    {"stddev_pop", AggregateFunction::StddevPop},
    {"variance", AggregateFunction::VarSamp},
    {"var_samp", AggregateFunction::VarSamp},
    {"var_pop", AggregateFunction::VarPop},
    {"bool_and", AggregateFunction::BoolAnd},
    {"every", AggregateFunction::BoolAnd},
    {"bool_or", AggregateFunction::BoolOr},
    {"some", AggregateFunction::BoolOr},
    {"any", AggregateFunction::BoolOr},
    {"max_by", AggregateFunction::MaxBy},
    {"min_by", AggregateFunction::MinBy},
    {"first", AggregateFunction::First},
    {"any_value", AggregateFunction::First},
    {"last", AggregateFunction::Last},
    {"collect_list", AggregateFunction::CollectList},
    {"array_agg", AggregateFunction::CollectList},
    {"collect_set", AggregateFunction::CollectSet},
    {"string_agg", AggregateFunction::StringAgg},
    {"listagg", AggregateFunction::StringAgg},
    {"approx_count_distinct", AggregateFunction::ApproxCountDistinct},
    {"percentile", AggregateFunction::Percentile},
    {"percentile_approx", AggregateFunction::PercentileApprox},
    {"approx_percentile", AggregateFunction::PercentileApprox},
};

}  // namespace

void bindAggregateCall(const ast::Expr& e, const std::string& fname, const Scope& scope,
                       AggregateCall& call, const UserFunctions& functions) {
  if (e.star) {
    if (fname != "count") {
      throw SqlError(sqlstate::kSyntaxError, fmt::format("{}(*) is not allowed", fname), e.pos,
                     "only count(*) takes *");
    }
    call.function = AggregateFunction::CountStar;
    call.resultType = DataType::of(TypeId::BigInt);
    return;
  }
  const AggregateName* found = nullptr;
  for (const AggregateName& n : kAggregateNames) {
    if (fname == n.name) found = &n;
  }
  if (!found) throw InternalError("unknown aggregate function " + fname);
  call.function = found->function;
  // How many arguments each takes: the first is the aggregated column, the
  // others (but max_by's and min_by's ordering) are constants.
  size_t minArgs = 1, maxArgs = 1;
  const char* usage = nullptr;
  switch (call.function) {
    case AggregateFunction::MaxBy:
    case AggregateFunction::MinBy:
      minArgs = maxArgs = 2;
      usage = "max_by(x, ord): the x of the row with the largest ord";
      break;
    case AggregateFunction::First:
    case AggregateFunction::Last:
    case AggregateFunction::StringAgg:
    case AggregateFunction::ApproxCountDistinct:
      maxArgs = 2;
      break;
    case AggregateFunction::Percentile:
      minArgs = maxArgs = 2;
      usage = "percentile(x, 0.5) or percentile(x, array(0.25, 0.75))";
      break;
    case AggregateFunction::PercentileApprox:
      minArgs = 2;
      maxArgs = 3;
      usage = "percentile_approx(x, 0.5[, accuracy]) or percentile_approx(x, array(0.25, 0.75))";
      break;
    default:
      break;
  }
  if (e.args.size() < minArgs || e.args.size() > maxArgs) {
    std::string count = minArgs == maxArgs ? fmt::format("exactly {}", minArgs)
                                           : fmt::format("{} to {}", minArgs, maxArgs);
    SqlError err(sqlstate::kUndefinedFunction,
                 fmt::format("{}() takes {} argument{}", fname, count, maxArgs == 1 ? "" : "s"),
                 e.pos);
    if (usage) err.withHint(usage);
    throw err;
  }
  ExprPtr arg = ExprBinder(scope, ExprContext::AggregateArg, functions).bind(*e.args[0]);
  const DataTypePtr& t = arg->type();
  auto mismatch = [&](const char* wanted) {
    return SqlError(sqlstate::kDatatypeMismatch,
                    fmt::format("function {}() needs {}, not {}", fname, wanted, t->toString()),
                    e.args[0]->pos);
  };
  const bool isNull = t->id == TypeId::Null;
  switch (call.function) {
    case AggregateFunction::CountStar:
    case AggregateFunction::Count:
      call.resultType = DataType::of(TypeId::BigInt);
      break;
    case AggregateFunction::Sum:
      if (t->isIntegral() || isNull) {
        call.resultType = DataType::of(TypeId::BigInt);
      } else if (t->isFloating()) {  // a FLOAT sums to a DOUBLE, as in Spark
        call.resultType = DataType::of(TypeId::Double);
      } else if (t->id == TypeId::Decimal) {
        // Spark: DECIMAL(p, s) sums to DECIMAL(p + 10, s), at most 38 digits.
        auto r = decimal::sumType({t->precision, t->scale});
        call.resultType = DataType::decimal(r.precision, r.scale);
      } else if (t->id == TypeId::YearMonthInterval) {
        call.resultType = t;  // a sum of intervals is one of their type, as in Spark
      } else {
        throw mismatch("a number");
      }
      break;
    case AggregateFunction::Avg:
      if (t->id == TypeId::YearMonthInterval) {
        // Spark: the average of intervals is an INTERVAL YEAR TO MONTH.
        call.resultType = DataType::of(TypeId::YearMonthInterval);
        break;
      }
      if (!t->isNumeric() && !isNull) throw mismatch("a number");
      if (t->id == TypeId::Decimal) {
        // Spark: the average of DECIMAL(p, s) is DECIMAL(p + 4, s + 4).
        auto r = decimal::avgType({t->precision, t->scale});
        call.resultType = DataType::decimal(r.precision, r.scale);
      } else {
        call.resultType = DataType::of(TypeId::Double);
      }
      break;
    case AggregateFunction::Min:
    case AggregateFunction::Max:
      refuseMapValues(*t, fname + "()", e.args[0]->pos, kMapArgumentHint);
      if (t->id == TypeId::Array || t->id == TypeId::Struct) throw mismatch("a comparable value");
      call.resultType = t;
      break;
    case AggregateFunction::CountIf:
      if (t->id != TypeId::Boolean && !isNull) throw mismatch("a BOOLEAN");
      call.resultType = DataType::of(TypeId::BigInt);
      break;
    case AggregateFunction::StddevSamp:
    case AggregateFunction::StddevPop:
    case AggregateFunction::VarSamp:
    case AggregateFunction::VarPop:
      if (!t->isNumeric() && !isNull) throw mismatch("a number");
      call.resultType = DataType::of(TypeId::Double);
      break;
    case AggregateFunction::BoolAnd:
    case AggregateFunction::BoolOr:
      if (t->id != TypeId::Boolean && !isNull) throw mismatch("a BOOLEAN");
      call.resultType = DataType::of(TypeId::Boolean);
      break;
    case AggregateFunction::MaxBy:
    case AggregateFunction::MinBy: {
      ExprPtr ord = ExprBinder(scope, ExprContext::AggregateArg, functions).bind(*e.args[1]);
      refuseMapValues(*ord->type(), fmt::format("the ordering of {}()", fname), e.args[1]->pos,
                      kMapArgumentHint);
      TypeId o = ord->type()->id;
      if (o == TypeId::Array || o == TypeId::Struct) {
        throw SqlError(sqlstate::kDatatypeMismatch,
                       fmt::format("the ordering of {}() must be a comparable value, not {}",
                                   fname, ord->type()->toString()),
                       e.args[1]->pos);
      }
      call.resultType = t;
      // One column holds both, so that a NULL x is still a row.
      arg = makeCall("struct", {arg, ord}, e.pos);
      break;
    }
    case AggregateFunction::First:
    case AggregateFunction::Last:
      if (e.args.size() == 2) {
        Value v = constantArg(*e.args[1], fname, "ignoreNulls argument");
        if (v.type() != TypeId::Boolean) {
          throw SqlError(sqlstate::kDatatypeMismatch,
                         fmt::format("the second argument of {}() must be TRUE or FALSE "
                                     "(ignoreNulls)",
                                     fname),
                         e.args[1]->pos);
        }
        call.ignoreNulls = v.asBool();
      }
      call.resultType = t;
      arg = makeCall("struct", {arg}, e.pos);
      break;
    case AggregateFunction::CollectSet:
      // A set deduplicates its values: a map has no equality.
      refuseMapValues(*t, fname + "()", e.args[0]->pos, kMapArgumentHint);
      [[fallthrough]];
    case AggregateFunction::CollectList:
      call.resultType = DataType::arrayOf(isNull ? DataType::of(TypeId::String) : t);
      break;
    case AggregateFunction::StringAgg:
      if (t->id != TypeId::String && t->id != TypeId::Binary && !isNull) {
        throw mismatch("a STRING or BINARY");
      }
      if (e.args.size() == 2) {
        Value v = constantArg(*e.args[1], fname, "separator");
        if (!v.isNull() && v.type() != TypeId::String && v.type() != TypeId::Binary) {
          throw SqlError(sqlstate::kDatatypeMismatch,
                         fmt::format("the separator of {}() must be a STRING", fname),
                         e.args[1]->pos);
        }
        if (!v.isNull()) call.separator = v.asString();
      }
      call.resultType = DataType::of(t->id == TypeId::Binary ? TypeId::Binary : TypeId::String);
      break;
    case AggregateFunction::ApproxCountDistinct:
      if (t->id == TypeId::Array || t->id == TypeId::Struct) throw mismatch("a scalar value");
      if (e.args.size() == 2) {
        Value v = constantArg(*e.args[1], fname, "relativeSD");
        if (v.isNull() || !DataType::of(v.type())->isNumeric()) {
          throw SqlError(sqlstate::kDatatypeMismatch,
                         fmt::format("the relativeSD of {}() must be a number", fname),
                         e.args[1]->pos);
        }
        call.relativeSD = v.toDouble();
        // Spark needs at least 4 bits; beyond 18 a group's sketch would take
        // more than 256 KiB of state.
        const int p = call.relativeSD > 0 ? hyperLogLogPrecision(call.relativeSD) : 0;
        if (!(call.relativeSD > 0) || p < 4 || p > 18) {
          throw SqlError(sqlstate::kInvalidParameterValue,
                         fmt::format("the relativeSD of {}() must be between 0.0022 and 0.39",
                                     fname),
                         e.args[1]->pos)
              .withHint("the default, 0.05, keeps 512 registers per group");
        }
      }
      call.resultType = DataType::of(TypeId::BigInt);
      break;
    case AggregateFunction::Percentile:
    case AggregateFunction::PercentileApprox:
      bindPercentileCall(e, fname, arg, call);
      break;
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
    return rel.changelog
               ? ExprBinder(shownScope, ExprContext::AggregateArg, functions()).bind(e)->toString()
               : bound->toString();
  };
  auto fingerprint = [&](const ast::Expr& e) {
    return ExprBinder(fpScope, ExprContext::General, functions()).bind(e)->toString();
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
      window = bindWindow(*e, rel.scope, fpScope, functions());
      windowAt = keys.size();
      continue;
    }
    ExprPtr key = ExprBinder(rel.scope, ExprContext::GroupBy, functions()).bind(*e);
    if (containsMap(*key->type())) {
      // Spark groups by no MAP, nor by what holds one: a map has no equality.
      throw SqlError(sqlstate::kDatatypeMismatch,
                     fmt::format("GROUP BY cannot use a MAP value as a key ({})",
                                 key->type()->toString()),
                     e->pos, "group by one of its values: GROUP BY m['key']");
    }
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
  ExprPtr windowRef =
      window ? makeColumnRef(keyCount, windowType(window->spec.time->type()->id), "window")
             : nullptr;

  std::vector<BoundAggregate> aggregates;
  auto aggregateRef = [&](const ast::Expr& e) -> ExprPtr {
    std::string fname = toLower(e.name);
    BoundAggregate agg;
    if (e.distinct && window) {
      unsupported(fmt::format("{}(DISTINCT ...) in a windowed aggregation", fname), e.pos,
                  "deduplicate first: SELECT window, k, count(*) FROM (SELECT DISTINCT ON (k, x) "
                  "* FROM ...) GROUP BY window(...), k");
    }
    bindAggregateCall(e, fname, rel.scope, agg.call, functions());
    if (!aggregateTakesRetractions(agg.call.function) &&
        (rel.changelog || readsChangelogSource(rel.node))) {
      unsupported(fmt::format("{}() over rows that may be retracted (the result of an "
                              "aggregation, an outer join or a top-N, or a debezium-json "
                              "source's changes)",
                              fname),
                  e.pos,
                  "it keeps no history to take a row back out of; aggregate the rows before "
                  "they are retracted, or use an aggregate that takes retractions (count_if, "
                  "stddev, variance, bool_and, bool_or, collect_list, collect_set, string_agg)");
    }
    if (e.star) {
      agg.fingerprint = "count(*)";
      agg.name = "count(*)";
    } else {
      AggregateCall& call = agg.call;
      // min/max (and the others whose answer no repeated value changes) of
      // the distinct values are those of all values.
      call.distinct = e.distinct && distinctMatters(call.function);
      const char* distinct = call.distinct ? "DISTINCT " : "";
      // Every argument is part of the call: max_by(x, a) and max_by(x, b),
      // string_agg(s, ',') and string_agg(s, ';') are different columns.
      std::vector<std::string> texts, fps;
      for (const auto& a : e.args) {
        fps.push_back(fingerprint(*a));
        texts.push_back(shown(*a, ExprBinder(rel.scope, ExprContext::AggregateArg, functions()).bind(*a)));
      }
      auto joined = [](const std::vector<std::string>& parts, size_t n) {
        std::string out;
        for (size_t i = 0; i < n; ++i) out += (i ? ", " : "") + parts[i];
        return out;
      };
      agg.name = fname + "(" + distinct + joined(texts, texts.size()) + ")";
      agg.fingerprint = fname + "(" + distinct + joined(fps, fps.size()) + ")";
      agg.argFingerprint = fps[0];
      agg.argText = texts[0];
      // max_by/min_by/first/last read struct(...) of their column arguments:
      // not the column of a plain call on the same argument.
      if (call.function == AggregateFunction::MaxBy || call.function == AggregateFunction::MinBy) {
        agg.argFingerprint = "struct(" + joined(fps, 2) + ")";
        agg.argText = "struct(" + joined(texts, 2) + ")";
      } else if (call.function == AggregateFunction::First ||
                 call.function == AggregateFunction::Last) {
        agg.argFingerprint = "struct(" + fps[0] + ")";
        agg.argText = "struct(" + texts[0] + ")";
      }
    }
    if (e.filter) {
      ExprPtr filter =
          ExprBinder(rel.scope, ExprContext::AggregateArg, functions()).bind(*e.filter);
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
      if (window &&
          bindWindow(e, rel.scope, fpScope, functions()).fingerprint == window->fingerprint) {
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
  ExprBinder post(empty, ExprContext::SelectList, functions(), hook);
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
  // each distinct aggregate argument once, then each distinct FILTER
  // condition once. Arguments are told apart by what they compute (their
  // fingerprint), not by their bound node.
  PreProjection pre;
  for (const auto& k : keys) pre.columns.push_back(OutputColumn{k.name, k.expr, SqlError::npos});
  if (window) {
    pre.columns.push_back(
        OutputColumn{window->spec.time->toString(), window->spec.time, SqlError::npos});
  }
  auto columnOnce = [&pre](std::map<std::string, int>& seen, const std::string& fingerprint,
                           const std::string& text, const ExprPtr& e) {
    auto [it, added] = seen.emplace(fingerprint, static_cast<int>(pre.columns.size()));
    if (added) pre.columns.push_back(OutputColumn{text, e, SqlError::npos});
    return it->second;
  };
  std::map<std::string, int> argSeen, filterSeen;
  std::vector<int> argColumn, filterColumn;
  for (const auto& agg : aggregates) {
    argColumn.push_back(agg.call.arg ? columnOnce(argSeen, agg.argFingerprint, agg.argText,
                                                  agg.call.arg)
                                     : -1);
  }
  for (const auto& agg : aggregates) {
    filterColumn.push_back(agg.call.filter ? columnOnce(filterSeen, agg.filterFingerprint,
                                                        agg.filterText, agg.call.filter)
                                           : -1);
  }
  const NodePtr& preNode = pre.project(rel.node);
  auto inputRef = [&pre](int i) { return pre.ref(i); };

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
    op.output.columns.push_back(Column{"window", windowType(window->spec.time->type()->id), false});
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
