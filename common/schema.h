// A Schema names and types the columns of a Row. Hidden columns (Kafka metadata
// such as _key and _timestamp on a decoded source) are addressable by name but
// are not part of `SELECT *`.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/types.h"

namespace rtsql {

// Hidden Kafka metadata columns appended to declared json/csv Kafka source
// schemas, in this order (the planner appends them; decoders fill them by name).
inline constexpr const char* kMetaKey = "_key";              // BINARY
inline constexpr const char* kMetaTimestamp = "_timestamp";  // TIMESTAMP
inline constexpr const char* kMetaPartition = "_partition";  // INT
inline constexpr const char* kMetaOffset = "_offset";        // BIGINT
inline constexpr const char* kMetaHeaders = "_headers";  // ARRAY<STRUCT<key: STRING, value: BINARY>>

struct Column {
  std::string name;
  DataTypePtr type;
  bool hidden = false;
};

struct Schema {
  std::vector<Column> columns;

  // Index of the column with this case-insensitive name, or -1.
  int find(std::string_view name) const;
  size_t size() const { return columns.size(); }
  std::string toString() const;  // "(a BIGINT, b STRING)"
  // The columns' types, in order.
  std::vector<DataTypePtr> types() const;
};

bool iequals(std::string_view a, std::string_view b);
// Whether `s` starts with `prefix`, ignoring ASCII case.
bool startsWithI(std::string_view s, std::string_view prefix);
std::string toLower(std::string_view s);
std::string toUpper(std::string_view s);

}  // namespace rtsql
