// Numeric functions: rounding, powers and logarithms, trigonometry, bases
// and bits, and the try_* arithmetic that gives NULL on overflow, with
// Spark's result types (floor/ceil give BIGINT, round keeps the argument's
// type and rounds half up on the decimal value as printed, bround half even).
#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include "common/ansi_mode.h"
#include "common/functions/internal.h"

namespace rtsql::expr_internal {

namespace {

const DataTypePtr& dbl() {
  static const DataTypePtr t = DataType::of(TypeId::Double);
  return t;
}
int64_t saturatingLong(double d) {
  if (std::isnan(d)) return 0;
  if (d >= 9223372036854775807.0) return std::numeric_limits<int64_t>::max();
  if (d <= -9223372036854775808.0) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(d);
}

// Rounds half up at `scale` decimal places, working on the shortest decimal
// form of the double (so round(2.675, 2) is 2.68, as in Spark, not 2.67).
double roundDouble(double x, int scale, bool halfEven = false) {
  if (!std::isfinite(x) || x == 0) return x;
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::scientific);
  std::string_view sci(buf, static_cast<size_t>(r.ptr - buf));
  bool neg = sci[0] == '-';
  if (neg) sci.remove_prefix(1);
  size_t e = sci.find('e');
  std::string digits;
  for (char c : sci.substr(0, e))
    if (c != '.') digits += c;
  int exp = 0;
  std::string_view es = sci.substr(e + 1);
  if (!es.empty() && es[0] == '+') es.remove_prefix(1);
  std::from_chars(es.data(), es.data() + es.size(), exp);
  long keep = static_cast<long>(exp) + 1 + scale;  // digits kept from the left
  if (keep >= static_cast<long>(digits.size())) return x;
  if (keep < 0) return neg ? -0.0 : 0.0;
  std::string kept = digits.substr(0, static_cast<size_t>(keep));
  bool up = digits[static_cast<size_t>(keep)] > '5';
  if (digits[static_cast<size_t>(keep)] == '5') {
    // Exactly half (nothing but zeros after the 5) goes to the even neighbour
    // under half-even rounding; anything more goes up.
    bool exactHalf =
        digits.find_first_not_of('0', static_cast<size_t>(keep) + 1) == std::string::npos;
    int lastKept = keep == 0 ? 0 : digits[static_cast<size_t>(keep) - 1] - '0';
    up = !halfEven || !exactHalf || lastKept % 2 == 1;
  }
  if (up) {
    // Add one at the last kept digit, carrying left.
    long i = static_cast<long>(kept.size()) - 1;
    while (i >= 0 && kept[static_cast<size_t>(i)] == '9') kept[static_cast<size_t>(i--)] = '0';
    if (i < 0)
      kept.insert(kept.begin(), '1');
    else
      ++kept[static_cast<size_t>(i)];
  }
  if (kept.empty()) return neg ? -0.0 : 0.0;
  std::string text = (neg ? "-" : "") + kept + "e" + std::to_string(-scale);
  double out = 0;
  std::from_chars(text.data(), text.data() + text.size(), out);
  return out;
}

// Spark rounds with Java's BigDecimal.setScale, which cannot move a number by
// 10^536870920 places or more (BigInteger's range): in ANSI mode such a scale
// is ARITHMETIC_OVERFLOW, as Spark raises it, where the legacy mode answers
// the rounded value. `valueScale` is the scale of the number's BigDecimal:
// that of the shortest decimal text of a DOUBLE (Double.toString), 0 for an
// integer.
constexpr int64_t kRoundScaleLimit = 536870920;

int64_t javaScaleOf(double x) {
  if (!std::isfinite(x)) return 0;
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::scientific);
  std::string_view sci(buf, static_cast<size_t>(r.ptr - buf));
  size_t e = sci.find('e');
  int exp = 0;
  std::string_view es = sci.substr(e + 1);
  if (!es.empty() && es[0] == '+') es.remove_prefix(1);
  std::from_chars(es.data(), es.data() + es.size(), exp);
  size_t dot = sci.find('.');
  auto fraction = static_cast<int64_t>(dot == std::string_view::npos ? 0 : e - dot - 1);
  // Double.toString writes 1e-3 <= |x| < 1e7 plainly, with at least one
  // fraction digit, and the others as d.dddE±n, also with one at least.
  if (std::fabs(x) >= 1e-3 && std::fabs(x) < 1e7) return std::max<int64_t>(fraction - exp, 1);
  return std::max<int64_t>(fraction, 1) - exp;
}

void checkRoundScale(const char* name, int64_t valueScale, int64_t scale) {
  const int64_t move = valueScale - scale;
  if (move >= kRoundScaleLimit || move <= -kRoundScaleLimit) [[unlikely]]
    ansi::raise(ansi::kArithmeticOverflow,
                fmt::format("{}: the scale {} moves the number past the range Spark's "
                            "BigDecimal computes",
                            name, scale));
}

// The check of round's and bround's value and scale: a DOUBLE as its
// Double.toString (NaN and the infinities are left as they are), an integer
// only when the scale is negative (Spark leaves it alone otherwise).
void checkRoundArgs(const char* name, const Value& v, int scale) {
  if (v.type() == TypeId::Double) {
    if (std::isfinite(v.asDouble())) checkRoundScale(name, javaScaleOf(v.asDouble()), scale);
  } else if (scale < 0) {
    checkRoundScale(name, 0, scale);
  }
}

int64_t roundInteger(int64_t x, int scale, bool halfEven = false) {
  if (scale >= 0) return x;
  if (scale < -18) return 0;
  int64_t p = 1;
  for (int i = 0; i < -scale; ++i) p *= 10;
  int64_t q = x / p * p;
  int64_t rem = x - q;
  int64_t twice = rem >= 0 ? rem * 2 : -rem * 2;
  bool odd = (q / p) % 2 != 0;
  if (twice > p || (twice == p && (!halfEven || odd))) q += x >= 0 ? p : -p;
  return q;
}

