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
};

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

  static DataTypePtr of(TypeId id);  // scalar singletons
  static DataTypePtr arrayOf(DataTypePtr element);
  static DataTypePtr structOf(std::vector<StructField> fields);

  // SQL spelling: BIGINT, ARRAY<STRING>, STRUCT<start: TIMESTAMP, end: TIMESTAMP>.
  std::string toString() const;
  bool equals(const DataType& other) const;
  bool isNumeric() const { return id == TypeId::Int || id == TypeId::BigInt || id == TypeId::Double; }
  bool isIntegral() const { return id == TypeId::Int || id == TypeId::BigInt; }
  // Index of a struct field by case-insensitive name, or -1.
  int fieldIndex(std::string_view name) const;
};

// Parses a scalar type name as written in DDL (STRING, VARCHAR, INT, INTEGER,
// BIGINT, LONG, DOUBLE, FLOAT, BOOLEAN, BOOL, TIMESTAMP, BINARY, BYTES, ...).
std::optional<TypeId> scalarTypeFromName(std::string_view name);
const char* typeIdName(TypeId id);

}  // namespace rtsql
