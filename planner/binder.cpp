// The expression binder: AST expressions become bound common::Expr trees
// through the make* factories, with names resolved against a Scope once, at
// plan time. Also the two public entry points built on it: bindExpression()
// and evalConstant() for INSERT ... VALUES.
#include "planner/binder.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <climits>
#include <cstdlib>
#include <limits>

#include "common/edit_distance.h"
#include "common/json.h"
#include "common/time_zone.h"
#include "common/try_cast.h"
#include "common/year_month_interval.h"
#include "parser/expr_walker.h"
#include "planner/decimal_literals.h"
#include "planner/timestamp_literals.h"
#include "planner/planner.h"
#include "planner/set_functions.h"
#include "planner/user_function.h"

namespace rtsql {
namespace planner_detail {

bool Scope::hasQualifier(std::string_view q) const {
  for (const auto& c : columns) {
    if (!c.qualifier.empty() && iequals(c.qualifier, q)) return true;
  }
  return false;
}

std::vector<std::string> Scope::visibleNames() const {
  std::vector<std::string> out;
  for (const auto& c : columns) {
    if (!c.hidden) out.push_back(c.name);
  }
  return out;
}

Scope scopeFromSchema(const Schema& schema, const std::string& qualifier) {
  Scope scope;
  for (size_t i = 0; i < schema.columns.size(); ++i) {
    const Column& col = schema.columns[i];
    scope.columns.push_back(ScopeColumn{qualifier, col.name, col.type, col.hidden,
                                        makeColumnRef(static_cast<int>(i), col.type, col.name)});
  }
  return scope;
}

std::string closestName(std::string_view name, const std::vector<std::string>& candidates) {
  std::string best;
  size_t bestDist = std::numeric_limits<size_t>::max();
  for (const auto& c : candidates) {
    size_t d = editDistance(name, c);
    if (d < bestDist) {
      bestDist = d;
      best = c;
    }
  }
  // A typo is a few edits away; anything further is a different name.
  size_t limit = std::max<size_t>(1, (name.size() + 2) / 3);
  return bestDist <= limit ? best : std::string();
}

namespace {

// Rank of the numeric types in widening order (TINYINT < SMALLINT < INT <
// BIGINT < FLOAT < DOUBLE).
int numericRank(TypeId t) {
  switch (t) {
    case TypeId::TinyInt: return 1;
    case TypeId::SmallInt: return 2;
    case TypeId::Int: return 3;
    case TypeId::BigInt: return 4;
    case TypeId::Float: return 5;
    case TypeId::Double: return 6;
    default: return 0;
  }
}

// A numeric constant next to a wider operand is converted here, once, so the
// factories need no implicit CAST node: `amount > 10` on a DOUBLE column binds
// (and EXPLAINs) as `(amount > 10.0)`.
ExprPtr widenConstant(const ExprPtr& e, const ExprPtr& other) {
  int from = numericRank(e->type()->id), to = numericRank(other->type()->id);
  if (!e->isConstant() || from == 0 || to <= from) return e;
  try {
    Value v = e->eval(Row{});
    if (v.isNull()) return e;
    return makeLiteral(castValue(v, *other->type()), other->type());
  } catch (const std::exception&) {
    return e;
  }
}

bool isComparison(const std::string& op) {
  return op == "=" || op == "==" || op == "<>" || op == "!=" || op == "<" || op == "<=" ||
         op == ">" || op == ">=";
}

// `bound` converted to the numeric type of `other` when the user wrote it as
// a string literal; anything else as it is.
ExprPtr numberFromStringLiteral(const ast::Expr& written, const ExprPtr& bound, const ExprPtr& other) {
  if (written.kind != ast::ExprKind::Literal || written.literal.kind != ast::LiteralKind::String ||
      !other->type()->isNumeric()) {
    return bound;
  }
  return makeCast(bound, other->type(), written.pos);
}

// `bound` as an array of `other`'s type when the user wrote it as a string
// literal in PostgreSQL's array form ('{0}', '{a,"b c",NULL}') and `other`
// is an array, as PostgreSQL reads an untyped literal (psql writes
// pol.polroles = '{0}'); anything else as it is.
ExprPtr arrayFromStringLiteral(const ast::Expr& written, const ExprPtr& bound,
                               const ExprPtr& other) {
  if (written.kind != ast::ExprKind::Literal || written.literal.kind != ast::LiteralKind::String ||
      other->type()->id != TypeId::Array || !bound->isConstant()) {
    return bound;
  }
  const Value v = bound->eval(Row{});
  if (v.isNull()) return bound;
  const std::string& text = v.asString();
  if (text.size() < 2 || text.front() != '{' || text.back() != '}') {
    throw SqlError(sqlstate::kInvalidTextRepresentation,
                   fmt::format("malformed array literal: \"{}\"", text), written.pos)
        .withHint("an array literal is written '{a,b,...}'");
  }
  ValueList items;
  const std::string inner = text.substr(1, text.size() - 2);
  size_t at = 0;
  while (!inner.empty() && at <= inner.size()) {
    size_t end = inner.find(',', at);
    if (end == std::string::npos) end = inner.size();
    std::string item = inner.substr(at, end - at);
    const size_t first = item.find_first_not_of(' ');
    const size_t last = item.find_last_not_of(' ');
    item = first == std::string::npos ? std::string() : item.substr(first, last - first + 1);
    if (iequals(item, "NULL")) {
      items.emplace_back();
    } else {
      if (item.size() >= 2 && item.front() == '"' && item.back() == '"') {
        item = item.substr(1, item.size() - 2);
      }
      items.push_back(Value::string(std::move(item)));
    }
    at = end + 1;
  }
  ExprPtr strings = makeLiteral(Value::array(std::move(items)),
                                DataType::arrayOf(DataType::of(TypeId::String)));
  return makeCast(std::move(strings), other->type(), written.pos);
}

std::string joinParts(const std::vector<std::string>& parts) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out += '.';
    out += parts[i];
  }
  return out;
}

}  // namespace

