// Expression factories and the node classes of operators and predicates.
// Type checking and implicit conversions happen here, once per expression at
// bind time; the nodes' eval() methods then do only per-record work with the
// types already settled (no name lookups, no pattern compilation, no type
// dispatch beyond one switch).
//
// Arithmetic follows Spark SQL without ANSI mode: INT op INT stays INT (wrapping
// on overflow, like Spark), INT with BIGINT gives BIGINT, anything with DOUBLE
// gives DOUBLE; `/` always divides as DOUBLE; a division or modulo by zero gives
// NULL. Timestamps move by intervals and their difference is an interval.
#include "common/expr.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <unordered_set>

#include "common/ansi_mode.h"
#include "common/digest.h"
#include "common/edit_distance.h"
#include "common/function_determinism.h"
#include "common/functions/higher_order.h"
#include "common/functions/internal.h"
#include "common/functions/map_funcs.h"
#include "common/functions/pg_catalog.h"
#include "common/json.h"
#include "common/layer_functions.h"
#include "common/map_order.h"
#include "common/schema.h"
#include "common/sql_text.h"

namespace rtsql {

using namespace expr_internal;

namespace {

// ---- literals -------------------------------------------------------------

class LiteralExpr final : public Expr {
 public:
  ExprPtr withChildren(std::vector<ExprPtr>) const override {
    return std::make_shared<LiteralExpr>(v_, type());
  }
  LiteralExpr(Value v, DataTypePtr t) : Expr(std::move(t)), v_(std::move(v)) {}
  Value eval(const Row&) const override { return v_; }
  const Value& evalRef(const Row&, Value&) const override { return v_; }
  bool isConstant() const override { return true; }
  void forEachChild(const std::function<void(const Expr&)>&) const override {}
  std::string toString() const override {
    switch (v_.type()) {
      case TypeId::String: return sqlStringLiteral(v_.asString());
      case TypeId::Binary:
        return "X'" + lowerHex(v_.asString()) + "'";
      case TypeId::Timestamp: return "TIMESTAMP '" + formatTimestamp(v_.asInt()) + "'";
      case TypeId::TimestampNtz: return "TIMESTAMP_NTZ '" + formatTimestamp(v_.asInt()) + "'";
      case TypeId::Interval: return "INTERVAL '" + formatInterval(v_.asInt()) + "'";
      // Spark's spelling of a DECIMAL literal, which reads back as the same type
      // when its digits fit 38.
      case TypeId::Decimal: return v_.toString() + "BD";
      default: return v_.toString();
    }
  }

 private:
  Value v_;
};

// ---- arithmetic -------------------------------------------------------------

enum class ArithOp { Add, Sub, Mul, Div, Mod };
enum class ArithMode {
  Int32, Int64, Double, Decimal, TsIv, IvTs, TsTs, IvIv, IvNum, NumIv, DateDays, DaysDate, DateDate,
  NtzIv, IvNtz, Int8, Int16, Float
};

// A day number as a DATE; NULL past Spark's 32-bit day numbers.
Value dateOrNull(int64_t days) {
  return days > INT32_MAX || days < INT32_MIN ? Value() : Value::date(days);
}

class ArithExpr final : public Expr {
 public:
  void forEachChild(const std::function<void(const Expr&)>& fn) const override {
    fn(*l_);
    fn(*r_);
  }
  ExprPtr withChildren(std::vector<ExprPtr> c) const override {
    return std::make_shared<ArithExpr>(type(), op_, mode_, std::move(c[0]), std::move(c[1]), sym_,
                                       ansi_);
  }
  ArithExpr(DataTypePtr t, ArithOp op, ArithMode mode, ExprPtr l, ExprPtr r, std::string sym,
            bool ansi)
      : Expr(std::move(t)),
        op_(op),
        mode_(mode),
        ansi_(ansi),
        l_(std::move(l)),
        r_(std::move(r)),
        sym_(std::move(sym)) {
    dec_ = {type()->precision, type()->scale};
  }