// round, bround, floor and ceil of a DECIMAL keep it exact, with Spark's
// result types: floor/ceil of DECIMAL(p, s) is DECIMAL(p - s + 1, 0), and
// rounding to d places DECIMAL(p - s + 1 + min(s, d), min(s, d)) (at most 38
// digits; a negative d leaves scale 0).
ExprPtr buildDecimalRound(const std::string& name, std::vector<ExprPtr>& args, int places,
                          decimal::Rounding mode, bool floorCeil = false) {
  const DataType& in = *args[0]->type();
  int p = in.precision, s = in.scale;
  if (ansiMode() && s - static_cast<int64_t>(places) >= kRoundScaleLimit) {
    // Raised for the record that reaches it (a CASE may never).
    const std::string fn = name;
    return fn1(name, DataType::decimal(std::min(p - s + 1, decimal::kMaxPrecision), 0), args,
               [fn, s, places](const Value&) -> Value {
                 checkRoundScale(fn.c_str(), s, places);
                 return {};
               });
  }
  int newScale = places < 0 ? 0 : std::min(s, places);
  int64_t wide =
      places < 0 ? std::max<int64_t>(p - s + 1, 1 - int64_t{places}) : p - s + 1 + newScale;
  if (floorCeil && s == 0) wide = p;  // Spark's floor and ceil keep a DECIMAL(p, 0)
  const int precision = static_cast<int>(std::min<int64_t>(wide, decimal::kMaxPrecision));
  decimal::Type out{precision, newScale};
  // Java's BigDecimal.setScale raises when the digits to drop do not fit an
  // int (round(2.5, -2147483648)), and so does Spark for every value.
  const bool overflows = int64_t{s} - places > std::numeric_limits<int32_t>::max();
  return fn1(name, DataType::decimal(precision, newScale), args,
             [name, places, mode, out, overflows](const Value& v) {
    if (overflows)
      throw SqlError(
          sqlstate::kNumericOutOfRange,
          fmt::format("[ARITHMETIC_OVERFLOW] {} to {} places: the scale overflows", name, places));
    int scale = v.decimalScale();
    Int128 r = decimal::round(v.asDecimal(), scale, places, mode);
    auto fitted = decimal::toType(r, std::max(places, 0) < scale ? std::max(places, 0) : scale, out);
    return fitted ? Value::decimal(*fitted, out.precision, out.scale) : Value();
  });
}

bool isSmallIntegral(const DataTypePtr& t) { return t->id == TypeId::TinyInt || t->id == TypeId::SmallInt; }

// A NULL literal given to abs, negative, positive, round or bround is a DOUBLE,
// as Spark types a NULL where any number is taken (abs(NULL) is a DOUBLE).
void nullAsDouble(std::vector<ExprPtr>& args) {
  if (isNullType(args[0]->type())) args[0] = castTo(args[0], DataType::of(TypeId::Double));
}

// A function over a TINYINT, SMALLINT or FLOAT that keeps its type, as Spark's
// abs, round and bround do: `integral` maps the integer, `floating` the float.
template <typename I, typename F>
ExprPtr keepSmallType(const std::string& name, std::vector<ExprPtr>& args, I integral, F floating) {
  auto t = args[0]->type();
  if (t->id == TypeId::Float)
    return fnN(name, t, args, true, [floating](const Row& row, const std::vector<ExprPtr>& a) {
      Value v = a[0]->eval(row);
      if (v.isNull()) return v;
      Value s = a.size() > 1 ? a[1]->eval(row) : Value::integer(0);
      if (s.isNull()) return s;
      return Value::float32(floating(static_cast<float>(v.asDouble()), static_cast<int>(s.asInt())));
    });
  return fnN(name, t, args, true, [integral, id = t->id](const Row& row, const std::vector<ExprPtr>& a) {
    Value v = a[0]->eval(row);
    if (v.isNull()) return v;
    Value s = a.size() > 1 ? a[1]->eval(row) : Value::integer(0);
    if (s.isNull()) return s;
    return integral(v.asInt(), static_cast<int>(s.asInt()), id);
  });
}

ExprPtr buildAbs(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  nullAsDouble(args);
  if (isSmallIntegral(args[0]->type()) || args[0]->type()->id == TypeId::Float)
    return keepSmallType(
        name, args,
        [](int64_t x, int, TypeId t) { return checkedSmallIntegral(x < 0 ? -x : x, t, "abs"); },
        [](float x, int) { return std::fabs(x); });
  if (args[0]->type()->id == TypeId::Decimal) {
    return fn1(name, args[0]->type(), args, [](const Value& v) {
      Int128 x = v.asDecimal();
      return Value::decimal(x < 0 ? -x : x, v.decimalPrecision(), v.decimalScale());
    });
  }
  if (args[0]->type()->id == TypeId::YearMonthInterval) return yearMonthIntervalAbs(args);
  if (args[0]->type()->id != TypeId::Interval) argNumeric(name, args, 0, pos);
  auto t = args[0]->type();
  return fn1(name, t, args, [](const Value& v) {
    switch (v.type()) {
      case TypeId::Int: {
        auto x = static_cast<int32_t>(v.asInt());
        return Value::integer(x < 0 ? static_cast<int32_t>(0u - static_cast<uint32_t>(x)) : x);
      }
      case TypeId::BigInt: {
        int64_t x = v.asInt();
        return Value::bigint(x < 0 ? static_cast<int64_t>(0ull - static_cast<uint64_t>(x)) : x);
      }
      case TypeId::Interval: return Value::interval(v.asInt() < 0 ? -v.asInt() : v.asInt());
      default: return Value::float64(std::fabs(v.asDouble()));
    }
  });
}

