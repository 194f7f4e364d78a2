// CAST with Spark's non-ANSI semantics (a value that does not parse becomes
// NULL instead of failing the record) and with its ANSI ones (it raises,
// common/ansi_mode.h), and the implicit conversions the binder inserts: NULL
// literals adapting to their context, TINYINT -> SMALLINT -> INT -> BIGINT ->
// FLOAT -> DOUBLE, and scalars to STRING where a function wants text. A number
// cast to TINYINT or SMALLINT out of the range raises CAST_OVERFLOW in ANSI
// mode (narrowIntegral) and wraps in the legacy one (narrowIntegralWrapping).
#include <fmt/format.h>

#include <algorithm>

#include <charconv>
#include <cmath>
#include <limits>

#include "common/ansi_mode.h"
#include "common/day_time_interval.h"
#include "common/functions/internal.h"
#include "common/json.h"
#include "common/schema.h"
#include "common/time_zone.h"
#include "common/year_month_interval.h"
#include "common/try_cast.h"
#include "common/value_text.h"

namespace rtsql {

using namespace expr_internal;

namespace {

std::string_view trimSpaces(std::string_view s) {
  auto sp = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; };
  while (!s.empty() && sp(s.front())) s.remove_prefix(1);
  while (!s.empty() && sp(s.back())) s.remove_suffix(1);
  return s;
}

// Integer text as Spark's UTF8String.toLong reads it: optional sign, digits, and
// an optional fractional part that is truncated ("1.9" -> 1).
bool parseInteger(std::string_view s, int64_t* out) {
  s = trimSpaces(s);
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty()) return false;
  auto r = std::from_chars(s.data(), s.data() + s.size(), *out);
  bool intDigits = r.ec == std::errc();
  if (r.ec != std::errc()) {
    if (r.ec == std::errc::result_out_of_range) return false;
    // "-.5" or ".5": no integer digits but a fraction.
    if (s.front() != '.' && !(s.size() > 1 && s[0] == '-' && s[1] == '.')) return false;
    *out = 0;
    r.ptr = s.data() + (s.front() == '-' ? 1 : 0);
  }
  const char* p = r.ptr;
  const char* end = s.data() + s.size();
  if (p == end) return true;
  if (*p != '.') return false;
  ++p;
  if (p == end && !intDigits) return false;
  for (; p != end; ++p)
    if (*p < '0' || *p > '9') return false;
  return true;
}

bool parseDouble(std::string_view s, double* out) {
  s = trimSpaces(s);
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty()) return false;
  // Java spellings that from_chars does not know.
  std::string_view body = s.front() == '-' ? s.substr(1) : s;
  if (body == "Infinity" || iequals(body, "inf") || iequals(body, "infinity")) {
    *out = s.front() == '-' ? -HUGE_VAL : HUGE_VAL;
    return true;
  }
  if (iequals(body, "nan")) {
    *out = std::numeric_limits<double>::quiet_NaN();
    return true;
  }
  // Java accepts a trailing d/f type suffix ("1.5d"); so does Spark.
  if (s.size() > 1 && (s.back() == 'd' || s.back() == 'D' || s.back() == 'f' || s.back() == 'F'))
    s.remove_suffix(1);
  auto r = std::from_chars(s.data(), s.data() + s.size(), *out);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

int64_t doubleToLong(double d) {
  // Java's (long) cast: NaN -> 0, saturating at the ends.
  if (std::isnan(d)) return 0;
  if (d >= 9223372036854775807.0) return std::numeric_limits<int64_t>::max();
  if (d <= -9223372036854775808.0) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(d);
}

int32_t doubleToInt(double d) {
  if (std::isnan(d)) return 0;
  if (d >= 2147483647.0) return std::numeric_limits<int32_t>::max();
  if (d <= -2147483648.0) return std::numeric_limits<int32_t>::min();
  return static_cast<int32_t>(d);
}

// Java's (int) of a long: keeps the low 32 bits.
int32_t wrapInt(int64_t v) { return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v))); }

Value castToString(const Value& v) {
  switch (v.type()) {
    case TypeId::String:
      return v;
    case TypeId::Binary:
      return Value::string(v.asString());
    case TypeId::Double:
      return Value::string(formatDouble(v.asDouble()));
    case TypeId::Float:
      return Value::string(formatFloat(static_cast<float>(v.asDouble())));
    default:
      return Value::string(v.toString());
  }
}

// TINYINT and SMALLINT: the range of each, and the Value of an integer in it.
int64_t smallIntegralMax(TypeId to) { return to == TypeId::TinyInt ? INT8_MAX : INT16_MAX; }
int64_t smallIntegralMin(TypeId to) { return to == TypeId::TinyInt ? INT8_MIN : INT16_MIN; }
Value smallIntegral(int64_t n, TypeId to) {
  return to == TypeId::TinyInt ? Value::tinyint(static_cast<int8_t>(n))
                               : Value::smallint(static_cast<int16_t>(n));
}

// A cast to TINYINT or SMALLINT. In ANSI mode integers, DECIMALs and doubles
// out of the range raise CAST_OVERFLOW (narrowIntegral); in the legacy mode
// they wrap as Spark's does (a double first saturates to an INT, NaN is 0, as
// Java's narrowing does). Text that is not an integer in the range is NULL
// here, as for INT (castValueAnsi raises CAST_INVALID_INPUT for it).
Value castToSmallIntegral(const Value& v, TypeId to, bool ansi) {
  auto narrow = [&](int64_t n) {
    return ansi ? narrowIntegral(n, to, v) : narrowIntegralWrapping(n, to);
  };
  switch (v.type()) {
    case TypeId::Boolean:
      return smallIntegral(v.asBool() ? 1 : 0, to);
    case TypeId::TinyInt:
    case TypeId::SmallInt:
    case TypeId::Int:
    case TypeId::BigInt:
      return narrow(v.asInt());
    case TypeId::Double:
    case TypeId::Float: {
      double d = std::trunc(v.asDouble());
      if (!ansi) {
        if (std::isnan(d)) return smallIntegral(0, to);
        d = std::clamp(d, static_cast<double>(INT32_MIN), static_cast<double>(INT32_MAX));
        return narrowIntegralWrapping(static_cast<int64_t>(d), to);
      }
      if (std::isnan(d) || d < static_cast<double>(smallIntegralMin(to)) ||
          d > static_cast<double>(smallIntegralMax(to)))
        throwCastOverflow(v, to);
      return smallIntegral(static_cast<int64_t>(d), to);
    }
    case TypeId::Decimal: {
      Int128 whole = v.asDecimal() / decimal::pow10(v.decimalScale());
      if (!ansi) return narrowIntegralWrapping(static_cast<int64_t>(whole), to);
      if (whole < smallIntegralMin(to) || whole > smallIntegralMax(to)) throwCastOverflow(v, to);
      return smallIntegral(static_cast<int64_t>(whole), to);
    }
    case TypeId::String: {
      int64_t n;
      if (!parseInteger(v.asString(), &n) || n < smallIntegralMin(to) || n > smallIntegralMax(to))
        return {};
      return smallIntegral(n, to);
    }
    case TypeId::Timestamp:
      return narrow(floorDiv(v.asInt(), kMicrosPerSecond));
    default:
      return {};
  }
}