  Value eval(const Row& row) const override {
    Value sa, sb;
    const Value& a = l_->evalRef(row, sa);
    if (a.isNull()) return {};
    const Value& b = r_->evalRef(row, sb);
    if (b.isNull()) return {};
    switch (mode_) {
      case ArithMode::Int32:
      case ArithMode::Int64: {
        // The builtins wrap without undefined behaviour, as Java's arithmetic
        // does, and say whether they did: ANSI mode raises then (an INT's
        // operands, widened, never overflow 64 bits: its own check is below).
        const int64_t x = a.asInt(), y = b.asInt();
        int64_t r;
        bool over = false;
        switch (op_) {
          case ArithOp::Add: over = __builtin_add_overflow(x, y, &r); break;
          case ArithOp::Sub: over = __builtin_sub_overflow(x, y, &r); break;
          case ArithOp::Mul: over = __builtin_mul_overflow(x, y, &r); break;
          case ArithOp::Mod:
            if (y == 0) [[unlikely]] {
              if (ansi_) byZero(a, b);
              return {};
            }
            r = y == -1 ? 0 : x % y;
            break;
          default: return {};
        }
        if (mode_ == ArithMode::Int32) {
          const auto r32 = static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(r)));
          if (r32 != r) [[unlikely]] {
            if (ansi_) overflow(a, b);
          }
          return Value::integer(r32);
        }
        if (over) [[unlikely]] {
          if (ansi_) overflow(a, b);
        }
        return Value::bigint(r);
      }
      case ArithMode::Double: {
        double x = a.toDouble(), y = b.toDouble();
        switch (op_) {
          case ArithOp::Add: return Value::float64(x + y);
          case ArithOp::Sub: return Value::float64(x - y);
          case ArithOp::Mul: return Value::float64(x * y);
          case ArithOp::Div:
          case ArithOp::Mod:
            if (y == 0) [[unlikely]] {
              if (ansi_) byZero(a, b);
              return {};
            }
            return Value::float64(op_ == ArithOp::Div ? x / y : std::fmod(x, y));
        }
        return {};
      }
      case ArithMode::Decimal:
        return evalDecimal(a, b);
      case ArithMode::Int8:
      case ArithMode::Int16:
        return evalSmallIntegral(a, b);
      case ArithMode::Float:
        return evalFloat(a, b);
      case ArithMode::TsIv:
        return Value::timestamp(op_ == ArithOp::Add ? a.asInt() + b.asInt() : a.asInt() - b.asInt());
      case ArithMode::IvTs:
        return Value::timestamp(a.asInt() + b.asInt());
      case ArithMode::TsTs:
        return Value::interval(a.asInt() - b.asInt());
      case ArithMode::IvIv:
        return Value::interval(op_ == ArithOp::Add ? a.asInt() + b.asInt() : a.asInt() - b.asInt());
      case ArithMode::IvNum: {
        double f = b.toDouble();
        if (op_ == ArithOp::Div) {
          if (f == 0) [[unlikely]] {
            if (ansi_) byZero(a, b);
            return {};
          }
          return Value::interval(static_cast<int64_t>(std::llround(static_cast<double>(a.asInt()) / f)));
        }
        return Value::interval(static_cast<int64_t>(std::llround(static_cast<double>(a.asInt()) * f)));
      }
      case ArithMode::NumIv:
        return Value::interval(
            static_cast<int64_t>(std::llround(a.toDouble() * static_cast<double>(b.asInt()))));
      case ArithMode::DateDays:
        return dateOrNull(op_ == ArithOp::Add ? a.asInt() + b.asInt() : a.asInt() - b.asInt());
      case ArithMode::DaysDate:
        return dateOrNull(a.asInt() + b.asInt());
      case ArithMode::DateDate:
        return Value::interval((a.asInt() - b.asInt()) * kMicrosPerDay);
      case ArithMode::NtzIv:
        return Value::timestampNtz(op_ == ArithOp::Add ? a.asInt() + b.asInt() : a.asInt() - b.asInt());
      case ArithMode::IvNtz:
        return Value::timestampNtz(a.asInt() + b.asInt());
    }
    return {};
  }
  // Both operands are DECIMALs (the binder cast them); the result is rounded
  // to this node's type, and NULL when it does not fit. Out of eval: inlined
  // there, its 128-bit arithmetic made every arithmetic node pay for the
  // registers it needs.
  [[gnu::noinline]] Value evalDecimal(const Value& a, const Value& b) const {
    Int128 x = a.asDecimal(), y = b.asDecimal();
    int sx = a.decimalScale(), sy = b.decimalScale();
    std::optional<Int128> r;
    switch (op_) {
      case ArithOp::Add: r = decimal::add(x, sx, y, sy, dec_); break;
      case ArithOp::Sub: r = decimal::sub(x, sx, y, sy, dec_); break;
      case ArithOp::Mul: r = decimal::mul(x, sx, y, sy, dec_); break;
      case ArithOp::Div: r = decimal::div(x, sx, y, sy, dec_); break;
      case ArithOp::Mod: r = decimal::mod(x, sx, y, sy, dec_); break;
    }
    if (!r && ansi_) {
      if ((op_ == ArithOp::Div || op_ == ArithOp::Mod) && y == 0) byZero(a, b);
      ansi::raise(ansi::kNumericOutOfRange,
                  fmt::format("{} {} {} cannot be represented as {}", a.toString(), sym_,
                              b.toString(), type()->toString()),
                  op_ == ArithOp::Div ? "try_divide" : "");
    }
    return r ? Value::decimal(*r, dec_.precision, dec_.scale) : Value();
  }
  // TINYINT or SMALLINT operands: computed in 64 bits, where no product of
  // two of them overflows, and the result kept in the operands' type; out of
  // its range ANSI mode raises ARITHMETIC_OVERFLOW, as Spark 4 does, and the
  // legacy mode wraps, as Java's arithmetic does.
  [[gnu::noinline]] Value evalSmallIntegral(const Value& a, const Value& b) const {
    const int64_t x = a.asInt(), y = b.asInt();
    int64_t r;
    switch (op_) {
      case ArithOp::Add: r = x + y; break;
      case ArithOp::Sub: r = x - y; break;
      case ArithOp::Mul: r = x * y; break;
      case ArithOp::Mod:
        if (y == 0) {
          if (ansi_) byZero(a, b);
          return {};
        }
        r = x % y;
        break;
      default: return {};
    }
    TypeId t = mode_ == ArithMode::Int8 ? TypeId::TinyInt : TypeId::SmallInt;
    return ansi_ ? checkedSmallIntegral(r, t, "operator " + sym_) : narrowIntegralWrapping(r, t);
  }
  // FLOAT operands: float arithmetic, as Spark keeps FLOAT + FLOAT a FLOAT.
  [[gnu::noinline]] Value evalFloat(const Value& a, const Value& b) const {
    const auto x = static_cast<float>(a.asDouble()), y = static_cast<float>(b.asDouble());
    switch (op_) {
      case ArithOp::Add: return Value::float32(x + y);
      case ArithOp::Sub: return Value::float32(x - y);
      case ArithOp::Mul: return Value::float32(x * y);
      case ArithOp::Mod:
        if (y == 0) {
          if (ansi_) byZero(a, b);
          return {};
        }
        return Value::float32(std::fmod(x, y));
      default: return {};
    }
  }
  // ANSI mode's errors (common/ansi_mode.h), out of eval.
  [[noreturn, gnu::cold, gnu::noinline]] void overflow(const Value& a, const Value& b) const {
    ansi::raise(ansi::kArithmeticOverflow,
                fmt::format("{} overflow: {} {} {}", type()->toString(), a.toString(), sym_,
                            b.toString()),
                op_ == ArithOp::Add   ? "try_add"
                : op_ == ArithOp::Sub ? "try_subtract"
                                      : "try_multiply");
  }
  [[noreturn, gnu::cold, gnu::noinline]] void byZero(const Value& a, const Value& b) const {
    if (op_ == ArithOp::Mod)
      ansi::raise(ansi::kRemainderByZero,
                  fmt::format("remainder by zero: {} % {}", a.toString(), b.toString()));
    ansi::raise(ansi::kDivideByZero,
                fmt::format("division by zero: {} / {}", a.toString(), b.toString()),
                "try_divide");
  }
  std::string toString() const override {
    return "(" + l_->toString() + " " + sym_ + " " + r_->toString() + ")";
  }
  bool isConstant() const override { return l_->isConstant() && r_->isConstant(); }

 private:
  ArithOp op_;
  ArithMode mode_;
  bool ansi_;  // ANSI mode, fixed when bound: raise where the legacy mode answers NULL or wraps
  decimal::Type dec_;  // the result's precision and scale, for ArithMode::Decimal
  ExprPtr l_, r_;
  std::string sym_;
};

[[noreturn]] void operatorError(const std::string& sym, const ExprPtr& l, const ExprPtr& r, size_t pos) {
  throw SqlError(sqlstate::kDatatypeMismatch,
                 fmt::format("operator does not exist: {} {} {}", l->type()->toString(), sym,
                             r->type()->toString()),
                 pos, "use CAST(... AS <type>) to give the operands compatible types");
}

// The DECIMAL an operand of DECIMAL arithmetic takes. As in Spark, an integer
// literal takes just its digits (3 is DECIMAL(1, 0)), a column its type's.
decimal::Type operandDecimalType(const ExprPtr& e) {
  if (e->type()->isIntegral()) {
    if (auto v = constantValue(e); v && !v->isNull()) {
      int digits = static_cast<int>(decimal::toString(v->asInt(), 0).size()) - (v->asInt() < 0 ? 1 : 0);
      return {digits, 0};
    }
  }
  return decimalTypeOf(*e->type());
}