ExprPtr buildRound(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  nullAsDouble(args);
  if (args[0]->type()->id == TypeId::Decimal) {
    auto places = args.size() == 1 ? std::optional<Value>(Value::integer(0)) : constantValue(args[1]);
    if (places && places->type() == TypeId::Int) {
      args.resize(1);
      return buildDecimalRound(name, args, static_cast<int>(places->asInt()), decimal::Rounding::HalfUp);
    }
  }
  if (isSmallIntegral(args[0]->type()) || args[0]->type()->id == TypeId::Float) {
    if (args.size() == 2) argInt(name, args, 1, pos);
    return keepSmallType(
        name, args,
        [](int64_t x, int scale, TypeId t) { return narrowIntegralWrapping(roundInteger(x, scale), t); },
        [](float x, int scale) { return static_cast<float>(roundDouble(x, scale)); });
  }
  argNumeric(name, args, 0, pos);
  if (args.size() == 1) args.push_back(makeLiteral(Value::integer(0), DataType::of(TypeId::Int)));
  argInt(name, args, 1, pos);
  auto t = args[0]->type();
  const bool ansi = ansiMode();
  return fn2(name, t, args, [ansi](const Value& v, const Value& s) {
    int scale = static_cast<int>(s.asInt());
    if (ansi && (scale <= -kRoundScaleLimit + 400 || scale >= kRoundScaleLimit - 400)) [[unlikely]]
      checkRoundArgs("round", v, scale);
    switch (v.type()) {
      case TypeId::Int: return Value::integer(static_cast<int32_t>(roundInteger(v.asInt(), scale)));
      case TypeId::BigInt: return Value::bigint(roundInteger(v.asInt(), scale));
      default: return Value::float64(roundDouble(v.asDouble(), scale));
    }
  });
}

template <bool Floor>
ExprPtr buildFloorCeil(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  if (args[0]->type()->id == TypeId::Decimal)
    return buildDecimalRound(name, args, 0, Floor ? decimal::Rounding::Floor : decimal::Rounding::Ceiling,
                             true);
  argNumeric(name, args, 0, pos);
  // A DOUBLE past BIGINT's range is ARITHMETIC_OVERFLOW in ANSI mode (NaN is
  // 0, as Spark), and saturates in the legacy mode.
  const bool ansi = ansiMode();
  return fn1(name, bigIntType(), args, [ansi](const Value& v) {
    if (v.type() != TypeId::Double) return Value::bigint(v.asInt());
    const double r = Floor ? std::floor(v.asDouble()) : std::ceil(v.asDouble());
    if (ansi && (r >= 9223372036854775808.0 || r < -9223372036854775808.0)) [[unlikely]]
      ansi::raise(ansi::kArithmeticOverflow,
                  fmt::format("{}({}) is past the range of a BIGINT", Floor ? "floor" : "ceil",
                              v.toString()));
    return Value::bigint(saturatingLong(r));
  });
}

template <double (*F)(double)>
ExprPtr buildUnaryDouble(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argDouble(name, args, 0, pos);
  return fn1(name, dbl(), args, [](const Value& v) { return Value::float64(F(v.asDouble())); });
}

double dsqrt(double x) { return std::sqrt(x); }
double dexp(double x) { return std::exp(x); }
// Spark's ln/log10/log2 give NULL for non-positive input; NaN marks it here and
// the builder turns it into NULL.
double dsign(double x) { return std::isnan(x) ? x : (x > 0 ? 1.0 : (x < 0 ? -1.0 : 0.0)); }

template <double (*F)(double)>
ExprPtr buildLog(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argDouble(name, args, 0, pos);
  return fn1(name, dbl(), args, [](const Value& v) {
    double x = v.asDouble();
    return x <= 0 ? Value() : Value::float64(F(x));
  });
}
double dln(double x) { return std::log(x); }
double dlog10(double x) { return std::log10(x); }
// Spark's log2 is ln(x) / ln(2), not a base-2 logarithm of its own; the
// quotient differs from log2() in the last digit for about a third of inputs.
double dlog2(double x) { return std::log(x) / std::log(2.0); }

ExprPtr buildPow(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argDouble(name, args, 0, pos);
  argDouble(name, args, 1, pos);
  return fn2(name, dbl(), args,
             [](const Value& a, const Value& b) { return Value::float64(std::pow(a.asDouble(), b.asDouble())); });
}

// Whether two arguments are computed as DECIMALs, as Spark's operators do:
// a DECIMAL beside a DECIMAL, an integer or NULL (beside a DOUBLE or FLOAT
// they are DOUBLEs).
bool isDecimalArithmetic(const std::vector<ExprPtr>& args) {
  const DataType &a = *args[0]->type(), &b = *args[1]->type();
  auto fits = [](const DataType& t) {
    return t.id == TypeId::Decimal || t.isIntegral() || t.id == TypeId::Null;
  };
  return (a.id == TypeId::Decimal || b.id == TypeId::Decimal) && fits(a) && fits(b);
}

// pmod over DECIMALs: the remainder of `%` (its type, Spark's), made
// positive by adding the divisor once more.
ExprPtr buildDecimalPmod(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  ExprPtr rem = makeCall("%", args, pos);
  const decimal::Type out{rem->type()->precision, rem->type()->scale};
  std::vector<ExprPtr> a{rem, castTo(args[1], decimalType(decimalTypeOf(*args[1]->type())))};
  return fn2(name, rem->type(), a, [out](const Value& r, const Value& n) {
    if (r.asDecimal() >= 0) return r;
    // (r + n) % n: r + n fits 38 digits, as both have fewer.
    auto sum = decimal::add(r.asDecimal(), r.decimalScale(), n.asDecimal(), n.decimalScale(),
                            {decimal::kMaxPrecision, out.scale});
    if (!sum) return Value();
    auto m = decimal::mod(*sum, out.scale, n.asDecimal(), n.decimalScale(), out);
    return m ? Value::decimal(*m, out.precision, out.scale) : Value();
  });
}