class CastExpr final : public Expr {
 public:
  void forEachChild(const std::function<void(const Expr&)>& fn) const override { fn(*e_); }
  ExprPtr withChildren(std::vector<ExprPtr> c) const override {
    return std::make_shared<CastExpr>(std::move(c[0]), type());
  }
  CastExpr(ExprPtr e, DataTypePtr target) : Expr(std::move(target)), e_(std::move(e)) {}
  Value eval(const Row& row) const override {
    Value v = e_->eval(row);
    if (v.isNull()) return v;
    return castValue(v, *type());
  }
  std::string toString() const override {
    return "CAST(" + e_->toString() + " AS " + type()->toString() + ")";
  }
  bool isConstant() const override { return e_->isConstant(); }

 private:
  ExprPtr e_;
};

// The ANSI mode's CAST (common/ansi_mode.h): what the legacy one answers
// NULL or wraps for raises. A class of its own so that the legacy CAST's
// record path is unchanged.
class AnsiCastExpr final : public Expr {
 public:
  void forEachChild(const std::function<void(const Expr&)>& fn) const override { fn(*e_); }
  ExprPtr withChildren(std::vector<ExprPtr> c) const override {
    return std::make_shared<AnsiCastExpr>(std::move(c[0]), type());
  }
  AnsiCastExpr(ExprPtr e, DataTypePtr target) : Expr(std::move(target)), e_(std::move(e)) {}
  Value eval(const Row& row) const override {
    Value scratch;
    const Value& v = e_->evalRef(row, scratch);
    if (v.isNull()) return Value();
    return castValueAnsi(v, *type());
  }
  std::string toString() const override {
    return "CAST(" + e_->toString() + " AS " + type()->toString() + ")";
  }
  bool isConstant() const override { return e_->isConstant(); }

 private:
  ExprPtr e_;
};

// A value as Spark's errors name it: text quoted, a BIGINT with L, a DOUBLE
// with D.
std::string ansiLiteral(const Value& v) {
  switch (v.type()) {
    case TypeId::String: {
      std::string q = "'";
      std::string_view s = v.asString();
      q += s.substr(0, 256);
      if (s.size() > 256) q += "...";
      return q + "'";
    }
    case TypeId::BigInt: return v.toString() + "L";
    case TypeId::Double: return formatDouble(v.asDouble()) + "D";
    default: return castToString(v).asString();
  }
}

[[noreturn, gnu::cold]] void castFailed(const ansi::ErrorClass& c, const Value& v,
                                        const DataType& target) {
  const bool malformed = &c == &ansi::kCastInvalidInput;
  ansi::raise(c,
              fmt::format("the value {} of the type {} cannot be cast to {} {}", ansiLiteral(v),
                          DataType::of(v.type())->toString(), target.toString(),
                          malformed ? "because it is malformed" : "due to an overflow"));
}

// Integer text as Spark's ANSI cast reads it (UTF8String.toLongExact): an
// optional sign and digits only, no fraction.
bool parseIntegerExact(std::string_view s, int64_t* out) {
  s = trimSpaces(s);
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty()) return false;
  auto r = std::from_chars(s.data(), s.data() + s.size(), *out);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

}  // namespace