ExprPtr makeArith(const std::string& sym, ExprPtr l, ExprPtr r, size_t pos) {
  ArithOp op = sym == "+" ? ArithOp::Add
               : sym == "-" ? ArithOp::Sub
               : sym == "*" ? ArithOp::Mul
               : sym == "/" ? ArithOp::Div
                            : ArithOp::Mod;
  // A bare NULL takes the type of the other side (NULL + NULL stays NULL-typed
  // INT arithmetic that always yields NULL).
  if (isNullType(l->type()) && isNullType(r->type())) {
    l = castTo(l, DataType::of(TypeId::Int));
    r = castTo(r, DataType::of(TypeId::Int));
  } else if (isNullType(l->type())) {
    l = castTo(l, r->type()->id == TypeId::Timestamp && op == ArithOp::Sub ? DataType::of(TypeId::Timestamp)
                  : r->type()->id == TypeId::YearMonthInterval && op == ArithOp::Mul
                      ? DataType::of(TypeId::Int)  // NULL * interval: a number
                      : r->type());
  } else if (isNullType(r->type())) {
    r = castTo(r, l->type()->id == TypeId::YearMonthInterval && (op == ArithOp::Mul || op == ArithOp::Div)
                      ? DataType::of(TypeId::Int)  // interval * NULL: a number
                  : l->type()->id == TypeId::Timestamp || l->type()->id == TypeId::TimestampNtz
                      ? DataType::of(TypeId::Interval)
                  : l->type()->id == TypeId::Date    ? DataType::of(TypeId::Int)
                                                     : l->type());
  }
  TypeId a = l->type()->id, b = r->type()->id;
  if (a == TypeId::YearMonthInterval || b == TypeId::YearMonthInterval)
    return makeYearMonthIntervalArith(sym, std::move(l), std::move(r), pos);
  const bool ansi = ansiMode();
  auto mk = [&](TypeId t, ArithMode m) {
    return std::make_shared<ArithExpr>(DataType::of(t), op, m, l, r, sym, ansi);
  };
  if (l->type()->isNumeric() && r->type()->isNumeric()) {
    // DECIMAL with DECIMAL or an integer stays DECIMAL (`/` too), with Spark's
    // result precision and scale; with a DOUBLE it is DOUBLE.
    const bool floating = l->type()->isFloating() || r->type()->isFloating();
    if ((a == TypeId::Decimal || b == TypeId::Decimal) && !floating) {
      decimal::Type ta = operandDecimalType(l), tb = operandDecimalType(r);
      decimal::Type rt = op == ArithOp::Mul   ? decimal::mulType(ta, tb)
                         : op == ArithOp::Div ? decimal::divType(ta, tb)
                         : op == ArithOp::Mod ? decimal::modType(ta, tb)
                                              : decimal::addType(ta, tb);
      l = castTo(l, decimalType(ta));
      r = castTo(r, decimalType(tb));
      return std::make_shared<ArithExpr>(decimalType(rt), op, ArithMode::Decimal, l, r, sym, ansi);
    }
    if (op == ArithOp::Div || a == TypeId::Double || b == TypeId::Double ||
        (floating && (a == TypeId::Decimal || b == TypeId::Decimal))) {
      l = castTo(l, DataType::of(TypeId::Double));
      r = castTo(r, DataType::of(TypeId::Double));
      return mk(TypeId::Double, ArithMode::Double);
    }
    if (a == TypeId::Int && b == TypeId::Int) return mk(TypeId::Int, ArithMode::Int32);
    // FLOAT with FLOAT or an integer stays FLOAT, and integers narrower than
    // BIGINT keep the wider of the two types, as in Spark.
    if (TypeId w = widerNumericType(*l->type(), *r->type())->id; w != TypeId::BigInt) {
      l = castTo(l, DataType::of(w));
      r = castTo(r, DataType::of(w));
      return mk(w, w == TypeId::Float      ? ArithMode::Float
                   : w == TypeId::TinyInt  ? ArithMode::Int8
                   : w == TypeId::SmallInt ? ArithMode::Int16
                                           : ArithMode::Int32);
    }
    l = castTo(l, DataType::of(TypeId::BigInt));
    r = castTo(r, DataType::of(TypeId::BigInt));
    return mk(TypeId::BigInt, ArithMode::Int64);
  }
  // A TIMESTAMP_NTZ plus or minus an INTERVAL stays one and the difference of
  // two is their interval; a DATE or text beside one reads as one, and with a
  // TIMESTAMP both are TIMESTAMPs (the NTZ read in the session zone), as in
  // Spark.
  if (a == TypeId::TimestampNtz || b == TypeId::TimestampNtz) {
    const DataTypePtr ntz = DataType::of(TypeId::TimestampNtz);
    if (a == TypeId::Timestamp || b == TypeId::Timestamp) {
      l = castTo(l, DataType::of(TypeId::Timestamp));
      r = castTo(r, DataType::of(TypeId::Timestamp));
      a = b = TypeId::Timestamp;
    } else if (op == ArithOp::Sub) {
      if (a == TypeId::TimestampNtz && (b == TypeId::String || b == TypeId::Date)) {
        r = castTo(r, ntz);
        b = TypeId::TimestampNtz;
      }
      if (b == TypeId::TimestampNtz && a == TypeId::Date) {
        l = castTo(l, ntz);
        a = TypeId::TimestampNtz;
      }
    }
    if (a == TypeId::TimestampNtz && b == TypeId::Interval && (op == ArithOp::Add || op == ArithOp::Sub))
      return mk(TypeId::TimestampNtz, ArithMode::NtzIv);
    if (a == TypeId::Interval && b == TypeId::TimestampNtz && op == ArithOp::Add)
      return mk(TypeId::TimestampNtz, ArithMode::IvNtz);
    if (a == TypeId::TimestampNtz && b == TypeId::TimestampNtz && op == ArithOp::Sub)
      return mk(TypeId::Interval, ArithMode::TsTs);
  }
  // DATE + or - a number of days is a DATE and the difference of two DATEs
  // their interval, as in Spark; with a TIMESTAMP or an INTERVAL a DATE is its
  // midnight. Text beside a DATE reads as one.
  if (a == TypeId::Date || b == TypeId::Date) {
    if (a == TypeId::Date && b == TypeId::String && op == ArithOp::Sub) {
      r = castTo(r, DataType::of(TypeId::Date));
      b = TypeId::Date;
    }
    if (a == TypeId::Date && r->type()->isIntegral() && (op == ArithOp::Add || op == ArithOp::Sub)) {
      r = castTo(r, DataType::of(TypeId::Int));
      return mk(TypeId::Date, ArithMode::DateDays);
    }
    if (l->type()->isIntegral() && b == TypeId::Date && op == ArithOp::Add) {
      l = castTo(l, DataType::of(TypeId::Int));
      return mk(TypeId::Date, ArithMode::DaysDate);
    }
    if (a == TypeId::Date && b == TypeId::Date && op == ArithOp::Sub)
      return mk(TypeId::Interval, ArithMode::DateDate);
    if (a == TypeId::Date && (b == TypeId::Timestamp || b == TypeId::Interval)) {
      l = castTo(l, DataType::of(TypeId::Timestamp));
      a = TypeId::Timestamp;
    }
    if (b == TypeId::Date && (a == TypeId::Timestamp || a == TypeId::Interval)) {
      r = castTo(r, DataType::of(TypeId::Timestamp));
      b = TypeId::Timestamp;
    }
  }
  // A string written where a timestamp belongs ("ts - '2024-01-01'") reads as one.
  if (a == TypeId::Timestamp && b == TypeId::String && op == ArithOp::Sub) {
    r = castTo(r, DataType::of(TypeId::Timestamp));
    b = TypeId::Timestamp;
  }
  if (a == TypeId::Timestamp && b == TypeId::Interval && (op == ArithOp::Add || op == ArithOp::Sub))
    return mk(TypeId::Timestamp, ArithMode::TsIv);
  if (a == TypeId::Interval && b == TypeId::Timestamp && op == ArithOp::Add)
    return mk(TypeId::Timestamp, ArithMode::IvTs);
  if (a == TypeId::Timestamp && b == TypeId::Timestamp && op == ArithOp::Sub)
    return mk(TypeId::Interval, ArithMode::TsTs);
  if (a == TypeId::Interval && b == TypeId::Interval && (op == ArithOp::Add || op == ArithOp::Sub))
    return mk(TypeId::Interval, ArithMode::IvIv);
  if (a == TypeId::Interval && r->type()->isNumeric() && (op == ArithOp::Mul || op == ArithOp::Div))
    return mk(TypeId::Interval, ArithMode::IvNum);
  if (l->type()->isNumeric() && b == TypeId::Interval && op == ArithOp::Mul)
    return mk(TypeId::Interval, ArithMode::NumIv);
  operatorError(sym, l, r, pos);
}

class NegExpr final : public Expr {
 public:
  void forEachChild(const std::function<void(const Expr&)>& fn) const override { fn(*e_); }
  ExprPtr withChildren(std::vector<ExprPtr> c) const override {
    return std::make_shared<NegExpr>(std::move(c[0]), ansi_);
  }
  NegExpr(ExprPtr e, bool ansi) : Expr(e->type()), e_(std::move(e)), ansi_(ansi) {}
  Value eval(const Row& row) const override {
    Value sv;
    const Value& v = e_->evalRef(row, sv);
    switch (v.type()) {
      case TypeId::Int:
        if (v.asInt() == INT32_MIN && ansi_) overflow(v);
        return Value::integer(static_cast<int32_t>(0u - static_cast<uint32_t>(v.asInt())));
      case TypeId::BigInt:
        if (v.asInt() == INT64_MIN && ansi_) overflow(v);
        return Value::bigint(static_cast<int64_t>(0ull - static_cast<uint64_t>(v.asInt())));
      case TypeId::Double: return Value::float64(-v.asDouble());
      case TypeId::Float: return Value::float32(-static_cast<float>(v.asDouble()));
      case TypeId::TinyInt:
      case TypeId::SmallInt: return checkedSmallIntegral(-v.asInt(), v.type(), "negation");
      case TypeId::Decimal: return Value::decimal(-v.asDecimal(), v.decimalPrecision(), v.decimalScale());
      case TypeId::Interval: return Value::interval(-v.asInt());
      default: return {};
    }
  }
  std::string toString() const override { return "(- " + e_->toString() + ")"; }
  bool isConstant() const override { return e_->isConstant(); }

