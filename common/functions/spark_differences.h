// Where a built-in function answers otherwise than Apache Spark 4.3: the one
// table SHOW FUNCTIONS and DESCRIBE FUNCTION show and docs/sql.md lists.
#pragma once

#include <optional>
#include <string_view>

namespace rtsql {

// The difference of the built-in function `function` (lower case) from Spark,
// in one sentence; nullopt where it agrees.
std::optional<std::string_view> sparkDifference(std::string_view function);

}  // namespace rtsql