void ExprBinder::throwUnknownColumn(const std::string& name, size_t pos) const {
  SqlError err(sqlstate::kUndefinedColumn, fmt::format("column \"{}\" does not exist", name), pos);
  std::vector<std::string> all;
  for (const auto& c : scope_.columns) all.push_back(c.name);
  for (const auto& v : lambdaVariables_) all.push_back(v.name);
  std::string lastPart = name.substr(name.rfind('.') == std::string::npos ? 0 : name.rfind('.') + 1);
  std::string close = closestName(lastPart, all);
  if (!close.empty()) {
    err.withHint(fmt::format("perhaps you meant \"{}\"", close));
  } else {
    std::vector<std::string> visible = scope_.visibleNames();
    if (visible.empty()) {
      err.withHint("no columns are available here");
    } else {
      std::string list;
      for (size_t i = 0; i < visible.size() && i < 5; ++i) {
        if (i) list += ", ";
        list += visible[i];
      }
      if (visible.size() > 5) list += ", ...";
      err.withHint("available columns: " + list);
    }
  }
  throw err;
}

ExprPtr ExprBinder::bindColumn(const ast::Expr& e) const {
  const auto& parts = e.parts;
  if (parts.empty()) throw InternalError("column reference without a name");

  auto matching = [&](const std::string* qualifier, const std::string& name) {
    std::vector<const ScopeColumn*> out;
    for (const auto& c : scope_.columns) {
      if (qualifier && !iequals(c.qualifier, *qualifier)) continue;
      if (iequals(c.name, name)) out.push_back(&c);
    }
    return out;
  };
  auto ambiguous = [&](const std::string& name) {
    throw SqlError(sqlstate::kAmbiguousColumn,
                   fmt::format("column reference \"{}\" is ambiguous", name), e.pos)
        .withHint("qualify it with the relation's name or alias");
  };

  ExprPtr base;
  size_t next = 1;
  // A lambda's parameter comes before any column: `x` in `x -> x + 1`.
  if (ExprPtr v = lambdaVariable(parts[0], e.pos)) {
    for (size_t i = 1; i < parts.size(); ++i) v = makeFieldAccess(v, parts[i], e.pos);
    return v;
  }
  // Spark's order: `t.a` is relation t's column a when t names a relation in
  // scope; otherwise `a.b` is field b of struct column a.
  if (parts.size() >= 2 && scope_.hasQualifier(parts[0])) {
    auto found = matching(&parts[0], parts[1]);
    if (found.size() > 1) ambiguous(parts[0] + "." + parts[1]);
    if (found.size() == 1) {
      base = found[0]->expr;
      next = 2;
    }
  }
  // PostgreSQL's `s.t.a`: column a of relation t of schema s (drivers write
  // pg_catalog.pg_class.relname), when s is one of the schemas and neither a
  // relation nor a column here, and t is a relation.
  const bool schemaFirst = parts.size() >= 3 && (iequals(parts[0], "pg_catalog") ||
                                                 iequals(parts[0], "information_schema") ||
                                                 iequals(parts[0], "public"));
  if (!base && schemaFirst && !scope_.hasQualifier(parts[0]) &&
      matching(nullptr, parts[0]).empty() && scope_.hasQualifier(parts[1])) {
    auto found = matching(&parts[1], parts[2]);
    if (found.size() > 1) ambiguous(parts[1] + "." + parts[2]);
    if (found.size() == 1) {
      base = found[0]->expr;
      next = 3;
    }
  }
  if (!base) {
    auto found = matching(nullptr, parts[0]);
    if (found.size() > 1) ambiguous(parts[0]);
    // USER alone is the session's user when no column has that name, as in
    // PostgreSQL (where it is a keyword) and Spark (which looks for a column first).
    if (found.empty() && parts.size() == 1 && iequals(parts[0], "user"))
      return makeCall("current_user", {}, e.pos);
    if (found.empty()) throwUnknownColumn(parts.size() >= 2 && scope_.hasQualifier(parts[0])
                                              ? parts[0] + "." + parts[1]
                                              : joinParts(parts),
                                          e.pos);
    base = found[0]->expr;
  }
  for (size_t i = next; i < parts.size(); ++i) base = makeFieldAccess(base, parts[i], e.pos);
  return base;
}