ExprPtr buildMod(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argNumeric(name, args, 0, pos);
  argNumeric(name, args, 1, pos);
  return makeCall("%", std::move(args), pos);
}

ExprPtr buildPmod(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  if (isDecimalArithmetic(args)) return buildDecimalPmod(name, args, pos);
  argNumeric(name, args, 0, pos);
  argNumeric(name, args, 1, pos);
  auto t = argsCommon(name, args, 0, pos);
  const bool ansi = ansiMode();
  return fn2(name, t, args, [ansi](const Value& a, const Value& b) {
    auto byZero = [&] {
      if (ansi)
        ansi::raise(ansi::kRemainderByZero,
                    fmt::format("remainder by zero: pmod({}, {})", a.toString(), b.toString()));
      return Value();
    };
    if (a.type() == TypeId::Double) {
      double y = b.asDouble();
      if (y == 0) return byZero();
      double r = std::fmod(a.asDouble(), y);
      if (r < 0) r = std::fmod(r + y, y);
      return Value::float64(r);
    }
    int64_t y = b.asInt();
    if (y == 0) return byZero();
    int64_t r = y == -1 ? 0 : a.asInt() % y;
    if (r < 0) r = y == INT64_MIN ? r : (r + y) % y;
    return a.type() == TypeId::Int ? Value::integer(static_cast<int32_t>(r)) : Value::bigint(r);
  });
}

// glibc's cbrt misses the nearest double by an ulp for about half of all
// inputs (cbrt(27) = 3.0000000000000004, cbrt(0.125) = 0.49999999999999994);
// Java's is within 0.67 ulp and mostly the nearest, so the root is taken in
// long double and rounded once (it then equals Java's for ~92% of a seeded
// sample, against 50%), and an integral root that cubes back is exact.
double dcbrt(double x) {
  auto r = static_cast<double>(std::cbrt(static_cast<long double>(x)));
  double k = std::nearbyint(r);
  return k * k * k == x ? k : r;
}
double ddegrees(double x) {
  return x * (180.0 / M_PI);
}
double dradians(double x) {
  return x * (M_PI / 180.0);
}
double dsin(double x) {
  return std::sin(x);
}
double dcos(double x) {
  return std::cos(x);
}
double dtan(double x) {
  return std::tan(x);
}
double dasin(double x) {
  return std::asin(x);
}
double dacos(double x) {
  return std::acos(x);
}
double datan(double x) {
  return std::atan(x);
}
double dsinh(double x) {
  return std::sinh(x);
}
double dcosh(double x) {
  return std::cosh(x);
}
double dtanh(double x) {
  return std::tanh(x);
}
double dasinh(double x) {
  return std::asinh(x);
}
double dacosh(double x) {
  return std::acosh(x);
}
// Spark's atanh is 0.5 * (log1p(x) - log1p(-x)), not a libm atanh: the two
// differ in the last digit for ~8% of inputs (atanh(0.125)).
double datanh(double x) {
  return 0.5 * (std::log1p(x) - std::log1p(-x));
}
double dcot(double x) {
  return 1.0 / std::tan(x);
}
double dsec(double x) {
  return 1.0 / std::cos(x);
}
double dcsc(double x) {
  return 1.0 / std::sin(x);
}
double dexpm1(double x) {
  return std::expm1(x);
}
// rint rounds half to even, as Java's Math.rint.
double drint(double x) {
  return std::nearbyint(x);
}

// log1p gives NULL at or below -1, as Spark's.
ExprPtr buildLog1p(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argDouble(name, args, 0, pos);
  return fn1(name, dbl(), args, [](const Value& v) {
    double x = v.asDouble();
    return x <= -1 ? Value() : Value::float64(std::log1p(x));
  });
}

template <double (*F)(double, double)>
ExprPtr buildBinaryDouble(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argDouble(name, args, 0, pos);
  argDouble(name, args, 1, pos);
  return fn2(name, dbl(), args, [](const Value& a, const Value& b) {
    return Value::float64(F(a.asDouble(), b.asDouble()));
  });
}
double datan2(double y, double x) {
  return std::atan2(y + 0.0, x + 0.0);
}
double dhypot(double a, double b) {
  return std::hypot(a, b);
}

template <int Which>  // 0: e, 1: pi
ExprPtr buildConstant(const std::string& name, std::vector<ExprPtr>& args, size_t) {
  return fnN(name, dbl(), args, true, [](const Row&, const std::vector<ExprPtr>&) {
    return Value::float64(Which == 0 ? M_E : M_PI);
  });
}

// log(x) is ln(x); log(base, x) is ln(x) / ln(base); NULL when either is <= 0.
ExprPtr buildLogBase(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  if (args.size() == 1) return buildLog<dln>(name, args, pos);
  argDouble(name, args, 0, pos);
  argDouble(name, args, 1, pos);
  return fn2(name, dbl(), args, [](const Value& b, const Value& x) {
    if (b.asDouble() <= 0 || x.asDouble() <= 0) return Value();
    return Value::float64(std::log(x.asDouble()) / std::log(b.asDouble()));
  });
}