 private:
  [[noreturn, gnu::cold, gnu::noinline]] void overflow(const Value& v) const {
    ansi::raise(ansi::kArithmeticOverflow,
                fmt::format("{} overflow: - {}", type()->toString(), v.toString()),
                "try_subtract");
  }

  ExprPtr e_;
  bool ansi_;  // ANSI mode: the smallest integer's negation raises
};

// ---- comparison -------------------------------------------------------------

enum class CmpOp { Eq, Ne, Lt, Le, Gt, Ge, NullSafeEq };
enum class CmpMode { Int, Double, Bytes, Generic };

class CompareExpr final : public Expr {
 public:
  void forEachChild(const std::function<void(const Expr&)>& fn) const override {
    fn(*l_);
    fn(*r_);
  }
  ExprPtr withChildren(std::vector<ExprPtr> c) const override {
    return std::make_shared<CompareExpr>(op_, mode_, std::move(c[0]), std::move(c[1]), sym_);
  }
  CompareExpr(CmpOp op, CmpMode mode, ExprPtr l, ExprPtr r, std::string sym)
      : Expr(boolType()), op_(op), mode_(mode), l_(std::move(l)), r_(std::move(r)), sym_(std::move(sym)) {}
  Value eval(const Row& row) const override {
    Value sa, sb;
    const Value& a = l_->evalRef(row, sa);
    if (a.isNull() && op_ != CmpOp::NullSafeEq) return {};
    const Value& b = r_->evalRef(row, sb);
    if (a.isNull() || b.isNull()) {
      if (op_ == CmpOp::NullSafeEq) return Value::boolean(a.isNull() && b.isNull());
      return {};
    }
    int c;
    switch (mode_) {
      case CmpMode::Int: c = cmp3(a.asInt(), b.asInt()); break;
      case CmpMode::Double: c = compareDoubles(a.asDouble(), b.asDouble()); break;
      case CmpMode::Bytes: c = a.asString().compare(b.asString()); break;
      default: c = a.compare(b); break;
    }
    switch (op_) {
      case CmpOp::Eq:
      case CmpOp::NullSafeEq: return Value::boolean(c == 0);
      case CmpOp::Ne: return Value::boolean(c != 0);
      case CmpOp::Lt: return Value::boolean(c < 0);
      case CmpOp::Le: return Value::boolean(c <= 0);
      case CmpOp::Gt: return Value::boolean(c > 0);
      case CmpOp::Ge: return Value::boolean(c >= 0);
    }
    return {};
  }
  std::string toString() const override {
    return "(" + l_->toString() + " " + sym_ + " " + r_->toString() + ")";
  }
  bool isConstant() const override { return l_->isConstant() && r_->isConstant(); }

 private:
  CmpOp op_;
  CmpMode mode_;
  ExprPtr l_, r_;
  std::string sym_;
};

// Brings two operands to one comparable type, or throws 42804 with a hint.
DataTypePtr unifyForCompare(ExprPtr& l, ExprPtr& r, size_t pos, const char* what) {
  DataTypePtr t = commonType(l->type(), r->type());
  if (!t) {
    throw SqlError(sqlstate::kDatatypeMismatch,
                   fmt::format("cannot compare {} with {}{}", l->type()->toString(),
                               r->type()->toString(), what),
                   pos, "use CAST(... AS <type>) to compare values of different types");
  }
  if (containsMap(*t)) {
    // Spark has no order or equality of maps, nor of what holds one.
    throw SqlError(sqlstate::kDatatypeMismatch,
                   fmt::format("cannot compare {} values{}: a MAP has no order or equality",
                               t->toString(), what),
                   pos, "compare their entries: map_entries(m), m['key'], map_keys(m)");
  }
  l = castTo(l, t);
  r = castTo(r, t);
  return t;
}

CmpMode modeFor(const DataTypePtr& t) {
  switch (t->id) {
    case TypeId::Int:
    case TypeId::BigInt:
    case TypeId::TinyInt:
    case TypeId::SmallInt:
    case TypeId::Timestamp:
    case TypeId::TimestampNtz:
    case TypeId::Date:
    case TypeId::Interval:
    case TypeId::YearMonthInterval: return CmpMode::Int;
    case TypeId::Double:
    case TypeId::Float: return CmpMode::Double;
    case TypeId::String:
    case TypeId::Binary: return CmpMode::Bytes;
    default: return CmpMode::Generic;
  }
}

ExprPtr makeCompare(const std::string& sym, CmpOp op, ExprPtr l, ExprPtr r, size_t pos) {
  DataTypePtr t = unifyForCompare(l, r, pos, "");
  return std::make_shared<CompareExpr>(op, modeFor(t), std::move(l), std::move(r), sym);
}

// ---- boolean logic ----------------------------------------------------------

void requireBool(const char* op, ExprPtr& e, size_t pos) {
  auto id = e->type()->id;
  if (id == TypeId::Null) {
    e = castTo(e, boolType());
    return;
  }
  if (id != TypeId::Boolean)
    throw SqlError(sqlstate::kDatatypeMismatch,
                   fmt::format("argument of {} must be type BOOLEAN, not type {}", op, e->type()->toString()),
                   pos);
}

class AndExpr final : public Expr {
 public:
  void forEachChild(const std::function<void(const Expr&)>& fn) const override {
    fn(*l_);
    fn(*r_);
  }
  ExprPtr withChildren(std::vector<ExprPtr> c) const override {
    return std::make_shared<AndExpr>(std::move(c[0]), std::move(c[1]));
  }
  AndExpr(ExprPtr l, ExprPtr r) : Expr(boolType()), l_(std::move(l)), r_(std::move(r)) {}
  Value eval(const Row& row) const override {
    Value sa, sb;
    const Value& a = l_->evalRef(row, sa);
    if (!a.isNull() && !a.asBool()) return a;
    const Value& b = r_->evalRef(row, sb);
    if (!b.isNull() && !b.asBool()) return b;
    return a.isNull() ? a : b;  // NULL if either is NULL, else TRUE
  }
  std::string toString() const override { return "(" + l_->toString() + " AND " + r_->toString() + ")"; }
  bool isConstant() const override { return l_->isConstant() && r_->isConstant(); }

 private:
  ExprPtr l_, r_;
};

class OrExpr final : public Expr {
 public:
  void forEachChild(const std::function<void(const Expr&)>& fn) const override {
    fn(*l_);
    fn(*r_);
  }
  ExprPtr withChildren(std::vector<ExprPtr> c) const override {
    return std::make_shared<OrExpr>(std::move(c[0]), std::move(c[1]));
  }
  OrExpr(ExprPtr l, ExprPtr r) : Expr(boolType()), l_(std::move(l)), r_(std::move(r)) {}
  Value eval(const Row& row) const override {
    Value sa, sb;
    const Value& a = l_->evalRef(row, sa);
    if (!a.isNull() && a.asBool()) return a;
    const Value& b = r_->evalRef(row, sb);
    if (!b.isNull() && b.asBool()) return b;
    return a.isNull() ? a : b;  // NULL if either is NULL, else FALSE
  }
  std::string toString() const override { return "(" + l_->toString() + " OR " + r_->toString() + ")"; }
  bool isConstant() const override { return l_->isConstant() && r_->isConstant(); }

 private:
  ExprPtr l_, r_;
};

class NotExpr final : public Expr {
 public:
  void forEachChild(const std::function<void(const Expr&)>& fn) const override { fn(*e_); }
  ExprPtr withChildren(std::vector<ExprPtr> c) const override {
    return std::make_shared<NotExpr>(std::move(c[0]));
  }
  explicit NotExpr(ExprPtr e) : Expr(boolType()), e_(std::move(e)) {}
  Value eval(const Row& row) const override {
    Value sv;
    const Value& v = e_->evalRef(row, sv);
    return v.isNull() ? Value() : Value::boolean(!v.asBool());
  }
  std::string toString() const override { return "(NOT " + e_->toString() + ")"; }
  bool isConstant() const override { return e_->isConstant(); }

