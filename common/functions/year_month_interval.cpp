// Spark's YEAR-MONTH INTERVAL in expressions: its arithmetic (with itself,
// numbers, DATEs and TIMESTAMPs), negation, casts, extract of its fields and
// make_ym_interval. The value is a count of months in an int32
// (common/year_month_interval.h has its texts). Every result that leaves the
// int32 raises ARITHMETIC_OVERFLOW (22003), whatever the ANSI mode, as Spark's
// interval arithmetic (Math.addExact and friends) always raises.
#include <fmt/format.h>

#include <cmath>

#include "common/ansi_mode.h"
#include "common/functions/internal.h"
#include "common/schema.h"
#include "common/time_zone.h"
#include "common/year_month_interval.h"

namespace rtsql::expr_internal {

namespace {

const DataTypePtr& yearToMonth() {
  static const DataTypePtr t = DataType::of(TypeId::YearMonthInterval);
  return t;
}

// An interval error Spark raises in either mode: its error class, with a
// hint that says what to do instead of how to turn ANSI mode off.
[[noreturn, gnu::cold, gnu::noinline]] void intervalError(const ansi::ErrorClass& c,
                                                         const std::string& message) {
  throw SqlError(c.sqlstate, fmt::format("[{}] {}", c.name, message), SqlError::npos,
                 "a YEAR-MONTH INTERVAL holds -178956970-8 to 178956970-7 years and months "
                 "(an int32 of months); a DATE or TIMESTAMP its usual range");
}

Value monthsOrOverflow(int64_t months, const char* what) {
  if (months < INT32_MIN || months > INT32_MAX) [[unlikely]]
    intervalError(ansi::kArithmeticOverflow, fmt::format("integer overflow in {}", what));
  return Value::yearMonthInterval(static_cast<int32_t>(months));
}

// A double rounded to an int half away from zero, as Spark's interval * and
// / round it (Spark 4.3 gives INTERVAL '5' MONTH * 0.5D as 3 months); NaN,
// an infinity or a value past the int32 raises.
Value roundToMonths(double x, const char* what) {
  if (!std::isfinite(x)) [[unlikely]]
    intervalError(ansi::kArithmeticOverflow, fmt::format("{} is not a number of months", what));
  const double r = std::round(x);
  if (r < static_cast<double>(INT32_MIN) || r > static_cast<double>(INT32_MAX)) [[unlikely]]
    intervalError(ansi::kArithmeticOverflow, fmt::format("integer overflow in {}", what));
  return Value::yearMonthInterval(static_cast<int32_t>(r));
}

// n / d rounded half away from zero, as Guava's IntMath.divide(HALF_UP).
int64_t divideHalfUp(Int128 n, Int128 d) {
  Int128 q = n / d, rem = n % d;
  if (rem != 0) {
    Int128 twice = (rem < 0 ? -rem : rem) * 2, ad = d < 0 ? -d : d;
    if (twice >= ad) q += ((n < 0) != (d < 0)) ? -1 : 1;
  }
  if (q < INT32_MIN || q > INT32_MAX)
    intervalError(ansi::kArithmeticOverflow, "integer overflow in the interval's division");
  return static_cast<int64_t>(q);
}

// A number of months times or divided by a number, as Spark's
// MultiplyYMInterval and DivideYMInterval compute it for each numeric type.
Value scaleMonths(int64_t months, const Value& num, bool divide) {
  const char* what = divide ? "the interval's division" : "the interval's multiplication";
  switch (num.type()) {
    case TypeId::Double:
    case TypeId::Float: {
      const double f = num.asDouble();
      if (divide && f == 0) intervalError(ansi::kIntervalDividedByZero, "division of an interval by zero");
      return roundToMonths(divide ? static_cast<double>(months) / f : static_cast<double>(months) * f,
                           what);
    }
    case TypeId::Decimal: {
      // months * unscaled / 10^scale, rounded half up, exactly while the
      // product fits 128 bits (always, for the DECIMALs Spark writes).
      const Int128 u = num.asDecimal();
      const int scale = num.decimalScale();
      if (divide && u == 0) intervalError(ansi::kIntervalDividedByZero, "division of an interval by zero");
      Int128 n;
      if (!divide) {
        if (__builtin_mul_overflow(static_cast<Int128>(months), u, &n))
          intervalError(ansi::kArithmeticOverflow, fmt::format("integer overflow in {}", what));
        return Value::yearMonthInterval(static_cast<int32_t>(divideHalfUp(n, decimal::pow10(scale))));
      }
      if (scale <= 27) {
        n = static_cast<Int128>(months) * decimal::pow10(scale);
        return Value::yearMonthInterval(static_cast<int32_t>(divideHalfUp(n, u)));
      }
      return roundToMonths(static_cast<double>(months) / num.toDouble(), what);
    }
    default: {
      const int64_t n = num.asInt();
      if (divide) {
        if (n == 0) intervalError(ansi::kIntervalDividedByZero, "division of an interval by zero");
        if (months == INT32_MIN && n == -1)
          intervalError(ansi::kArithmeticOverflow, "integer overflow in the interval's division");
        return Value::yearMonthInterval(static_cast<int32_t>(divideHalfUp(months, n)));
      }
      Int128 p = static_cast<Int128>(months) * n;
      if (p < INT32_MIN || p > INT32_MAX)
        intervalError(ansi::kArithmeticOverflow, fmt::format("integer overflow in {}", what));
      return Value::yearMonthInterval(static_cast<int32_t>(p));
    }
  }
}

// A day number as a DATE; past Spark's 32-bit day numbers it raises, as
// Math.toIntExact does in Spark's dateAddMonths.
Value dateOrOverflow(int64_t days) {
  if (days < INT32_MIN || days > INT32_MAX) [[unlikely]]
    intervalError(ansi::kArithmeticOverflow, "the DATE plus the interval is past the range of a DATE");
  return Value::date(days);
}

// Wall-clock microseconds `months` months later, on the same day of the
// month or the month's last, the time of day kept (LocalDateTime.plusMonths).
int64_t wallClockAfterMonths(int64_t local, int64_t months) {
  const int64_t day = floorDiv(local, kMicrosPerDay), time = floorMod(local, kMicrosPerDay);
  const Int128 r = static_cast<Int128>(dayAfterMonths(day, months)) * kMicrosPerDay + time;
  if (r < INT64_MIN || r > INT64_MAX) [[unlikely]]
    intervalError(ansi::kArithmeticOverflow,
                  "the TIMESTAMP plus the interval is past the range of a TIMESTAMP");
  return static_cast<int64_t>(r);
}

enum class YmMode { Add, Sub, Scale, ScaleLeft, Divide, DatePlus, PlusDate, TsPlus, PlusTs, NtzPlus, PlusNtz };

// One operator node for every pair of operands with a YEAR-MONTH INTERVAL.
// A separate class from the numeric ArithExpr (common/expr.cpp), whose
// record path stays as it was. `sign` is -1 for DATE/TIMESTAMP - interval.
class YmArithExpr final : public Expr {
 public:
  YmArithExpr(DataTypePtr type, YmMode mode, int sign, ExprPtr l, ExprPtr r, std::string sym,
              const TimeZone* zone)
      : Expr(std::move(type)),
        mode_(mode),
        sign_(sign),
        l_(std::move(l)),
        r_(std::move(r)),
        sym_(std::move(sym)),
        zone_(zone) {}
  void forEachChild(const std::function<void(const Expr&)>& fn) const override {
    fn(*l_);
    fn(*r_);
  }
  ExprPtr withChildren(std::vector<ExprPtr> c) const override {
    return std::make_shared<YmArithExpr>(type(), mode_, sign_, std::move(c[0]), std::move(c[1]), sym_,
                                         zone_);
  }
  Value eval(const Row& row) const override {
    Value sa, sb;
    const Value& a = l_->evalRef(row, sa);
    if (a.isNull()) return {};
    const Value& b = r_->evalRef(row, sb);
    if (b.isNull()) return {};
    switch (mode_) {
      case YmMode::Add: return monthsOrOverflow(a.asInt() + b.asInt(), "the intervals' sum");
      case YmMode::Sub: return monthsOrOverflow(a.asInt() - b.asInt(), "the intervals' difference");
      case YmMode::Scale: return scaleMonths(a.asInt(), b, false);
      case YmMode::ScaleLeft: return scaleMonths(b.asInt(), a, false);
      case YmMode::Divide: return scaleMonths(a.asInt(), b, true);
      case YmMode::DatePlus: return dateOrOverflow(dayAfterMonths(a.asInt(), months(b)));
      case YmMode::PlusDate: return dateOrOverflow(dayAfterMonths(b.asInt(), a.asInt()));
      case YmMode::TsPlus: return Value::timestamp(zoned(a.asInt(), months(b)));
      case YmMode::PlusTs: return Value::timestamp(zoned(b.asInt(), a.asInt()));
      case YmMode::NtzPlus: return Value::timestampNtz(wallClockAfterMonths(a.asInt(), months(b)));
      case YmMode::PlusNtz: return Value::timestampNtz(wallClockAfterMonths(b.asInt(), a.asInt()));
    }
    return {};
  }
  std::string toString() const override {
    return "(" + l_->toString() + " " + sym_ + " " + r_->toString() + ")";
  }
  bool isConstant() const override { return l_->isConstant() && r_->isConstant(); }