Value castValueAnsi(const Value& v, const DataType& target) {
  if (v.isNull()) return v;
  const TypeId from = v.type();
  const bool toInt = target.id == TypeId::Int;
  switch (target.id) {
    case TypeId::Int:
    case TypeId::BigInt: {
      const int64_t lo = toInt ? INT32_MIN : INT64_MIN, hi = toInt ? INT32_MAX : INT64_MAX;
      switch (from) {
        case TypeId::String: {
          int64_t n;
          if (!parseIntegerExact(v.asString(), &n) || n < lo || n > hi)
            castFailed(ansi::kCastInvalidInput, v, target);
          return toInt ? Value::integer(static_cast<int32_t>(n)) : Value::bigint(n);
        }
        case TypeId::Int:
        case TypeId::BigInt:
          if (v.asInt() < lo || v.asInt() > hi) castFailed(ansi::kCastOverflow, v, target);
          break;
        case TypeId::Double: {
          // As Spark: the value truncated toward zero must fit; NaN never does.
          const double d = std::trunc(v.asDouble());
          if (!(d >= static_cast<double>(lo) && d < -static_cast<double>(lo) &&
                (toInt ? d <= static_cast<double>(hi) : true)))
            castFailed(ansi::kCastOverflow, v, target);
          break;
        }
        case TypeId::Decimal: {
          const Int128 n = v.asDecimal() / decimal::pow10(v.decimalScale());
          if (n < lo || n > hi) castFailed(ansi::kCastOverflow, v, target);
          break;
        }
        case TypeId::Timestamp: {
          const int64_t n = floorDiv(v.asInt(), kMicrosPerSecond);
          if (n < lo || n > hi) castFailed(ansi::kCastOverflow, v, target);
          break;
        }
        case TypeId::Interval: {
          const int64_t n = v.asInt() / kMicrosPerSecond;
          if (n < lo || n > hi) castFailed(ansi::kCastOverflow, v, target);
          break;
        }
        default: break;
      }
      break;
    }
    case TypeId::TinyInt:
    case TypeId::SmallInt: {
      if (from == TypeId::String) {
        // As for INT: an optional sign and digits only ('-3.5' is malformed).
        int64_t n;
        if (!parseIntegerExact(v.asString(), &n) || n < smallIntegralMin(target.id) ||
            n > smallIntegralMax(target.id))
          castFailed(ansi::kCastInvalidInput, v, target);
        return smallIntegral(n, target.id);
      }
      Value r = castToSmallIntegral(v, target.id, /*ansi=*/true);
      if (r.isNull() && from == TypeId::String) castFailed(ansi::kCastInvalidInput, v, target);
      return r;
    }
    case TypeId::Array: {
      if (from != TypeId::Array || !target.element) break;
      ValueList out;
      out.reserve(v.asList().size());
      for (const auto& item : v.asList()) out.push_back(castValueAnsi(item, *target.element));
      return Value::array(std::move(out));
    }
    case TypeId::Struct: {
      if (from != TypeId::Struct || v.asList().size() != target.fields.size()) break;
      ValueList out;
      out.reserve(target.fields.size());
      for (size_t i = 0; i < target.fields.size(); ++i)
        out.push_back(castValueAnsi(v.asList()[i], *target.fields[i].type));
      return Value::structure(std::move(out));
    }
    default: break;
  }
  Value r = castValue(v, target);
  if (!r.isNull() || target.id == TypeId::Null) return r;
  // What the legacy cast answers NULL for: text that does not parse, or a
  // number that does not fit.
  if (from == TypeId::String) {
    if (target.id == TypeId::Decimal) {
      double d;
      if (parseDouble(v.asString(), &d) && std::isfinite(d))
        ansi::raise(ansi::kNumericOutOfRange,
                    fmt::format("{} cannot be represented as {}", ansiLiteral(v),
                                target.toString()));
    }
    castFailed(ansi::kCastInvalidInput, v, target);
  }
  if (target.id == TypeId::Decimal)
    ansi::raise(ansi::kNumericOutOfRange,
                fmt::format("{} cannot be represented as {}", ansiLiteral(v), target.toString()));
  castFailed(ansi::kCastOverflow, v, target);
}