// bround: round half to even at `scale` decimal places.
ExprPtr buildBround(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  nullAsDouble(args);
  if (args[0]->type()->id == TypeId::Decimal) {
    auto places = args.size() == 1 ? std::optional<Value>(Value::integer(0)) : constantValue(args[1]);
    if (places && places->type() == TypeId::Int) {
      args.resize(1);
      return buildDecimalRound(name, args, static_cast<int>(places->asInt()), decimal::Rounding::HalfEven);
    }
  }
  if (isSmallIntegral(args[0]->type()) || args[0]->type()->id == TypeId::Float) {
    if (args.size() == 2) argInt(name, args, 1, pos);
    return keepSmallType(
        name, args,
        [](int64_t x, int scale, TypeId t) { return narrowIntegralWrapping(roundInteger(x, scale, true), t); },
        [](float x, int scale) { return static_cast<float>(roundDouble(x, scale, true)); });
  }
  argNumeric(name, args, 0, pos);
  if (args.size() == 1) args.push_back(makeLiteral(Value::integer(0), DataType::of(TypeId::Int)));
  argInt(name, args, 1, pos);
  auto t = args[0]->type();
  const bool ansi = ansiMode();
  return fn2(name, t, args, [ansi](const Value& v, const Value& s) {
    int scale = static_cast<int>(s.asInt());
    if (ansi && (scale <= -kRoundScaleLimit + 400 || scale >= kRoundScaleLimit - 400)) [[unlikely]]
      checkRoundArgs("bround", v, scale);
    switch (v.type()) {
      case TypeId::Int:
        return Value::integer(static_cast<int32_t>(roundInteger(v.asInt(), scale, true)));
      case TypeId::BigInt:
        return Value::bigint(roundInteger(v.asInt(), scale, true));
      default:
        return Value::float64(roundDouble(v.asDouble(), scale, true));
    }
  });
}

ExprPtr buildFactorial(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argInt(name, args, 0, pos);
  return fn1(name, bigIntType(), args, [](const Value& v) {
    int64_t n = v.asInt();
    if (n < 0 || n > 20) return Value();
    int64_t r = 1;
    for (int64_t i = 2; i <= n; ++i) r *= i;
    return Value::bigint(r);
  });
}

// bin(x): the two's complement bits of a BIGINT, as Java's Long.toBinaryString.
ExprPtr buildBin(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argBigInt(name, args, 0, pos);
  return fn1(name, DataType::of(TypeId::String), args, [](const Value& v) {
    auto u = static_cast<uint64_t>(v.asInt());
    if (u == 0) return Value::string("0");
    std::string s;
    while (u) {
      s += static_cast<char>('0' + (u & 1));
      u >>= 1;
    }
    std::reverse(s.begin(), s.end());
    return Value::string(std::move(s));
  });
}

// conv(num, from_base, to_base): Spark's NumberConverter. Digits are read up
// to the first one invalid in from_base; the value is unsigned 64-bit (an
// overflow gives all ones); a negative to_base prints it signed.
Value convert(const std::string& text, int64_t fromBase, int64_t toBase) {
  if (fromBase < 2 || fromBase > 36 || std::abs(toBase) < 2 || std::abs(toBase) > 36) return {};
  std::string_view s = text;
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  bool negative = !s.empty() && s.front() == '-';
  if (negative) s.remove_prefix(1);
  if (s.empty()) return {};
  uint64_t v = 0;
  bool overflow = false;
  size_t digits = 0;
  for (char c : s) {
    int d = c >= '0' && c <= '9'   ? c - '0'
            : c >= 'a' && c <= 'z' ? c - 'a' + 10
            : c >= 'A' && c <= 'Z' ? c - 'A' + 10
                                   : 99;
    if (d >= fromBase) break;
    ++digits;
    if (v > (UINT64_MAX - static_cast<uint64_t>(d)) / static_cast<uint64_t>(fromBase))
      overflow = true;
    v = v * static_cast<uint64_t>(fromBase) + static_cast<uint64_t>(d);
  }
  if (digits == 0) return Value::string("0");
  if (overflow) v = UINT64_MAX;
  if (negative) v = overflow ? UINT64_MAX : 0 - v;
  bool signedOut = toBase < 0;
  uint64_t base = static_cast<uint64_t>(std::abs(toBase));
  bool minus = signedOut && static_cast<int64_t>(v) < 0;
  if (minus) v = 0 - v;
  std::string out;
  do {
    auto d = static_cast<int>(v % base);
    out += static_cast<char>(d < 10 ? '0' + d : 'A' + d - 10);
    v /= base;
  } while (v);
  if (minus) out += '-';
  std::reverse(out.begin(), out.end());
  return Value::string(std::move(out));
}

ExprPtr buildConv(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argString(name, args, 0, pos);
  argBigInt(name, args, 1, pos);
  argBigInt(name, args, 2, pos);
  return fn3(name, DataType::of(TypeId::String), args,
             [](const Value& n, const Value& f, const Value& t) {
               return convert(n.asString(), f.asInt(), t.asInt());
             });
}

// shiftleft/shiftright/shiftrightunsigned(x, n) on INT or BIGINT, with Java's
// shift semantics (the count is taken modulo the width).
template <int Kind>  // 0: <<, 1: >>, 2: >>>
ExprPtr buildShift(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argNumeric(name, args, 0, pos);
  if (args[0]->type()->id == TypeId::Double) argBigInt(name, args, 0, pos);
  argInt(name, args, 1, pos);
  auto t = args[0]->type();
  return fn2(name, t, args, [](const Value& v, const Value& nv) {
    if (v.type() == TypeId::Int) {
      auto x = static_cast<int32_t>(v.asInt());
      int n = static_cast<int>(nv.asInt() & 31);
      int32_t r = Kind == 0   ? static_cast<int32_t>(static_cast<uint32_t>(x) << n)
                  : Kind == 1 ? (x >> n)
                              : static_cast<int32_t>(static_cast<uint32_t>(x) >> n);
      return Value::integer(r);
    }
    int64_t x = v.asInt();
    int n = static_cast<int>(nv.asInt() & 63);
    int64_t r = Kind == 0   ? static_cast<int64_t>(static_cast<uint64_t>(x) << n)
                : Kind == 1 ? (x >> n)
                            : static_cast<int64_t>(static_cast<uint64_t>(x) >> n);
    return Value::bigint(r);
  });
}

