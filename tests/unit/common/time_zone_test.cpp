// Time zones over the system's tz database: the names Spark takes, offsets at
// daylight-saving transitions and past the database's last one, wall-clock
// times in gaps and overlaps resolved as java.time does, the session zone a
// scope installs, and the functions that use them.
#include "common/time_zone.h"

#include <doctest/doctest.h>

#include "../sql_error_of.h"
#include "common/json.h"
#include "expr_test_util.h"

using namespace rtsql;
using namespace rtsql::test;

namespace {
int64_t at(const char* s) {
  int64_t us = 0;
  REQUIRE(parseTimestamp(s, &us));
  return us;
}
std::string text(int64_t us) {
  return formatTimestamp(us);
}
}  // namespace

TEST_CASE("time zones: names as Spark takes them; an unknown one is 22023") {
  CHECK(findTimeZone("Europe/Berlin").id() == "Europe/Berlin");
  CHECK(findTimeZone("PST").id() == "America/Los_Angeles");
  CHECK(findTimeZone("EST").id() == "-05:00");
  CHECK(findTimeZone("+5:30").id() == "+05:30");
  CHECK(findTimeZone("-0800").offsetSeconds(0) == -8 * 3600);
  CHECK(findTimeZone("GMT+1").id() == "GMT+01:00");
  CHECK(findTimeZone("UTC").isUtc());
  CHECK(findTimeZone("Z").id() == "Z");
  for (const char* bad : {"Nope/Zone", "europe/berlin", "+19:00", "../../etc/passwd", "", "GMT+x",
                          "/etc/localtime"}) {
    SqlError e = testing::sqlErrorOf([&] { findTimeZone(bad, 7); });
    CHECK(e.sqlstate() == std::string(sqlstate::kInvalidParameterValue));
    CHECK(e.position() == 7);
  }
}

TEST_CASE("time zones: offsets at transitions, before the first and after the last") {
  const TimeZone& berlin = findTimeZone("Europe/Berlin");
  CHECK(berlin.offsetSeconds(at("2024-03-31 00:59:59")) == 3600);
  CHECK(berlin.offsetSeconds(at("2024-03-31 01:00:00")) == 7200);
  CHECK(berlin.abbreviation(at("2024-07-01 00:00:00")) == "CEST");
  // Local mean time before the zone's first rule, as java.time has it.
  CHECK(berlin.offsetSeconds(at("1890-01-01 00:00:00")) == 3208);
  // Past 2037 the current rule goes on: summer time in 2060 and 9999.
  CHECK(berlin.offsetSeconds(at("2060-07-01 12:00:00")) == 7200);
  CHECK(berlin.offsetSeconds(at("2060-12-01 12:00:00")) == 3600);
  CHECK(berlin.offsetSeconds(at("9999-07-01 12:00:00")) == 7200);
  CHECK(findTimeZone("Australia/Lord_Howe").offsetSeconds(at("2024-01-01 00:00:00")) == 11 * 3600);
  CHECK(findTimeZone("Australia/Lord_Howe").offsetSeconds(at("2024-07-01 00:00:00")) ==
        10 * 3600 + 1800);
  CHECK(findTimeZone("Asia/Kolkata").offsetSeconds(at("2024-07-01 00:00:00")) == 5 * 3600 + 1800);
}

// Each name here is Java 17's (DateTimeFormatter 'z' and 'zzzz', Locale.US).
TEST_CASE("time zones: names as Java prints them, CLDR's where it has them") {
  const TimeZone& berlin = findTimeZone("Europe/Berlin");
  CHECK(berlin.name(at("2024-07-01 00:00:00"), true) == "Central European Summer Time");
  CHECK(berlin.name(at("2024-12-31 23:30:00"), true) == "Central European Standard Time");
  // CLDR has no short name for Europe_Central in US English: the tz
  // database's abbreviation is Java's too.
  CHECK(berlin.name(at("2024-07-01 00:00:00"), false) == "CEST");
  const TimeZone& la = findTimeZone("America/Los_Angeles");
  CHECK(la.name(at("2024-03-31 01:30:00"), false) == "PDT");
  CHECK(la.name(at("2024-12-31 23:30:00"), true) == "Pacific Standard Time");
  // War time (the tz database's PWT) is daylight time for Java.
  CHECK(la.name(at("1945-06-15 12:00:00"), true) == "Pacific Daylight Time");
  CHECK(findTimeZone("PST").name(at("2024-07-01 00:00:00"), true) == "Pacific Daylight Time");
  CHECK(findTimeZone("Asia/Kolkata").name(at("2024-03-31 01:30:00"), true) ==
        "India Standard Time");
  const TimeZone& lordHowe = findTimeZone("Australia/Lord_Howe");
  CHECK(lordHowe.name(at("2024-03-31 01:30:00"), true) == "Lord Howe Daylight Time");
  CHECK(lordHowe.name(at("2024-07-01 00:00:00"), true) == "Lord Howe Standard Time");
  // Java's LHST is its own; CLDR has no short name, so the tz database's stands in.
  CHECK(lordHowe.name(at("2024-07-01 00:00:00"), false) == "+1030");
  // A fixed offset has no name but its offset.
  CHECK(findTimeZone("+05:30").name(0, true) == "+05:30");
}