namespace {

// How this thread reads a number literal with a point (DecimalLiteralScope).
thread_local bool decimalLiterals = true;
// Whether it reads a TIMESTAMP literal in the session zone (TimestampLiteralScope).
thread_local bool zonedTimestampLiterals = true;

// INTERVAL '1-2' YEAR TO MONTH, INTERVAL '3' MONTH, INTERVAL -'1' YEAR (a
// YEAR-MONTH INTERVAL) and INTERVAL '1 02:03:04' DAY TO SECOND (the day-time
// one): `text` is the value with a leading '-' for a minus written before it,
// `unit` the unit or range in upper case.
ExprPtr bindRangeIntervalLiteral(const std::string& text, const std::string& unit, size_t pos) {
  const size_t to = unit.find(" TO ");
  const std::string from = unit.substr(0, to);
  const std::string last = to == std::string::npos ? "" : unit.substr(to + 4);
  DataTypePtr type = ym::intervalType(from, last);
  auto bad = [&](const char* why) {
    return SqlError(sqlstate::kInvalidTextRepresentation,
                    fmt::format("invalid interval: '{}' {}{}", text, unit, why), pos)
        .withHint(type && type->id == TypeId::YearMonthInterval && type->ymStart != type->ymEnd
                      ? "write INTERVAL '1-2' YEAR TO MONTH: years, a dash and 0 to 11 months"
                  : type && type->id == TypeId::Interval
                      ? "write INTERVAL '1 02:03:04.5' DAY TO SECOND, INTERVAL '02:03' HOUR TO MINUTE"
                      : "write INTERVAL '3' YEAR or INTERVAL '14' MONTH: a whole number, at most "
                        "178956970 years (2147483647 months)");
  };
  if (!type) {
    throw SqlError(sqlstate::kSyntaxError, fmt::format("INTERVAL ... {} is not an interval", unit), pos)
        .withHint("write YEAR TO MONTH, DAY TO SECOND, HOUR TO MINUTE...: the larger unit first");
  }
  if (type->id == TypeId::Interval)
    return makeLiteral(Value::interval(parseDayTimeRange(text, from, last, pos)), type);
  // A minus before a signed text: -'-1-2' is 1-2.
  std::string_view body = text;
  bool negate = false;
  if (body.size() > 1 && body[0] == '-' && (body[1] == '-' || body[1] == '+')) {
    negate = true;
    body.remove_prefix(1);
  }
  auto months = ym::parse(body, type->ymStart, type->ymEnd);
  if (!months) throw bad("");
  if (negate && *months == INT32_MIN) throw bad(": out of the range of an INTERVAL YEAR TO MONTH");
  return makeLiteral(Value::yearMonthInterval(negate ? -*months : *months), type);
}

ExprPtr bindDecimalLiteral(const std::string& text, size_t pos) {
  // As Spark reads a number with a point: 1.5 and 1.5BD are DECIMAL(2, 1)
  // (the digits are the precision, those after the point the scale), while one
  // with an exponent (1e3, 1.5e0) or the suffix D (1.5D) is a DOUBLE.
  auto endsWith = [&](std::string_view suffix) {
    return text.size() > suffix.size() &&
           iequals(std::string_view(text).substr(text.size() - suffix.size()), suffix);
  };
  const bool bd = endsWith("BD");
  const bool dbl = !bd && endsWith("D");
  std::string digits = text.substr(0, text.size() - (bd ? 2 : dbl ? 1 : 0));
  if (dbl || (!bd && (!decimalLiterals || digits.find_first_of("eE") != std::string::npos))) {
    return makeLiteral(Value::float64(std::strtod(digits.c_str(), nullptr)),
                       DataType::of(TypeId::Double));
  }
  auto d = decimal::parseLiteral(digits);
  if (!d) {
    throw SqlError(sqlstate::kNumericOutOfRange,
                   fmt::format("{} does not fit a DECIMAL: 38 digits at most, no exponent", text),
                   pos);
  }
  return makeLiteral(Value::decimal(d->first, d->second.precision, d->second.scale),
                     DataType::decimal(d->second.precision, d->second.scale));
}

}  // namespace

