// Small builders shared by the connector tests.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <doctest/doctest.h>

#include "common/error.h"
#include "common/options.h"
#include "common/types.h"
#include "../sql_error_of.h"

namespace rtsql::testing {

inline DataTypePtr t(TypeId id) { return DataType::of(id); }

// Options whose positions are distinct and predictable: entry i has its key at
// 100*i and its value at 100*i + 50, so a test can check where an error points.
inline Options opts(std::vector<std::pair<std::string, std::string>> kv) {
  std::vector<OptionEntry> entries;
  size_t pos = 0;
  for (auto& [k, v] : kv) {
    entries.push_back({k, v, pos, pos + 50});
    pos += 100;
  }
  return Options(std::move(entries));
}

}  // namespace rtsql::testing