 private:
  // The interval's months, negated for a subtraction (Spark negates the
  // interval first, so the smallest one cannot be subtracted).
  int64_t months(const Value& iv) const {
    if (sign_ < 0 && iv.asInt() == INT32_MIN) [[unlikely]]
      intervalError(ansi::kArithmeticOverflow, "integer overflow in the interval's negation");
    return sign_ * iv.asInt();
  }
  // A TIMESTAMP moved on its wall clock in the session's zone, as Spark's
  // timestampAddMonths moves it.
  int64_t zoned(int64_t utc, int64_t months) const {
    return zone_->utcFromLocal(wallClockAfterMonths(zone_->localFromUtc(utc), months));
  }

  YmMode mode_;
  int sign_;
  ExprPtr l_, r_;
  std::string sym_;
  const TimeZone* zone_;  // TsPlus and PlusTs: the session zone when bound
};

class YmNegateExpr final : public Expr {
 public:
  explicit YmNegateExpr(ExprPtr e) : Expr(e->type()), e_(std::move(e)) {}
  void forEachChild(const std::function<void(const Expr&)>& fn) const override { fn(*e_); }
  ExprPtr withChildren(std::vector<ExprPtr> c) const override {
    return std::make_shared<YmNegateExpr>(std::move(c[0]));
  }
  Value eval(const Row& row) const override {
    Value s;
    const Value& v = e_->evalRef(row, s);
    if (v.isNull()) return {};
    return monthsOrOverflow(-v.asInt(), "the interval's negation");
  }
  std::string toString() const override { return "(- " + e_->toString() + ")"; }
  bool isConstant() const override { return e_->isConstant(); }