ExprPtr ExprBinder::bindLiteral(const ast::Expr& e) const {
  const ast::Literal& lit = e.literal;
  switch (lit.kind) {
    case ast::LiteralKind::Null:
      return makeLiteral(Value(), DataType::of(TypeId::Null));
    case ast::LiteralKind::Boolean:
      return makeLiteral(Value::boolean(lit.boolean), DataType::of(TypeId::Boolean));
    case ast::LiteralKind::Integer: {
      int64_t v = 0;
      const char* begin = lit.text.data();
      const char* end = begin + lit.text.size();
      auto [ptr, ec] = std::from_chars(begin, end, v);
      if (ec == std::errc() && ptr == end) {
        if (v >= INT32_MIN && v <= INT32_MAX) {
          return makeLiteral(Value::integer(static_cast<int32_t>(v)), DataType::of(TypeId::Int));
        }
        return makeLiteral(Value::bigint(v), DataType::of(TypeId::BigInt));
      }
      // Too large for BIGINT: a DECIMAL of its digits, as Spark reads it
      // (a DOUBLE for a flow recorded before decimal literals).
      if (decimalLiterals) return bindDecimalLiteral(lit.text, e.pos);
      return makeLiteral(Value::float64(std::strtod(lit.text.c_str(), nullptr)),
                         DataType::of(TypeId::Double));
    }
    case ast::LiteralKind::Decimal:
      return bindDecimalLiteral(lit.text, e.pos);
    case ast::LiteralKind::String:
      return makeLiteral(Value::string(lit.text), DataType::of(TypeId::String));
    case ast::LiteralKind::Binary:
      return makeLiteral(Value::binary(lit.text), DataType::of(TypeId::Binary));
    case ast::LiteralKind::Interval: {
      if (lit.unit.starts_with("YEAR") || lit.unit.starts_with("MONTH") ||
          lit.unit.find(" TO ") != std::string::npos)
        return bindRangeIntervalLiteral(lit.text, lit.unit, e.pos);
      return makeLiteral(Value::interval(parseInterval(lit.text, lit.unit, e.pos)),
                         DataType::of(TypeId::Interval));
    }
    case ast::LiteralKind::Timestamp: {
      // A wall clock in the session time zone (a flow's own zone, fixed when
      // it is planned), unless the text names its offset, as Spark reads it.
      int64_t micros = 0;
      const TimeZone& zone = zonedTimestampLiterals ? sessionTimeZone() : utcTimeZone();
      if (!parseTimestampIn(lit.text, zone, &micros)) {
        throw SqlError(sqlstate::kInvalidDatetimeFormat,
                       fmt::format("invalid input syntax for type timestamp: \"{}\"", lit.text),
                       e.pos)
            .withHint("write TIMESTAMP '2024-05-01 10:00:00'");
      }
      return makeLiteral(Value::timestamp(micros), DataType::of(TypeId::Timestamp));
    }
    case ast::LiteralKind::TimestampNtz: {
      // A wall-clock time: an offset in the text is read and left out, as Spark.
      int64_t micros = 0;
      if (!parseTimestamp(lit.text, &micros, false)) {
        throw SqlError(sqlstate::kInvalidDatetimeFormat,
                       fmt::format("invalid input syntax for type timestamp_ntz: \"{}\"", lit.text),
                       e.pos)
            .withHint("write TIMESTAMP_NTZ '2024-05-01 10:00:00'");
      }
      return makeLiteral(Value::timestampNtz(micros), DataType::of(TypeId::TimestampNtz));
    }
    case ast::LiteralKind::Date: {
      int64_t days = 0;
      if (!parseDate(lit.text, &days)) {
        throw SqlError(sqlstate::kInvalidDatetimeFormat,
                       fmt::format("invalid input syntax for type date: \"{}\"", lit.text), e.pos)
            .withHint("write DATE '2024-05-01'");
      }
      return makeLiteral(Value::date(days), DataType::of(TypeId::Date));
    }
  }
  throw InternalError("unknown literal kind");
}

