// Numeric functions: abs round floor ceil sqrt pow mod pmod exp ln log10 log2
// sign, with Spark's result types (floor/ceil give BIGINT, round keeps the
// argument's type and rounds half up on the decimal value as printed).
#include <charconv>
#include <cmath>
#include <limits>

#include "common/functions/internal.h"

namespace rtsql::expr_internal {

namespace {

const DataTypePtr& dbl() {
  static const DataTypePtr t = DataType::of(TypeId::Double);
  return t;
}
const DataTypePtr& bigint() {
  static const DataTypePtr t = DataType::of(TypeId::BigInt);
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
double roundDouble(double x, int scale) {
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
  if (digits[static_cast<size_t>(keep)] >= '5') {
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

int64_t roundInteger(int64_t x, int scale) {
  if (scale >= 0) return x;
  if (scale < -18) return 0;
  int64_t p = 1;
  for (int i = 0; i < -scale; ++i) p *= 10;
  int64_t q = x / p * p;
  int64_t rem = x - q;
  if (rem >= 0 ? rem * 2 >= p : -rem * 2 >= p) q += x >= 0 ? p : -p;
  return q;
}

ExprPtr buildAbs(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
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
  argNumeric(name, args, 0, pos);
  if (args.size() == 1) args.push_back(makeLiteral(Value::integer(0), DataType::of(TypeId::Int)));
  argInt(name, args, 1, pos);
  auto t = args[0]->type();
  return fn2(name, t, args, [](const Value& v, const Value& s) {
    int scale = static_cast<int>(s.asInt());
    switch (v.type()) {
      case TypeId::Int: return Value::integer(static_cast<int32_t>(roundInteger(v.asInt(), scale)));
      case TypeId::BigInt: return Value::bigint(roundInteger(v.asInt(), scale));
      default: return Value::float64(roundDouble(v.asDouble(), scale));
    }
  });
}

template <bool Floor>
ExprPtr buildFloorCeil(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argNumeric(name, args, 0, pos);
  return fn1(name, bigint(), args, [](const Value& v) {
    if (v.type() != TypeId::Double) return Value::bigint(v.asInt());
    return Value::bigint(saturatingLong(Floor ? std::floor(v.asDouble()) : std::ceil(v.asDouble())));
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
double dlog2(double x) { return std::log2(x); }

ExprPtr buildPow(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argDouble(name, args, 0, pos);
  argDouble(name, args, 1, pos);
  return fn2(name, dbl(), args,
             [](const Value& a, const Value& b) { return Value::float64(std::pow(a.asDouble(), b.asDouble())); });
}

ExprPtr buildMod(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argNumeric(name, args, 0, pos);
  argNumeric(name, args, 1, pos);
  return makeCall("%", std::move(args), pos);
}

ExprPtr buildPmod(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argNumeric(name, args, 0, pos);
  argNumeric(name, args, 1, pos);
  auto t = argsCommon(name, args, 0, pos);
  return fn2(name, t, args, [](const Value& a, const Value& b) {
    if (a.type() == TypeId::Double) {
      double y = b.asDouble();
      if (y == 0) return Value();
      double r = std::fmod(a.asDouble(), y);
      if (r < 0) r = std::fmod(r + y, y);
      return Value::float64(r);
    }
    int64_t y = b.asInt();
    if (y == 0) return Value();
    int64_t r = y == -1 ? 0 : a.asInt() % y;
    if (r < 0) r = y == INT64_MIN ? r : (r + y) % y;
    return a.type() == TypeId::Int ? Value::integer(static_cast<int32_t>(r)) : Value::bigint(r);
  });
}

}  // namespace

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
  t["pmod"] = {2, 2, buildPmod};
}

}  // namespace rtsql::expr_internal