 private:
  ExprPtr e_;
};

class IsNullExpr final : public Expr {
 public:
  void forEachChild(const std::function<void(const Expr&)>& fn) const override { fn(*e_); }
  ExprPtr withChildren(std::vector<ExprPtr> c) const override {
    return std::make_shared<IsNullExpr>(std::move(c[0]), negated_);
  }
  IsNullExpr(ExprPtr e, bool negated) : Expr(boolType()), e_(std::move(e)), negated_(negated) {}
  Value eval(const Row& row) const override {
    Value sv;
    return Value::boolean(e_->evalRef(row, sv).isNull() != negated_);
  }
  std::string toString() const override {
    return "(" + e_->toString() + (negated_ ? " IS NOT NULL)" : " IS NULL)");
  }
  bool isConstant() const override { return e_->isConstant(); }

 private:
  ExprPtr e_;
  bool negated_;
};

struct ValueHash {
  size_t operator()(const Value& v) const { return v.hash(); }
};

class InExpr final : public Expr {
 public:
  void forEachChild(const std::function<void(const Expr&)>& fn) const override {
    fn(*e_);
    for (const ExprPtr& x : list_) fn(*x);
  }
  ExprPtr withChildren(std::vector<ExprPtr> c) const override {
    ExprPtr e = std::move(c[0]);
    c.erase(c.begin());
    return std::make_shared<InExpr>(std::move(e), std::move(c), negated_);
  }
  InExpr(ExprPtr e, std::vector<ExprPtr> list, bool negated)
      : Expr(boolType()), e_(std::move(e)), list_(std::move(list)), negated_(negated) {
    allConstant_ = std::all_of(list_.begin(), list_.end(), [](const ExprPtr& x) { return x->isConstant(); });
    if (allConstant_) {
      for (const auto& x : list_) {
        Value v = *constantValue(x);
        if (v.isNull())
          listHasNull_ = true;
        else
          set_.insert(std::move(v));
      }
    }
  }
  Value eval(const Row& row) const override {
    Value sv;
    const Value& v = e_->evalRef(row, sv);
    if (v.isNull()) return {};
    bool sawNull = listHasNull_;
    bool found = false;
    if (allConstant_) {
      found = set_.count(v) != 0;
    } else {
      Value sc;
      for (const auto& x : list_) {
        const Value& c = x->evalRef(row, sc);
        if (c.isNull()) {
          sawNull = true;
        } else if (c.compare(v) == 0) {
          found = true;
          break;
        }
      }
    }
    // x IN (..., NULL) is NULL, not FALSE, when nothing matched.
    if (found) return Value::boolean(!negated_);
    if (sawNull) return {};
    return Value::boolean(negated_);
  }
  std::string toString() const override {
    std::string s = "(" + e_->toString() + (negated_ ? " NOT IN (" : " IN (");
    for (size_t i = 0; i < list_.size(); ++i) {
      if (i) s += ", ";
      s += list_[i]->toString();
    }
    return s + "))";
  }
  bool isConstant() const override { return e_->isConstant() && allConstant_; }

 private:
  ExprPtr e_;
  std::vector<ExprPtr> list_;
  bool negated_;
  bool allConstant_ = false;
  bool listHasNull_ = false;
  std::unordered_set<Value, ValueHash> set_;
};

class BetweenExpr final : public Expr {
 public:
  void forEachChild(const std::function<void(const Expr&)>& fn) const override {
    fn(*e_);
    fn(*lo_);
    fn(*hi_);
  }
  ExprPtr withChildren(std::vector<ExprPtr> c) const override {
    return std::make_shared<BetweenExpr>(std::move(c[0]), std::move(c[1]), std::move(c[2]),
                                         negated_);
  }
  BetweenExpr(ExprPtr e, ExprPtr lo, ExprPtr hi, bool negated)
      : Expr(boolType()), e_(std::move(e)), lo_(std::move(lo)), hi_(std::move(hi)), negated_(negated) {}
  Value eval(const Row& row) const override {
    Value sv, slo, shi;
    const Value& v = e_->evalRef(row, sv);
    if (v.isNull()) return {};
    const Value& lo = lo_->evalRef(row, slo);
    const Value& hi = hi_->evalRef(row, shi);
    // Three-valued (v >= lo AND v <= hi).
    int ge = lo.isNull() ? -1 : (v.compare(lo) >= 0 ? 1 : 0);
    int le = hi.isNull() ? -1 : (v.compare(hi) <= 0 ? 1 : 0);
    if (ge == 0 || le == 0) return Value::boolean(negated_);
    if (ge < 0 || le < 0) return {};
    return Value::boolean(!negated_);
  }
  std::string toString() const override {
    return "(" + e_->toString() + (negated_ ? " NOT BETWEEN " : " BETWEEN ") + lo_->toString() +
           " AND " + hi_->toString() + ")";
  }
  bool isConstant() const override { return e_->isConstant() && lo_->isConstant() && hi_->isConstant(); }

 private:
  ExprPtr e_, lo_, hi_;
  bool negated_;
};

// ---- LIKE -------------------------------------------------------------------

// A LIKE pattern compiled into segments split at '%': each segment is a run of
// literal bytes and '_' (one UTF-8 character). Matching places the first segment
// at the start, the last at the end and the others leftmost in between, which is
// exact for this pattern language and linear in practice.
class LikePattern {
 public:
  explicit LikePattern(std::string_view p) {
    segments_.emplace_back();
    for (size_t i = 0; i < p.size(); ++i) {
      char c = p[i];
      if (c == '\\' && i + 1 < p.size()) {
        addLiteral(p[++i]);
      } else if (c == '%') {
        segments_.emplace_back();
      } else if (c == '_') {
        segments_.back().push_back(Piece{{}, true});
      } else {
        addLiteral(c);
      }
    }
  }

  bool matches(std::string_view s) const {
    if (segments_.size() == 1) {
      size_t end;
      return matchAt(segments_[0], s, 0, &end) && end == s.size();
    }
    size_t pos = 0;
    // First segment is anchored at the start.
    if (!matchAt(segments_.front(), s, 0, &pos)) return false;
    // Middle segments: leftmost occurrence.
    for (size_t k = 1; k + 1 < segments_.size(); ++k) {
      const auto& seg = segments_[k];
      if (seg.empty()) continue;
      if (seg.size() == 1 && !seg[0].any) {
        // A plain literal between two '%': a substring search.
        size_t at = findSubstring(s, seg[0].lit, pos);
        if (at == std::string_view::npos) return false;
        pos = at + seg[0].lit.size();
        continue;
      }
      bool found = false;
      for (size_t start = pos; start <= s.size(); ++start) {
        if (start < s.size() && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80) continue;
        size_t end;
        if (matchAt(seg, s, start, &end)) {
          pos = end;
          found = true;
          break;
        }
      }
      if (!found) return false;
    }
    // Last segment is anchored at the end.
    const auto& last = segments_.back();
    if (last.empty()) return true;
    if (last.size() == 1 && !last[0].any) {
      const std::string& lit = last[0].lit;
      return s.size() - pos >= lit.size() && s.compare(s.size() - lit.size(), lit.size(), lit) == 0;
    }
    for (size_t start = s.size() + 1; start-- > pos;) {
      if (start < s.size() && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80) continue;
      size_t end;
      if (matchAt(last, s, start, &end) && end == s.size()) return true;
      if (!hasAny(last) && start + literalLen(last) < s.size()) return false;
    }
    return false;
  }

 private:
  struct Piece {
    std::string lit;
    bool any;  // '_'
  };
  using Segment = std::vector<Piece>;

