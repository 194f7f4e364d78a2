// Spark's YEAR-MONTH INTERVAL texts: see common/year_month_interval.h.
#include "common/year_month_interval.h"

#include <cctype>

#include "common/schema.h"

namespace rtsql::ym {

std::string sparkText(int64_t months, YmField start, YmField end) {
  // As Spark's IntervalUtils.toYearMonthIntervalString (ANSI style): the sign
  // goes before the years, and INTERVAL YEAR shows whole years only.
  const char* sign = months < 0 ? "-" : "";
  const int64_t abs = months < 0 ? -months : months;
  std::string out = "INTERVAL '";
  if (start != end) {
    out += sign + std::to_string(abs / 12) + "-" + std::to_string(abs % 12) + "' YEAR TO MONTH";
  } else if (start == YmField::Year) {
    out += sign + std::to_string(abs / 12) + "' YEAR";
  } else {
    out += std::to_string(months) + "' MONTH";
  }
  return out;
}

void appendPostgres(std::string& out, int64_t months) {
  if (months == 0) {
    out += "00:00:00";
    return;
  }
  // PostgreSQL writes the years and the months each with its own sign, and
  // a unit in the plural unless the count is exactly 1.
  const int64_t years = months / 12, rest = months % 12;
  if (years != 0) {
    out += std::to_string(years);
    out += years == 1 ? " year" : " years";
  }
  if (rest != 0) {
    if (years != 0) out += ' ';
    out += std::to_string(rest);
    out += rest == 1 ? " mon" : " mons";
  }
}

std::optional<YmField> fieldFromName(std::string_view word) {
  if (iequals(word, "YEAR") || iequals(word, "YEARS")) return YmField::Year;
  if (iequals(word, "MONTH") || iequals(word, "MONTHS")) return YmField::Month;
  return std::nullopt;
}

namespace {

// The place of a day-time unit, DAY first; -1 for any other word.
int dayTimeRank(std::string_view u) {
  static constexpr std::string_view kUnits[] = {"DAY", "HOUR", "MINUTE", "SECOND"};
  for (int i = 0; i < 4; ++i)
    if (iequals(u, kUnits[i])) return i;
  return -1;
}

}  // namespace

DataTypePtr intervalType(std::string_view from, std::string_view to) {
  auto start = fieldFromName(from);
  if (start) {
    auto end = to.empty() ? start : fieldFromName(to);
    if (!end || *end < *start || (!to.empty() && *end == *start)) return nullptr;
    return DataType::yearMonthInterval(*start, *end);
  }
  const int a = dayTimeRank(from), b = to.empty() ? a : dayTimeRank(to);
  if (a < 0 || b < 0 || b < a || (!to.empty() && a == b)) return nullptr;
  return DataType::of(TypeId::Interval);
}

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// An optional sign: -1 for '-', 1 for '+' or none.
int takeSign(std::string_view& s) {
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    int sign = s[0] == '-' ? -1 : 1;
    s.remove_prefix(1);
    return sign;
  }
  return 1;
}

// Digits up to `max`, all of `s` or only a prefix when `rest` is given.
std::optional<int64_t> takeDigits(std::string_view& s, int64_t max) {
  size_t i = 0;
  int64_t v = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
    v = v * 10 + (s[i] - '0');
    if (v > max) return std::nullopt;
    ++i;
  }
  if (i == 0) return std::nullopt;
  s.remove_prefix(i);
  return v;
}

std::optional<int32_t> fits(int64_t months) {
  if (months < INT32_MIN || months > INT32_MAX) return std::nullopt;
  return static_cast<int32_t>(months);
}

// The body between the quotes: [sign]Y-M for YEAR TO MONTH, [sign]N for one
// field; `outer` is the sign written before the quotes.
std::optional<int32_t> parseBody(std::string_view s, int outer, YmField start, YmField end) {
  const int sign = outer * takeSign(s);
  if (start != end) {
    // Spark bounds the years by what an int32 of months can hold.
    auto years = takeDigits(s, INT32_MAX / 12);
    if (!years || s.empty() || s[0] != '-') return std::nullopt;
    s.remove_prefix(1);
    auto months = takeDigits(s, 11);
    if (!months || !s.empty()) return std::nullopt;
    return fits(sign * (*years * 12 + *months));
  }
  auto n = takeDigits(s, INT64_MAX / 12);
  if (!n || !s.empty()) return std::nullopt;
  if (start == YmField::Year) {
    if (*n * 12 > INT32_MAX) return std::nullopt;
    return fits(sign * *n * 12);
  }
  return fits(sign * *n);
}

}  // namespace

std::optional<int32_t> parse(std::string_view text, YmField start, YmField end) {
  std::string_view s = trim(text);
  if (s.size() < 8 || !iequals(s.substr(0, 8), "INTERVAL")) return parseBody(s, 1, start, end);
  // The ANSI form: INTERVAL [sign]'body' YEAR [TO MONTH], whose fields must
  // be the type's.
  s = trim(s.substr(8));
  const int outer = takeSign(s);
  if (s.empty() || s[0] != '\'') return std::nullopt;
  const size_t close = s.find('\'', 1);
  if (close == std::string_view::npos) return std::nullopt;
  std::string_view body = s.substr(1, close - 1);
  std::string_view units = trim(s.substr(close + 1));
  const size_t space = units.find_first_of(" \t");
  auto first = fieldFromName(units.substr(0, space));
  if (!first || *first != start) return std::nullopt;
  if (space == std::string_view::npos) {
    if (start != end) return std::nullopt;
  } else {
    std::string_view tail = trim(units.substr(space));
    if (start == end || tail.size() < 2 || !iequals(tail.substr(0, 2), "TO")) return std::nullopt;
    auto last = fieldFromName(trim(tail.substr(2)));
    if (!last || *last != end) return std::nullopt;
  }
  return parseBody(body, outer, start, end);
}

}  // namespace rtsql::ym
