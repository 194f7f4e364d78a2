// The PostgreSQL type and text form of rtsql values (see pg_values.h).
#include "server/pg_values.h"

#include "server/query_handler.h"

namespace rtsql {

uint32_t pgTypeOf(const DataType& type) {
  switch (type.id) {
    case TypeId::Boolean: return pgtype::kBool;
    case TypeId::Int: return pgtype::kInt4;
    case TypeId::BigInt: return pgtype::kInt8;
    case TypeId::Double: return pgtype::kFloat8;
    case TypeId::Binary: return pgtype::kBytea;
    case TypeId::Timestamp: return pgtype::kTimestamp;
    case TypeId::Interval: return pgtype::kInterval;
    case TypeId::Decimal: return pgtype::kNumeric;
    case TypeId::Date: return pgtype::kDate;
    default: return pgtype::kText;
  }
}

std::optional<std::string> pgTextOf(const Value& v) {
  if (v.isNull()) return std::nullopt;
  if (v.type() == TypeId::Boolean) return std::string(v.asBool() ? "t" : "f");
  return v.toString();
}

}  // namespace rtsql
