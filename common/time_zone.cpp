// Time zones over the system's tz database (see time_zone.h).
//
// The zones come from Howard Hinnant's date library (Debian's
// libhowardhinnant-date-dev, its libdate-tz built with USE_OS_TZDB=1), which
// reads the TZif files of /usr/share/zoneinfo that the tzdata package keeps
// current. It was chosen over ICU because it reads the system's tzdata rather
// than a copy compiled into the library, and because its API is std::chrono's
// own (C++20's <chrono> time zones, which g++ 12's libstdc++ lacks), so the
// day libstdc++ has std::chrono::tzdb this file is all that changes.
//
// The TZif files list transitions up to 2037 only; past that, an instant is
// read in the year before 2038 that has the same calendar (leap or not,
// starting on the same weekday), which is how the zone's current rule, the one
// java.time applies for ever, places its transitions.
#include "common/time_zone.h"

#include <date/tz.h>
#include <fmt/format.h>

#include <cctype>
#include <map>
#include <memory>
#include <mutex>

#include "common/error.h"
#include "common/functions/internal.h"
#include "common/json.h"
#include "common/pg_session.h"
#include "common/zone_names.h"

namespace rtsql {

namespace {

using expr_internal::civilFromDays;
using expr_internal::isLeapYear;
using expr_internal::daysFromCivil;
using expr_internal::floorDiv;
using expr_internal::floorMod;
using expr_internal::kMicrosPerSecond;

constexpr int64_t kSecondsPerDay = 86400;
// 2038-01-01T00:00:00Z: the TZif files' transitions end before it.
constexpr int64_t kRulesEndSeconds = 2145916800;
// The tz database has nothing before the first year; date::year stops at 32767.
constexpr int64_t kFirstSeconds = -62135596800;  // 0001-01-01T00:00:00Z

// Seconds to add to an instant past 2037 to land in the year of 2010..2037
// with the same calendar, in which the tz database has the transitions.
int64_t equivalentYearShift(int64_t seconds) {
  int64_t days = floorDiv(seconds, kSecondsPerDay);
  int64_t y;
  unsigned m, d;
  civilFromDays(days, &y, &m, &d);
  int64_t jan1 = daysFromCivil(y, 1, 1);
  int64_t weekday = floorMod(jan1 + 3, 7);
  for (int64_t c = 2010; c <= 2037; ++c) {
    int64_t cJan1 = daysFromCivil(c, 1, 1);
    if (isLeapYear(c) == isLeapYear(y) && floorMod(cJan1 + 3, 7) == weekday)
      return (cJan1 - jan1) * kSecondsPerDay;
  }
  return 0;  // every calendar occurs within 28 consecutive years of this century
}

date::sys_info infoAt(const date::time_zone& z, int64_t seconds) {
  if (seconds < kFirstSeconds) seconds = kFirstSeconds;
  if (seconds >= kRulesEndSeconds) seconds += equivalentYearShift(seconds);
  return z.get_info(date::sys_seconds{std::chrono::seconds{seconds}});
}

// Java's short zone ids (ZoneId.SHORT_IDS), which Spark's zone arguments take.
constexpr std::pair<std::string_view, std::string_view> kShortIds[] = {
    {"ACT", "Australia/Darwin"},
    {"AET", "Australia/Sydney"},
    {"AGT", "America/Argentina/Buenos_Aires"},
    {"ART", "Africa/Cairo"},
    {"AST", "America/Anchorage"},
    {"BET", "America/Sao_Paulo"},
    {"BST", "Asia/Dhaka"},
    {"CAT", "Africa/Harare"},
    {"CNT", "America/St_Johns"},
    {"CST", "America/Chicago"},
    {"CTT", "Asia/Shanghai"},
    {"EAT", "Africa/Addis_Ababa"},
    {"ECT", "Europe/Paris"},
    {"IET", "America/Indiana/Indianapolis"},
    {"IST", "Asia/Kolkata"},
    {"JST", "Asia/Tokyo"},
    {"MIT", "Pacific/Apia"},
    {"NET", "Asia/Yerevan"},
    {"NST", "Pacific/Auckland"},
    {"PLT", "Asia/Karachi"},
    {"PNT", "America/Phoenix"},
    {"PRT", "America/Puerto_Rico"},
    {"PST", "America/Los_Angeles"},
    {"SST", "Pacific/Guadalcanal"},
    {"VST", "Asia/Ho_Chi_Minh"},
    {"EST", "-05:00"},
    {"MST", "-07:00"},
    {"HST", "-10:00"},
};

// An offset as java.time's ZoneOffset.of reads it after its sign: h, hh,
// hh:mm, hhmm, hh:mm:ss or hhmmss; nullopt otherwise or past 18:00.
std::optional<int32_t> parseOffsetBody(std::string_view s) {
  auto two = [&](size_t at, int max) -> int {
    if (at + 2 > s.size() || !isdigit(static_cast<unsigned char>(s[at])) ||
        !isdigit(static_cast<unsigned char>(s[at + 1])))
      return -1;
    int v = (s[at] - '0') * 10 + (s[at + 1] - '0');
    return v > max ? -1 : v;
  };
  int h = -1, m = 0, sec = 0;
  if (s.size() == 1 && isdigit(static_cast<unsigned char>(s[0]))) return (s[0] - '0') * 3600;
  h = two(0, 18);
  if (h < 0) return std::nullopt;
  std::string_view rest = s.substr(2);
  bool colon = !rest.empty() && rest[0] == ':';
  size_t at = 2 + (colon ? 1 : 0);
  if (rest.empty()) {
  } else if ((colon && (s.size() == 5 || s.size() == 8)) ||
             (!colon && (s.size() == 4 || s.size() == 6))) {
    m = two(at, 59);
    if (m < 0) return std::nullopt;
    if (s.size() > at + 2) {
      size_t sAt = at + 2;
      if (colon) {
        if (s[sAt] != ':') return std::nullopt;
        ++sAt;
      }
      sec = two(sAt, 59);
      if (sec < 0) return std::nullopt;
    }
  } else {
    return std::nullopt;
  }
  int32_t total = h * 3600 + m * 60 + sec;
  if (total > 18 * 3600) return std::nullopt;
  return total;
}

std::optional<int32_t> parseSignedOffset(std::string_view s) {
  if (s.size() < 2 || (s[0] != '+' && s[0] != '-')) return std::nullopt;
  auto body = parseOffsetBody(s.substr(1));
  if (!body) return std::nullopt;
  return s[0] == '-' ? -*body : *body;
}

// Spark pads a one-digit hour before a colon (+1:00 is +01:00) before it asks
// java.time.
std::string padHour(std::string_view s) {
  std::string out(s);
  for (size_t i = 0; i + 2 < out.size(); ++i) {
    if ((out[i] == '+' || out[i] == '-') && isdigit(static_cast<unsigned char>(out[i + 1])) &&
        out[i + 2] == ':') {
      out.insert(i + 1, "0");
      break;
    }
  }
  return out;
}

const TimeZone* resolve(const std::string& name) {
  if (name == "Z") return new TimeZone("Z", nullptr, 0);
  if (auto off = parseSignedOffset(name)) return new TimeZone(offsetId(*off), nullptr, *off);
  for (std::string_view prefix : {"UTC", "GMT", "UT"}) {
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    std::string_view rest = std::string_view(name).substr(prefix.size());
    if (rest.empty()) return new TimeZone(std::string(prefix), nullptr, 0);
    auto off = parseSignedOffset(rest);
    if (!off) break;
    if (*off == 0) return new TimeZone(std::string(prefix), nullptr, 0);
    return new TimeZone(std::string(prefix) + offsetId(*off, false), nullptr, *off);
  }
  std::string_view region = name;
  for (const auto& [shortId, target] : kShortIds) {
    if (name == shortId) {
      if (auto off = parseSignedOffset(target))
        return new TimeZone(std::string(target), nullptr, *off);
      region = target;
    }
  }
  // A region id: letters first, then letters, digits and ~/._+- (ZoneRegion's
  // rule), looked up among the database's zones, never opened as a path.
  if (region.empty() || !isalpha(static_cast<unsigned char>(region[0])) || region.size() > 128)
    return nullptr;
  for (char c : region)
    if (!isalnum(static_cast<unsigned char>(c)) &&
        std::string_view("~/._+-").find(c) == std::string_view::npos)
      return nullptr;
  try {
    const date::time_zone* z = date::locate_zone(region);
    return new TimeZone(std::string(region), z, 0);
  } catch (const std::exception&) {
    return nullptr;
  }
}

thread_local const TimeZone* tScopedZone = nullptr;

}  // namespace

std::string offsetId(int64_t offsetSeconds, bool zeroAsZ) {
  if (offsetSeconds == 0 && zeroAsZ) return "Z";
  int64_t a = offsetSeconds < 0 ? -offsetSeconds : offsetSeconds;
  std::string s =
      fmt::format("{}{:02}:{:02}", offsetSeconds < 0 ? '-' : '+', a / 3600, a / 60 % 60);
  if (a % 60 != 0) s += fmt::format(":{:02}", a % 60);
  return s;
}

int64_t TimeZone::offsetSeconds(int64_t utcMicros) const {
  if (!zone_) return fixedSeconds_;
  return infoAt(*zone_, floorDiv(utcMicros, kMicrosPerSecond)).offset.count();
}

int64_t TimeZone::localFromUtc(int64_t utcMicros) const {
  int64_t out;
  if (__builtin_add_overflow(utcMicros, offsetSeconds(utcMicros) * kMicrosPerSecond, &out))
    return utcMicros;
  return out;
}

int64_t TimeZone::utcFromLocal(int64_t localMicros) const {
  int64_t out;
  if (!zone_) {
    if (__builtin_sub_overflow(localMicros, int64_t{fixedSeconds_} * kMicrosPerSecond, &out))
      return localMicros;
    return out;
  }
  // The offsets in force a day either side of the wall-clock time bracket
  // every transition near it (no zone moves more than a day at once).
  const int64_t local = floorDiv(localMicros, kMicrosPerSecond);
  const int64_t before = infoAt(*zone_, local - kSecondsPerDay).offset.count();
  const int64_t after = infoAt(*zone_, local + kSecondsPerDay).offset.count();
  int64_t offset;
  // The candidate instants for each offset, and whether each reads back as
  // this wall-clock time.
  const bool earlierFits = infoAt(*zone_, local - before).offset.count() == before;
  const bool laterFits = infoAt(*zone_, local - after).offset.count() == after;
  if (earlierFits && laterFits) {
    offset = std::max(before, after);  // an overlap: the earlier instant
  } else if (earlierFits) {
    offset = before;
  } else if (laterFits) {
    offset = after;
  } else {
    offset = before;  // a gap: forward by its length, so the offset from before it
  }
  if (__builtin_sub_overflow(localMicros, offset * kMicrosPerSecond, &out)) return localMicros;
  return out;
}

std::string TimeZone::abbreviation(int64_t utcMicros) const {
  if (!zone_) return fixedSeconds_ == 0 ? id_ : offsetId(fixedSeconds_);
  return infoAt(*zone_, floorDiv(utcMicros, kMicrosPerSecond)).abbrev;
}

bool TimeZone::isDaylight(int64_t utcMicros) const {
  if (!zone_) return false;
  const date::sys_info info = infoAt(*zone_, floorDiv(utcMicros, kMicrosPerSecond));
  // The TZif files keep only an is-DST flag, not the amount saved.
  const bool dst = info.save != std::chrono::minutes{0};
  // A period flagged otherwise than both its neighbours, whose offset sits on
  // the other side of theirs than the flag says, is a negative-DST zone's:
  // java.time's data (the tz database's rearguard form) has it the other way.
  const int64_t begin = info.begin.time_since_epoch().count();
  const int64_t end = info.end.time_since_epoch().count();
  if (begin <= kFirstSeconds || end >= kRulesEndSeconds) return dst;
  const date::sys_info before = infoAt(*zone_, begin - 1);
  const date::sys_info after = infoAt(*zone_, end);
  const bool beforeDst = before.save != std::chrono::minutes{0};
  const bool afterDst = after.save != std::chrono::minutes{0};
  if (beforeDst != dst && afterDst != dst && (info.offset > before.offset) != dst &&
      (info.offset > after.offset) != dst)
    return !dst;
  return dst;
}

std::string TimeZone::name(int64_t utcMicros, bool longName) const {
  if (zone_) {
    // A date_format call asks per row: the last zone's names are kept per
    // thread, so that rows do not queue on the names' lock.
    thread_local const TimeZone* lastZone = nullptr;
    thread_local const ZoneNames* lastNames = nullptr;
    if (lastZone != this) {
      lastNames = &cldrZoneNames(id_);
      lastZone = this;
    }
    const ZoneNames& names = *lastNames;
    const bool daylight = isDaylight(utcMicros);
    const std::string& cldr = longName ? (daylight ? names.longDaylight : names.longStandard)
                                       : (daylight ? names.shortDaylight : names.shortStandard);
    if (!cldr.empty()) return cldr;
  }
  return abbreviation(utcMicros);
}

const TimeZone& findTimeZone(std::string_view name, size_t pos) {
  static std::mutex mu;
  static std::map<std::string, std::unique_ptr<const TimeZone>, std::less<>> zones;
  std::string key = padHour(name);
  {
    std::lock_guard lock(mu);
    if (auto it = zones.find(key); it != zones.end()) return *it->second;
  }
  const TimeZone* z = name.size() <= 128 ? resolve(key) : nullptr;
  if (!z)
    throw SqlError(sqlstate::kInvalidParameterValue,
                   fmt::format("unknown time zone '{}'", name.substr(0, 128)), pos,
                   "a region such as 'Europe/Berlin', 'UTC', or an offset such as '+05:30'");
  // Another thread may have resolved the same zone meanwhile: then its copy
  // stays, and this one is freed with `owned` (try_emplace leaves it alone).
  // emplace would have freed it with the node it made, and again here.
  std::unique_ptr<const TimeZone> owned(z);
  std::lock_guard lock(mu);
  auto it = zones.try_emplace(key, std::move(owned)).first;
  return *it->second;
}

const TimeZone& utcTimeZone() {
  static const TimeZone utc("UTC", nullptr, 0);
  return utc;
}

const TimeZone& sessionTimeZone() {
  if (tScopedZone) return *tScopedZone;
  if (const PgSession* s = currentPgSession()) {
    std::string name = s->timeZone();
    if (!name.empty() && name != "UTC") {
      // Asked once per value a session sends (every TIMESTAMP is written in
      // its zone): the thread's last answer spares the registry's lock and
      // lookup. Zones are never freed, so the pointer stays valid.
      thread_local std::string lastName;
      thread_local const TimeZone* lastZone = nullptr;
      if (lastZone == nullptr || name != lastName) {
        lastZone = &findTimeZone(name);
        lastName = std::move(name);
      }
      return *lastZone;
    }
  }
  return utcTimeZone();
}

TimeZoneScope::TimeZoneScope(const TimeZone& zone) : previous_(tScopedZone) {
  tScopedZone = &zone;
}

TimeZoneScope::~TimeZoneScope() {
  tScopedZone = previous_;
}

namespace {

// Whether timestamp text names its own offset or zone after the time of day,
// which then wins over the zone it is read in.
bool namesOwnZone(std::string_view text) {
  size_t colon = text.find(':');
  if (colon == std::string_view::npos) return false;
  return text.find_first_of("+-Zz/UGu", colon) != std::string_view::npos;
}

}  // namespace

bool parseTimestampIn(std::string_view text, const TimeZone& zone, int64_t* micros) {
  if (!parseTimestamp(text, micros)) return false;
  if (!namesOwnZone(text)) *micros = zone.utcFromLocal(*micros);
  return true;
}

}  // namespace rtsql
