// Column lookup and ASCII case helpers. Identifiers in rtsql are matched
// case-insensitively in the ASCII range, as Spark does by default.
#include "common/schema.h"

namespace rtsql {

namespace {
inline char lowerAscii(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c; }
inline char upperAscii(char c) { return (c >= 'a' && c <= 'z') ? static_cast<char>(c - 32) : c; }
}  // namespace

int Schema::find(std::string_view name) const {
  for (size_t i = 0; i < columns.size(); ++i)
    if (iequals(columns[i].name, name)) return static_cast<int>(i);
  return -1;
}

std::vector<DataTypePtr> Schema::types() const {
  std::vector<DataTypePtr> out;
  out.reserve(columns.size());
  for (const Column& c : columns) out.push_back(c.type);
  return out;
}

std::string Schema::toString() const {
  std::string s = "(";
  for (size_t i = 0; i < columns.size(); ++i) {
    if (i) s += ", ";
    s += columns[i].name;
    s += ' ';
    s += columns[i].type ? columns[i].type->toString() : std::string("NULL");
  }
  s += ')';
  return s;
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (lowerAscii(a[i]) != lowerAscii(b[i])) return false;
  return true;
}

bool startsWithI(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && iequals(s.substr(0, prefix.size()), prefix);
}

std::string toLower(std::string_view s) {
  std::string r(s);
  for (auto& c : r) c = lowerAscii(c);
  return r;
}

std::string toUpper(std::string_view s) {
  std::string r(s);
  for (auto& c : r) c = upperAscii(c);
  return r;
}

}  // namespace rtsql
