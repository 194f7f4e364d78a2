// PostgreSQL's types as rtsql shows them to clients: the OID a column of each
// rtsql type is sent as, and for every PostgreSQL type rtsql names (those
// columns', the catalog's own, and those drivers ask about) its pg_type row's
// facts and format_type() name. One table, read by the wire protocol's
// column types (server/pg_values.h), pg_type (server/system_catalog.h) and
// format_type()/::regtype (common/functions/pg_catalog.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/types.h"

namespace rtsql {

struct PgType {
  uint32_t oid = 0;
  const char* name = "";      // typname: int4, _text
  const char* sqlName = "";   // format_type: integer, text[]
  int16_t length = -1;        // typlen
  char category = 'U';        // typcategory
  uint32_t element = 0;       // typelem: the element type of an array type
  uint32_t array = 0;         // typarray: the array type of this one
  uint32_t collation = 0;     // typcollation: 100 (default) for the text types
};

// Every type rtsql shows, by OID.
const std::vector<PgType>& pgTypes();
const PgType* pgTypeByOid(int64_t oid);
// By typname or a name format_type() writes ("int4", "integer", "pg_catalog.text"),
// case-insensitive; an array as "int4[]", "_int4" or "integer[]".
const PgType* pgTypeByName(std::string_view name);

// The OID a column of `type` is sent as: BOOLEAN bool, INT int4, BIGINT int8,
// DOUBLE float8, DECIMAL numeric, BINARY bytea, TIMESTAMP timestamptz,
// TIMESTAMP_NTZ timestamp, INTERVAL interval, DATE date, an ARRAY its element's array type when it
// has one; anything else text.
uint32_t pgTypeOidOf(const DataType& type);
// atttypmod of a column of `type`: a DECIMAL's precision and scale as
// PostgreSQL packs them, -1 for the rest.
int32_t pgTypmodOf(const DataType& type);
// format_type(oid, typmod): "numeric(10,2)", "character varying(20)",
// "integer"; NULL for an unknown OID is the caller's, this gives "???".
std::string pgFormatType(int64_t oid, std::optional<int64_t> typmod);

}  // namespace rtsql
