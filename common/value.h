// A Value is one SQL datum: NULL or a value of a TypeId. Rows are vectors of
// Values whose layout is given by a Schema. Integers, timestamps, intervals and
// DECIMALs of up to 18 digits share 64-bit storage (a DECIMAL keeps its
// precision and scale in bytes that were padding, so a Value is no larger);
// strings and binaries share std::string; arrays and structs share an
// immutable vector so copying a row never deep-copies nested data, and wider
// DECIMALs keep their 128 bits out of line through the same shared pointer.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/decimal.h"
#include "common/types.h"

namespace rtsql {

class Value;
using ValueList = std::vector<Value>;

class Value {
 public:
  Value() = default;  // NULL

  static Value boolean(bool b) { return Value(TypeId::Boolean, b); }
  static Value integer(int32_t v) { return Value(TypeId::Int, static_cast<int64_t>(v)); }
  static Value bigint(int64_t v) { return Value(TypeId::BigInt, v); }
  static Value float64(double v) { return Value(TypeId::Double, v); }
  static Value tinyint(int8_t v) { return Value(TypeId::TinyInt, static_cast<int64_t>(v)); }
  static Value smallint(int16_t v) { return Value(TypeId::SmallInt, static_cast<int64_t>(v)); }
  // A FLOAT keeps the double of its value, so asDouble() and toDouble() read
  // it as they read a DOUBLE.
  static Value float32(float v) { return Value(TypeId::Float, static_cast<double>(v)); }
  static Value string(std::string s) { return Value(TypeId::String, std::move(s)); }
  static Value binary(std::string bytes) { return Value(TypeId::Binary, std::move(bytes)); }
  static Value timestamp(int64_t micros) { return Value(TypeId::Timestamp, micros); }
  static Value interval(int64_t micros) { return Value(TypeId::Interval, micros); }
  static Value date(int64_t days) { return Value(TypeId::Date, days); }
  // A YEAR-MONTH INTERVAL of `months` months; its type's fields (YEAR, MONTH)
  // only change how it is written, so the value does not keep them.
  static Value yearMonthInterval(int32_t months) {
    return Value(TypeId::YearMonthInterval, static_cast<int64_t>(months));
  }
  // A TIMESTAMP_NTZ: microseconds since 1970-01-01 00:00 on a wall clock.
  static Value timestampNtz(int64_t micros) { return Value(TypeId::TimestampNtz, micros); }
  // A DECIMAL(precision, scale) of unscaled value `unscaled`; the caller has
  // checked that it fits the precision.
  static Value decimal(Int128 unscaled, int precision, int scale) {
    Value v;
    v.head_.type = TypeId::Decimal;
    v.head_.precision = static_cast<uint8_t>(precision);
    v.head_.scale = static_cast<uint8_t>(scale);
    if (precision <= decimal::kMaxInt64Precision) {
      v.data_ = static_cast<int64_t>(unscaled);
    } else {
      v.data_ = std::shared_ptr<const void>(
          std::make_shared<const Wide>(Wide{static_cast<uint64_t>(static_cast<UInt128>(unscaled)),
                                            static_cast<int64_t>(unscaled >> 64)}));
    }
    return v;
  }
  static Value array(ValueList items) {
    return Value(TypeId::Array,
                 std::shared_ptr<const void>(std::make_shared<const ValueList>(std::move(items))));
  }
  static Value structure(ValueList fields) {
    return Value(TypeId::Struct,
                 std::shared_ptr<const void>(std::make_shared<const ValueList>(std::move(fields))));
  }

  // A MAP's entries as one list, each key followed by its value: k1, v1, k2,
  // v2, ... The keys are distinct and not NULL; the builder has checked.
  static Value map(ValueList keysAndValues) {
    return Value(TypeId::Map, std::shared_ptr<const void>(
                                  std::make_shared<const ValueList>(std::move(keysAndValues))));
  }

  TypeId type() const { return head_.type; }
  bool isNull() const { return head_.type == TypeId::Null; }