Value castValue(const Value& v, const DataType& target) {
  if (v.isNull()) return v;
  TypeId from = v.type();
  switch (target.id) {
    case TypeId::Null:
      return {};
    case TypeId::String:
      return castToString(v);
    case TypeId::Boolean:
      switch (from) {
        case TypeId::Boolean: return v;
        case TypeId::Int:
        case TypeId::BigInt:
        case TypeId::TinyInt:
        case TypeId::SmallInt: return Value::boolean(v.asInt() != 0);
        case TypeId::Double:
        case TypeId::Float: return Value::boolean(v.asDouble() != 0);
        case TypeId::Decimal: return Value::boolean(v.asDecimal() != 0);
        case TypeId::String: {
          std::string_view s = trimSpaces(v.asString());
          if (iequals(s, "true") || iequals(s, "t") || iequals(s, "yes") || iequals(s, "y") || s == "1")
            return Value::boolean(true);
          if (iequals(s, "false") || iequals(s, "f") || iequals(s, "no") || iequals(s, "n") || s == "0")
            return Value::boolean(false);
          return {};
        }
        default: return {};
      }
    case TypeId::Int:
    case TypeId::BigInt: {
      bool toInt = target.id == TypeId::Int;
      int64_t n;
      switch (from) {
        case TypeId::Boolean: n = v.asBool() ? 1 : 0; break;
        case TypeId::Int:
        case TypeId::BigInt:
        case TypeId::TinyInt:
        case TypeId::SmallInt: n = v.asInt(); break;
        case TypeId::Double:
        case TypeId::Float:
          return toInt ? Value::integer(doubleToInt(v.asDouble())) : Value::bigint(doubleToLong(v.asDouble()));
        case TypeId::Decimal:
          // Truncated toward zero and wrapped, as Spark's non-ANSI cast does.
          n = decimal::toLongWrapped(v.asDecimal(), v.decimalScale());
          break;
        case TypeId::String:
          if (!parseInteger(v.asString(), &n)) return {};
          if (toInt && (n < INT32_MIN || n > INT32_MAX)) return {};
          return toInt ? Value::integer(static_cast<int32_t>(n)) : Value::bigint(n);
        case TypeId::Timestamp:
          // Seconds since the epoch, rounded down, as Spark does.
          n = floorDiv(v.asInt(), kMicrosPerSecond);
          break;
        case TypeId::Interval:
          n = v.asInt() / kMicrosPerSecond;
          break;
        default:
          return {};
      }
      return toInt ? Value::integer(wrapInt(n)) : Value::bigint(n);
    }
    case TypeId::TinyInt:
    case TypeId::SmallInt:
      return castToSmallIntegral(v, target.id, /*ansi=*/false);
    case TypeId::Float: {
      // Through the DOUBLE of the value, rounded to the nearest float (a
      // DOUBLE beyond a float's range is an infinity, as in Spark).
      Value d = castValue(v, *DataType::of(TypeId::Double));
      return d.isNull() ? d : Value::float32(static_cast<float>(d.asDouble()));
    }
    case TypeId::Double:
      switch (from) {
        case TypeId::Boolean: return Value::float64(v.asBool() ? 1 : 0);
        case TypeId::Int:
        case TypeId::BigInt:
        case TypeId::TinyInt:
        case TypeId::SmallInt: return Value::float64(static_cast<double>(v.asInt()));
        case TypeId::Double: return v;
        case TypeId::Float: return Value::float64(v.asDouble());
        case TypeId::Decimal: return Value::float64(v.toDouble());
        case TypeId::String: {
          double d;
          return parseDouble(v.asString(), &d) ? Value::float64(d) : Value();
        }
        case TypeId::Timestamp: return Value::float64(static_cast<double>(v.asInt()) / 1e6);
        case TypeId::Interval: return Value::float64(static_cast<double>(v.asInt()) / 1e6);
        default: return {};
      }
    case TypeId::Binary:
      switch (from) {
        case TypeId::String:
        case TypeId::Binary: return Value::binary(v.asString());
        case TypeId::TinyInt: return Value::binary(std::string(1, static_cast<char>(v.asInt())));
        case TypeId::SmallInt: {
          auto u = static_cast<uint16_t>(v.asInt());
          return Value::binary(std::string{static_cast<char>(u >> 8), static_cast<char>(u & 0xff)});
        }
        case TypeId::Int: {
          // Big-endian bytes, as Spark casts integers to BINARY.
          auto u = static_cast<uint32_t>(v.asInt());
          std::string b(4, '\0');
          for (int i = 0; i < 4; ++i) b[static_cast<size_t>(i)] = static_cast<char>(u >> (24 - 8 * i));
          return Value::binary(std::move(b));
        }
        case TypeId::BigInt: {
          auto u = static_cast<uint64_t>(v.asInt());
          std::string b(8, '\0');
          for (int i = 0; i < 8; ++i) b[static_cast<size_t>(i)] = static_cast<char>(u >> (56 - 8 * i));
          return Value::binary(std::move(b));
        }
        default: return {};
      }
    case TypeId::Timestamp:
      switch (from) {
        case TypeId::Timestamp: return v;
        case TypeId::Int:
        case TypeId::BigInt:
        case TypeId::TinyInt:
        case TypeId::SmallInt: {
          int64_t s = v.asInt();
          if (s > INT64_MAX / kMicrosPerSecond || s < INT64_MIN / kMicrosPerSecond) return {};
          return Value::timestamp(s * kMicrosPerSecond);
        }
        case TypeId::Double:
        case TypeId::Float: {
          double d = v.asDouble() * 1e6;
          if (!std::isfinite(d) || std::fabs(d) >= 9.2e18) return {};
          return Value::timestamp(static_cast<int64_t>(std::floor(d)));
        }
        case TypeId::Decimal: {
          // Seconds with a fraction; digits below a microsecond are dropped.
          Int128 us = v.decimalScale() > 6 ? v.asDecimal() / decimal::pow10(v.decimalScale() - 6)
                                           : v.asDecimal() * decimal::pow10(6 - v.decimalScale());
          if (us > INT64_MAX || us < INT64_MIN) return {};
          return Value::timestamp(static_cast<int64_t>(us));
        }
        case TypeId::String: {
          int64_t us;
          return parseTimestamp(v.asString(), &us) ? Value::timestamp(us) : Value();
        }
        case TypeId::Date: {
          // Midnight UTC of the day (the session time zone is UTC).
          int64_t days = v.asInt();
          if (days > INT64_MAX / kMicrosPerDay || days < INT64_MIN / kMicrosPerDay) return {};
          return Value::timestamp(days * kMicrosPerDay);
        }
        case TypeId::TimestampNtz:  // its wall clock in UTC (castTo handles other zones)
          return Value::timestamp(v.asInt());
        default: return {};
      }
    case TypeId::TimestampNtz:
      // A wall-clock time: text gives its date and time (an offset in it is not
      // read, as Spark), a DATE its midnight, a TIMESTAMP its wall clock in UTC
      // (castTo handles other session zones). Numbers do not convert (Spark
      // refuses them).
      switch (from) {
        case TypeId::TimestampNtz: return v;
        case TypeId::Timestamp: return Value::timestampNtz(v.asInt());
        case TypeId::String: {
          int64_t us;
          return parseTimestamp(v.asString(), &us, false) ? Value::timestampNtz(us) : Value();
        }
        case TypeId::Date: {
          int64_t days = v.asInt();
          if (days > INT64_MAX / kMicrosPerDay || days < INT64_MIN / kMicrosPerDay) return {};
          return Value::timestampNtz(days * kMicrosPerDay);
        }
        default: return {};
      }
    case TypeId::YearMonthInterval:
      // Inside an ARRAY or STRUCT (a whole value goes through
      // castYearMonthInterval): text in Spark's forms, or another one.
      if (from == TypeId::YearMonthInterval) return target.ymEnd == YmField::Year
                                                        ? Value::yearMonthInterval(static_cast<int32_t>(v.asInt() / 12 * 12))
                                                        : v;
      if (from == TypeId::String) {
        auto months = ym::parse(v.asString(), target.ymStart, target.ymEnd);
        return months ? Value::yearMonthInterval(*months) : Value();
      }
      return {};
    case TypeId::Interval:
      switch (from) {
        case TypeId::Interval: return v;
        case TypeId::String:
          try {
            return Value::interval(parseInterval(v.asString(), "", SqlError::npos));
          } catch (const SqlError&) {
            return {};
          }
        default: return {};
      }
    case TypeId::Decimal: {
      decimal::Type to{target.precision, target.scale};
      std::optional<Int128> r;
      switch (from) {
        case TypeId::Boolean: r = decimal::toType(v.asBool() ? 1 : 0, 0, to); break;
        case TypeId::Int:
        case TypeId::BigInt:
        case TypeId::TinyInt:
        case TypeId::SmallInt: r = decimal::toType(v.asInt(), 0, to); break;
        case TypeId::Double:
        case TypeId::Float: r = decimal::fromDouble(v.asDouble(), to); break;
        case TypeId::Decimal: r = decimal::toType(v.asDecimal(), v.decimalScale(), to); break;
        case TypeId::String: r = decimal::parse(v.asString(), to); break;
        case TypeId::Timestamp: r = decimal::toType(v.asInt(), 6, to); break;
        default: return {};
      }
      // A value that does not fit the precision is NULL (Spark's non-ANSI cast).
      return r ? Value::decimal(*r, to.precision, to.scale) : Value();
    }
    case TypeId::Date:
      switch (from) {
        case TypeId::Date: return v;
        case TypeId::Timestamp:
        case TypeId::TimestampNtz: return Value::date(floorDiv(v.asInt(), kMicrosPerDay));
        case TypeId::String: {
          int64_t days;
          return parseDate(v.asString(), &days) ? Value::date(days) : Value();
        }
        default: return {};
      }
    case TypeId::Array: {
      if (from != TypeId::Array || !target.element) return {};
      ValueList out;
      out.reserve(v.asList().size());
      for (const auto& item : v.asList()) out.push_back(castValue(item, *target.element));
      return Value::array(std::move(out));
    }
    case TypeId::Struct: {
      if (from != TypeId::Struct || v.asList().size() != target.fields.size()) return {};
      ValueList out;
      out.reserve(target.fields.size());
      for (size_t i = 0; i < target.fields.size(); ++i)
        out.push_back(castValue(v.asList()[i], *target.fields[i].type));
      return Value::structure(std::move(out));
    }
    case TypeId::Map: {
      if (from != TypeId::Map || !target.key || !target.value) return {};
      ValueList out;
      out.reserve(v.asList().size());
      for (size_t i = 0; i < v.asList().size(); ++i)
        out.push_back(castValue(v.asList()[i], i % 2 == 0 ? *target.key : *target.value));
      return Value::map(std::move(out));
    }
  }
  return {};
}

