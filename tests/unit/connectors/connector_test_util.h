// Small builders shared by the connector tests.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <doctest/doctest.h>

#include "common/error.h"
#include "common/options.h"
#include "common/types.h"
#include "planner/physical_plan.h"
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

// A sink of `format` (and the options `extra`) taking user STRING, n BIGINT
// keyed by user: a GROUP BY user's rows.
inline SinkSpec countsSink(const std::string& format,
                           std::vector<std::pair<std::string, std::string>> extra = {}) {
  SinkSpec sink;
  sink.name = "counts";
  sink.connector = "kafka";
  sink.format = format;
  std::vector<std::pair<std::string, std::string>> kv = {{"connector", "kafka"},
                                                         {"format", format}};
  kv.insert(kv.end(), extra.begin(), extra.end());
  sink.options = opts(kv);
  sink.input.columns.push_back({"user", DataType::of(TypeId::String), false});
  sink.input.columns.push_back({"n", DataType::of(TypeId::BigInt), false});
  sink.keyColumn = 0;
  sink.keyColumns = {0};
  return sink;
}

}  // namespace rtsql::testing