  void addLiteral(char c) {
    auto& seg = segments_.back();
    if (seg.empty() || seg.back().any) seg.push_back(Piece{{}, false});
    seg.back().lit += c;
  }
  static bool hasAny(const Segment& seg) {
    return std::any_of(seg.begin(), seg.end(), [](const Piece& p) { return p.any; });
  }
  static size_t literalLen(const Segment& seg) {
    size_t n = 0;
    for (const auto& p : seg) n += p.lit.size();
    return n;
  }
  static bool matchAt(const Segment& seg, std::string_view s, size_t pos, size_t* end) {
    for (const auto& p : seg) {
      if (p.any) {
        if (pos >= s.size()) return false;
        ++pos;
        while (pos < s.size() && (static_cast<unsigned char>(s[pos]) & 0xC0) == 0x80) ++pos;
      } else {
        if (s.size() - pos < p.lit.size() || s.compare(pos, p.lit.size(), p.lit) != 0) return false;
        pos += p.lit.size();
      }
    }
    *end = pos;
    return true;
  }

  std::vector<Segment> segments_;
};

class LikeExpr final : public Expr {
 public:
  void forEachChild(const std::function<void(const Expr&)>& fn) const override {
    fn(*e_);
    fn(*pattern_);
  }
  ExprPtr withChildren(std::vector<ExprPtr> c) const override {
    return std::make_shared<LikeExpr>(std::move(c[0]), std::move(c[1]), negated_);
  }
  LikeExpr(ExprPtr e, ExprPtr pattern, bool negated)
      : Expr(boolType()), e_(std::move(e)), pattern_(std::move(pattern)), negated_(negated) {
    if (auto c = constantValue(pattern_)) {
      constantNull_ = c->isNull();
      if (!constantNull_) compiled_.emplace(c->asString());
    }
  }
  Value eval(const Row& row) const override {
    Value sv, sp;
    const Value& v = e_->evalRef(row, sv);
    if (v.isNull()) return {};
    if (compiled_) return Value::boolean(compiled_->matches(v.asString()) != negated_);
    if (constantNull_) return {};
    const Value& p = pattern_->evalRef(row, sp);
    if (p.isNull()) return {};
    return Value::boolean(LikePattern(p.asString()).matches(v.asString()) != negated_);
  }
  std::string toString() const override {
    return "(" + e_->toString() + (negated_ ? " NOT LIKE " : " LIKE ") + pattern_->toString() + ")";
  }
  bool isConstant() const override { return e_->isConstant() && pattern_->isConstant(); }

 private:
  ExprPtr e_, pattern_;
  bool negated_;
  bool constantNull_ = false;
  std::optional<LikePattern> compiled_;
};

// ---- CASE ---------------------------------------------------------------------

class CaseExpr final : public Expr {
 public:
  void forEachChild(const std::function<void(const Expr&)>& fn) const override {
    if (operand_) fn(*operand_);
    for (const auto& [when, then] : whens_) {
      fn(*when);
      fn(*then);
    }
    if (else_) fn(*else_);
  }
  ExprPtr withChildren(std::vector<ExprPtr> c) const override {
    size_t at = 0;
    ExprPtr operand = operand_ ? std::move(c[at++]) : nullptr;
    std::vector<std::pair<ExprPtr, ExprPtr>> whens;
    for (size_t w = 0; w < whens_.size(); ++w, at += 2) {
      whens.emplace_back(std::move(c[at]), std::move(c[at + 1]));
    }
    ExprPtr elseExpr = else_ ? std::move(c[at]) : nullptr;
    return std::make_shared<CaseExpr>(type(), std::move(operand), std::move(whens),
                                      std::move(elseExpr));
  }
  CaseExpr(DataTypePtr t, ExprPtr operand, std::vector<std::pair<ExprPtr, ExprPtr>> whens, ExprPtr elseExpr)
      : Expr(std::move(t)), operand_(std::move(operand)), whens_(std::move(whens)), else_(std::move(elseExpr)) {}
  Value eval(const Row& row) const override {
    const Expr* branch = choose(row);
    return branch ? branch->eval(row) : Value();
  }
  const Value& evalRef(const Row& row, Value& scratch) const override {
    const Expr* branch = choose(row);
    return branch ? branch->evalRef(row, scratch) : Value::null();
  }
  std::string toString() const override {
    std::string s = "CASE";
    if (operand_) s += " " + operand_->toString();
    for (const auto& [w, then] : whens_) s += " WHEN " + w->toString() + " THEN " + then->toString();
    if (else_) s += " ELSE " + else_->toString();
    return s + " END";
  }
  bool isConstant() const override {
    if (operand_ && !operand_->isConstant()) return false;
    if (else_ && !else_->isConstant()) return false;
    for (const auto& [w, then] : whens_)
      if (!w->isConstant() || !then->isConstant()) return false;
    return true;
  }

 private:
  // The THEN (or ELSE) expression whose value the CASE takes for `row`; null
  // when there is no ELSE and nothing matched.
  const Expr* choose(const Row& row) const {
    Value sv, sc;
    if (operand_) {
      const Value& v = operand_->evalRef(row, sv);
      if (!v.isNull()) {
        for (const auto& [w, then] : whens_) {
          const Value& c = w->evalRef(row, sc);
          if (!c.isNull() && c.compare(v) == 0) return then.get();
        }
      }
    } else {
      for (const auto& [w, then] : whens_) {
        const Value& c = w->evalRef(row, sc);
        if (!c.isNull() && c.asBool()) return then.get();
      }
    }
    return else_.get();
  }

  ExprPtr operand_;
  std::vector<std::pair<ExprPtr, ExprPtr>> whens_;
  ExprPtr else_;
};

// ---- subscript --------------------------------------------------------------

class SubscriptExpr final : public Expr {
 public:
  void forEachChild(const std::function<void(const Expr&)>& fn) const override {
    fn(*e_);
    fn(*idx_);
  }
  ExprPtr withChildren(std::vector<ExprPtr> c) const override {
    return std::make_shared<SubscriptExpr>(std::move(c[0]), std::move(c[1]), type(), ansi_);
  }
  SubscriptExpr(ExprPtr e, ExprPtr idx, DataTypePtr t, bool ansi)
      : Expr(std::move(t)), e_(std::move(e)), idx_(std::move(idx)), ansi_(ansi) {}
  Value eval(const Row& row) const override {
    Value scratch;
    return evalRef(row, scratch);
  }
  // The item inside the array: when the array is computed it is held by
  // `scratch`, which keeps the item alive for the caller.
  const Value& evalRef(const Row& row, Value& scratch) const override {
    const Value& a = e_->evalRef(row, scratch);
    if (a.isNull()) return Value::null();
    Value si;
    const Value& i = idx_->evalRef(row, si);
    if (i.isNull()) return Value::null();
    const auto& items = a.asList();
    int64_t k = i.asInt();
    if (k < 0 || static_cast<uint64_t>(k) >= items.size()) [[unlikely]] {
      if (ansi_) outOfRange(k, items.size());
      return Value::null();
    }
    return items[static_cast<size_t>(k)];
  }
  std::string toString() const override { return e_->toString() + "[" + idx_->toString() + "]"; }
  bool isConstant() const override { return e_->isConstant() && idx_->isConstant(); }

 private:
  [[noreturn, gnu::cold, gnu::noinline]] static void outOfRange(int64_t k, size_t size) {
    ansi::raise(ansi::kInvalidArrayIndex,
                fmt::format("the index {} is out of bounds: the array has {} elements", k, size),
                "try_element_at (1-based)");
  }

  ExprPtr e_, idx_;
  bool ansi_;  // ANSI mode: an index out of range raises
};

// ---- operator names -----------------------------------------------------------

// The aggregate functions by every name a query may call them (Spark's
// aliases included); planner/aggregate_binder.cpp binds each.
const std::vector<std::string>& aggregateNames() {
  static const std::vector<std::string> names = {
      "count", "sum", "min", "max", "avg",
      "count_if", "stddev", "std", "stddev_samp", "stddev_pop", "variance", "var_samp",
      "var_pop", "bool_and", "bool_or", "every", "some", "any", "max_by", "min_by", "first",
      "last", "any_value", "collect_list", "array_agg", "collect_set", "string_agg", "listagg",
      "approx_count_distinct", "percentile", "percentile_approx", "approx_percentile"};
  return names;
}

