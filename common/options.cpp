// WITH (...) option lookup and validation. Every error points at the key or the
// value as the user wrote it, so a typo in a long CREATE SOURCE is found at once.
#include "common/options.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>

#include <fmt/format.h>

#include "common/edit_distance.h"
#include "common/expr.h"
#include "common/schema.h"
#include "common/sql_text.h"

namespace rtsql {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string quoteList(const std::vector<std::string>& items) {
  std::string s;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) s += ", ";
    s += '\'';
    s += items[i];
    s += '\'';
  }
  return s;
}

bool isPlainKey(std::string_view k) {
  if (k.empty() || !(std::isalpha(static_cast<unsigned char>(k[0])) || k[0] == '_')) return false;
  return std::all_of(k.begin(), k.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

}  // namespace

const OptionEntry* Options::find(std::string_view key) const {
  // The last occurrence wins, as with repeated SET.
  for (auto it = entries_.rbegin(); it != entries_.rend(); ++it)
    if (iequals(it->key, key)) return &*it;
  return nullptr;
}

std::string Options::getString(std::string_view key, std::string_view def) const {
  const OptionEntry* e = find(key);
  return e ? e->value : std::string(def);
}

int64_t Options::getInt(std::string_view key, int64_t def, int64_t min, int64_t max) const {
  const OptionEntry* e = find(key);
  if (!e) return def;
  std::string_view v = trim(e->value);
  if (!v.empty() && v.front() == '+') v.remove_prefix(1);
  int64_t n = 0;
  auto r = std::from_chars(v.data(), v.data() + v.size(), n);
  if (v.empty() || r.ec != std::errc() || r.ptr != v.data() + v.size()) {
    throw SqlError(sqlstate::kInvalidParameterValue,
                   fmt::format("invalid value '{}' for option '{}': expected an integer", e->value,
                               e->key),
                   e->valuePos);
  }
  if (n < min || n > max) {
    std::string range;
    if (min != INT64_MIN && max != INT64_MAX)
      range = fmt::format("must be between {} and {}", min, max);
    else if (min != INT64_MIN)
      range = fmt::format("must be at least {}", min);
    else
      range = fmt::format("must be at most {}", max);
    throw SqlError(sqlstate::kInvalidParameterValue,
                   fmt::format("invalid value '{}' for option '{}': {}", e->value, e->key, range),
                   e->valuePos);
  }
  return n;
}

int64_t Options::getInterval(std::string_view key, int64_t def, int64_t min, int64_t max) const {
  const OptionEntry* e = find(key);
  if (!e) return def;
  int64_t micros = 0;
  try {
    micros = parseInterval(e->value, "", e->valuePos);
  } catch (const SqlError&) {
    throw SqlError(sqlstate::kInvalidParameterValue,
                   fmt::format("invalid value '{}' for option '{}': expected an interval", e->value,
                               e->key),
                   e->valuePos, "write an interval such as '10 seconds' or '500 milliseconds'");
  }
  if (micros < min || micros > max) {
    auto shown = [](int64_t us) {
      return us % 1000000 == 0 ? fmt::format("{} seconds", us / 1000000)
                               : fmt::format("{} milliseconds", us / 1000);
    };
    throw SqlError(sqlstate::kInvalidParameterValue,
                   fmt::format("invalid value '{}' for option '{}': must be between {} and {}",
                               e->value, e->key, shown(min), shown(max)),
                   e->valuePos);
  }
  return micros;
}

bool Options::getBool(std::string_view key, bool def) const {
  const OptionEntry* e = find(key);
  if (!e) return def;
  std::string_view v = trim(e->value);
  if (iequals(v, "true") || v == "1" || iequals(v, "yes") || iequals(v, "on")) return true;
  if (iequals(v, "false") || v == "0" || iequals(v, "no") || iequals(v, "off")) return false;
  throw SqlError(sqlstate::kInvalidParameterValue,
                 fmt::format("invalid value '{}' for option '{}': expected 'true' or 'false'",
                             e->value, e->key),
                 e->valuePos);
}

const OptionEntry& Options::require(std::string_view key, size_t stmtPos) const {
  const OptionEntry* e = find(key);
  if (!e)
    throw SqlError(sqlstate::kInvalidParameterValue,
                   fmt::format("missing required option '{}'", key), stmtPos,
                   fmt::format("add {} = '...' to the WITH clause", sqlStringLiteral(key)));
  return *e;
}

std::string Options::getEnum(std::string_view key, std::string_view def,
                             const std::vector<std::string>& allowed) const {
  const OptionEntry* e = find(key);
  if (!e) return std::string(def);
  std::string_view v = trim(e->value);
  for (const auto& a : allowed)
    if (iequals(a, v)) return a;
  throw SqlError(sqlstate::kInvalidParameterValue,
                 fmt::format("invalid value '{}' for option '{}'", e->value, e->key), e->valuePos,
                 "expected one of: " + quoteList(allowed));
}

std::vector<std::pair<std::string, std::string>> Options::withPrefix(std::string_view prefix) const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& e : entries_)
    if (startsWithI(e.key, prefix) && e.key.size() > prefix.size())
      out.emplace_back(e.key.substr(prefix.size()), e.value);
  return out;
}

void Options::checkKnown(const std::vector<std::string>& known,
                         const std::vector<std::string>& prefixes) const {
  for (const auto& e : entries_) {
    bool ok = std::any_of(known.begin(), known.end(), [&](const auto& k) { return iequals(k, e.key); });
    ok = ok || std::any_of(prefixes.begin(), prefixes.end(),
                           [&](const auto& p) { return startsWithI(e.key, p); });
    if (ok) continue;
    std::string best;
    size_t bestDist = SIZE_MAX;
    for (const auto& k : known) {
      size_t d = editDistance(e.key, k);
      if (d < bestDist) {
        bestDist = d;
        best = k;
      }
    }
    std::string hint;
    // A suggestion is only useful when it is plausibly what was meant.
    if (!best.empty() && bestDist <= std::max<size_t>(2, e.key.size() / 3)) {
      hint = fmt::format("did you mean '{}'?", best);
    } else {
      std::vector<std::string> all = known;
      for (const auto& p : prefixes) all.push_back(p + "*");
      hint = "known options: " + quoteList(all);
    }
    throw SqlError(sqlstate::kInvalidParameterValue, fmt::format("unknown option '{}'", e.key),
                   e.keyPos, hint);
  }
}

void Options::set(std::string key, std::string value) {
  for (auto it = entries_.rbegin(); it != entries_.rend(); ++it) {
    if (iequals(it->key, key)) {
      it->value = std::move(value);
      it->valuePos = SqlError::npos;
      return;
    }
  }
  OptionEntry e;
  e.key = std::move(key);
  e.value = std::move(value);
  entries_.push_back(std::move(e));
}

std::string Options::toString() const {
  std::string s;
  for (size_t i = 0; i < entries_.size(); ++i) {
    if (i) s += ", ";
    s += isPlainKey(entries_[i].key) ? entries_[i].key : sqlStringLiteral(entries_[i].key);
    s += " = ";
    s += sqlStringLiteral(entries_[i].value);
  }
  return s;
}

}  // namespace rtsql
