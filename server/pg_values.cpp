// The PostgreSQL type and text form of rtsql values (see pg_values.h).
#include "server/pg_values.h"

#include "common/pg_types.h"
#include "server/query_handler.h"

namespace rtsql {

uint32_t pgTypeOf(const DataType& type) { return pgTypeOidOf(type); }

std::optional<std::string> pgTextOf(const Value& v) {
  if (v.isNull()) return std::nullopt;
  if (v.type() == TypeId::Boolean) return std::string(v.asBool() ? "t" : "f");
  return v.toString();
}

}  // namespace rtsql