// An operand of a bitwise operator: INT or BIGINT as it is, a bare NULL as
// INT; anything else (DOUBLE and DECIMAL included, as in Spark) is 42804.
void argIntegral(const std::string& name, std::vector<ExprPtr>& args, size_t i, size_t pos) {
  TypeId t = args[i]->type()->id;
  if (t == TypeId::Null) args[i] = castTo(args[i], DataType::of(TypeId::Int));
  else if (t != TypeId::Int && t != TypeId::BigInt)
    throwArgError(name, args, pos,
                  fmt::format("operator {} needs INT or BIGINT, not {}", name,
                              args[i]->type()->toString()),
                  "CAST the operand to INT or BIGINT");
}

// The binary bitwise operators & | ^ (Spark's BitwiseAnd/Or/Xor): INT op INT
// is an INT, any BIGINT operand makes both BIGINT. NULL in, NULL out.
template <char Op>
ExprPtr buildBitwise(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argIntegral(name, args, 0, pos);
  argIntegral(name, args, 1, pos);
  auto apply = [](int64_t a, int64_t b) {
    return Op == '&' ? (a & b) : Op == '|' ? (a | b) : (a ^ b);
  };
  if (args[0]->type()->id == TypeId::Int && args[1]->type()->id == TypeId::Int)
    return fn2(name, DataType::of(TypeId::Int), args, [apply](const Value& a, const Value& b) {
      return Value::integer(static_cast<int32_t>(apply(a.asInt(), b.asInt())));
    });
  argBigInt(name, args, 0, pos);
  argBigInt(name, args, 1, pos);
  return fn2(name, DataType::of(TypeId::BigInt), args, [apply](const Value& a, const Value& b) {
    return Value::bigint(apply(a.asInt(), b.asInt()));
  });
}

// Unary ~ (Spark's BitwiseNot), in the operand's own type.
ExprPtr buildBitwiseNot(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argIntegral(name, args, 0, pos);
  if (args[0]->type()->id == TypeId::Int)
    return fn1(name, DataType::of(TypeId::Int), args, [](const Value& v) {
      return Value::integer(static_cast<int32_t>(~v.asInt()));
    });
  return fn1(name, DataType::of(TypeId::BigInt), args,
             [](const Value& v) { return Value::bigint(~v.asInt()); });
}

ExprPtr buildBitCount(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  if (args[0]->type()->id == TypeId::Boolean)
    return fn1(name, DataType::of(TypeId::Int), args,
               [](const Value& v) { return Value::integer(v.asBool() ? 1 : 0); });
  argNumeric(name, args, 0, pos);
  if (args[0]->type()->id == TypeId::Double)
    throwArgError(name, args, pos, "the argument must be an integer");
  return fn1(name, DataType::of(TypeId::Int), args, [](const Value& v) {
    // Spark counts the bits of the value widened to 64 bits: an INT's sign
    // extends (bit_count(-1) is 64).
    return Value::integer(__builtin_popcountll(static_cast<uint64_t>(v.asInt())));
  });
}

// bit_get(x, pos): the bit at pos (0 is the lowest); a position outside the
// type's width is 22023, as in Spark.
ExprPtr buildBitGet(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  // Spark's bit_get is a TINYINT whatever the argument, which gives the width.
  const TypeId in = args[0]->type()->id;
  const int width = in == TypeId::TinyInt ? 8 : in == TypeId::SmallInt ? 16 : in == TypeId::BigInt ? 64 : 32;
  argNumeric(name, args, 0, pos);
  if (args[0]->type()->id == TypeId::Double)
    throwArgError(name, args, pos, "the argument must be an integer");
  argInt(name, args, 1, pos);
  return fn2(name, DataType::of(TypeId::TinyInt), args, [width](const Value& v, const Value& p) {
    int64_t k = p.asInt();
    if (k < 0 || k >= width)
      throw SqlError(sqlstate::kInvalidParameterValue, "bit_get: the bit position " +
                                                           std::to_string(k) + " is outside 0.." +
                                                           std::to_string(width - 1));
    return Value::tinyint(static_cast<int8_t>((static_cast<uint64_t>(v.asInt()) >> k) & 1));
  });
}

template <bool Negate>
ExprPtr buildSignOp(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  nullAsDouble(args);
  // TINYINT, SMALLINT, FLOAT and DECIMAL keep their type, as in Spark.
  if (args[0]->type()->id != TypeId::Interval && !isSmallIntegral(args[0]->type()) &&
      args[0]->type()->id != TypeId::Float && args[0]->type()->id != TypeId::Decimal)
    argNumeric(name, args, 0, pos);
  if (!Negate) return args[0];
  std::vector<ExprPtr> a{args[0]};
  return makeCall("neg", std::move(a), pos);
}

// isnan(x): TRUE for NaN, FALSE otherwise, also for NULL.
ExprPtr buildIsnan(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argDouble(name, args, 0, pos);
  return fnN(name, DataType::of(TypeId::Boolean), args, true,
             [](const Row& row, const std::vector<ExprPtr>& a) {
               Value v = a[0]->eval(row);
               return Value::boolean(!v.isNull() && std::isnan(v.asDouble()));
             });
}

// nanvl(a, b): b when a is NaN, else a.
ExprPtr buildNanvl(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argDouble(name, args, 0, pos);
  argDouble(name, args, 1, pos);
  return fnN(name, dbl(), args, true, [](const Row& row, const std::vector<ExprPtr>& a) {
    Value v = a[0]->eval(row);
    if (v.isNull() || !std::isnan(v.asDouble())) return v;
    return a[1]->eval(row);
  });
}