TEST_CASE(
    "time zones: daylight time as java.time tells it, also where the tz database's DST is "
    "negative") {
  const TimeZone& dublin = findTimeZone("Europe/Dublin");
  // The tz database flags Dublin's winter (GMT) as DST, one hour back from
  // Irish Standard Time; java.time's data has the summer as daylight time.
  CHECK_FALSE(dublin.isDaylight(at("2024-01-15 12:00:00")));
  CHECK(dublin.isDaylight(at("2024-07-15 12:00:00")));
  CHECK(dublin.name(at("2024-07-15 12:00:00"), true) == "Irish Standard Time");
  CHECK(dublin.name(at("2024-01-15 12:00:00"), true) == "Greenwich Mean Time");
  // Morocco's +01 is daylight time for Java outside Ramadan.
  CHECK(findTimeZone("Africa/Casablanca").isDaylight(at("2024-01-15 12:00:00")));
  CHECK(findTimeZone("Europe/Berlin").isDaylight(at("2024-07-15 12:00:00")));
  CHECK_FALSE(findTimeZone("Europe/Berlin").isDaylight(at("2024-01-15 12:00:00")));
  CHECK_FALSE(findTimeZone("Asia/Kolkata").isDaylight(at("2024-01-15 12:00:00")));
  CHECK(findTimeZone("Europe/Berlin").isDaylight(at("2060-07-01 12:00:00")));
  CHECK_FALSE(findTimeZone("+02:00").isDaylight(0));
}

TEST_CASE(
    "time zones: a wall-clock time in a gap moves forward, in an overlap takes the earlier "
    "offset") {
  const TimeZone& berlin = findTimeZone("Europe/Berlin");
  CHECK(text(berlin.utcFromLocal(at("2024-03-31 02:30:00"))) == "2024-03-31 01:30:00");
  CHECK(text(berlin.utcFromLocal(at("2024-10-27 02:30:00"))) == "2024-10-27 00:30:00");
  CHECK(text(berlin.utcFromLocal(at("2024-06-01 12:00:00"))) == "2024-06-01 10:00:00");
  const TimeZone& la = findTimeZone("America/Los_Angeles");
  CHECK(text(la.utcFromLocal(at("2024-03-10 02:30:00"))) == "2024-03-10 10:30:00");
  CHECK(text(la.utcFromLocal(at("2024-11-03 01:30:00"))) == "2024-11-03 08:30:00");
  const TimeZone& howe = findTimeZone("Australia/Lord_Howe");
  CHECK(text(howe.utcFromLocal(at("2024-10-06 02:15:00"))) == "2024-10-05 15:45:00");
  CHECK(text(howe.utcFromLocal(at("2024-04-07 01:45:00"))) == "2024-04-06 14:45:00");
  CHECK(text(berlin.localFromUtc(at("2024-10-27 00:30:00"))) == "2024-10-27 02:30:00");
  // Bounds of the microsecond range stay in range.
  CHECK(berlin.localFromUtc(INT64_MAX) == INT64_MAX);
}

TEST_CASE("time zones: the session zone is a scope's, and functions fold it when bound") {
  CHECK(sessionTimeZone().isUtc());
  const int64_t t = at("2024-10-27 00:30:00");
  {
    TimeZoneScope scope(findTimeZone("Europe/Berlin"));
    CHECK(sessionTimeZone().id() == "Europe/Berlin");
    CHECK(call("hour", {lit(Value::timestamp(t))}) == Value::integer(2));
    CHECK(call("date_format", {lit(Value::timestamp(t)), litS("HH:mm z XXX VV")}) ==
          Value::string("02:30 CEST +02:00 Europe/Berlin"));
    CHECK(call("current_timezone", {}) == Value::string("Europe/Berlin"));
    Value parsed = call("to_timestamp", {litS("2024-03-31 02:30:00"), litS("yyyy-MM-dd HH:mm:ss")});
    CHECK(text(parsed.asInt()) == "2024-03-31 01:30:00");
  }
  CHECK(sessionTimeZone().isUtc());
  CHECK(call("hour", {lit(Value::timestamp(t))}) == Value::integer(0));
}

TEST_CASE("time zones: from_utc_timestamp, to_utc_timestamp, convert_timezone, make_timestamp") {
  auto tsLit = [](const char* s) { return lit(Value::timestamp(at(s))); };
  CHECK(text(call("from_utc_timestamp", {tsLit("2024-07-01 12:00:00"), litS("Asia/Kolkata")})
                 .asInt()) == "2024-07-01 17:30:00");
  CHECK(text(call("to_utc_timestamp", {tsLit("2024-03-31 02:30:00"), litS("Europe/Berlin")})
                 .asInt()) == "2024-03-31 01:30:00");
  CHECK(text(call("convert_timezone", {litS("Europe/Berlin"), litS("America/Los_Angeles"),
                                       tsLit("2021-12-06 00:00:00")})
                 .asInt()) == "2021-12-05 15:00:00");
  CHECK(text(call("make_timestamp", {litI(2024), litI(10), litI(27), litI(2), litI(30), litD(0),
                                     litS("Europe/Berlin")})
                 .asInt()) == "2024-10-27 00:30:00");
  SqlError e = testing::sqlErrorOf([&] {
    call("from_utc_timestamp", {tsLit("2024-07-01 12:00:00"), litS("Mars/Base")});
  });
  CHECK(e.sqlstate() == std::string(sqlstate::kInvalidParameterValue));
}
