// How values reach a PostgreSQL client (server/pg_values.h): the type each
// column type is declared as, and the text a client reads back by that type.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "server/pg_values.h"
#include "server/query_handler.h"

using namespace rtsql;

TEST_CASE("pg values: each column type is declared as the PostgreSQL type its text parses as") {
  CHECK(pgTypeOf(*DataType::of(TypeId::Boolean)) == pgtype::kBool);
  CHECK(pgTypeOf(*DataType::of(TypeId::Int)) == pgtype::kInt4);
  CHECK(pgTypeOf(*DataType::of(TypeId::BigInt)) == pgtype::kInt8);
  CHECK(pgTypeOf(*DataType::of(TypeId::Double)) == pgtype::kFloat8);
  CHECK(pgTypeOf(*DataType::of(TypeId::Binary)) == pgtype::kBytea);
  // TIMESTAMP is an instant shown in the session zone: timestamp with time zone.
  CHECK(pgTypeOf(*DataType::of(TypeId::Timestamp)) == pgtype::kTimestamptz);
  CHECK(pgTypeOf(*DataType::of(TypeId::Interval)) == pgtype::kInterval);
  CHECK(pgTypeOf(*DataType::decimal(12, 2)) == pgtype::kNumeric);
  CHECK(pgTypeOf(*DataType::of(TypeId::Date)) == pgtype::kDate);
  // TIMESTAMP_NTZ is PostgreSQL's timestamp without time zone.
  CHECK(pgTypeOf(*DataType::of(TypeId::TimestampNtz)) == pgtype::kTimestamp);
  // What has no PostgreSQL type of its own is sent as text.
  CHECK(pgTypeOf(*DataType::of(TypeId::String)) == pgtype::kText);
  CHECK(pgTypeOf(*DataType::arrayOf(DataType::of(TypeId::Int))) == pgtype::kText);
}

TEST_CASE("pg values: booleans are t/f, NULL is no text, the rest as rtsql writes them") {
  CHECK(pgTextOf(Value::boolean(true)) == "t");
  CHECK(pgTextOf(Value::boolean(false)) == "f");
  CHECK(!pgTextOf(Value()).has_value());
  CHECK(pgTextOf(Value::bigint(-42)) == "-42");
  CHECK(pgTextOf(Value::string("a b")) == "a b");
  CHECK(pgTextOf(Value::integer(7)) == Value::integer(7).toString());
  CHECK(pgTextOf(Value::timestamp(0)) == "1970-01-01 00:00:00+00");
  // numeric's text is every digit of the scale, never an exponent.
  CHECK(pgTextOf(Value::decimal(15626572, 12, 2)) == "156265.72");
  CHECK(pgTextOf(Value::decimal(-5, 12, 7)) == "-0.0000005");
  CHECK(pgTextOf(Value::date(19782)) == "2024-02-29");
  CHECK(pgTextOf(Value::timestampNtz(1710037800500000LL)) == "2024-03-10 02:30:00.5");
  // Past year 9999 without the '+' Spark's text has, before year 1 in BC, as
  // PostgreSQL's date and timestamp write them (10000-01-01, 0000-01-01).
  CHECK(Value::date(2932897).toString() == "+10000-01-01");
  CHECK(pgTextOf(Value::date(2932897)) == "10000-01-01");
  CHECK(pgTextOf(Value::timestampNtz(253402300800500000LL)) == "10000-01-01 00:00:00.5");
  CHECK(pgTextOf(Value::date(-719528)) == "0001-01-01 BC");
  CHECK(pgTextOf(Value::timestampNtz(-62167219200000000LL)) == "0001-01-01 00:00:00 BC");
}

TEST_CASE("pg values: a TIMESTAMP's text is PostgreSQL's timestamptz in the session zone") {
  const int64_t t = 1714993689250000LL;  // 2024-05-06 11:08:09.25 UTC
  CHECK(pgTimestamptzText(t, utcTimeZone()) == "2024-05-06 11:08:09.25+00");
  CHECK(pgTimestamptzText(t, findTimeZone("Europe/Berlin")) == "2024-05-06 13:08:09.25+02");
  CHECK(pgTimestamptzText(t, findTimeZone("Asia/Kolkata")) == "2024-05-06 16:38:09.25+05:30");
  CHECK(pgTimestamptzText(t, findTimeZone("America/St_Johns")) == "2024-05-06 08:38:09.25-02:30");
  // A local mean time has seconds in its offset (1890-01-01 00:00 UTC).
  CHECK(pgTimestamptzText(-2524521600000000LL, findTimeZone("America/St_Johns")) ==
        "1889-12-31 20:29:08-03:30:52");
  // Year 0 is 1 BC, as PostgreSQL writes it.
  CHECK(pgTimestamptzText(-62167219200000000LL, utcTimeZone()) == "0001-01-01 00:00:00+00 BC");
  CHECK(pgTimestamptzText(-62135596800000000LL, utcTimeZone()) == "0001-01-01 00:00:00+00");
  // A year past 9999 without the '+' Spark's text has (10000-01-01 00:00 UTC).
  CHECK(pgTimestamptzText(253402300800000000LL, utcTimeZone()) == "10000-01-01 00:00:00+00");
  {
    TimeZoneScope session(findTimeZone("Asia/Kolkata"));
    CHECK(pgTextOf(Value::timestamp(t)) == "2024-05-06 16:38:09.25+05:30");
    // A TIMESTAMP_NTZ is a wall clock: no zone, no offset.
    CHECK(pgTextOf(Value::timestampNtz(t)) == "2024-05-06 11:08:09.25");
  }
}

