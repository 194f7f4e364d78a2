// SQL data types. A DataType is immutable and shared; scalar types are
// singletons obtained with DataType::of(). Struct and array types are built by
// the binder from declarations (`ARRAY<STRUCT<key STRING, value BINARY>>`) and
// by functions such as named_struct().
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rtsql {

enum class TypeId : uint8_t {
  Null,       // the type of a bare NULL literal; converts to anything
  Boolean,
  Int,        // 32-bit
  BigInt,     // 64-bit
  Double,
  String,     // UTF-8
  Binary,     // bytes
  Timestamp,  // microseconds since the Unix epoch, UTC
  Interval,   // microseconds
  Array,
  Struct,
  // Added after the others: a TypeId is the tag byte of the value encoding in
  // checkpoints (common/row_codec.cpp), so existing ids never move.
  Decimal,  // DECIMAL(precision, scale): an unscaled integer (common/decimal.h)
  Date,     // days since 1970-01-01
  // Spark's TIMESTAMP_NTZ: a wall-clock date and time without a zone, as
  // microseconds since 1970-01-01 00:00 on that clock; never converted.
  TimestampNtz = 13,
  TinyInt = 14,   // 8-bit
  SmallInt = 15,  // 16-bit
  Float = 16,     // 32-bit IEEE, held as the double of the same value
  Map = 17,  // MAP<K, V>: entries in insertion order, keys distinct and never NULL
  // Spark's YEAR-MONTH INTERVAL (INTERVAL YEAR, INTERVAL MONTH, INTERVAL YEAR
  // TO MONTH): a count of months that fits an int32. The day-time INTERVAL
  // above is microseconds; a month has no fixed number of them, so the two
  // never convert into each other.
  YearMonthInterval = 18,
};

// The fields of a YEAR-MONTH INTERVAL type, as Spark names them: INTERVAL YEAR
// is (Year, Year), INTERVAL MONTH (Month, Month), INTERVAL YEAR TO MONTH
// (Year, Month). They change how a value is written, never what it holds.
enum class YmField : uint8_t { Year = 0, Month = 1 };

struct DataType;
using DataTypePtr = std::shared_ptr<const DataType>;

struct StructField {
  std::string name;
  DataTypePtr type;
};

struct DataType {
  TypeId id = TypeId::Null;
  std::vector<StructField> fields;  // Struct only
  DataTypePtr element;              // Array only
  DataTypePtr key;                  // Map only
  DataTypePtr value;                // Map only
  uint8_t precision = 0;            // Decimal only: 1..38 digits
  uint8_t scale = 0;                // Decimal only: 0..precision digits after the point
  YmField ymStart = YmField::Year;  // YearMonthInterval only: its first field
  YmField ymEnd = YmField::Month;   // YearMonthInterval only: its last field

  static DataTypePtr of(TypeId id);  // scalar singletons
  static DataTypePtr arrayOf(DataTypePtr element);
  static DataTypePtr structOf(std::vector<StructField> fields);
  static DataTypePtr mapOf(DataTypePtr key, DataTypePtr value);
  // DECIMAL(precision, scale); the caller checks 1 <= precision <= 38 and
  // 0 <= scale <= precision. DataType::of(TypeId::Decimal) is DECIMAL(10, 0),
  // Spark's DECIMAL without arguments.
  static DataTypePtr decimal(int precision, int scale);
  // INTERVAL YEAR, INTERVAL MONTH or INTERVAL YEAR TO MONTH (start <= end).
  // DataType::of(TypeId::YearMonthInterval) is INTERVAL YEAR TO MONTH.
  static DataTypePtr yearMonthInterval(YmField start, YmField end);

  // SQL spelling: BIGINT, ARRAY<STRING>, STRUCT<start: TIMESTAMP, end: TIMESTAMP>,
  // MAP<STRING, BIGINT>, INTERVAL YEAR TO MONTH.
  std::string toString() const;
  bool equals(const DataType& other) const;
  bool isNumeric() const {
    return id == TypeId::Int || id == TypeId::BigInt || id == TypeId::Double || id == TypeId::Decimal ||
           id == TypeId::TinyInt || id == TypeId::SmallInt || id == TypeId::Float;
  }
  bool isIntegral() const {
    return id == TypeId::Int || id == TypeId::BigInt || id == TypeId::TinyInt || id == TypeId::SmallInt;
  }
  // DOUBLE or FLOAT.
  bool isFloating() const { return id == TypeId::Double || id == TypeId::Float; }
  // Index of a struct field by case-insensitive name, or -1.
  int fieldIndex(std::string_view name) const;
};

// The type two numeric types widen to, as Spark widens them: TINYINT to
// SMALLINT to INT to BIGINT to DECIMAL or FLOAT to DOUBLE (a DECIMAL with a
// FLOAT is a DOUBLE), and two DECIMALs (or a DECIMAL and an integer, as
// DECIMAL(10, 0) or DECIMAL(20, 0)) to the DECIMAL that holds both, at most 38
// digits. Both must be numeric.
DataTypePtr widerNumericType(const DataType& a, const DataType& b);

// Parses a scalar type name as written in DDL (STRING, VARCHAR, INT, INTEGER,
// BIGINT, LONG, TINYINT, SMALLINT, DOUBLE, FLOAT, BOOLEAN, BOOL, TIMESTAMP, BINARY, BYTES, ...).
std::optional<TypeId> scalarTypeFromName(std::string_view name);
const char* typeIdName(TypeId id);

}  // namespace rtsql