namespace expr_internal {

void throwCastOverflow(const Value& v, TypeId to) {
  throw SqlError(sqlstate::kNumericOutOfRange,
                 fmt::format("[CAST_OVERFLOW] The value {} of the type \"{}\" cannot be cast to \"{}\" "
                             "due to an overflow",
                             v.toString(), typeIdName(v.type()), typeIdName(to)),
                 SqlError::npos, "use try_cast to tolerate overflow and return NULL instead");
}

Value narrowIntegral(int64_t n, TypeId to, const Value& from) {
  if (n < smallIntegralMin(to) || n > smallIntegralMax(to)) throwCastOverflow(from, to);
  return smallIntegral(n, to);
}

Value checkedSmallIntegral(int64_t r, TypeId t, const std::string& op) {
  if (r < smallIntegralMin(t) || r > smallIntegralMax(t))
    throw SqlError(sqlstate::kNumericOutOfRange,
                   fmt::format("[ARITHMETIC_OVERFLOW] {} overflow in {}", typeIdName(t), op),
                   SqlError::npos, "use try_add, try_subtract or try_multiply to get NULL instead");
  return smallIntegral(r, t);
}

Value narrowIntegralWrapping(int64_t n, TypeId to) {
  return smallIntegral(to == TypeId::TinyInt ? static_cast<int8_t>(static_cast<uint8_t>(n))
                                             : static_cast<int16_t>(static_cast<uint16_t>(n)),
                       to);
}

decimal::Type decimalTypeOf(const DataType& t) {
  switch (t.id) {
    case TypeId::Decimal: return {t.precision, t.scale};
    case TypeId::BigInt: return decimal::ofBigInt();
    case TypeId::TinyInt: return {3, 0};
    case TypeId::SmallInt: return {5, 0};
    default: return decimal::ofInt();
  }
}

bool canCast(const DataType& from, const DataType& to) {
  if (from.id == TypeId::Null || from.equals(to)) return true;
  // A YEAR-MONTH INTERVAL casts to and from text, the other YEAR-MONTH
  // types and integers (a count of its last field: years or months), as in
  // Spark.
  if (to.id == TypeId::YearMonthInterval)
    return from.id == TypeId::String || from.id == TypeId::YearMonthInterval || from.isIntegral();
  if (from.id == TypeId::YearMonthInterval) return to.id == TypeId::String || to.isIntegral();
  switch (to.id) {
    case TypeId::Null:
    case TypeId::YearMonthInterval:  // above
      return false;
    case TypeId::String: return true;
    case TypeId::Boolean:
      return from.isNumeric() || from.id == TypeId::String;
    case TypeId::Int:
    case TypeId::BigInt:
    case TypeId::Double:
    case TypeId::TinyInt:
    case TypeId::SmallInt:
    case TypeId::Float:
      return from.isNumeric() || from.id == TypeId::Boolean || from.id == TypeId::String ||
             from.id == TypeId::Timestamp || from.id == TypeId::Interval;
    case TypeId::Decimal:
      return from.isNumeric() || from.id == TypeId::Boolean || from.id == TypeId::String ||
             from.id == TypeId::Timestamp;
    case TypeId::Date:
      return from.id == TypeId::String || from.id == TypeId::Timestamp || from.id == TypeId::TimestampNtz;
    case TypeId::Binary:
      return from.id == TypeId::String || from.isIntegral();
    case TypeId::Timestamp:
      return from.isNumeric() || from.id == TypeId::String || from.id == TypeId::Date ||
             from.id == TypeId::TimestampNtz;
    case TypeId::TimestampNtz:
      return from.id == TypeId::String || from.id == TypeId::Date || from.id == TypeId::Timestamp;
    case TypeId::Interval:
      return from.id == TypeId::String;
    case TypeId::Array:
      return from.id == TypeId::Array && from.element && to.element &&
             canCast(*from.element, *to.element);
    case TypeId::Struct:
      if (from.id != TypeId::Struct || from.fields.size() != to.fields.size()) return false;
      for (size_t i = 0; i < from.fields.size(); ++i)
        if (!canCast(*from.fields[i].type, *to.fields[i].type)) return false;
      return true;
    case TypeId::Map:
      return from.id == TypeId::Map && from.key && from.value && to.key && to.value &&
             canCast(*from.key, *to.key) && canCast(*from.value, *to.value);
  }
  return false;
}

DataTypePtr commonType(const DataTypePtr& a, const DataTypePtr& b) {
  if (isNullType(a)) return b ? b : nullType();
  if (isNullType(b)) return a;
  if (a->equals(*b)) return a;
  if (a->isNumeric() && b->isNumeric()) return widerNumericType(*a, *b);
  // Two YEAR-MONTH INTERVALs meet with the fields of both (YEAR and MONTH:
  // YEAR TO MONTH).
  if (a->id == TypeId::YearMonthInterval && b->id == TypeId::YearMonthInterval)
    return DataType::yearMonthInterval(std::min(a->ymStart, b->ymStart), std::max(a->ymEnd, b->ymEnd));
  if ((a->id == TypeId::Timestamp && b->id == TypeId::String) ||
      (a->id == TypeId::String && b->id == TypeId::Timestamp))
    return DataType::of(TypeId::Timestamp);
  // A DATE meets a TIMESTAMP as its midnight and text as a DATE, as in Spark.
  if ((a->id == TypeId::Date && b->id == TypeId::Timestamp) ||
      (a->id == TypeId::Timestamp && b->id == TypeId::Date))
    return DataType::of(TypeId::Timestamp);
  if ((a->id == TypeId::Date && b->id == TypeId::String) ||
      (a->id == TypeId::String && b->id == TypeId::Date))
    return DataType::of(TypeId::Date);
  // A TIMESTAMP_NTZ meets a TIMESTAMP as a TIMESTAMP (read in the session
  // zone), and text or a DATE as a TIMESTAMP_NTZ, as in Spark.
  if (a->id == TypeId::TimestampNtz || b->id == TypeId::TimestampNtz) {
    TypeId other = a->id == TypeId::TimestampNtz ? b->id : a->id;
    if (other == TypeId::Timestamp) return DataType::of(TypeId::Timestamp);
    if (other == TypeId::String || other == TypeId::Date) return DataType::of(TypeId::TimestampNtz);
  }
  if (a->id == TypeId::Array && b->id == TypeId::Array) {
    auto e = commonType(a->element, b->element);
    return e ? DataType::arrayOf(e) : nullptr;
  }
  if (a->id == TypeId::Map && b->id == TypeId::Map) {
    auto k = commonType(a->key, b->key);
    auto v = commonType(a->value, b->value);
    return k && v ? DataType::mapOf(k, v) : nullptr;
  }
  return nullptr;
}

namespace {

// A cast between text, a DATE or a TIMESTAMP_NTZ and a TIMESTAMP in a session
// time zone other than UTC: the TIMESTAMP is an instant, its text, its day and
// its TIMESTAMP_NTZ are the wall-clock ones in the zone (Spark's TIMESTAMP,
// which is TIMESTAMP_LTZ).
ExprPtr zonedCast(ExprPtr e, const DataTypePtr& target, const TimeZone* z, bool ansi) {
  const TypeId from = e->type()->id;
  std::vector<ExprPtr> args{std::move(e)};
  if (target->id == TypeId::Timestamp && from == TypeId::String)
    return fn1("cast", target, args, [z, ansi](const Value& v) {
      int64_t us;
      if (!parseTimestampIn(v.asString(), *z, &us)) {
        if (ansi) castValueAnsi(v, *DataType::of(TypeId::Timestamp));  // raises
        return Value();
      }
      return Value::timestamp(us);
    });
  if (from == TypeId::TimestampNtz)  // to a TIMESTAMP: the instant of the wall clock in the zone
    return fn1("cast", target, args,
               [z](const Value& v) { return Value::timestamp(z->utcFromLocal(v.asInt())); });
  if (target->id == TypeId::Timestamp)  // from a DATE: its midnight in the zone
    return fn1("cast", target, args, [z](const Value& v) {
      int64_t days = v.asInt();
      if (days > INT64_MAX / kMicrosPerDay || days < INT64_MIN / kMicrosPerDay) return Value();
      return Value::timestamp(z->utcFromLocal(days * kMicrosPerDay));
    });
  if (target->id == TypeId::Date)
    return fn1("cast", target, args, [z](const Value& v) {
      return Value::date(floorDiv(z->localFromUtc(v.asInt()), kMicrosPerDay));
    });
  if (target->id == TypeId::TimestampNtz)  // from a TIMESTAMP: its wall clock in the zone
    return fn1("cast", target, args,
               [z](const Value& v) { return Value::timestampNtz(z->localFromUtc(v.asInt())); });
  return fn1("cast", target, args, [z, target, ansi](const Value& v) {
    const Value local = Value::timestamp(z->localFromUtc(v.asInt()));
    return ansi ? castValueAnsi(local, *target) : castValue(local, *target);
  });
}

}  // namespace

// A constant node as a literal, computed once here; a node whose value
// raises (ANSI mode) is kept as it is: whether it fails is for the record
// that reaches it (a CASE may never), as the binder's own folding does.
ExprPtr foldConstant(const ExprPtr& e) {
  try {
    return makeLiteral(e->eval(Row{}), e->type());
  } catch (const SqlError&) {
    return e;
  }
}

namespace {

// try_cast's node: ANSI mode's cast of its child, and NULL for a value the
// cast refuses (its errors are data exceptions, SQLSTATE class 22; any
// other error, such as a value past the size limit, still raises).
class TryCastExpr final : public Expr {
 public:
  void forEachChild(const std::function<void(const Expr&)>& fn) const override { fn(*cast_); }
  ExprPtr withChildren(std::vector<ExprPtr> c) const override {
    return std::make_shared<TryCastExpr>(std::move(c[0]));
  }
  explicit TryCastExpr(ExprPtr cast) : Expr(cast->type()), cast_(std::move(cast)) {}
  Value eval(const Row& row) const override {
    try {
      return cast_->eval(row);
    } catch (const SqlError& e) {
      if (e.sqlstate().starts_with("22")) return Value();
      throw;
    }
  }
  std::string toString() const override {
    std::string s = cast_->toString();
    return s.starts_with("CAST(") ? "TRY_" + s : "TRY_CAST(" + s + ")";
  }
  bool isConstant() const override { return cast_->isConstant(); }

