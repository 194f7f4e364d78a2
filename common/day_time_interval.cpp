// Spark's names and text of the day-time interval ranges (see
// day_time_interval.h).
#include "common/day_time_interval.h"

#include <fmt/format.h>

#include "common/schema.h"  // toUpper

namespace rtsql::dt {

namespace {

constexpr std::string_view kNames[] = {"day", "hour", "minute", "second"};
constexpr int64_t kMicrosPerSecond = 1000000;
constexpr int64_t kMicrosPerMinute = 60 * kMicrosPerSecond;
constexpr int64_t kMicrosPerHour = 60 * kMicrosPerMinute;
constexpr int64_t kMicrosPerDay = 24 * kMicrosPerHour;

// Seconds with their fraction, trailing zeros dropped, two digits at least
// before the point: 04.5, 07, 00.000001 (Java's BigDecimal.stripTrailingZeros).
std::string seconds(uint64_t micros) {
  std::string out = fmt::format("{:02}", micros / kMicrosPerSecond);
  if (uint64_t frac = micros % kMicrosPerSecond) {
    std::string digits = fmt::format("{:06}", frac);
    while (digits.back() == '0') digits.pop_back();
    out += '.' + digits;
  }
  return out;
}

}  // namespace

std::string sparkText(int64_t micros, DtField start, DtField end) {
  // The magnitude as unsigned, so that the smallest BIGINT has one too.
  uint64_t rest = micros < 0 ? 0 - static_cast<uint64_t>(micros) : static_cast<uint64_t>(micros);
  std::string body = micros < 0 ? "-" : "";
  switch (start) {
    case DtField::Day:
      body += std::to_string(rest / kMicrosPerDay);
      rest %= kMicrosPerDay;
      break;
    case DtField::Hour:
      body += fmt::format("{:02}", rest / kMicrosPerHour);
      rest %= kMicrosPerHour;
      break;
    case DtField::Minute:
      body += fmt::format("{:02}", rest / kMicrosPerMinute);
      rest %= kMicrosPerMinute;
      break;
    case DtField::Second:
      body += seconds(rest);
      break;
  }
  if (start < DtField::Hour && DtField::Hour <= end) {
    body += fmt::format(" {:02}", rest / kMicrosPerHour);
    rest %= kMicrosPerHour;
  }
  if (start < DtField::Minute && DtField::Minute <= end) {
    body += fmt::format(":{:02}", rest / kMicrosPerMinute);
    rest %= kMicrosPerMinute;
  }
  if (start < DtField::Second && DtField::Second <= end) body += ":" + seconds(rest);
  std::string range = std::string(kNames[static_cast<int>(start)]);
  if (end != start) range += " TO " + std::string(kNames[static_cast<int>(end)]);
  return fmt::format("INTERVAL '{}' {}", body, toUpper(range));
}

}  // namespace rtsql::dt
