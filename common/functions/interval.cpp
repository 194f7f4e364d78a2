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

int64_t parseDayTimeRange(const std::string& text, const std::string& from, const std::string& to,
                          size_t pos) {
  static constexpr std::string_view kUnits[] = {"DAY", "HOUR", "MINUTE", "SECOND"};
  static constexpr int64_t kMicros[] = {86400LL * 1000000, 3600LL * 1000000, 60LL * 1000000, 1000000};
  static constexpr int64_t kMax[] = {0, 23, 59, 59};
  auto rank = [](std::string_view u) {
    for (int i = 0; i < 4; ++i)
      if (iequals(u, kUnits[i])) return i;
    return -1;
  };
  const int first = rank(from), last = rank(to);
  auto fail = [&]() {
    throw SqlError(sqlstate::kInvalidTextRepresentation,
                   fmt::format("invalid interval: '{}' {} TO {}", text, from, to), pos,
                   "write INTERVAL '1 02:03:04.5' DAY TO SECOND, '02:03' HOUR TO MINUTE or "
                   "'3 04' DAY TO HOUR: hours 0 to 23, minutes and seconds 0 to 59");
  };
  if (first < 0 || last <= first) fail();
  std::string_view s = text;
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  // One sign before the quotes (the parser's '-') and one inside may both be there.
  int sign = 1;
  for (int k = 0; k < 2 && !s.empty() && (s[0] == '-' || s[0] == '+'); ++k) {
    if (s[0] == '-') sign = -sign;
    s.remove_prefix(1);
  }
  Int128 total = 0;
  for (int unit = first; unit <= last; ++unit) {
    if (unit > first) {
      // DAY is followed by a space, the clock's fields by colons.
      const char sep = unit == 1 ? ' ' : ':';
      if (s.empty() || s[0] != sep) fail();
      s.remove_prefix(1);
    }
    size_t n = 0;
    while (n < s.size() && s[n] >= '0' && s[n] <= '9') ++n;
    if (n == 0 || n > 18) fail();
    int64_t v = 0;
    std::from_chars(s.data(), s.data() + n, v);
    s.remove_prefix(n);
    if (unit > first && v > kMax[unit]) fail();
    total += static_cast<Int128>(v) * kMicros[unit];
    if (unit == 3 && !s.empty() && s[0] == '.') {
      // A fraction of a second, to the microsecond (Spark keeps at most 9 digits).
      s.remove_prefix(1);
      size_t f = 0;
      int64_t micros = 0;
      while (f < s.size() && s[f] >= '0' && s[f] <= '9') {
        if (f < 6) micros = micros * 10 + (s[f] - '0');
        ++f;
      }
      if (f == 0 || f > 9) fail();
      for (size_t k = f; k < 6; ++k) micros *= 10;
      s.remove_prefix(f);
      total += micros;
    }
  }
  if (!s.empty()) fail();
  total *= sign;
  if (total > INT64_MAX || total < INT64_MIN) fail();
  return static_cast<int64_t>(total);
}

}  // namespace rtsql