// width_bucket(v, min, max, n): the bucket of v among n equal ones, 0 below
// and n + 1 above; NULL for n <= 0, min = max or a non-finite bound.
ExprPtr buildWidthBucket(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  for (size_t i = 0; i < 3; ++i) argDouble(name, args, i, pos);
  argBigInt(name, args, 3, pos);
  return fnN(name, bigIntType(), args, true, [](const Row& row, const std::vector<ExprPtr>& a) {
    Value vs[4];
    for (size_t i = 0; i < 4; ++i) {
      vs[i] = a[i]->eval(row);
      if (vs[i].isNull()) return Value();
    }
    double v = vs[0].asDouble(), lo = vs[1].asDouble(), hi = vs[2].asDouble();
    int64_t n = vs[3].asInt();
    if (n <= 0 || n == INT64_MAX || std::isnan(v) || !std::isfinite(lo) || !std::isfinite(hi) ||
        lo == hi)
      return Value();
    if (lo < hi) {
      if (v < lo) return Value::bigint(0);
      if (v >= hi) return Value::bigint(n + 1);
      return Value::bigint(static_cast<int64_t>(static_cast<double>(n) * (v - lo) / (hi - lo)) + 1);
    }
    if (v > lo) return Value::bigint(0);
    if (v <= hi) return Value::bigint(n + 1);
    return Value::bigint(static_cast<int64_t>(static_cast<double>(n) * (lo - v) / (lo - hi)) + 1);
  });
}

// try_add, try_subtract, try_multiply, try_divide: NULL instead of an
// overflow or a division by zero.
template <char Op>
ExprPtr buildTryArith(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  // Over a DECIMAL the operator's own DECIMAL result, which makeCall builds
  // here in the legacy mode: NULL where it does not fit or divides by zero.
  if (isDecimalArithmetic(args)) return makeCall(std::string(1, Op), std::move(args), pos);
  argNumeric(name, args, 0, pos);
  argNumeric(name, args, 1, pos);
  if (Op == '/') {
    argDouble(name, args, 0, pos);
    argDouble(name, args, 1, pos);
  }
  auto t = argsCommon(name, args, 0, pos);
  return fn2(name, t, args, [](const Value& a, const Value& b) {
    if (a.type() == TypeId::Double) {
      double x = a.asDouble(), y = b.asDouble();
      if (Op == '/') return y == 0 ? Value() : Value::float64(x / y);
      return Value::float64(Op == '+' ? x + y : Op == '-' ? x - y : x * y);
    }
    int64_t x = a.asInt(), y = b.asInt(), r;
    if (a.type() == TypeId::Int) {
      int32_t r32;
      auto x32 = static_cast<int32_t>(x), y32 = static_cast<int32_t>(y);
      bool over = Op == '+'   ? __builtin_add_overflow(x32, y32, &r32)
                  : Op == '-' ? __builtin_sub_overflow(x32, y32, &r32)
                              : __builtin_mul_overflow(x32, y32, &r32);
      return over ? Value() : Value::integer(r32);
    }
    bool over = Op == '+'   ? __builtin_add_overflow(x, y, &r)
                : Op == '-' ? __builtin_sub_overflow(x, y, &r)
                            : __builtin_mul_overflow(x, y, &r);
    return over ? Value() : Value::bigint(r);
  });
}

// div: integral division, NULL for a zero divisor.
ExprPtr buildDiv(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argNumeric(name, args, 0, pos);
  argNumeric(name, args, 1, pos);
  argsCommon(name, args, 0, pos);
  return fn2(name, bigIntType(), args, [](const Value& a, const Value& b) {
    if (a.type() == TypeId::Double) {
      double y = b.asDouble();
      if (y == 0) return Value();
      return Value::bigint(saturatingLong(std::trunc(a.asDouble() / y)));
    }
    int64_t y = b.asInt();
    if (y == 0) return Value();
    if (y == -1)
      return Value::bigint(static_cast<int64_t>(0ull - static_cast<uint64_t>(a.asInt())));
    return Value::bigint(a.asInt() / y);
  });
}

// Spark's bitmap position functions: a value's bucket of 32768 bits and its
// bit within the bucket; bitmap_count counts the set bits of a bitmap.
constexpr int64_t kBitmapBits = 32768;
template <bool Bucket>
ExprPtr buildBitmapPosition(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argBigInt(name, args, 0, pos);
  return fn1(name, bigIntType(), args, [](const Value& v) {
    int64_t x = v.asInt();
    if (Bucket) return Value::bigint(x > 0 ? 1 + (x - 1) / kBitmapBits : x / kBitmapBits);
    return Value::bigint(x > 0
                             ? (x - 1) % kBitmapBits
                             : static_cast<int64_t>(0ull - static_cast<uint64_t>(x)) % kBitmapBits);
  });
}

ExprPtr buildBitmapCount(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argBinary(name, args, 0, pos);
  return fn1(name, bigIntType(), args, [](const Value& v) {
    int64_t n = 0;
    for (char c : v.asString()) n += __builtin_popcount(static_cast<unsigned char>(c));
    return Value::bigint(n);
  });
}

}  // namespace

