// Time zones: a zone named as Spark names one (a region of the tz database
// such as Europe/Berlin, UTC, a fixed offset such as +05:30 or GMT-8, or one of
// Java's short ids such as PST), its offset from UTC at an instant, and the
// instant a wall-clock time in the zone stands for. Also the zone of the
// statement being bound, the session time zone (SET TIME ZONE): functions that
// read or print a TIMESTAMP in the session zone fold the zone into the
// expression when they are bound, as PgSession's functions fold the session.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

namespace date {
class time_zone;
}

namespace rtsql {

class TimeZone {
 public:
  // The zone's id as Spark prints it (VV, current_timezone()): the region
  // (America/Los_Angeles for PST too), UTC, or the offset (+05:30, Z).
  const std::string& id() const { return id_; }
  bool isUtc() const { return zone_ == nullptr && fixedSeconds_ == 0; }

  // The zone's offset from UTC, in seconds, at an instant (microseconds since
  // the Unix epoch).
  int64_t offsetSeconds(int64_t utcMicros) const;
  // The wall-clock time of an instant in this zone, as microseconds since
  // 1970-01-01 00:00 on that clock.
  int64_t localFromUtc(int64_t utcMicros) const;
  // The instant a wall-clock time in this zone stands for, resolved as
  // java.time (so Spark) resolves it: a time in a gap (the hour skipped when
  // clocks go forward) moves forward by the gap's length, a time in an overlap
  // (the hour repeated when clocks go back) takes the earlier offset.
  int64_t utcFromLocal(int64_t localMicros) const;
  // The zone's abbreviation at an instant (CET, CEST, PDT, IST), as the tz
  // database has it; the offset's text (+05:30) for a fixed offset.
  std::string abbreviation(int64_t utcMicros) const;
  // Whether an instant is in daylight-saving time as java.time tells it
  // (ZoneRules.isDaylightSavings): the period with the greater offset of a
  // zone's two alternating ones, also where the tz database marks the other
  // one as "negative" DST (Europe/Dublin's winter, Morocco's Ramadan).
  bool isDaylight(int64_t utcMicros) const;
  // The zone's name at an instant as Java's DateTimeFormatter prints it in
  // US English (Spark's date_format 'z' and 'zzzz'): CLDR's specific short
  // (PDT) or long (Pacific Daylight Time) name, from ICU (zone_names.h), where
  // CLDR has one; else the abbreviation above.
  std::string name(int64_t utcMicros, bool longName) const;

  TimeZone(std::string id, const date::time_zone* zone, int32_t fixedSeconds)
      : id_(std::move(id)), zone_(zone), fixedSeconds_(fixedSeconds) {}

 private:
  std::string id_;
  const date::time_zone* zone_;  // null for a fixed offset
  int32_t fixedSeconds_;
};

// The zone `name` names, as Spark's zone arguments take it. An unknown name
// or an offset past +-18:00 is a 22023 error at `pos`. The zones live as long
// as the process.
const TimeZone& findTimeZone(std::string_view name,
                             size_t pos = std::numeric_limits<size_t>::max());
const TimeZone& utcTimeZone();

// The session time zone of the statement being bound on this thread: the one
// a TimeZoneScope installed, else the PostgreSQL session's (its `timezone`
// setting), else UTC.
const TimeZone& sessionTimeZone();

// Installs `zone` as this thread's session zone for the life of the scope. A
// flow is planned under its own zone so that a session's SET TIME ZONE never
// changes what a flow computes.
class TimeZoneScope {
 public:
  explicit TimeZoneScope(const TimeZone& zone);
  ~TimeZoneScope();
  TimeZoneScope(const TimeZoneScope&) = delete;
  TimeZoneScope& operator=(const TimeZoneScope&) = delete;

 private:
  const TimeZone* previous_;
};

// Timestamp text read as parseTimestamp (common/json.h) reads it, a time
// without an offset or zone of its own after the time of day
// ("...12:00:00Z", "...12:00+01:00", "... UTC" have one) read as the wall
// clock in `zone`: Spark's TIMESTAMP literal, and its cast of text to
// TIMESTAMP, in the session time zone. False on bad text.
bool parseTimestampIn(std::string_view text, const TimeZone& zone, int64_t* micros);

// Offset text as java.time prints it: "+05:30" (with ":ss" when the offset
// has seconds), "Z" for zero when `zeroAsZ`.
std::string offsetId(int64_t offsetSeconds, bool zeroAsZ = true);

}  // namespace rtsql