namespace {

const char* clauseName(ExprContext context) {
  switch (context) {
    case ExprContext::Where: return "WHERE";
    case ExprContext::GroupBy: return "GROUP BY";
    case ExprContext::JoinOn: return "JOIN conditions";
    case ExprContext::DistinctOn: return "DISTINCT ON";
    case ExprContext::SelectList:
    case ExprContext::General:
    case ExprContext::AggregateArg: break;
  }
  return "this context";
}

}  // namespace

ExprPtr ExprBinder::bindCall(const ast::Expr& e) const {
  std::string name = toLower(e.name);
  if (isLambda(e)) refuseLambda(e);
  // A set-returning call that reaches here is outside a bounded query's
  // plain select list, which alone plans one (set_functions.h).
  if (isSetFunction(name) && !(functions_.catalog && functions_.catalog->findFunction(name))) {
    throw SqlError(sqlstate::kFeatureNotSupported,
                   fmt::format("set-returning function {}() is read only in the select list of "
                               "a bounded query without GROUP BY or DISTINCT",
                               name),
                   e.pos)
        .withHint("make its rows in a subquery in FROM: FROM (SELECT " + name +
                  "(...) AS x FROM t) s");
  }
  if (e.over) {
    throw SqlError(sqlstate::kFeatureNotSupported,
                   fmt::format("{}() OVER (...) is not supported here", name), e.over->pos)
        .withHint(e.star || isAggregateFunction(name)
                      ? "an aggregate OVER (...) is a select item: SELECT * FROM (SELECT ..., "
                        "avg(x) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN 10 PRECEDING AND "
                        "CURRENT ROW) AS a FROM s) WHERE a > 1"
                      : "a flow ranks rows per key with SELECT * FROM (SELECT ..., ROW_NUMBER() "
                        "OVER (PARTITION BY k ORDER BY x DESC) AS rn FROM s) WHERE rn <= 3");
  }
  if (e.filter && !(e.star || isAggregateFunction(name))) {
    throw SqlError(sqlstate::kWrongObjectType,
                   fmt::format("FILTER is only allowed on aggregate functions, not on {}()", name),
                   e.filterPos);
  }
  if (e.star || isAggregateFunction(name)) {
    if (context_ == ExprContext::AggregateArg) {
      throw SqlError(sqlstate::kGroupingError, "aggregate function calls cannot be nested",
                     e.pos);
    }
    SqlError err(sqlstate::kGroupingError,
                 fmt::format("aggregate functions are not allowed in {}", clauseName(context_)),
                 e.pos);
    if (context_ == ExprContext::Where) err.withHint("filter groups with HAVING");
    throw err;
  }
  if (name == "window" || name == "session_window") {
    throw SqlError(sqlstate::kGroupingError,
                   fmt::format("{}() is only allowed in GROUP BY", name), e.pos)
        .withHint("windows are grouping keys: GROUP BY window(ts, '10 seconds'), then SELECT "
                  "window.start, window.end");
  }
  if (e.distinct) {
    throw SqlError(sqlstate::kFeatureNotSupported,
                   fmt::format("DISTINCT is only meaningful in aggregate functions, not in {}()",
                               name),
                   e.pos);
  }
  for (const auto& a : e.args) {
    if (isLambda(*a)) return bindHigherOrderCall(name, e);
  }
  // A user's SQL function becomes its body, bound over these arguments.
  if (ExprPtr inlined = inlineUserFunction(e, functionsInside(),
                                           [this](const ast::Expr& a) { return bind(a); })) {
    return inlined;
  }
  std::vector<ExprPtr> args;
  args.reserve(e.args.size());
  for (const auto& a : e.args) args.push_back(bind(*a));
  if (name == "equal_null" && args.size() == 2) {
    // a <=> b compares as a = b does: a quoted literal beside a number is
    // that number.
    args[0] = numberFromStringLiteral(*e.args[0], args[0], args[1]);
    args[1] = numberFromStringLiteral(*e.args[1], args[1], args[0]);
  }
  try {
    return makeCall(name, std::move(args), e.pos);
  } catch (SqlError& err) {
    // An invalid regular expression (2201B) is the pattern's fault, and the
    // pattern is the second argument of every regular-expression function:
    // point there rather than at the call.
    if (err.sqlstate() == sqlstate::kInvalidRegex && e.args.size() >= 2 && err.position() == e.pos)
      err.setPosition(e.args[1]->pos);
    // A name no built-in is close to may be a typo of the user's own function.
    if (err.sqlstate() == sqlstate::kUndefinedFunction && err.hint().empty()) {
      std::string close = closeUserFunction(name, functions_.catalog);
      if (!close.empty()) err.withHint(fmt::format("did you mean {}?", close));
    }
    throw;
  }
}