 private:
  ExprPtr cast_;
};

// An ARRAY's or STRUCT's value cast element by element, each element NULL
// where its cast raises, as Spark's try_cast does (['1', 'x'] as
// ARRAY<INT> is [1, NULL]).
Value tryCastNested(const Value& v, const DataType& target) {
  if (v.isNull()) return v;
  if (target.id == TypeId::Array && v.type() == TypeId::Array && target.element) {
    ValueList out;
    out.reserve(v.asList().size());
    for (const auto& item : v.asList()) out.push_back(tryCastNested(item, *target.element));
    return Value::array(std::move(out));
  }
  if (target.id == TypeId::Struct && v.type() == TypeId::Struct &&
      v.asList().size() == target.fields.size()) {
    ValueList out;
    out.reserve(target.fields.size());
    for (size_t i = 0; i < target.fields.size(); ++i)
      out.push_back(tryCastNested(v.asList()[i], *target.fields[i].type));
    return Value::structure(std::move(out));
  }
  try {
    return castValueAnsi(v, target);
  } catch (const SqlError& e) {
    if (e.sqlstate().starts_with("22")) return Value();
    throw;
  }
}

class TryCastNestedExpr final : public Expr {
 public:
  void forEachChild(const std::function<void(const Expr&)>& fn) const override { fn(*e_); }
  ExprPtr withChildren(std::vector<ExprPtr> c) const override {
    return std::make_shared<TryCastNestedExpr>(std::move(c[0]), type());
  }
  TryCastNestedExpr(ExprPtr e, DataTypePtr target) : Expr(std::move(target)), e_(std::move(e)) {}
  Value eval(const Row& row) const override { return tryCastNested(e_->eval(row), *type()); }
  std::string toString() const override {
    return "TRY_CAST(" + e_->toString() + " AS " + type()->toString() + ")";
  }
  bool isConstant() const override { return e_->isConstant(); }

