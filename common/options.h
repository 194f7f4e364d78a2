// The WITH (...) options of a source, sink, table or flow. Keys compare
// case-insensitively; each entry keeps the positions of its key and value in the
// statement so that a wrong value is reported where it was written.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"

namespace rtsql {

struct OptionEntry {
  std::string key;
  std::string value;
  size_t keyPos = SqlError::npos;
  size_t valuePos = SqlError::npos;
};

class Options {
 public:
  Options() = default;
  explicit Options(std::vector<OptionEntry> entries) : entries_(std::move(entries)) {}

  const OptionEntry* find(std::string_view key) const;
  bool has(std::string_view key) const { return find(key) != nullptr; }
  std::string getString(std::string_view key, std::string_view def = {}) const;
  // Throws SqlError 22023 at the value's position when a value is not a valid
  // integer / boolean / interval, or outside [min, max].
  int64_t getInt(std::string_view key, int64_t def, int64_t min = INT64_MIN,
                 int64_t max = INT64_MAX) const;
  bool getBool(std::string_view key, bool def) const;
  // An interval option ('10 seconds', '500 ms') in microseconds; 22023 at the
  // value when it is not an interval or is outside [min, max].
  int64_t getInterval(std::string_view key, int64_t def, int64_t min, int64_t max) const;
  // Required string option; 22023 naming the key when missing (at `stmtPos`).
  const OptionEntry& require(std::string_view key, size_t stmtPos) const;
  // Throws 22023 when the value is not one of `allowed`, listing them in the hint.
  std::string getEnum(std::string_view key, std::string_view def,
                      const std::vector<std::string>& allowed) const;
  // Entries whose key starts with `prefix` (case-insensitive), prefix stripped:
  // used for `kafka.<name>` pass-through.
  std::vector<std::pair<std::string, std::string>> withPrefix(std::string_view prefix) const;
  // Throws 22023 at the first key that is neither in `known` nor starts with one
  // of `prefixes`, suggesting the closest known key.
  void checkKnown(const std::vector<std::string>& known,
                  const std::vector<std::string>& prefixes = {}) const;
  void set(std::string key, std::string value);

  const std::vector<OptionEntry>& entries() const { return entries_; }
  std::string toString() const;  // key = 'value', ...

 private:
  std::vector<OptionEntry> entries_;
};

}  // namespace rtsql