TEST_CASE("pg values: a catalog query's arrays are PostgreSQL's array types and text") {
  CHECK(pgArrayTypeOf(*DataType::arrayOf(DataType::of(TypeId::String))) == 1009);  // text[]
  CHECK(pgArrayTypeOf(*DataType::arrayOf(DataType::of(TypeId::Int))) == 1007);     // int4[]
  CHECK(pgArrayTypeOf(*DataType::arrayOf(DataType::of(TypeId::BigInt))) == 1016);  // int8[]
  CHECK(pgArrayTypeOf(*DataType::of(TypeId::Int)) == pgtype::kInt4);  // not an array: as it is
  CHECK(pgArrayTextOf(Value::array({Value::integer(1), Value::integer(2)})) == "{1,2}");
  CHECK(pgArrayTextOf(Value::array({})) == "{}");
  CHECK(!pgArrayTextOf(Value()).has_value());
  // Quoted where PostgreSQL's array_out quotes: empty, NULL as a word, the
  // syntax's characters and spaces; \ and " escaped. A NULL element is NULL.
  CHECK(pgArrayTextOf(Value::array({Value::string("user_id"), Value(), Value::string(""),
                                    Value::string("null"), Value::string("a b"),
                                    Value::string("x,\"y\\")})) ==
        R"({user_id,NULL,"","null","a b","x,\"y\\"})");
  CHECK(pgArrayTextOf(Value::array({Value::boolean(true)})) == "{t}");
  CHECK(pgArrayTextOf(Value::array({Value::array({Value::integer(1)}), Value::array({})})) ==
        "{{1},{}}");
}

TEST_CASE("pg values: the text pgTextOf writes in UTC reads back as the same value") {
  const std::vector<Value> values = {
      Value::boolean(true),        Value::boolean(false),
      Value::tinyint(-7),          Value::smallint(300),
      Value::integer(-2147483647), Value::bigint(int64_t{1} << 62),
      Value::float32(1.5f),        Value::float64(0.1),
      Value::float64(-2.5e-300),   Value::float64(1e300),
      Value::decimal(15626572, 12, 2), Value::decimal(-5, 12, 7),
      Value::string("a, b \"c\""), Value::string(""),
      Value::date(19782),          Value::date(-1000),
      Value::timestamp(0),         Value::timestamp(1710037800123456LL),
      Value::timestamp(-86400000001LL), Value::timestampNtz(1710037800500000LL)};
  for (const Value& v : values) {
    DataTypePtr type = v.type() == TypeId::Decimal
                           ? DataType::decimal(12, v.decimalScale())
                           : DataType::of(v.type());
    const std::optional<std::string> text = pgTextOf(v);
    REQUIRE(text);
    std::optional<Value> back = valueOfPgText(*text, *type);
    INFO(*text);
    REQUIRE(back);
    CHECK(back->compare(v) == 0);
    CHECK(back->type() == v.type());
  }
  const double nan = std::numeric_limits<double>::quiet_NaN();
  CHECK(std::isnan(valueOfPgText(*pgTextOf(Value::float64(nan)), *DataType::of(TypeId::Double))
                       ->asDouble()));
  // Text that is not such a value, and types whose text does not say all of it.
  CHECK(!valueOfPgText("x", *DataType::of(TypeId::BigInt)));
  CHECK(!valueOfPgText("true", *DataType::of(TypeId::Boolean)));
  CHECK(!valueOfPgText("1970-01-01 00:00:00", *DataType::of(TypeId::Timestamp)));
  CHECK(!valueOfPgText("1970-01-01 00:00:00+2", *DataType::of(TypeId::Timestamp)));
  CHECK(!valueOfPgText("1970-01-01 00:00:00+02:3", *DataType::of(TypeId::Timestamp)));
  CHECK(!valueOfPgText("1970-01-01 00:00:00+02:60", *DataType::of(TypeId::Timestamp)));
  CHECK(!valueOfPgText("1970-01-01 00:00:00+02:00:00:00", *DataType::of(TypeId::Timestamp)));
  CHECK(!pgTextReadable(*DataType::arrayOf(DataType::of(TypeId::Int))));
  CHECK(!pgTextReadable(*DataType::of(TypeId::Binary)));
  CHECK(!valueOfPgText("[1, 2]", *DataType::arrayOf(DataType::of(TypeId::Int))));
}

TEST_CASE("pg values: a timestamp written in any zone reads back as the same instant") {
  // A node of the cluster reads a view's rows from its holder in the
  // session's zone (server/views/view_remote.h): the offset says the instant.
  const DataTypePtr type = DataType::of(TypeId::Timestamp);
  const std::vector<int64_t> instants = {0, 1714993689250000LL, 1710037800123456LL,
                                         -2524521600000000LL, -86400000001LL};
  for (const char* zone : {"UTC", "Europe/Berlin", "Asia/Kolkata", "America/St_Johns",
                           "America/Los_Angeles", "Africa/Abidjan", "Europe/Amsterdam"}) {
    for (int64_t t : instants) {
      const std::string text = pgTimestamptzText(t, findTimeZone(zone));
      INFO(zone << " " << text);
      const std::optional<Value> back = valueOfPgText(text, *type);
      REQUIRE(back);
      CHECK(back->type() == TypeId::Timestamp);
      CHECK(back->asInt() == t);
    }
  }
  CHECK(valueOfPgText("2024-05-06 16:38:09.25+05:30", *type)->asInt() == 1714993689250000LL);
  CHECK(valueOfPgText("1970-01-01 00:00:00-00:01:15", *type)->asInt() == 75000000LL);
}