 private:
  ExprPtr e_;
};

// Whether an interval of either kind is inside `t` (an ARRAY's element, a
// MAP's key or value, a STRUCT's field).
bool holdsInterval(const DataType& t) {
  if (t.id == TypeId::Interval || t.id == TypeId::YearMonthInterval) return true;
  if (t.element && holdsInterval(*t.element)) return true;
  if (t.key && holdsInterval(*t.key)) return true;
  if (t.value && holdsInterval(*t.value)) return true;
  for (const StructField& f : t.fields)
    if (f.type && holdsInterval(*f.type)) return true;
  return false;
}

// An interval inside a collection as CAST(.. AS STRING) writes it: in
// Spark's text of its type's fields, INTERVAL '1-2' YEAR TO MONTH,
// INTERVAL '02:03' HOUR TO MINUTE (a Value alone knows no fields).
bool sparkIntervalText(std::string& out, const Value& v, const DataType& t) {
  switch (t.id) {
    case TypeId::YearMonthInterval:
      out += ym::sparkText(v.asInt(), t);
      return true;
    case TypeId::Interval:
      // rtsql's one day-time type is Spark's INTERVAL DAY TO SECOND.
      out += dt::sparkText(v.asInt(), dt::DtField::Day, dt::DtField::Second);
      return true;
    default:
      return false;
  }
}

// CAST(collection AS STRING) of a collection that holds an interval.
class NestedIntervalTextExpr final : public Expr {
 public:
  void forEachChild(const std::function<void(const Expr&)>& fn) const override { fn(*e_); }
  ExprPtr withChildren(std::vector<ExprPtr> c) const override {
    return std::make_shared<NestedIntervalTextExpr>(std::move(c[0]), type());
  }
  NestedIntervalTextExpr(ExprPtr e, DataTypePtr target) : Expr(std::move(target)), e_(std::move(e)) {}
  Value eval(const Row& row) const override {
    Value scratch;
    const Value& v = e_->evalRef(row, scratch);
    if (v.isNull()) return Value();
    std::string out;
    appendValueText(out, v, *e_->type(), sparkIntervalText);
    return Value::string(std::move(out));
  }
  std::string toString() const override {
    return "CAST(" + e_->toString() + " AS " + type()->toString() + ")";
  }
  bool isConstant() const override { return e_->isConstant(); }