ExprPtr ExprBinder::bindNode(const ast::Expr& e) const {
  switch (e.kind) {
    case ast::ExprKind::Literal:
      return bindLiteral(e);
    case ast::ExprKind::Column:
      return bindColumn(e);
    case ast::ExprKind::Star:
      throw SqlError(sqlstate::kSyntaxError, "* is only allowed in the select list or count(*)",
                     e.pos);
    case ast::ExprKind::Unary: {
      ExprPtr arg = bind(*e.args.at(0));
      std::string op = toUpper(e.op);
      if (op == "NOT") return makeNot(arg, e.pos);
      if (op == "-") return makeCall("neg", {arg}, e.pos);
      if (op == "~") return makeCall("~", {arg}, e.pos);
      if (op == "+") {
        TypeId t = arg->type()->id;
        if (!arg->type()->isNumeric() && t != TypeId::Interval && t != TypeId::YearMonthInterval &&
            t != TypeId::Null) {
          throw SqlError(sqlstate::kDatatypeMismatch,
                         fmt::format("unary + needs a number, not {}", arg->type()->toString()),
                         e.pos);
        }
        return arg;
      }
      throw InternalError("unknown unary operator " + e.op);
    }
    case ast::ExprKind::Binary: {
      ExprPtr l = bind(*e.args.at(0));
      ExprPtr r = bind(*e.args.at(1));
      std::string op = toUpper(e.op);
      if (op == "AND") return makeAnd(l, r, e.pos);
      if (op == "OR") return makeOr(l, r, e.pos);
      if (op != "/") {  // `/` divides as DOUBLE whatever its operands
        ExprPtr wl = widenConstant(l, r);
        r = widenConstant(r, l);
        l = wl;
      }
      if (isComparison(op)) {
        // A quoted literal compared with a number is that number, as
        // PostgreSQL reads an untyped literal (psql writes c.oid = '16384').
        l = numberFromStringLiteral(*e.args[0], l, r);
        r = numberFromStringLiteral(*e.args[1], r, l);
        l = arrayFromStringLiteral(*e.args[0], l, r);
        r = arrayFromStringLiteral(*e.args[1], r, l);
      }
      if (op == "!=") op = "<>";
      if (op == "==") op = "=";
      return makeCall(op, {l, r}, e.pos);
    }
    case ast::ExprKind::Call:
      return bindCall(e);
    case ast::ExprKind::Case: {
      ExprPtr operand = e.hasOperand ? bind(*e.args.at(0)) : nullptr;
      std::vector<std::pair<ExprPtr, ExprPtr>> whens;
      for (const auto& [w, t] : e.whens) whens.emplace_back(bind(*w), bind(*t));
      ExprPtr elseExpr = e.elseExpr ? bind(*e.elseExpr) : nullptr;
      return makeCase(operand, std::move(whens), elseExpr, e.pos);
    }
    case ast::ExprKind::Cast: {
      // x::regclass and its kin look names and OIDs up in the session's
      // catalog: calls of the functions of that name (common/functions/pg_catalog.cpp).
      std::string target = toLower(e.castType.name);
      if (target == "regclass" || target == "regtype" || target == "regnamespace" ||
          target == "regrole") {
        return makeCall(target, {bind(*e.args.at(0))}, e.pos);
      }
      if (e.name == "try_cast")
        return makeTryCast(bind(*e.args.at(0)), bindType(e.castType), e.pos);
      return makeCast(bind(*e.args.at(0)), bindType(e.castType), e.pos);
    }
    case ast::ExprKind::In: {
      ExprPtr v = bind(*e.args.at(0));
      std::vector<ExprPtr> list;
      // A quoted literal in the list of a number is that number, as beside =.
      for (size_t i = 1; i < e.args.size(); ++i)
        list.push_back(numberFromStringLiteral(*e.args[i], widenConstant(bind(*e.args[i]), v), v));
      return makeIn(v, std::move(list), e.negated, e.pos);
    }
    case ast::ExprKind::Between: {
      ExprPtr v = bind(*e.args.at(0));
      return makeBetween(v, widenConstant(bind(*e.args.at(1)), v),
                         widenConstant(bind(*e.args.at(2)), v), e.negated, e.pos);
    }
    case ast::ExprKind::Like:
      return makeLike(bind(*e.args.at(0)), bind(*e.args.at(1)), e.negated, e.pos);
    case ast::ExprKind::IsNull:
      return makeIsNull(bind(*e.args.at(0)), e.negated);
    case ast::ExprKind::Field:
      return makeFieldAccess(bind(*e.args.at(0)), e.name, e.pos);
    case ast::ExprKind::Subscript:
      return makeSubscript(bind(*e.args.at(0)), bind(*e.args.at(1)), e.pos);
    case ast::ExprKind::Subquery:
    case ast::ExprKind::InSubquery:
    case ast::ExprKind::Exists:
      refuseSubquery(e, context_);
  }
  throw InternalError("unknown expression kind");
}

