#include "common/day_time_interval.h"

#include <doctest/doctest.h>

#include <climits>
#include <cstdint>

using namespace rtsql;
using dt::DtField;

namespace {

constexpr int64_t kSecond = 1000000;
constexpr int64_t kMinute = 60 * kSecond;
constexpr int64_t kHour = 60 * kMinute;
constexpr int64_t kDay = 24 * kHour;

}  // namespace

// Spark 4.3's own text, from CAST(array(INTERVAL ...) AS STRING) in PySpark.
TEST_CASE("day-time interval: Spark's text of DAY TO SECOND") {
  const int64_t v = kDay + 2 * kHour + 3 * kMinute + 4 * kSecond + 500000;
  CHECK(dt::sparkText(v, DtField::Day, DtField::Second) == "INTERVAL '1 02:03:04.5' DAY TO SECOND");
  CHECK(dt::sparkText(-(kDay + 2 * kHour + 3 * kMinute + 4 * kSecond + 1), DtField::Day,
                      DtField::Second) == "INTERVAL '-1 02:03:04.000001' DAY TO SECOND");
  CHECK(dt::sparkText(0, DtField::Day, DtField::Second) == "INTERVAL '0 00:00:00' DAY TO SECOND");
  CHECK(dt::sparkText(3 * kHour, DtField::Day, DtField::Second) ==
        "INTERVAL '0 03:00:00' DAY TO SECOND");
}

TEST_CASE("day-time interval: the other ranges leave out the fields past their end") {
  CHECK(dt::sparkText(2 * kHour + 3 * kMinute, DtField::Hour, DtField::Minute) ==
        "INTERVAL '02:03' HOUR TO MINUTE");
  CHECK(dt::sparkText(3 * kHour + 59 * kSecond, DtField::Hour, DtField::Hour) == "INTERVAL '03' HOUR");
  CHECK(dt::sparkText(7 * kSecond, DtField::Second, DtField::Second) == "INTERVAL '07' SECOND");
  CHECK(dt::sparkText(10 * kMinute + 20 * kSecond, DtField::Minute, DtField::Second) ==
        "INTERVAL '10:20' MINUTE TO SECOND");
  CHECK(dt::sparkText(kDay + 2 * kHour, DtField::Day, DtField::Hour) == "INTERVAL '1 02' DAY TO HOUR");
  CHECK(dt::sparkText(-(2 * kDay), DtField::Day, DtField::Day) == "INTERVAL '-2' DAY");
  // The smallest BIGINT has a magnitude too.
  CHECK(dt::sparkText(INT64_MIN, DtField::Day, DtField::Second) ==
        "INTERVAL '-106751991 04:00:54.775808' DAY TO SECOND");
}