 private:
  ExprPtr e_;
};

}  // namespace

ExprPtr castTo(ExprPtr e, const DataTypePtr& target) {
  if (e->type() == target || e->type()->equals(*target)) return e;
  if (isNullType(e->type()) && e->isConstant()) return makeLiteral(Value(), target);
  const TypeId from = e->type()->id;
  if (from == TypeId::YearMonthInterval || target->id == TypeId::YearMonthInterval)
    return castYearMonthInterval(std::move(e), target);
  if (target->id == TypeId::String &&
      (from == TypeId::Array || from == TypeId::Map || from == TypeId::Struct) &&
      holdsInterval(*e->type())) {
    ExprPtr text = std::make_shared<NestedIntervalTextExpr>(std::move(e), target);
    return text->isConstant() ? foldConstant(text) : text;
  }
  if ((target->id == TypeId::Timestamp &&
       (from == TypeId::String || from == TypeId::Date || from == TypeId::TimestampNtz)) ||
      (from == TypeId::Timestamp && (target->id == TypeId::String || target->id == TypeId::Date ||
                                     target->id == TypeId::TimestampNtz))) {
    if (const TimeZone& z = sessionTimeZone(); !z.isUtc()) {
      ExprPtr zoned = zonedCast(std::move(e), target, &z, ansiMode());
      return zoned->isConstant() ? foldConstant(zoned) : zoned;
    }
  }
  if (ansiMode()) {
    ExprPtr cast = std::make_shared<AnsiCastExpr>(std::move(e), target);
    return cast->isConstant() ? foldConstant(cast) : cast;
  }
  // An implicit cast of a constant is done once, here, rather than per record.
  if (e->isConstant()) return makeLiteral(castValue(e->eval(Row{}), *target), target);
  return std::make_shared<CastExpr>(std::move(e), target);
}

std::string signature(const std::string& name, const std::vector<ExprPtr>& args) {
  std::string s = name + "(";
  for (size_t i = 0; i < args.size(); ++i) {
    if (i) s += ", ";
    s += args[i]->type()->toString();
  }
  s += ")";
  return s;
}

void throwArgError(const std::string& name, const std::vector<ExprPtr>& args, size_t pos,
                   const std::string& what, std::string hint) {
  throw SqlError(sqlstate::kDatatypeMismatch,
                 fmt::format("invalid argument for {}: {}", signature(name, args), what), pos,
                 std::move(hint));
}

namespace {

const char* ordinal(size_t i) {
  static const char* kOrd[] = {"first", "second", "third", "fourth", "fifth", "sixth"};
  return i < 6 ? kOrd[i] : "an";
}

[[noreturn]] void wrongType(const std::string& fn, const std::vector<ExprPtr>& args, size_t i,
                            size_t pos, const char* wanted, const char* castTo) {
  throwArgError(fn, args, pos,
                fmt::format("the {} argument must be {}, not {}", ordinal(i), wanted,
                            args[i]->type()->toString()),
                castTo ? fmt::format("use CAST(... AS {}) to convert it", castTo) : std::string());
}

bool isScalar(const DataTypePtr& t) { return t->id != TypeId::Array && t->id != TypeId::Struct; }

}  // namespace

void argString(const std::string& fn, std::vector<ExprPtr>& args, size_t i, size_t pos) {
  // Any scalar converts to text implicitly, as Spark's string functions allow.
  if (!isScalar(args[i]->type())) wrongType(fn, args, i, pos, "a STRING", nullptr);
  args[i] = castTo(args[i], DataType::of(TypeId::String));
}

void argBinary(const std::string& fn, std::vector<ExprPtr>& args, size_t i, size_t pos) {
  auto id = args[i]->type()->id;
  if (id != TypeId::Binary && id != TypeId::String && id != TypeId::Null)
    wrongType(fn, args, i, pos, "BINARY or STRING", "BINARY");
  args[i] = castTo(args[i], DataType::of(TypeId::Binary));
}

void argDouble(const std::string& fn, std::vector<ExprPtr>& args, size_t i, size_t pos) {
  if (!args[i]->type()->isNumeric() && !isNullType(args[i]->type()))
    wrongType(fn, args, i, pos, "numeric", "DOUBLE");
  args[i] = castTo(args[i], DataType::of(TypeId::Double));
}

void argBigInt(const std::string& fn, std::vector<ExprPtr>& args, size_t i, size_t pos) {
  if (!args[i]->type()->isIntegral() && !isNullType(args[i]->type()))
    wrongType(fn, args, i, pos, "an integer", "BIGINT");
  args[i] = castTo(args[i], DataType::of(TypeId::BigInt));
}

void argInt(const std::string& fn, std::vector<ExprPtr>& args, size_t i, size_t pos) {
  if (!args[i]->type()->isIntegral() && !isNullType(args[i]->type()))
    wrongType(fn, args, i, pos, "an integer", "INT");
  args[i] = castTo(args[i], DataType::of(TypeId::Int));
}

void argBoolean(const std::string& fn, std::vector<ExprPtr>& args, size_t i, size_t pos) {
  auto id = args[i]->type()->id;
  if (id != TypeId::Boolean && id != TypeId::Null)
    wrongType(fn, args, i, pos, "BOOLEAN", "BOOLEAN");
  args[i] = castTo(args[i], DataType::of(TypeId::Boolean));
}

void argTimestamp(const std::string& fn, std::vector<ExprPtr>& args, size_t i, size_t pos) {
  auto id = args[i]->type()->id;
  if (id != TypeId::Timestamp && id != TypeId::Date && id != TypeId::String && id != TypeId::Null &&
      id != TypeId::TimestampNtz)
    wrongType(fn, args, i, pos, "a TIMESTAMP", "TIMESTAMP");
  args[i] = castTo(args[i], DataType::of(TypeId::Timestamp));
}

const TimeZone& argWallClock(const std::string& fn, std::vector<ExprPtr>& args, size_t i, size_t pos) {
  if (args[i]->type()->id == TypeId::TimestampNtz) return utcTimeZone();
  argTimestamp(fn, args, i, pos);
  return sessionTimeZone();
}

void argDate(const std::string& fn, std::vector<ExprPtr>& args, size_t i, size_t pos) {
  auto id = args[i]->type()->id;
  if (id != TypeId::Date && id != TypeId::Timestamp && id != TypeId::String && id != TypeId::Null &&
      id != TypeId::TimestampNtz)
    wrongType(fn, args, i, pos, "a DATE", "DATE");
  args[i] = castTo(args[i], DataType::of(TypeId::Date));
}

void argNumeric(const std::string& fn, std::vector<ExprPtr>& args, size_t i, size_t pos) {
  if (isNullType(args[i]->type())) {
    args[i] = castTo(args[i], DataType::of(TypeId::Int));
    return;
  }
  if (!args[i]->type()->isNumeric()) wrongType(fn, args, i, pos, "numeric", "DOUBLE");
  // Functions that keep a DECIMAL's digits handle it before they get here;
  // the others compute in DOUBLE (docs/sql.md lists them). Likewise those
  // that keep TINYINT, SMALLINT and FLOAT handle them first; the others
  // compute in INT and DOUBLE.
  switch (args[i]->type()->id) {
    case TypeId::Decimal:
    case TypeId::Float: args[i] = castTo(args[i], DataType::of(TypeId::Double)); break;
    case TypeId::TinyInt:
    case TypeId::SmallInt: args[i] = castTo(args[i], DataType::of(TypeId::Int)); break;
    default: break;
  }
}

DataTypePtr argsCommon(const std::string& fn, std::vector<ExprPtr>& args, size_t from, size_t pos) {
  DataTypePtr t = nullType();
  for (size_t i = from; i < args.size(); ++i) {
    auto c = commonType(t, args[i]->type());
    if (!c)
      throwArgError(fn, args, pos,
                    fmt::format("cannot mix {} and {}", t->toString(), args[i]->type()->toString()),
                    "use CAST to give the arguments one type");
    t = c;
  }
  for (size_t i = from; i < args.size(); ++i) args[i] = castTo(args[i], t);
  return t;
}

bool nullOfConstants(const std::vector<ExprPtr>& args) {
  bool sawNull = false;
  for (const ExprPtr& a : args) {
    if (!a->isConstant()) return false;
    // A literal is a constant without children; evaluating it never raises.
    int children = 0;
    a->forEachChild([&](const Expr&) { ++children; });
    if (children == 0 && a->eval(Row{}).isNull()) sawNull = true;
  }
  return sawNull;
}

std::optional<Value> constantValue(const ExprPtr& e) {
  if (!e->isConstant()) return std::nullopt;
  static const Row kEmpty;
  return e->eval(kEmpty);
}

}  // namespace expr_internal

ExprPtr makeTryCast(ExprPtr e, DataTypePtr target, size_t pos) {
  ExprPtr tryCast;
  if ((target->id == TypeId::Array || target->id == TypeId::Struct) &&
      !e->type()->equals(*target) && !isNullType(e->type())) {
    if (!expr_internal::canCast(*e->type(), *target))
      throw SqlError(sqlstate::kDatatypeMismatch,
                     fmt::format("cannot cast type {} to {}", e->type()->toString(),
                                 target->toString()),
                     pos);
    tryCast = std::make_shared<expr_internal::TryCastNestedExpr>(std::move(e), std::move(target));
  } else {
    ExprPtr cast;
    {
      AnsiModeScope ansi(true);
      cast = makeCast(std::move(e), std::move(target), pos);
    }
    tryCast = std::make_shared<expr_internal::TryCastExpr>(std::move(cast));
  }
  return tryCast->isConstant() ? expr_internal::foldConstant(tryCast) : tryCast;
}

}  // namespace rtsql
