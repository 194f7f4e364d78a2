// Value ordering, hashing and display. Ordering is total (NULLs first, NaN
// after every other double, as Spark orders them) and numeric values of
// different types compare by value; hash() agrees with it, so 1 (INT), 1
// (BIGINT) and 1.0 (DOUBLE) hash alike.
#include "common/value.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <string_view>

#include "common/digest.h"
#include "common/functions/internal.h"
#include "common/json.h"
#include "common/value_text.h"
#include "common/year_month_interval.h"

namespace rtsql {

namespace {

using expr_internal::cmp3;
using expr_internal::compareDoubles;

bool isNumericId(TypeId t) {
  return t == TypeId::Int || t == TypeId::BigInt || t == TypeId::Double || t == TypeId::Decimal ||
         t == TypeId::TinyInt || t == TypeId::SmallInt || t == TypeId::Float;
}

bool isFloatingId(TypeId t) { return t == TypeId::Double || t == TypeId::Float; }

// A number of another type against a DECIMAL: integers exactly, doubles as
// the DECIMAL's nearest double.
int compareWithDecimal(const Value& a, const Value& dec) {
  if (isFloatingId(a.type())) return compareDoubles(a.asDouble(), dec.toDouble());
  return decimal::compare(a.asInt(), 0, dec.asDecimal(), dec.decimalScale());
}

// Exact comparison of an integer with a double (no rounding of large integers).
int compareIntDouble(int64_t i, double d) {
  if (std::isnan(d)) return -1;
  if (d >= 9223372036854775808.0) return -1;
  if (d < -9223372036854775808.0) return 1;
  double t = std::trunc(d);
  auto ti = static_cast<int64_t>(t);
  if (i != ti) return i < ti ? -1 : 1;
  double frac = d - t;
  return frac > 0 ? -1 : (frac < 0 ? 1 : 0);
}

inline size_t mix(size_t h, size_t v) {
  return h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2));
}

inline size_t hashInt(int64_t v) {
  auto x = static_cast<uint64_t>(v);
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return static_cast<size_t>(x);
}

// `t` is v's declared type when the caller knows it (then `leaf` may write
// a value first), else null.
void appendValue(std::string& out, const Value& v, bool nested, const DataType* t = nullptr,
                 ValueTextLeaf leaf = nullptr) {
  if (leaf && t && !v.isNull() && leaf(out, v, *t)) return;
  switch (v.type()) {
    case TypeId::Null:
      out += nested ? "null" : "NULL";
      return;
    case TypeId::Boolean:
      out += v.asBool() ? "true" : "false";
      return;
    case TypeId::Int:
    case TypeId::BigInt:
    case TypeId::TinyInt:
    case TypeId::SmallInt:
      out += std::to_string(v.asInt());
      return;
    case TypeId::Double:
      expr_internal::appendDouble(out, v.asDouble());
      return;
    case TypeId::Float:
      expr_internal::appendFloat(out, static_cast<float>(v.asDouble()));
      return;
    case TypeId::String:
      out += v.asString();
      return;
    case TypeId::Binary:
      out += "\\x";
      out += lowerHex(v.asString());
      return;
    case TypeId::Timestamp:
    case TypeId::TimestampNtz:
      out += formatTimestamp(v.asInt());
      return;
    case TypeId::Decimal:
      decimal::append(out, v.asDecimal(), v.decimalScale());
      return;
    case TypeId::Date:
      out += formatDate(v.asInt());
      return;
    case TypeId::Interval:
      out += expr_internal::formatInterval(v.asInt());
      return;
    case TypeId::YearMonthInterval:
      ym::appendPostgres(out, v.asInt());
      return;
    case TypeId::Array:
    case TypeId::Struct: {
      const auto& items = v.asList();
      out += v.type() == TypeId::Array ? '[' : '{';
      for (size_t i = 0; i < items.size(); ++i) {
        if (i) out += ", ";
        const DataType* inner = !t                        ? nullptr
                                : v.type() == TypeId::Array ? t->element.get()
                                : i < t->fields.size()      ? t->fields[i].type.get()
                                                            : nullptr;
        appendValue(out, items[i], true, inner, leaf);
      }
      out += v.type() == TypeId::Array ? ']' : '}';
      return;
    }
    case TypeId::Map: {
      // As Spark shows a map: {a -> 1, b -> 2}.
      const auto& items = v.asList();
      out += '{';
      for (size_t i = 0; i + 1 < items.size(); i += 2) {
        if (i) out += ", ";
        appendValue(out, items[i], true, t ? t->key.get() : nullptr, leaf);
        out += " -> ";
        appendValue(out, items[i + 1], true, t ? t->value.get() : nullptr, leaf);
      }
      out += '}';
      return;
    }
  }
}

}  // namespace

