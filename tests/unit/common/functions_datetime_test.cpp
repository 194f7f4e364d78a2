// Date functions on TIMESTAMP values, returning DATEs as in Spark: leap
// years, the Gregorian rules of centuries, and days before 1970 (negative
// epoch values).
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>

#include "common/ansi_mode.h"
#include "common/json.h"
#include "expr_test_util.h"

using namespace rtsql;
using namespace rtsql::test;

namespace {
ExprPtr ts(const char* s) {
  int64_t us = 0;
  REQUIRE(parseTimestamp(s, &us));
  return lit(Value::timestamp(us));
}
// A DATE result as yyyy-mm-dd; a TIMESTAMP one as Spark shows it.
std::string text(const Value& v) {
  if (v.type() == TypeId::Date) return formatDate(v.asInt());
  REQUIRE(v.type() == TypeId::Timestamp);
  return formatTimestamp(v.asInt());
}
}  // namespace

TEST_CASE("functions: date arithmetic across leap years and before 1970") {
  CHECK(text(call("date_add", {ts("2000-02-28"), litI(1)})) ==
        "2000-02-29");  // 2000 is leap
  CHECK(text(call("date_add", {ts("2100-02-28"), litI(1)})) ==
        "2100-03-01");  // 2100 is not
  CHECK(text(call("date_sub", {ts("1970-01-01 05:00:00"), litI(1)})) == "1969-12-31");
  CHECK(text(call("date_add", {ts("1969-12-31 23:59:59"), litI(0)})) == "1969-12-31");
  CHECK(text(call("date_sub", {ts("1600-03-01"), litI(1)})) == "1600-02-29");
  CHECK(call("datediff", {ts("1970-01-01"), ts("1969-12-31 23:59:59")}) == Value::integer(1));
  CHECK(call("datediff", {ts("2025-01-01"), ts("2024-01-01")}) == Value::integer(366));
  CHECK(call("datediff", {ts("1900-01-01"), ts("1901-01-01")}) == Value::integer(-365));
  CHECK(text(call("add_months", {ts("2024-02-29"), litI(12)})) == "2025-02-28");
  CHECK(text(call("add_months", {ts("2024-02-29"), litI(48)})) == "2028-02-29");
  CHECK(text(call("add_months", {ts("1969-01-31"), litI(-11)})) == "1968-02-29");
  CHECK(text(call("add_months", {ts("2024-12-15"), litI(1)})) == "2025-01-15");
  CHECK(text(call("add_months", {ts("2024-01-15"), litI(-1)})) == "2023-12-15");
  CHECK(text(call("last_day", {ts("1900-02-03")})) == "1900-02-28");
  CHECK(text(call("last_day", {ts("1960-02-03")})) == "1960-02-29");
  // unix_date takes a DATE; a TIMESTAMP is 42804, as Spark refuses it.
  CHECK(call("unix_date", {makeLiteral(Value::date(-1), DataType::of(TypeId::Date))}) == Value::integer(-1));
  CHECK_THROWS_AS(call("unix_date", {ts("1969-12-31 23:59:59")}), SqlError);
  CHECK(text(call("date_from_unix_date", {litI(-719162)})) == "0001-01-01");
}

TEST_CASE("functions: week and day numbers") {
  // ISO weeks: 2020-12-31 (Thursday) is week 53, 2021-01-04 week 1.
  CHECK(call("weekofyear", {ts("2020-12-31")}) == Value::integer(53));
  CHECK(call("weekofyear", {ts("2021-01-03")}) == Value::integer(53));
  CHECK(call("weekofyear", {ts("2021-01-04")}) == Value::integer(1));
  CHECK(call("weekofyear", {ts("2019-12-30")}) == Value::integer(1));
  CHECK(call("weekofyear", {ts("1969-12-29")}) == Value::integer(1));
  CHECK(call("weekday", {ts("1969-12-28")}) == Value::integer(6));  // a Sunday
  CHECK(call("dayofyear", {ts("2024-03-01")}) == Value::integer(61));
  CHECK(call("dayofyear", {ts("2023-03-01")}) == Value::integer(60));
  CHECK(call("quarter", {ts("1969-12-31")}) == Value::integer(4));
  CHECK(text(call("next_day", {ts("1969-12-31"), litS("Thu")})) == "1970-01-01");
  CHECK(text(call("next_day", {ts("1970-01-01"), litS("TH")})) == "1970-01-08");
  CHECK(text(call("trunc", {ts("1970-01-01"), litS("WEEK")})) == "1969-12-29");
}

