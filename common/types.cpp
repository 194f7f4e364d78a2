// SQL data types: scalar singletons, nested type construction and the SQL
// spelling used in DDL, DESCRIBE and error messages.
#include "common/types.h"

#include <array>

#include "common/decimal.h"
#include "common/schema.h"

namespace rtsql {

namespace {

DataTypePtr makeScalar(TypeId id) {
  auto t = std::make_shared<DataType>();
  t->id = id;
  return t;
}

}  // namespace

DataTypePtr DataType::of(TypeId id) {
  if (id == TypeId::Map) {
    // A bare MAP has no key and value types; give it a usable shape.
    static const DataTypePtr kMap = mapOf(nullptr, nullptr);
    return kMap;
  }
  // Built once; every scalar type of the process is one of these, which lets hot
  // paths compare type pointers before falling back to equals().
  static const std::array<DataTypePtr, 19> kTypes = [] {
    std::array<DataTypePtr, 19> a;
    for (size_t i = 0; i < a.size(); ++i) a[i] = makeScalar(static_cast<TypeId>(i));
    auto dec = std::make_shared<DataType>();
    dec->id = TypeId::Decimal;
    dec->precision = 10;
    a[static_cast<size_t>(TypeId::Decimal)] = dec;
    // A bare ARRAY or STRUCT has no element/fields; give them a usable shape.
    auto arr = std::make_shared<DataType>();
    arr->id = TypeId::Array;
    arr->element = a[static_cast<size_t>(TypeId::Null)];
    a[static_cast<size_t>(TypeId::Array)] = arr;
    return a;
  }();
  auto i = static_cast<size_t>(id);
  return i < kTypes.size() ? kTypes[i] : kTypes[0];
}

DataTypePtr DataType::arrayOf(DataTypePtr element) {
  auto t = std::make_shared<DataType>();
  t->id = TypeId::Array;
  t->element = element ? std::move(element) : of(TypeId::Null);
  return t;
}

DataTypePtr DataType::mapOf(DataTypePtr key, DataTypePtr value) {
  auto t = std::make_shared<DataType>();
  t->id = TypeId::Map;
  t->key = key ? std::move(key) : of(TypeId::Null);
  t->value = value ? std::move(value) : of(TypeId::Null);
  return t;
}

DataTypePtr DataType::decimal(int precision, int scale) {
  if (precision == 10 && scale == 0) return of(TypeId::Decimal);
  auto t = std::make_shared<DataType>();
  t->id = TypeId::Decimal;
  t->precision = static_cast<uint8_t>(precision);
  t->scale = static_cast<uint8_t>(scale);
  return t;
}

DataTypePtr DataType::yearMonthInterval(YmField start, YmField end) {
  if (start == YmField::Year && end == YmField::Month) return of(TypeId::YearMonthInterval);
  static const DataTypePtr kYear = [] {
    auto t = std::make_shared<DataType>();
    t->id = TypeId::YearMonthInterval;
    t->ymStart = t->ymEnd = YmField::Year;
    return t;
  }();
  static const DataTypePtr kMonth = [] {
    auto t = std::make_shared<DataType>();
    t->id = TypeId::YearMonthInterval;
    t->ymStart = t->ymEnd = YmField::Month;
    return t;
  }();
  return start == YmField::Year && end == YmField::Year ? kYear : kMonth;
}

DataTypePtr DataType::structOf(std::vector<StructField> fields) {
  auto t = std::make_shared<DataType>();
  t->id = TypeId::Struct;
  t->fields = std::move(fields);
  return t;
}

std::string DataType::toString() const {
  switch (id) {
    case TypeId::Array:
      return "ARRAY<" + (element ? element->toString() : std::string("NULL")) + ">";
    case TypeId::Struct: {
      std::string s = "STRUCT<";
      for (size_t i = 0; i < fields.size(); ++i) {
        if (i) s += ", ";
        s += fields[i].name;
        s += ": ";
        s += fields[i].type ? fields[i].type->toString() : std::string("NULL");
      }
      s += ">";
      return s;
    }
    case TypeId::Map:
      return "MAP<" + (key ? key->toString() : std::string("NULL")) + ", " +
             (value ? value->toString() : std::string("NULL")) + ">";
    case TypeId::Decimal:
      return "DECIMAL(" + std::to_string(precision) + "," + std::to_string(scale) + ")";
    case TypeId::YearMonthInterval: {
      const char* start = ymStart == YmField::Year ? "YEAR" : "MONTH";
      if (ymStart == ymEnd) return std::string("INTERVAL ") + start;
      return std::string("INTERVAL ") + start + " TO MONTH";
    }
    default:
      return typeIdName(id);
  }
}

bool DataType::equals(const DataType& other) const {
  if (this == &other) return true;
  if (id != other.id) return false;
  if (id == TypeId::Decimal) return precision == other.precision && scale == other.scale;
  if (id == TypeId::YearMonthInterval) return ymStart == other.ymStart && ymEnd == other.ymEnd;
  if (id == TypeId::Array) {
    if (!element || !other.element) return element == other.element;
    return element->equals(*other.element);
  }
  if (id == TypeId::Map) {
    auto same = [](const DataTypePtr& a, const DataTypePtr& b) {
      return !a || !b ? a == b : a->equals(*b);
    };
    return same(key, other.key) && same(value, other.value);
  }
  if (id == TypeId::Struct) {
    if (fields.size() != other.fields.size()) return false;
    for (size_t i = 0; i < fields.size(); ++i) {
      if (!iequals(fields[i].name, other.fields[i].name)) return false;
      const auto& a = fields[i].type;
      const auto& b = other.fields[i].type;
      if (!a || !b) {
        if (a != b) return false;
        continue;
      }
      if (!a->equals(*b)) return false;
    }
  }
  return true;
}

int DataType::fieldIndex(std::string_view name) const {
  for (size_t i = 0; i < fields.size(); ++i)
    if (iequals(fields[i].name, name)) return static_cast<int>(i);
  return -1;
}

namespace {

// The place of an integral type or FLOAT in Spark's numeric precedence.
int integralRank(TypeId id) {
  switch (id) {
    case TypeId::TinyInt: return 1;
    case TypeId::SmallInt: return 2;
    case TypeId::Int: return 3;
    case TypeId::BigInt: return 4;
    case TypeId::Float: return 5;
    default: return 0;
  }
}

}  // namespace

DataTypePtr widerNumericType(const DataType& a, const DataType& b) {
  if (a.id == TypeId::Double || b.id == TypeId::Double) return DataType::of(TypeId::Double);
  if ((a.id == TypeId::Float || b.id == TypeId::Float) &&
      (a.id == TypeId::Decimal || b.id == TypeId::Decimal))
    return DataType::of(TypeId::Double);
  if (a.id == TypeId::Decimal || b.id == TypeId::Decimal) {
    auto asDecimal = [](const DataType& t) -> decimal::Type {
      if (t.id == TypeId::Decimal) return {t.precision, t.scale};
      if (t.id == TypeId::TinyInt) return {3, 0};
      if (t.id == TypeId::SmallInt) return {5, 0};
      return t.id == TypeId::BigInt ? decimal::ofBigInt() : decimal::ofInt();
    };
    auto w = decimal::widerType(asDecimal(a), asDecimal(b));
    return DataType::decimal(w.precision, w.scale);
  }
  return DataType::of(integralRank(a.id) >= integralRank(b.id) ? a.id : b.id);
}

std::optional<TypeId> scalarTypeFromName(std::string_view name) {
  struct Entry {
    const char* name;
    TypeId id;
  };
  // DECIMAL and NUMERIC without arguments are DECIMAL(10, 0), as in Spark.
  // DATE is still read as a TIMESTAMP at midnight (docs/sql.md).
  static constexpr Entry kNames[] = {
      {"STRING", TypeId::String},      {"VARCHAR", TypeId::String},   {"TEXT", TypeId::String},
      {"CHAR", TypeId::String},        {"INT", TypeId::Int},          {"INTEGER", TypeId::Int},
      {"INT4", TypeId::Int},           {"SMALLINT", TypeId::SmallInt}, {"TINYINT", TypeId::TinyInt},
      {"SHORT", TypeId::SmallInt},     {"BYTE", TypeId::TinyInt},     {"BIGINT", TypeId::BigInt},
      {"LONG", TypeId::BigInt},        {"INT8", TypeId::BigInt},      {"DOUBLE", TypeId::Double},
      {"FLOAT", TypeId::Float},        {"REAL", TypeId::Float},       {"FLOAT8", TypeId::Double},
      {"FLOAT4", TypeId::Float},      {"DECIMAL", TypeId::Decimal},  {"NUMERIC", TypeId::Decimal},
      {"DEC", TypeId::Decimal},
      {"BOOLEAN", TypeId::Boolean},    {"BOOL", TypeId::Boolean},     {"TIMESTAMP", TypeId::Timestamp},
      {"TIMESTAMPTZ", TypeId::Timestamp}, {"TIMESTAMP_LTZ", TypeId::Timestamp},
      {"TIMESTAMP_NTZ", TypeId::TimestampNtz}, {"DATE", TypeId::Date},
      {"BINARY", TypeId::Binary},      {"BYTES", TypeId::Binary},     {"BYTEA", TypeId::Binary},
      {"VARBINARY", TypeId::Binary},   {"INTERVAL", TypeId::Interval},
      // PostgreSQL's names drivers and tools cast to: ::int2, ::oid, ::name, ::bpchar.
      {"INT2", TypeId::SmallInt},           {"OID", TypeId::BigInt},       {"NAME", TypeId::String},
      {"BPCHAR", TypeId::String},
  };
  for (const auto& e : kNames)
    if (iequals(name, e.name)) return e.id;
  return std::nullopt;
}

const char* typeIdName(TypeId id) {
  switch (id) {
    case TypeId::Null: return "NULL";
    case TypeId::Boolean: return "BOOLEAN";
    case TypeId::Int: return "INT";
    case TypeId::BigInt: return "BIGINT";
    case TypeId::Double: return "DOUBLE";
    case TypeId::String: return "STRING";
    case TypeId::Binary: return "BINARY";
    case TypeId::Timestamp: return "TIMESTAMP";
    case TypeId::Interval: return "INTERVAL";
    case TypeId::Array: return "ARRAY";
    case TypeId::Struct: return "STRUCT";
    case TypeId::Decimal: return "DECIMAL";
    case TypeId::Date: return "DATE";
    case TypeId::TimestampNtz: return "TIMESTAMP_NTZ";
    case TypeId::Map: return "MAP";
    case TypeId::TinyInt: return "TINYINT";
    case TypeId::SmallInt: return "SMALLINT";
    case TypeId::Float: return "FLOAT";
    case TypeId::YearMonthInterval: return "INTERVAL YEAR TO MONTH";
  }
  return "UNKNOWN";
}

}  // namespace rtsql