ExprPtr ExprBinder::bind(const ast::Expr& e) const {
  // A lambda's parameter is no column of the query, and an expression over
  // one no grouping key, whatever a hook would make of their names.
  bool readsLambdaVariable =
      !lambdaVariables_.empty() && ast::findNode(e, [this](const ast::Expr& n) {
        return n.kind == ast::ExprKind::Column && !n.parts.empty() &&
               lambdaVariable(n.parts[0], n.pos) != nullptr;
      }) != nullptr;
  if (hook_ && !readsLambdaVariable) {
    if (ExprPtr replaced = hook_(e)) return replaced;
  }
  ExprPtr bound = bindNode(e);
  // Fold constant subtrees once here instead of once per record. A subtree
  // that fails to evaluate (1/0 under a CASE that never reaches it) is left as
  // it is: whether it fails is for run time to find out.
  if (e.kind != ast::ExprKind::Literal && bound->isConstant()) {
    try {
      return makeLiteral(bound->eval(Row{}), bound->type());
    } catch (const std::exception&) {
      return bound;
    }
  }
  return bound;
}

bool containsAggregate(const ast::Expr& e) {
  return ast::findNode(e, [](const ast::Expr& n) {
           // count(*) OVER (...) is a window function, computed per row.
           return n.kind == ast::ExprKind::Call && !n.over &&
                  (n.star || isAggregateFunction(n.name));
         }) != nullptr;
}

bool containsWindow(const ast::Expr& e) {
  return ast::findNode(e, [](const ast::Expr& n) {
           return n.kind == ast::ExprKind::Call &&
                  (iequals(n.name, "window") || iequals(n.name, "session_window"));
         }) != nullptr;
}

}  // namespace planner_detail

DecimalLiteralScope::DecimalLiteralScope(bool decimal)
    : previous_(planner_detail::decimalLiterals) {
  planner_detail::decimalLiterals = decimal;
}

DecimalLiteralScope::~DecimalLiteralScope() { planner_detail::decimalLiterals = previous_; }

