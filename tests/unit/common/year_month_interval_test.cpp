#include "common/year_month_interval.h"

#include <doctest/doctest.h>

#include <climits>
#include <string>

#include "common/types.h"
#include "common/value.h"

using namespace rtsql;

namespace {

std::string pg(int64_t months) {
  std::string out;
  ym::appendPostgres(out, months);
  return out;
}

const YmField Y = YmField::Year;
const YmField M = YmField::Month;

}  // namespace

TEST_CASE("year-month interval: the three types, their names and equality") {
  auto ytm = DataType::of(TypeId::YearMonthInterval);
  CHECK(ytm->toString() == "INTERVAL YEAR TO MONTH");
  CHECK(DataType::yearMonthInterval(Y, M) == ytm);
  CHECK(DataType::yearMonthInterval(Y, Y)->toString() == "INTERVAL YEAR");
  CHECK(DataType::yearMonthInterval(M, M)->toString() == "INTERVAL MONTH");
  CHECK_FALSE(DataType::yearMonthInterval(Y, Y)->equals(*ytm));
  CHECK(DataType::yearMonthInterval(M, M)->equals(*DataType::yearMonthInterval(M, M)));
  CHECK(ym::intervalType("YEAR", "MONTH") == ytm);
  CHECK(ym::intervalType("month", "") == DataType::yearMonthInterval(M, M));
  CHECK(ym::intervalType("DAY", "SECOND")->id == TypeId::Interval);
  CHECK(ym::intervalType("HOUR", "")->id == TypeId::Interval);
  CHECK(ym::intervalType("MONTH", "YEAR") == nullptr);
  CHECK(ym::intervalType("YEAR", "YEAR") == nullptr);
  CHECK(ym::intervalType("YEAR", "DAY") == nullptr);
  CHECK(ym::intervalType("SECOND", "DAY") == nullptr);
}

TEST_CASE("year-month interval: Spark's text and PostgreSQL's") {
  CHECK(ym::sparkText(14, Y, M) == "INTERVAL '1-2' YEAR TO MONTH");
  CHECK(ym::sparkText(-5, Y, M) == "INTERVAL '-0-5' YEAR TO MONTH");
  CHECK(ym::sparkText(INT32_MIN, Y, M) == "INTERVAL '-178956970-8' YEAR TO MONTH");
  CHECK(ym::sparkText(INT32_MAX, Y, M) == "INTERVAL '178956970-7' YEAR TO MONTH");
  CHECK(ym::sparkText(-14, Y, Y) == "INTERVAL '-1' YEAR");
  CHECK(ym::sparkText(-5, Y, Y) == "INTERVAL '-0' YEAR");
  CHECK(ym::sparkText(-14, M, M) == "INTERVAL '-14' MONTH");
  CHECK(pg(14) == "1 year 2 mons");
  CHECK(pg(-14) == "-1 years -2 mons");
  CHECK(pg(1) == "1 mon");
  CHECK(pg(24) == "2 years");
  CHECK(pg(0) == "00:00:00");
  CHECK(Value::yearMonthInterval(-3).toString() == "-3 mons");
}

TEST_CASE("year-month interval: reading Spark's forms") {
  CHECK(ym::parse("1-2", Y, M) == 14);
  CHECK(ym::parse(" -1-2 ", Y, M) == -14);
  CHECK(ym::parse("+0-11", Y, M) == 11);
  CHECK(ym::parse("178956970-7", Y, M) == INT32_MAX);
  CHECK(ym::parse("-178956970-8", Y, M) == INT32_MIN);
  CHECK_FALSE(ym::parse("178956970-8", Y, M));
  CHECK_FALSE(ym::parse("1-12", Y, M));
  CHECK_FALSE(ym::parse("1", Y, M));
  CHECK_FALSE(ym::parse("x", Y, M));
  CHECK_FALSE(ym::parse("", Y, M));
  CHECK(ym::parse("3", Y, Y) == 36);
  CHECK(ym::parse("-178956970", Y, Y) == -2147483640);
  CHECK_FALSE(ym::parse("178956971", Y, Y));
  CHECK_FALSE(ym::parse("1-2", Y, Y));
  CHECK(ym::parse("2147483647", M, M) == INT32_MAX);
  CHECK(ym::parse("-2147483648", M, M) == INT32_MIN);
  CHECK_FALSE(ym::parse("2147483648", M, M));
  // The ANSI form, whose fields must be the type's.
  CHECK(ym::parse("INTERVAL '1-2' YEAR TO MONTH", Y, M) == 14);
  CHECK(ym::parse("interval -'-1-2' year to month", Y, M) == 14);
  CHECK(ym::parse("INTERVAL -'1-2' YEAR TO MONTH", Y, M) == -14);
  CHECK(ym::parse("INTERVAL '3' YEAR", Y, Y) == 36);
  CHECK(ym::parse("INTERVAL '14' MONTH", M, M) == 14);
  CHECK_FALSE(ym::parse("INTERVAL '3' YEAR", M, M));
  CHECK_FALSE(ym::parse("INTERVAL '1-2' YEAR TO MONTH", Y, Y));
  CHECK_FALSE(ym::parse("INTERVAL '1-2' YEAR", Y, M));
  CHECK_FALSE(ym::parse("INTERVAL '1-2", Y, M));
}