int Value::compare(const Value& o) const {
  if (isNull() || o.isNull()) return isNull() == o.isNull() ? 0 : (isNull() ? -1 : 1);
  if (head_.type != o.head_.type) {
    if (isNumericId(head_.type) && isNumericId(o.head_.type)) {
      if (o.head_.type == TypeId::Decimal) return compareWithDecimal(*this, o);
      if (head_.type == TypeId::Decimal) return -compareWithDecimal(o, *this);
      if (isFloatingId(head_.type) && isFloatingId(o.head_.type))
        return compareDoubles(asDouble(), o.asDouble());
      if (isFloatingId(head_.type)) return -compareIntDouble(o.asInt(), asDouble());
      if (isFloatingId(o.head_.type)) return compareIntDouble(asInt(), o.asDouble());
      return cmp3(asInt(), o.asInt());
    }
    return head_.type < o.head_.type ? -1 : 1;
  }
  switch (head_.type) {
    case TypeId::Null:
      return 0;
    case TypeId::Boolean:
      return cmp3(asBool(), o.asBool());
    case TypeId::Int:
    case TypeId::BigInt:
    case TypeId::TinyInt:
    case TypeId::SmallInt:
    case TypeId::Timestamp:
    case TypeId::Interval:
      return cmp3(asInt(), o.asInt());
    case TypeId::Double:
    case TypeId::Float:
      return compareDoubles(asDouble(), o.asDouble());
    case TypeId::Decimal:
      return decimal::compare(asDecimal(), head_.scale, o.asDecimal(), o.head_.scale);
    case TypeId::Date:
    case TypeId::TimestampNtz:
    case TypeId::YearMonthInterval:
      return cmp3(asInt(), o.asInt());
    case TypeId::String:
    case TypeId::Binary: {
      int c = asString().compare(o.asString());  // bytewise, unsigned: UTF-8 code point order
      return c < 0 ? -1 : (c > 0 ? 1 : 0);
    }
    case TypeId::Array:
    case TypeId::Struct:
    case TypeId::Map: {
      const auto& a = asList();
      const auto& b = o.asList();
      size_t n = std::min(a.size(), b.size());
      for (size_t i = 0; i < n; ++i) {
        int c = a[i].compare(b[i]);
        if (c) return c;
      }
      return cmp3(a.size(), b.size());
    }
  }
  return 0;
}

size_t Value::hash() const {
  switch (head_.type) {
    case TypeId::Null:
      return 0x6e756c6cULL;
    case TypeId::Boolean:
      return asBool() ? 0x7472756531ULL : 0x66616c7365ULL;
    case TypeId::Int:
    case TypeId::BigInt:
    case TypeId::TinyInt:
    case TypeId::SmallInt:
    case TypeId::Timestamp:
    case TypeId::Interval:
    case TypeId::Date:
    case TypeId::TimestampNtz:
    case TypeId::YearMonthInterval:
      return hashInt(asInt());
    case TypeId::Decimal: {
      // Hashes as the INT or DOUBLE it equals, to agree with compare().
      Int128 v = asDecimal();
      Int128 p = decimal::pow10(head_.scale);
      if (v % p == 0 && v / p >= INT64_MIN && v / p <= INT64_MAX)
        return hashInt(static_cast<int64_t>(v / p));
      double d = toDouble();
      uint64_t bits;
      std::memcpy(&bits, &d, sizeof bits);
      return hashInt(static_cast<int64_t>(bits));
    }
    case TypeId::Double:
    case TypeId::Float: {
      double d = asDouble();
      if (std::isnan(d)) return 0x7ff8000000000000ULL;
      // Doubles equal to an integer hash as that integer, to agree with compare().
      if (d >= -9223372036854775808.0 && d < 9223372036854775808.0 && std::trunc(d) == d)
        return hashInt(static_cast<int64_t>(d));
      uint64_t bits;
      std::memcpy(&bits, &d, sizeof bits);
      return hashInt(static_cast<int64_t>(bits));
    }
    case TypeId::String:
    case TypeId::Binary:
      return std::hash<std::string_view>()(asString());
    case TypeId::Array:
    case TypeId::Struct:
    case TypeId::Map: {
      size_t h = static_cast<size_t>(head_.type);
      for (const auto& v : asList()) h = mix(h, v.hash());
      return h;
    }
  }
  return 0;
}

std::string Value::toString() const {
  std::string s;
  appendValue(s, *this, false);
  return s;
}

void appendValueText(std::string& out, const Value& v, const DataType& t, ValueTextLeaf leaf) {
  appendValue(out, v, false, &t, leaf);
}

}  // namespace rtsql
