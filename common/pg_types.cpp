// PostgreSQL's types as rtsql shows them (see pg_types.h). The OIDs are
// PostgreSQL's own (pg_type.dat), so that drivers that know them by number
// read the values right.
#include "common/pg_types.h"

#include <fmt/format.h>

#include "common/schema.h"

namespace rtsql {

const std::vector<PgType>& pgTypes() {
  static const std::vector<PgType> kTypes = {
      {16, "bool", "boolean", 1, 'B', 0, 1000, 0},
      {17, "bytea", "bytea", -1, 'U', 0, 1001, 0},
      {18, "char", "\"char\"", 1, 'Z', 0, 1002, 0},
      {19, "name", "name", 64, 'S', 0, 1003, 950},
      {20, "int8", "bigint", 8, 'N', 0, 1016, 0},
      {21, "int2", "smallint", 2, 'N', 0, 1005, 0},
      {22, "int2vector", "int2vector", -1, 'A', 21, 1006, 0},
      {23, "int4", "integer", 4, 'N', 0, 1007, 0},
      {24, "regproc", "regproc", 4, 'N', 0, 1008, 0},
      {25, "text", "text", -1, 'S', 0, 1009, 100},
      {26, "oid", "oid", 4, 'N', 0, 1028, 0},
      {30, "oidvector", "oidvector", -1, 'A', 26, 1013, 0},
      {114, "json", "json", -1, 'U', 0, 199, 0},
      {199, "_json", "json[]", -1, 'A', 114, 0, 0},
      {700, "float4", "real", 4, 'N', 0, 1021, 0},
      {701, "float8", "double precision", 8, 'N', 0, 1022, 0},
      {1000, "_bool", "boolean[]", -1, 'A', 16, 0, 0},
      {1001, "_bytea", "bytea[]", -1, 'A', 17, 0, 0},
      {1002, "_char", "\"char\"[]", -1, 'A', 18, 0, 0},
      {1003, "_name", "name[]", -1, 'A', 19, 0, 950},
      {1005, "_int2", "smallint[]", -1, 'A', 21, 0, 0},
      {1007, "_int4", "integer[]", -1, 'A', 23, 0, 0},
      {1009, "_text", "text[]", -1, 'A', 25, 0, 100},
      {1016, "_int8", "bigint[]", -1, 'A', 20, 0, 0},
      {1021, "_float4", "real[]", -1, 'A', 700, 0, 0},
      {1022, "_float8", "double precision[]", -1, 'A', 701, 0, 0},
      {1028, "_oid", "oid[]", -1, 'A', 26, 0, 0},
      {1042, "bpchar", "character", -1, 'S', 0, 1014, 100},
      {1043, "varchar", "character varying", -1, 'S', 0, 1015, 100},
      {1014, "_bpchar", "character[]", -1, 'A', 1042, 0, 100},
      {1015, "_varchar", "character varying[]", -1, 'A', 1043, 0, 100},
      {1082, "date", "date", 4, 'D', 0, 1182, 0},
      {1182, "_date", "date[]", -1, 'A', 1082, 0, 0},
      {1114, "timestamp", "timestamp without time zone", 8, 'D', 0, 1115, 0},
      {1115, "_timestamp", "timestamp without time zone[]", -1, 'A', 1114, 0, 0},
      {1184, "timestamptz", "timestamp with time zone", 8, 'D', 0, 1185, 0},
      {1185, "_timestamptz", "timestamp with time zone[]", -1, 'A', 1184, 0, 0},
      {1186, "interval", "interval", 16, 'T', 0, 1187, 0},
      {1187, "_interval", "interval[]", -1, 'A', 1186, 0, 0},
      {1700, "numeric", "numeric", -1, 'N', 0, 1231, 0},
      {1231, "_numeric", "numeric[]", -1, 'A', 1700, 0, 0},
      {2205, "regclass", "regclass", 4, 'N', 0, 2210, 0},
      {2206, "regtype", "regtype", 4, 'N', 0, 2211, 0},
      {4089, "regnamespace", "regnamespace", 4, 'N', 0, 4090, 0},
      {2249, "record", "record", -1, 'P', 0, 2287, 0},
      {2278, "void", "void", 4, 'P', 0, 0, 0},
      {705, "unknown", "unknown", -2, 'X', 0, 0, 0},
      {3802, "jsonb", "jsonb", -1, 'U', 0, 3807, 0},
  };
  return kTypes;
}

const PgType* pgTypeByOid(int64_t oid) {
  for (const PgType& t : pgTypes())
    if (t.oid == oid) return &t;
  return nullptr;
}

const PgType* pgTypeByName(std::string_view name) {
  if (name.size() > 11 && iequals(name.substr(0, 11), "pg_catalog.")) name.remove_prefix(11);
  if (name.size() > 2 && name.ends_with("[]")) {
    const PgType* element = pgTypeByName(name.substr(0, name.size() - 2));
    return element && element->array ? pgTypeByOid(element->array) : nullptr;
  }
  for (const PgType& t : pgTypes())
    if (iequals(name, t.name) || iequals(name, t.sqlName)) return &t;
  // The SQL spellings PostgreSQL reads besides format_type's.
  static constexpr std::pair<const char*, const char*> kAliases[] = {
      {"int", "int4"},          {"boolean", "bool"},     {"float", "float8"},
      {"decimal", "numeric"},   {"character", "bpchar"}, {"string", "text"},
      {"double", "float8"},     {"binary", "bytea"},
  };
  for (const auto& [alias, typname] : kAliases)
    if (iequals(name, alias)) return pgTypeByName(typname);
  return nullptr;
}

uint32_t pgTypeOidOf(const DataType& type) {
  switch (type.id) {
    case TypeId::Boolean: return 16;
    case TypeId::Int: return 23;
    case TypeId::BigInt: return 20;
    case TypeId::Double: return 701;
    // PostgreSQL has no one-byte integer: a TINYINT is an int2, as a SMALLINT.
    case TypeId::TinyInt:
    case TypeId::SmallInt: return 21;
    case TypeId::Float: return 700;
    case TypeId::Binary: return 17;
    // Spark's TIMESTAMP is an instant shown in the session zone: timestamptz.
    case TypeId::Timestamp: return 1184;
    case TypeId::Interval:
    case TypeId::YearMonthInterval: return 1186;
    case TypeId::Decimal: return 1700;
    case TypeId::Date: return 1082;
    case TypeId::TimestampNtz: return 1114;
    default: return 25;
  }
}

int32_t pgTypmodOf(const DataType& type) {
  if (type.id != TypeId::Decimal) return -1;
  return ((type.precision << 16) | type.scale) + 4;
}

std::string pgFormatType(int64_t oid, std::optional<int64_t> typmod) {
  const PgType* t = pgTypeByOid(oid);
  if (!t) return "???";
  std::string name = t->sqlName;
  if (typmod && *typmod >= 0) {
    const int64_t m = *typmod;
    if (oid == 1700 && m >= 4) {
      name += fmt::format("({},{})", ((m - 4) >> 16) & 0xFFFF, (m - 4) & 0xFFFF);
    } else if ((oid == 1043 || oid == 1042) && m >= 4) {
      name += fmt::format("({})", m - 4);
    }
  }
  return name;
}

}  // namespace rtsql