 private:
  ExprPtr e_;
};

[[noreturn]] void noOperator(const std::string& sym, const ExprPtr& l, const ExprPtr& r, size_t pos) {
  throw SqlError(sqlstate::kDatatypeMismatch,
                 fmt::format("operator does not exist: {} {} {}", l->type()->toString(), sym,
                             r->type()->toString()),
                 pos,
                 "a YEAR-MONTH INTERVAL adds to another, to a DATE or a TIMESTAMP, and is "
                 "multiplied or divided by a number");
}

}  // namespace

ExprPtr makeYearMonthIntervalArith(const std::string& sym, ExprPtr l, ExprPtr r, size_t pos) {
  const TypeId a = l->type()->id, b = r->type()->id;
  const bool add = sym == "+", sub = sym == "-";
  auto node = [&](DataTypePtr t, YmMode m, int sign = 1, const TimeZone* zone = nullptr) {
    return std::make_shared<YmArithExpr>(std::move(t), m, sign, l, r, sym, zone);
  };
  if (a == TypeId::YearMonthInterval && b == TypeId::YearMonthInterval && (add || sub)) {
    // The result has the fields of both: YEAR + MONTH is YEAR TO MONTH.
    const DataType &x = *l->type(), &y = *r->type();
    DataTypePtr t = DataType::yearMonthInterval(std::min(x.ymStart, y.ymStart), std::max(x.ymEnd, y.ymEnd));
    return node(t, add ? YmMode::Add : YmMode::Sub);
  }
  if (a == TypeId::YearMonthInterval && r->type()->isNumeric() && (sym == "*" || sym == "/"))
    return node(yearToMonth(), sym == "*" ? YmMode::Scale : YmMode::Divide);
  if (l->type()->isNumeric() && b == TypeId::YearMonthInterval && sym == "*")
    return node(yearToMonth(), YmMode::ScaleLeft);
  // A DATE, TIMESTAMP or TIMESTAMP_NTZ moved by whole months (text is none
  // of them here: Spark refuses '2024-01-31' + INTERVAL '1' MONTH).
  if (b == TypeId::YearMonthInterval && (add || sub)) {
    const int sign = add ? 1 : -1;
    if (a == TypeId::Date) return node(l->type(), YmMode::DatePlus, sign);
    if (a == TypeId::Timestamp) return node(l->type(), YmMode::TsPlus, sign, &sessionTimeZone());
    if (a == TypeId::TimestampNtz) return node(l->type(), YmMode::NtzPlus, sign);
  }
  if (a == TypeId::YearMonthInterval && add) {
    if (b == TypeId::Date) return node(r->type(), YmMode::PlusDate);
    if (b == TypeId::Timestamp) return node(r->type(), YmMode::PlusTs, 1, &sessionTimeZone());
    if (b == TypeId::TimestampNtz) return node(r->type(), YmMode::PlusNtz);
  }
  noOperator(sym, l, r, pos);
}

ExprPtr makeYearMonthIntervalNegate(ExprPtr e) {
  ExprPtr n = std::make_shared<YmNegateExpr>(std::move(e));
  return n->isConstant() ? foldConstant(n) : n;
}

ExprPtr yearMonthIntervalAbs(std::vector<ExprPtr>& args) {
  return fn1("abs", args[0]->type(), args, [](const Value& v) {
    return monthsOrOverflow(v.asInt() < 0 ? -v.asInt() : v.asInt(), "abs of the interval");
  });
}

ExprPtr castYearMonthInterval(ExprPtr e, const DataTypePtr& target) {
  const DataTypePtr from = e->type();
  std::vector<ExprPtr> args{std::move(e)};
  const bool ansi = ansiMode();
  ExprPtr node;
  if (target->id == TypeId::String) {
    // Spark's text, with the fields of the value's type.
    node = fn1("cast", target, args, [from](const Value& v) {
      return Value::string(ym::sparkText(v.asInt(), *from));
    });
  } else if (from->id == TypeId::String) {
    node = fn1("cast", target, args, [target, ansi](const Value& v) {
      auto months = ym::parse(v.asString(), target->ymStart, target->ymEnd);
      if (months) return Value::yearMonthInterval(*months);
      if (ansi)
        ansi::raise(ansi::kCastInvalidInput,
                    fmt::format("the value '{}' of the type STRING cannot be cast to {} because it "
                                "is malformed",
                                v.asString().substr(0, 256), target->toString()),
                    "try_cast");
      return Value();
    });
  } else if (from->id == TypeId::YearMonthInterval && target->id == TypeId::YearMonthInterval) {
    // To INTERVAL YEAR the months past the last whole year go, as in Spark.
    const bool years = target->ymEnd == YmField::Year;
    node = fn1("cast", target, args, [years](const Value& v) {
      return years ? Value::yearMonthInterval(static_cast<int32_t>(v.asInt() / 12 * 12)) : v;
    });
  } else if (from->id == TypeId::YearMonthInterval) {
    // To an integer: the count of the type's last field (years or months).
    const bool years = from->ymEnd == YmField::Year;
    const TypeId to = target->id;
    node = fn1("cast", target, args, [years, to](const Value& v) {
      const int64_t n = years ? v.asInt() / 12 : v.asInt();
      if (to == TypeId::BigInt) return Value::bigint(n);
      if (to == TypeId::Int) return Value::integer(static_cast<int32_t>(n));
      return narrowIntegral(n, to, v);
    });
  } else {
    // From an integer: that many of the type's last field.
    const int64_t per = target->ymEnd == YmField::Year ? 12 : 1;
    node = fn1("cast", target, args, [per, target](const Value& v) {
      const Int128 m = static_cast<Int128>(v.asInt()) * per;
      if (m < INT32_MIN || m > INT32_MAX)
        ansi::raise(ansi::kCastOverflow,
                    fmt::format("the value {} cannot be cast to {} due to an overflow", v.toString(),
                                target->toString()));
      return Value::yearMonthInterval(static_cast<int32_t>(m));
    });
  }
  return node->isConstant() ? foldConstant(node) : node;
}

ExprPtr yearMonthIntervalField(const std::string& fn, const std::string& field, const ExprPtr& e,
                               size_t pos) {
  const bool year = field == "YEAR" || field == "Y" || field == "YEARS" || field == "YR" || field == "YRS";
  const bool month = field == "MONTH" || field == "MON" || field == "MONS" || field == "MONTHS";
  const DataType& t = *e->type();
  // Only a field of the interval's type: no MONTH of an INTERVAL YEAR.
  if ((!year && !month) || (year && t.ymStart != YmField::Year) || (month && t.ymEnd != YmField::Month)) {
    throw SqlError(sqlstate::kDatatypeMismatch,
                   fmt::format("{}: {} has no field '{}'", fn, t.toString(), field), pos,
                   "an INTERVAL YEAR TO MONTH has the fields YEAR and MONTH");
  }
  std::vector<ExprPtr> args{e};
  // Java's division and remainder: both keep the interval's sign.
  if (year)
    return fn1(fn, DataType::of(TypeId::Int), args,
               [](const Value& v) { return Value::integer(static_cast<int32_t>(v.asInt() / 12)); });
  return fn1(fn, DataType::of(TypeId::TinyInt), args,
             [](const Value& v) { return Value::tinyint(static_cast<int8_t>(v.asInt() % 12)); });
}

ExprPtr buildMakeYmInterval(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  // Both default to 0; each is an INT, as Spark casts it (ANSI mode: a BIGINT
  // past the INT range raises).
  while (args.size() < 2) args.push_back(makeLiteral(Value::integer(0), DataType::of(TypeId::Int)));
  argInt(name, args, 0, pos);
  argInt(name, args, 1, pos);
  return fn2(name, yearToMonth(), args, [](const Value& y, const Value& m) {
    return monthsOrOverflow(y.asInt() * 12 + m.asInt(), "make_ym_interval");
  });
}

}  // namespace rtsql::expr_internal