bool isAggregateName(const std::string& lname) {
  for (const std::string& n : aggregateNames()) {
    if (n == lname) return true;
  }
  return false;
}

}  // namespace

// ---- FieldAccessExpr / CallExpr (declared in internal.h) --------------------

namespace expr_internal {

Value FieldAccessExpr::eval(const Row& row) const {
  Value scratch;
  return evalRef(row, scratch);
}

// The field inside the struct: a computed struct is held by `scratch`, which
// keeps the field alive for the caller.
const Value& FieldAccessExpr::evalRef(const Row& row, Value& scratch) const {
  const Value& s = base_->evalRef(row, scratch);
  if (s.isNull()) return Value::null();
  const auto& f = s.asList();
  return static_cast<size_t>(index_) < f.size() ? f[static_cast<size_t>(index_)] : Value::null();
}

std::string CallExpr::toString() const {
  std::string s = name_ + "(";
  for (size_t i = 0; i < args_.size(); ++i) {
    if (i) s += ", ";
    s += args_[i]->toString();
  }
  return s + ")";
}

namespace {

// The table, built-in functions first; addLayerFunction() adds to it.
FunctionTable& mutableFunctionTable() {
  static FunctionTable table = [] {
    FunctionTable t;
    registerMathFunctions(t);
    registerStringFunctions(t);
    registerRegexFunctions(t);
    registerHashFunctions(t);
    registerDatetimeFunctions(t);
    registerJsonFunctions(t);
    registerNestedFunctions(t);
    registerMapFunctions(t);
    registerConditionalFunctions(t);
    registerConversionFunctions(t);
    registerUrlFunctions(t);
    registerCsvFunctions(t);
    registerEncryptionFunctions(t);
    registerNumberFormatFunctions(t);
    registerHigherOrderFunctions(t);
    registerPgCatalogFunctions(t);
    registerSparkTypeChecks(t);
    return t;
  }();
  return table;
}

}  // namespace

const FunctionTable& functionTable() { return mutableFunctionTable(); }

}  // namespace expr_internal

// ---- factories ----------------------------------------------------------------

int columnRefIndex(const Expr& e) {
  const auto* ref = dynamic_cast<const ColumnRefExpr*>(&e);
  return ref ? ref->index() : -1;
}

ExprPtr replaceNodes(const ExprPtr& e, const std::function<ExprPtr(const Expr&)>& replace) {
  if (ExprPtr r = replace(*e)) return r;
  std::vector<ExprPtr> children;
  bool changed = false;
  // forEachChild() hands out references, not owners: a child is held through
  // the ownership of `e` (the aliasing constructor), so an unchanged subtree
  // the new parent keeps also keeps its old parent alive, a plan-time cost.
  e->forEachChild([&](const Expr& child) {
    ExprPtr self(e, &child);
    ExprPtr out = replaceNodes(self, replace);
    changed = changed || out.get() != &child;
    children.push_back(std::move(out));
  });
  return changed ? e->withChildren(std::move(children)) : e;
}

ExprPtr makeColumnRef(int index, DataTypePtr type, std::string name) {
  return std::make_shared<ColumnRefExpr>(index, std::move(type), std::move(name));
}

ExprPtr makeLiteral(Value value, DataTypePtr type) {
  if (!type) type = DataType::of(value.type());
  // Store the value in the declared type so eval() needs no conversion later.
  if (!value.isNull() && value.type() != type->id && type->id != TypeId::Array && type->id != TypeId::Struct)
    value = castValue(value, *type);
  return std::make_shared<LiteralExpr>(std::move(value), std::move(type));
}

void addLayerFunction(const std::string& name, int minArgs, int maxArgs, FunctionBuilder build) {
  expr_internal::mutableFunctionTable()[toLower(name)] = {minArgs, maxArgs, build};
}

bool isAggregateFunction(const std::string& name) { return isAggregateName(toLower(name)); }

bool isDeterministicFunction(const std::string& name) {
  const std::string lname = toLower(name);
  if (isAggregateName(lname)) return true;
  const auto& table = functionTable();
  const auto it = table.find(lname);
  return it != table.end() && it->second.deterministic;
}

bool isFlaggedNotDeterministic(const std::string& name) {
  const auto& table = functionTable();
  const auto it = table.find(toLower(name));
  return it != table.end() && !it->second.deterministic;
}

