// Reading a schema as Spark's from_json and from_csv take it: a DDL field
// list ("a INT, b ARRAY<STRING>") or one type ("STRUCT<a: INT>",
// "ARRAY<INT>"). Type names are those of rtsql's DDL.
#pragma once

#include <string>
#include <string_view>

#include "common/types.h"

namespace rtsql::expr_internal {

// The type the schema names (a STRUCT for a field list); throws 22023 naming
// `fn` and the place of the first thing it cannot read.
DataTypePtr readSchemaString(std::string_view text, const std::string& fn);

}  // namespace rtsql::expr_internal