// pmod and try_add, try_subtract, try_multiply over TINYINT, SMALLINT or
// FLOAT keep that type, as in Spark: `Build` computes in INT or DOUBLE, and
// the result is brought back to the arguments' type; a try_ result out of its
// range is NULL.
template <ExprPtr (*Build)(const std::string&, std::vector<ExprPtr>&, size_t), bool Try>
ExprPtr keepingNarrowType(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  DataTypePtr common = args[0]->type()->isNumeric() && args[1]->type()->isNumeric()
                           ? commonType(args[0]->type(), args[1]->type())
                           : nullptr;
  ExprPtr wide = Build(name, args, pos);
  if (!common || (!isSmallIntegral(common) && common->id != TypeId::Float)) return wide;
  if (!Try || common->id == TypeId::Float) return castTo(std::move(wide), common);
  std::vector<ExprPtr> a{std::move(wide)};
  return fn1(name, common, a, [id = common->id](const Value& v) {
    int64_t lo = id == TypeId::TinyInt ? INT8_MIN : INT16_MIN, hi = id == TypeId::TinyInt ? INT8_MAX : INT16_MAX;
    if (v.asInt() < lo || v.asInt() > hi) return Value();
    return narrowIntegralWrapping(v.asInt(), id);
  });
}

void registerMathFunctions(FunctionTable& t) {
  t["abs"] = {1, 1, buildAbs};
  t["round"] = {1, 2, buildRound};
  t["floor"] = {1, 1, buildFloorCeil<true>};
  t["ceil"] = {1, 1, buildFloorCeil<false>};
  t["ceiling"] = {1, 1, buildFloorCeil<false>};
  t["sqrt"] = {1, 1, buildUnaryDouble<dsqrt>};
  t["exp"] = {1, 1, buildUnaryDouble<dexp>};
  t["sign"] = {1, 1, buildUnaryDouble<dsign>};
  t["signum"] = {1, 1, buildUnaryDouble<dsign>};
  t["ln"] = {1, 1, buildLog<dln>};
  t["log10"] = {1, 1, buildLog<dlog10>};
  t["log2"] = {1, 1, buildLog<dlog2>};
  t["pow"] = {2, 2, buildPow};
  t["power"] = {2, 2, buildPow};
  t["mod"] = {2, 2, buildMod};
  t["pmod"] = {2, 2, keepingNarrowType<buildPmod, false>};
  t["cbrt"] = {1, 1, buildUnaryDouble<dcbrt>};
  t["degrees"] = {1, 1, buildUnaryDouble<ddegrees>};
  t["radians"] = {1, 1, buildUnaryDouble<dradians>};
  t["sin"] = {1, 1, buildUnaryDouble<dsin>};
  t["cos"] = {1, 1, buildUnaryDouble<dcos>};
  t["tan"] = {1, 1, buildUnaryDouble<dtan>};
  t["asin"] = {1, 1, buildUnaryDouble<dasin>};
  t["acos"] = {1, 1, buildUnaryDouble<dacos>};
  t["atan"] = {1, 1, buildUnaryDouble<datan>};
  t["sinh"] = {1, 1, buildUnaryDouble<dsinh>};
  t["cosh"] = {1, 1, buildUnaryDouble<dcosh>};
  t["tanh"] = {1, 1, buildUnaryDouble<dtanh>};
  t["asinh"] = {1, 1, buildUnaryDouble<dasinh>};
  t["acosh"] = {1, 1, buildUnaryDouble<dacosh>};
  t["atanh"] = {1, 1, buildUnaryDouble<datanh>};
  t["cot"] = {1, 1, buildUnaryDouble<dcot>};
  t["sec"] = {1, 1, buildUnaryDouble<dsec>};
  t["csc"] = {1, 1, buildUnaryDouble<dcsc>};
  t["expm1"] = {1, 1, buildUnaryDouble<dexpm1>};
  t["rint"] = {1, 1, buildUnaryDouble<drint>};
  t["log1p"] = {1, 1, buildLog1p};
  t["atan2"] = {2, 2, buildBinaryDouble<datan2>};
  t["hypot"] = {2, 2, buildBinaryDouble<dhypot>};
  t["e"] = {0, 0, buildConstant<0>};
  t["pi"] = {0, 0, buildConstant<1>};
  t["log"] = {1, 2, buildLogBase};
  t["bround"] = {1, 2, buildBround};
  t["factorial"] = {1, 1, buildFactorial};
  t["bin"] = {1, 1, buildBin};
  t["conv"] = {3, 3, buildConv};
  t["shiftleft"] = {2, 2, buildShift<0>};
  t["shiftright"] = {2, 2, buildShift<1>};
  t["shiftrightunsigned"] = {2, 2, buildShift<2>};
  // The bitwise operators: the binder calls them by their symbols.
  t["&"] = {2, 2, buildBitwise<'&'>};
  t["|"] = {2, 2, buildBitwise<'|'>};
  t["^"] = {2, 2, buildBitwise<'^'>};
  t["~"] = {1, 1, buildBitwiseNot};
  t["bit_count"] = {1, 1, buildBitCount};
  t["bit_get"] = {2, 2, buildBitGet};
  t["getbit"] = {2, 2, buildBitGet};
  t["negative"] = {1, 1, buildSignOp<true>};
  t["positive"] = {1, 1, buildSignOp<false>};
  t["isnan"] = {1, 1, buildIsnan};
  t["nanvl"] = {2, 2, buildNanvl};
  t["width_bucket"] = {4, 4, buildWidthBucket};
  t["try_add"] = {2, 2, keepingNarrowType<buildTryArith<'+'>, true>};
  t["try_subtract"] = {2, 2, keepingNarrowType<buildTryArith<'-'>, true>};
  t["try_multiply"] = {2, 2, keepingNarrowType<buildTryArith<'*'>, true>};
  t["try_divide"] = {2, 2, buildTryArith<'/'>};
  t["div"] = {2, 2, buildDiv};
  t["bitmap_bucket_number"] = {1, 1, buildBitmapPosition<true>};
  t["bitmap_bit_position"] = {1, 1, buildBitmapPosition<false>};
  t["bitmap_count"] = {1, 1, buildBitmapCount};
}

}  // namespace rtsql::expr_internal