std::vector<std::string> functionNames() {
  std::vector<std::string> names = aggregateNames();
  for (const auto& [name, def] : functionTable()) {
    if (!name.empty() && std::isalpha(static_cast<unsigned char>(name[0]))) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

ExprPtr makeCall(const std::string& name, std::vector<ExprPtr> args, size_t pos) {
  std::string lname = toLower(name);
  if (args.size() == 2) {
    static const std::pair<const char*, CmpOp> kCmp[] = {
        {"=", CmpOp::Eq}, {"==", CmpOp::Eq}, {"<>", CmpOp::Ne}, {"!=", CmpOp::Ne}, {"<", CmpOp::Lt},
        {"<=", CmpOp::Le}, {">", CmpOp::Gt}, {">=", CmpOp::Ge}, {"<=>", CmpOp::NullSafeEq}};
    for (const auto& [sym, op] : kCmp)
      if (lname == sym) return makeCompare(lname, op, std::move(args[0]), std::move(args[1]), pos);
    if (lname == "+" || lname == "-" || lname == "*" || lname == "/" || lname == "%")
      return makeArith(lname, std::move(args[0]), std::move(args[1]), pos);
    if (lname == "||" &&
        (args[0]->type()->id == TypeId::Array || args[1]->type()->id == TypeId::Array)) {
      // Two arrays joined, as Spark's || and PostgreSQL's array || array.
      return makeCall("concat", std::move(args), pos);
    }
    if (lname == "||") {
      argString("||", args, 0, pos);
      argString("||", args, 1, pos);
      return fn2("||", DataType::of(TypeId::String), std::move(args), [](const Value& a, const Value& b) {
        expr_internal::checkValueSize("||", a.asString().size() + b.asString().size());
        std::string s;
        s.reserve(a.asString().size() + b.asString().size());
        s += a.asString();
        s += b.asString();
        return Value::string(std::move(s));
      });
    }
  }
  if (lname == "neg" && args.size() == 1) {
    auto id = args[0]->type()->id;
    if (id == TypeId::Null) args[0] = castTo(args[0], DataType::of(TypeId::Int));
    else if (id == TypeId::YearMonthInterval)
      return makeYearMonthIntervalNegate(std::move(args[0]));
    else if (!args[0]->type()->isNumeric() && id != TypeId::Interval)
      throw SqlError(sqlstate::kDatatypeMismatch,
                     fmt::format("operator does not exist: - {}", args[0]->type()->toString()), pos);
    return std::make_shared<NegExpr>(std::move(args[0]), ansiMode());
  }
  if (isAggregateName(lname))
    throw SqlError(sqlstate::kFeatureNotSupported, "aggregate functions are not supported in this context",
                   pos);
  const auto& table = functionTable();
  auto it = table.find(lname);
  if (it == table.end()) {
    std::vector<std::string> close;
    for (const auto& [n, def] : table)
      if (editDistance(lname, n) <= (lname.size() > 4 ? 2u : 1u) ||
          (lname.size() >= 3 && n.rfind(lname, 0) == 0))
        close.push_back(n);
    std::sort(close.begin(), close.end());
    std::string hint;
    if (!close.empty()) {
      hint = "did you mean ";
      for (size_t i = 0; i < close.size() && i < 5; ++i) {
        if (i) hint += i + 1 == std::min<size_t>(close.size(), 5) ? " or " : ", ";
        hint += close[i];
      }
      hint += "?";
    }
    throw SqlError(sqlstate::kUndefinedFunction,
                   fmt::format("function {} does not exist", signature(lname, args)), pos, hint);
  }
  const FunctionDef& def = it->second;
  auto n = static_cast<int>(args.size());
  if (n < def.minArgs || (def.maxArgs >= 0 && n > def.maxArgs)) {
    std::string expected = def.maxArgs < 0 ? fmt::format("at least {}", def.minArgs)
                           : def.minArgs == def.maxArgs ? fmt::format("{}", def.minArgs)
                                                        : fmt::format("{} to {}", def.minArgs, def.maxArgs);
    throw SqlError(sqlstate::kDatatypeMismatch,
                   fmt::format("function {} takes {} argument{}, got {}", lname, expected,
                               expected == "1" ? "" : "s", n),
                   pos);
  }
  // A try_ function answers NULL where its work fails, in both modes: it is
  // built, with the casts it puts on its arguments, as in the legacy mode
  // (try_element_at reads the mode itself: index 0 raises there too).
  if (lname.starts_with("try_") && lname != "try_element_at") {
    AnsiModeScope legacy(false);
    return def.build(lname, args, pos);
  }
  return def.build(lname, args, pos);
}

ExprPtr makeAnd(ExprPtr l, ExprPtr r, size_t pos) {
  requireBool("AND", l, pos);
  requireBool("AND", r, pos);
  return std::make_shared<AndExpr>(std::move(l), std::move(r));
}

ExprPtr makeOr(ExprPtr l, ExprPtr r, size_t pos) {
  requireBool("OR", l, pos);
  requireBool("OR", r, pos);
  return std::make_shared<OrExpr>(std::move(l), std::move(r));
}

ExprPtr makeNot(ExprPtr e, size_t pos) {
  requireBool("NOT", e, pos);
  return std::make_shared<NotExpr>(std::move(e));
}

ExprPtr makeIsNull(ExprPtr e, bool negated) { return std::make_shared<IsNullExpr>(std::move(e), negated); }

ExprPtr makeIn(ExprPtr e, std::vector<ExprPtr> list, bool negated, size_t pos) {
  DataTypePtr t = e->type();
  for (const auto& x : list) {
    auto c = commonType(t, x->type());
    if (!c)
      throw SqlError(sqlstate::kDatatypeMismatch,
                     fmt::format("cannot compare {} with {} in IN list", e->type()->toString(),
                                 x->type()->toString()),
                     pos, "use CAST(... AS <type>) to compare values of different types");
    t = c;
  }
  refuseMapValues(*t, "IN", pos,
                  "test one of its entries: m['key'] IN (...), array_contains(map_keys(m), k)");
  e = castTo(e, t);
  for (auto& x : list) x = castTo(x, t);
  return std::make_shared<InExpr>(std::move(e), std::move(list), negated);
}

ExprPtr makeBetween(ExprPtr e, ExprPtr lo, ExprPtr hi, bool negated, size_t pos) {
  DataTypePtr t = commonType(e->type(), lo->type());
  if (t) t = commonType(t, hi->type());
  if (!t)
    throw SqlError(sqlstate::kDatatypeMismatch,
                   fmt::format("cannot compare {} with {} and {} in BETWEEN", e->type()->toString(),
                               lo->type()->toString(), hi->type()->toString()),
                   pos, "use CAST(... AS <type>) to compare values of different types");
  refuseMapValues(*t, "BETWEEN", pos, "compare one of its entries: m['key'] BETWEEN ...");
  return std::make_shared<BetweenExpr>(castTo(std::move(e), t), castTo(std::move(lo), t),
                                       castTo(std::move(hi), t), negated);
}

ExprPtr makeLike(ExprPtr e, ExprPtr pattern, bool negated, size_t pos) {
  std::vector<ExprPtr> args{std::move(e), std::move(pattern)};
  argString("like", args, 0, pos);
  argString("like", args, 1, pos);
  return std::make_shared<LikeExpr>(std::move(args[0]), std::move(args[1]), negated);
}

ExprPtr makeCase(ExprPtr operand, std::vector<std::pair<ExprPtr, ExprPtr>> whens, ExprPtr elseExpr,
                 size_t pos) {
  if (operand) {
    DataTypePtr t = operand->type();
    for (auto& w : whens) {
      auto c = commonType(t, w.first->type());
      if (!c)
        throw SqlError(sqlstate::kDatatypeMismatch,
                       fmt::format("CASE operand of type {} cannot be compared with WHEN value of type {}",
                                   operand->type()->toString(), w.first->type()->toString()),
                       pos, "use CAST(... AS <type>) to compare values of different types");
      t = c;
    }
    // CASE m WHEN ... compares m with each WHEN value.
    refuseMapValues(*t, "CASE", pos, "compare one of its entries: CASE m['key'] WHEN ...");
    operand = castTo(operand, t);
    for (auto& w : whens) w.first = castTo(w.first, t);
  } else {
    for (auto& w : whens) requireBool("CASE/WHEN", w.first, pos);
  }
  DataTypePtr rt = nullType();
  auto unify = [&](const ExprPtr& x) {
    auto c = commonType(rt, x->type());
    if (!c)
      throw SqlError(sqlstate::kDatatypeMismatch,
                     fmt::format("CASE types {} and {} cannot be matched", rt->toString(), x->type()->toString()),
                     pos, "use CAST(... AS <type>) so that every branch has the same type");
    rt = c;
  };
  for (const auto& w : whens) unify(w.second);
  if (elseExpr) unify(elseExpr);
  for (auto& w : whens) w.second = castTo(w.second, rt);
  if (elseExpr) elseExpr = castTo(elseExpr, rt);
  return std::make_shared<CaseExpr>(rt, std::move(operand), std::move(whens), std::move(elseExpr));
}

ExprPtr makeCast(ExprPtr e, DataTypePtr target, size_t pos) {
  if (!canCast(*e->type(), *target))
    throw SqlError(sqlstate::kDatatypeMismatch,
                   fmt::format("cannot cast type {} to {}", e->type()->toString(), target->toString()), pos);
  return castTo(std::move(e), target);
}

ExprPtr makeFieldAccess(ExprPtr e, const std::string& field, size_t pos) {
  const auto& t = e->type();
  if (t->id != TypeId::Struct)
    throw SqlError(sqlstate::kDatatypeMismatch,
                   fmt::format("cannot access field '{}' of {}: it is not a STRUCT", field, t->toString()), pos);
  int idx = t->fieldIndex(field);
  if (idx < 0) {
    std::string names;
    for (const auto& f : t->fields) names += (names.empty() ? "" : ", ") + f.name;
    throw SqlError(sqlstate::kUndefinedColumn, fmt::format("field '{}' does not exist in {}", field, t->toString()),
                   pos, "available fields: " + names);
  }
  auto ft = t->fields[static_cast<size_t>(idx)].type;
  return std::make_shared<FieldAccessExpr>(std::move(e), idx, t->fields[static_cast<size_t>(idx)].name,
                                           std::move(ft));
}

ExprPtr makeSubscript(ExprPtr e, ExprPtr index, size_t pos) {
  const auto& t = e->type();
  if (t->id == TypeId::Map) {
    std::vector<ExprPtr> args{std::move(e), std::move(index)};
    return expr_internal::buildMapLookup("element_at", args, pos);
  }
  if (t->id != TypeId::Array)
    throw SqlError(sqlstate::kDatatypeMismatch,
                   fmt::format("cannot subscript type {}: it is not an ARRAY", t->toString()), pos);
  if (!index->type()->isIntegral() && !isNullType(index->type()))
    throw SqlError(sqlstate::kDatatypeMismatch,
                   fmt::format("array subscript must be an integer, not {}", index->type()->toString()), pos,
                   "use CAST(... AS INT)");
  index = castTo(index, DataType::of(TypeId::BigInt));
  auto et = t->element ? t->element : nullType();
  return std::make_shared<SubscriptExpr>(std::move(e), std::move(index), std::move(et),
                                         ansiMode());
}

}  // namespace rtsql