TimestampLiteralScope::TimestampLiteralScope(bool zoned)
    : previous_(planner_detail::zonedTimestampLiterals) {
  planner_detail::zonedTimestampLiterals = zoned;
}

TimestampLiteralScope::~TimestampLiteralScope() {
  planner_detail::zonedTimestampLiterals = previous_;
}

using planner_detail::ExprBinder;
using planner_detail::ExprContext;

ExprPtr bindExpression(const ast::Expr& expr, const Schema& schema, const Catalog* functions) {
  planner_detail::Scope scope = planner_detail::scopeFromSchema(schema, "");
  return ExprBinder(scope, ExprContext::General, planner_detail::UserFunctions{functions})
      .bind(expr);
}

namespace {

// Which value types may be stored in a column of another type by INSERT: the
// numeric types among themselves, and text into the types that have a text form
// (a timestamp is written as '2024-05-01 10:00:00').
bool assignable(const DataType& from, const DataType& to) {
  if (from.id == TypeId::Null || from.equals(to)) return true;
  if (from.isNumeric() && to.isNumeric()) return true;
  if (from.id == TypeId::String) {
    return to.id == TypeId::Binary || to.id == TypeId::Timestamp || to.id == TypeId::Date ||
           to.id == TypeId::TimestampNtz || to.id == TypeId::String;
  }
  if (from.id == TypeId::Date || from.id == TypeId::Timestamp || from.id == TypeId::TimestampNtz)
    return to.id == TypeId::Date || to.id == TypeId::Timestamp || to.id == TypeId::TimestampNtz;
  if (from.id == TypeId::Binary) return to.id == TypeId::String;
  return false;
}

}  // namespace

Value evalConstant(const ast::Expr& expr, const DataTypePtr& target) {
  planner_detail::Scope scope;
  // INSERT VALUES calls no user function.
  ExprPtr bound =
      ExprBinder(scope, ExprContext::General, planner_detail::UserFunctions{}).bind(expr);
  if (!bound->isConstant()) {
    throw SqlError(sqlstate::kDatatypeMismatch, "VALUES must be constants", expr.pos)
        .withHint("functions such as rand() and now() are evaluated per row; write the value");
  }
  if (!assignable(*bound->type(), *target)) {
    throw SqlError(sqlstate::kDatatypeMismatch,
                   fmt::format("value of type {} cannot be stored in a column of type {}",
                               bound->type()->toString(), target->toString()),
                   expr.pos)
        .withHint(fmt::format("write CAST(... AS {})", target->toString()));
  }
  Value v = bound->eval(Row{});
  if (v.isNull()) return v;
  if (bound->type()->equals(*target)) return v;
  if ((target->id == TypeId::Int || target->id == TypeId::SmallInt || target->id == TypeId::TinyInt) &&
      bound->type()->isNumeric()) {
    double d = v.toDouble();
    double lo = target->id == TypeId::Int ? INT32_MIN : target->id == TypeId::SmallInt ? INT16_MIN : INT8_MIN;
    double hi = target->id == TypeId::Int ? INT32_MAX : target->id == TypeId::SmallInt ? INT16_MAX : INT8_MAX;
    if (d < lo || d > hi) {
      throw SqlError(sqlstate::kNumericOutOfRange,
                     fmt::format("value {} is out of range for type {}", v.toString(), target->toString()),
                     expr.pos);
    }
  }
  if (target->id == TypeId::BigInt && bound->type()->id == TypeId::Double) {
    double d = v.asDouble();
    if (!(d >= -9.2233720368547758e18 && d < 9.2233720368547758e18)) {
      throw SqlError(sqlstate::kNumericOutOfRange,
                     fmt::format("value {} is out of range for type BIGINT", v.toString()),
                     expr.pos);
    }
  }
  Value cast = castValue(v, *target);
  if (cast.isNull()) {
    // Spark's lenient cast turns unreadable text into NULL; for a literal the
    // user typed that is a mistake worth reporting.
    const char* state = target->id == TypeId::Timestamp || target->id == TypeId::Date ||
                                target->id == TypeId::TimestampNtz
                            ? sqlstate::kInvalidDatetimeFormat
                            : sqlstate::kInvalidTextRepresentation;
    throw SqlError(state,
                   fmt::format("invalid input syntax for type {}: \"{}\"", target->toString(),
                               v.toString()),
                   expr.pos);
  }
  return cast;
}

}  // namespace rtsql
