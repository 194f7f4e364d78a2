// Interval text: INTERVAL '10' SECOND, INTERVAL '10 seconds', '1 minute 30
// seconds', '500 ms', and the window durations of window()/session_window().
#include <charconv>
#include <cmath>

#include <fmt/format.h>

#include "common/functions/internal.h"
#include "common/schema.h"

namespace rtsql {

namespace {

// Microseconds in one unit, or 0 for an unknown unit. Plural forms and the
// usual abbreviations are accepted.
int64_t unitMicros(std::string_view u) {
  std::string l = toLower(u);
  if (l.size() > 1 && l.back() == 's' && l != "ms" && l != "us" && l != "hrs" && l != "mins" && l != "secs")
    l.pop_back();
  if (l == "hrs" || l == "mins" || l == "secs") l.pop_back();
  if (l == "microsecond" || l == "us" || l == "micro") return 1;
  if (l == "millisecond" || l == "ms" || l == "milli") return 1000;
  if (l == "second" || l == "s" || l == "sec") return 1000000;
  if (l == "minute" || l == "m" || l == "min") return 60LL * 1000000;
  if (l == "hour" || l == "h" || l == "hr") return 3600LL * 1000000;
  if (l == "day" || l == "d") return 86400LL * 1000000;
  if (l == "week" || l == "w") return 7 * 86400LL * 1000000;
  return 0;
}

[[noreturn]] void bad(const std::string& text, const std::string& unit, size_t pos) {
  std::string shown = unit.empty() ? fmt::format("'{}'", text) : fmt::format("'{}' {}", text, unit);
  throw SqlError(sqlstate::kInvalidTextRepresentation, fmt::format("invalid interval: {}", shown), pos,
                 "write an interval as '10 seconds', '1 minute 30 seconds' or '500 milliseconds'; "
                 "units: microsecond, millisecond (ms), second (s), minute (m), hour (h), day (d), week");
}

}  // namespace

int64_t parseInterval(const std::string& text, const std::string& unit, size_t pos) {
  std::string_view s = text;
  size_t i = 0;
  auto skipSpace = [&] {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
  };
  skipSpace();
  // Optional leading "interval" keyword, as in '1 minute' written with INTERVAL inside.
  if (s.size() - i >= 8 && iequals(s.substr(i, 8), "interval")) {
    i += 8;
    skipSpace();
  }
  int64_t total = 0;
  int parts = 0;
  bool negAll = false;
  if (i < s.size() && s[i] == '-' && !unit.empty()) {
    negAll = true;
    ++i;
  }
  while (true) {
    skipSpace();
    if (i >= s.size()) break;
    bool neg = false;
    if (s[i] == '-' || s[i] == '+') {
      neg = s[i] == '-';
      ++i;
    }
    size_t numStart = i;
    while (i < s.size() && ((s[i] >= '0' && s[i] <= '9') || s[i] == '.')) ++i;
    if (i == numStart) bad(text, unit, pos);
    double num = 0;
    auto r = std::from_chars(s.data() + numStart, s.data() + i, num);
    if (r.ec != std::errc() || r.ptr != s.data() + i) bad(text, unit, pos);
    skipSpace();
    size_t unitStart = i;
    while (i < s.size() && ((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z'))) ++i;
    std::string_view u = s.substr(unitStart, i - unitStart);
    int64_t per;
    if (u.empty()) {
      // A bare number takes the unit written after the literal: INTERVAL '10' SECOND.
      if (unit.empty() || parts > 0) bad(text, unit, pos);
      per = unitMicros(unit);
    } else {
      if (!unit.empty()) bad(text, unit, pos);
      per = unitMicros(u);
    }
    if (per == 0) bad(text, unit, pos);
    double v = num * static_cast<double>(per);
    if (!std::isfinite(v) || std::fabs(v) > 9.2e18) bad(text, unit, pos);
    total += (neg ? -1 : 1) * static_cast<int64_t>(std::llround(v));
    ++parts;
  }
  if (parts == 0) bad(text, unit, pos);
  return negAll ? -total : total;
}

}  // namespace rtsql