  bool asBool() const { return std::get<bool>(data_); }
  // Int, BigInt, TinyInt, SmallInt, Timestamp, Interval, Date, TimestampNtz
  // and YearMonthInterval (its months).
  int64_t asInt() const { return std::get<int64_t>(data_); }
  // Double and Float.
  double asDouble() const { return std::get<double>(data_); }
  // Numeric value of any numeric type as a double.
  double toDouble() const {
    if (head_.type == TypeId::Double || head_.type == TypeId::Float) return std::get<double>(data_);
    if (head_.type == TypeId::Decimal) return decimal::toDouble(asDecimal(), head_.scale);
    return static_cast<double>(std::get<int64_t>(data_));
  }
  // DECIMAL: the unscaled value, its precision and its scale.
  Int128 asDecimal() const {
    if (head_.precision > decimal::kMaxInt64Precision) {
      const auto* w = static_cast<const Wide*>(std::get<std::shared_ptr<const void>>(data_).get());
      return static_cast<Int128>((static_cast<UInt128>(static_cast<uint64_t>(w->hi)) << 64) | w->lo);
    }
    return std::get<int64_t>(data_);
  }
  int decimalPrecision() const { return head_.precision; }
  int decimalScale() const { return head_.scale; }
  // String and Binary.
  const std::string& asString() const { return std::get<std::string>(data_); }
  // Array items, struct fields, or a map's keys and values (see map()).
  const ValueList& asList() const {
    return *static_cast<const ValueList*>(std::get<std::shared_ptr<const void>>(data_).get());
  }

  // Total order used by comparisons and tests; NULLs sort first. Numbers of
  // different integral/double types compare by value.
  int compare(const Value& other) const;
  bool operator==(const Value& other) const { return compare(other) == 0; }
  size_t hash() const;

  // Makes this a STRING (or BINARY) of `s`, reusing the string buffer this Value
  // already holds, if any: a decoder refilling a reused row costs no allocation
  // for a text that fits the previous one's buffer.
  void setString(std::string_view s) { setBytes(TypeId::String, s); }
  void setBinary(std::string_view s) { setBytes(TypeId::Binary, s); }

  // Human-readable text, as psql shows it (strings unquoted, NULL as "NULL").
  std::string toString() const;

  // The NULL that reference-returning code (Expr::evalRef) hands out when there
  // is no value to point at.
  static const Value& null() {
    static const Value kNull;
    return kNull;
  }

 private:
  // A DECIMAL wider than 18 digits, as two words: an Int128 member would make
  // the variant 16-byte aligned and every Value larger. It is kept out of
  // line, behind the pointer arrays and structs use (the type and precision
  // say which it holds): an alternative of its own made every Value move
  // dispatch over one more case.
  struct Wide {
    uint64_t lo;
    int64_t hi;
  };
  using Storage = std::variant<std::monostate, bool, int64_t, double, std::string,
                               std::shared_ptr<const void>>;
  template <typename T>
  Value(TypeId t, T&& v) : head_{t}, data_(std::forward<T>(v)) {}
  void setBytes(TypeId t, std::string_view s) {
    if (auto* held = std::get_if<std::string>(&data_)) {
      held->assign(s.data(), s.size());
    } else {
      data_.emplace<std::string>(s);
    }
    head_.type = t;
  }

  // The type and a DECIMAL's precision and scale, in one word that a move or
  // copy takes whole: three fields of their own made the move of a Value too
  // large for the compiler to inline where it is assigned a new value (the
  // record path paid about 1% more instructions for it, docs/benchmarks.md).
  struct Header {
    TypeId type = TypeId::Null;
    uint8_t precision = 0;  // DECIMAL only
    uint8_t scale = 0;      // DECIMAL only
    uint8_t unused = 0;
  };
  static_assert(sizeof(Header) == 4, "a Value's header is one 32-bit word");
  Header head_;
  Storage data_;
};

// DECIMAL's precision and scale live in what was padding after the type id.
static_assert(sizeof(Value) == 48, "a Value stays 48 bytes");

using Row = std::vector<Value>;

}  // namespace rtsql