TEST_CASE("functions: months_between and make_timestamp follow Spark") {
  // The legacy mode's NULLs (ANSI mode's errors: ansi_mode_test.cpp).
  AnsiModeScope legacy(false);
  CHECK(call("months_between", {ts("2024-03-31"), ts("2024-02-29")}) ==
        Value::float64(1.0));  // both month ends
  CHECK(call("months_between", {ts("2024-03-30"), ts("2024-02-29")}) == Value::float64(1.03225806));
  CHECK(call("months_between", {ts("1969-01-01"), ts("1970-01-01")}) == Value::float64(-12.0));
  CHECK(text(call("make_timestamp", {litI(1969), litI(12), litI(31), litI(23), litI(59),
                                     litD(59.999999)})) == "1969-12-31 23:59:59.999999");
  CHECK(
      call("make_timestamp", {litI(2023), litI(2), litI(29), litI(0), litI(0), litD(0)}).isNull());
  CHECK(
      call("make_timestamp", {litI(2024), litI(1), litI(1), litI(24), litI(0), litD(0)}).isNull());
  CHECK(
      call("make_timestamp", {litI(2024), litI(1), litI(1), litI(0), litI(0), litD(-1)}).isNull());
  CHECK(call("make_date", {litI(1900), litI(2), litI(29)}).isNull());
}

TEST_CASE("functions: date functions agree with a day-by-day calendar walk from 1899 to 2101") {
  // The reference counts days one at a time with the Gregorian rules, so it
  // shares no arithmetic with the functions it checks.
  auto leap = [](int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; };
  auto monthDays = [&](int y, int m) {
    static const int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return m == 2 && leap(y) ? 29 : kDays[m - 1];
  };
  auto dayCol = col(0, TypeId::Int);
  auto date = makeCall("date_from_unix_date", {dayCol}, 0);
  auto doy = makeCall("dayofyear", {date}, 0);
  auto wd = makeCall("weekday", {date}, 0);
  auto last = makeCall("unix_date", {makeCall("last_day", {date}, 0)}, 0);
  auto next = makeCall("unix_date", {makeCall("add_months", {date, litI(1)}, 0)}, 0);
  auto back = makeCall("unix_date", {date}, 0);
  int y = 1899, m = 12, d = 25, yday = 359;
  int64_t k = -25574;  // 1899-12-25
  for (; y < 2101; ++k) {
    Row row{Value::integer(static_cast<int32_t>(k))};
    INFO(y << "-" << m << "-" << d);
    REQUIRE(date->eval(row).toString() == fmt::format("{:04}-{:02}-{:02}", y, m, d));
    CHECK(doy->eval(row).asInt() == yday);
    CHECK(wd->eval(row).asInt() == ((k + 3) % 7 + 7) % 7);
    CHECK(last->eval(row).asInt() == k + (monthDays(y, m) - d));
    CHECK(back->eval(row).asInt() == k);
    // add_months(1): the same day next month, clamped to its end.
    int ny = m == 12 ? y + 1 : y, nm = m == 12 ? 1 : m + 1;
    int nd = std::min(d, monthDays(ny, nm));
    CHECK(next->eval(row).asInt() == k + (monthDays(y, m) - d) + nd);
    if (++d > monthDays(y, m)) {
      d = 1;
      if (++m > 12) {
        m = 1;
        ++y;
        yday = 0;
      }
    }
    ++yday;
  }
}
