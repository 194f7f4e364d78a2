#include <doctest/doctest.h>

#include <string>

#include "common/json.h"

using namespace rtsql;

namespace {
std::string js(std::string_view s) {
  std::string out;
  appendJsonString(out, s);
  return out;
}
std::string jv(const Value& v, const DataTypePtr& t) {
  std::string out;
  appendJsonValue(out, v, *t);
  return out;
}
int64_t ts(std::string_view s) {
  int64_t us = 0;
  REQUIRE(parseTimestamp(s, &us));
  return us;
}
}  // namespace

TEST_CASE("json: string escaping") {
  CHECK(js("plain") == "\"plain\"");
  CHECK(js("a\"b\\c") == "\"a\\\"b\\\\c\"");
  CHECK(js("\n\t\r\b\f") == "\"\\n\\t\\r\\b\\f\"");
  CHECK(js(std::string_view("\x01\x1f\0", 3)) == "\"\\u0001\\u001f\\u0000\"");
  CHECK(js("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80") == "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
  CHECK(js("bad\xff") == "\"bad\\ufffd\"");      // not UTF-8
  CHECK(js("\xc3") == "\"\\ufffd\"");            // truncated sequence
  CHECK(js("/") == "\"/\"");
}

TEST_CASE("json: string escaping finds a special byte at any place of a long text") {
  // Plain runs are skipped many bytes at a time: each kind of byte that is
  // not copied as it is, at every offset around those steps, with text after
  // it of several lengths, must come out as the byte-by-byte rules say.
  const std::pair<std::string_view, std::string_view> special[] = {
      {"\"", "\\\""},       {"\\", "\\\\"},   {"\n", "\\n"},
      {"\x01", "\\u0001"}, {"\x1f", "\\u001f"}, {"\x7f", "\x7f"},
      {"\xc3\xa9", "\xc3\xa9"}, {"\xff", "\\ufffd"}, {std::string_view("\0", 1), "\\u0000"}};
  for (const auto& [in, escaped] : special) {
    for (size_t before = 0; before <= 40; ++before) {
      for (size_t after : {0, 1, 7, 15, 16, 17, 33}) {
        const std::string text = std::string(before, 'a') + std::string(in) + std::string(after, 'b');
        const std::string want =
            "\"" + std::string(before, 'a') + std::string(escaped) + std::string(after, 'b') + "\"";
        CHECK(js(text) == want);
      }
    }
  }
  // Two in one 16-byte step, and a kilobyte of plain text.
  CHECK(js("abc\"def\\ghijklmnop") == "\"abc\\\"def\\\\ghijklmnop\"");
  const std::string kilobyte(1200, 'x');
  CHECK(js(kilobyte) == "\"" + kilobyte + "\"");
}

TEST_CASE("json: values") {
  CHECK(jv(Value(), DataType::of(TypeId::String)) == "null");
  CHECK(jv(Value::integer(42), DataType::of(TypeId::Int)) == "42");
  CHECK(jv(Value::bigint(-9000000000LL), DataType::of(TypeId::BigInt)) == "-9000000000");
  CHECK(jv(Value::float64(1.5), DataType::of(TypeId::Double)) == "1.5");
  CHECK(jv(Value::float64(2.0), DataType::of(TypeId::Double)) == "2.0");
  CHECK(jv(Value::boolean(false), DataType::of(TypeId::Boolean)) == "false");
  CHECK(jv(Value::binary("hi!"), DataType::of(TypeId::Binary)) == "\"aGkh\"");
  CHECK(jv(Value::timestamp(ts("2024-05-01 10:00:00")), DataType::of(TypeId::Timestamp)) ==
        "\"2024-05-01T10:00:00.000Z\"");
  auto st = DataType::structOf({{"start", DataType::of(TypeId::Timestamp)}, {"n", DataType::of(TypeId::Int)}});
  CHECK(jv(Value::structure({Value::timestamp(0), Value::integer(3)}), st) ==
        "{\"start\":\"1970-01-01T00:00:00.000Z\",\"n\":3}");
  auto arr = DataType::arrayOf(DataType::of(TypeId::String));
  CHECK(jv(Value::array({Value::string("a"), Value()}), arr) == "[\"a\",null]");
}

TEST_CASE("json: row skips hidden columns") {
  Schema s{{{"id", DataType::of(TypeId::BigInt)},
            {"name", DataType::of(TypeId::String)},
            {"_offset", DataType::of(TypeId::BigInt), true}}};
  Row r{Value::bigint(1), Value::string("x\"y"), Value::bigint(99)};
  CHECK(rowToJson(r, s) == "{\"id\":1,\"name\":\"x\\\"y\"}");
  Row nulls{Value(), Value(), Value()};
  CHECK(rowToJson(nulls, s) == "{\"id\":null,\"name\":null}");
}

TEST_CASE("timestamp: formatting") {
  CHECK(formatTimestamp(0) == "1970-01-01 00:00:00");
  CHECK(formatTimestamp(1714557600123000LL) == "2024-05-01 10:00:00.123");
  CHECK(formatTimestamp(1714557600123456LL) == "2024-05-01 10:00:00.123456");
  CHECK(formatTimestamp(1714557600100000LL) == "2024-05-01 10:00:00.1");
  CHECK(formatTimestamp(1714557600123000LL, true) == "2024-05-01T10:00:00.123Z");
  CHECK(formatTimestamp(1714557600000000LL, true) == "2024-05-01T10:00:00.000Z");
  CHECK(formatTimestamp(1714557600000001LL, true) == "2024-05-01T10:00:00.000001Z");
  CHECK(formatTimestamp(-1) == "1969-12-31 23:59:59.999999");
  CHECK(formatTimestamp(951782400000000LL) == "2000-02-29 00:00:00");
}

TEST_CASE("timestamp: parsing") {
  CHECK(ts("2024-05-01 10:00:00") == 1714557600000000LL);
  CHECK(ts("2024-05-01T10:00:00Z") == 1714557600000000LL);
  CHECK(ts("2024-05-01T10:00:00.123Z") == 1714557600123000LL);
  CHECK(ts("2024-05-01 10:00:00.123456") == 1714557600123456LL);
  CHECK(ts("2024-05-01 10:00:00.1234567") == 1714557600123456LL);
  CHECK(ts("2024-05-01") == 1714521600000000LL);
  CHECK(ts("2024-05") == ts("2024-05-01"));
  CHECK(ts("2024-5-1 10:00") == 1714557600000000LL);
  CHECK(ts("2024-05-01T12:00:00+02:00") == 1714557600000000LL);
  CHECK(ts("2024-05-01T05:30:00-0430") == 1714557600000000LL);
  CHECK(ts("2024-05-01 10:00:00 UTC") == 1714557600000000LL);
  CHECK(ts("  2024-05-01 10:00:00  ") == 1714557600000000LL);
  int64_t us;
  CHECK_FALSE(parseTimestamp("", &us));
  CHECK_FALSE(parseTimestamp("hello", &us));
  CHECK_FALSE(parseTimestamp("2024-13-01", &us));
  CHECK_FALSE(parseTimestamp("2023-02-29", &us));
  CHECK_FALSE(parseTimestamp("2024-05-01 25:00:00", &us));
  CHECK_FALSE(parseTimestamp("2024-05-01 10:00:00 junk", &us));
  CHECK_FALSE(parseTimestamp("2024-05-01 10", &us));
}

TEST_CASE("date: text to a day number as Spark casts it, and back") {
  auto day = [](const char* s) {
    int64_t d = 0;
    REQUIRE(parseDate(s, &d));
    return d;
  };
  CHECK(day("1970-01-01") == 0);
  CHECK(day("2024-02-29") == 19782);
  CHECK(day(" 2024-2-29 ") == 19782);
  CHECK(day("2024-02-29 13:45:07") == 19782);
  CHECK(day("2024-02-29T13:45:07Z") == 19782);
  CHECK(day("2024") == day("2024-01-01"));
  CHECK(day("2024-03") == day("2024-03-01"));
  CHECK(day("0001-01-01") == -719162);
  CHECK(day("9999-12-31") == 2932896);
  int64_t d;
  CHECK_FALSE(parseDate("", &d));
  CHECK_FALSE(parseDate("not a date", &d));
  CHECK_FALSE(parseDate("2023-02-29", &d));
  CHECK_FALSE(parseDate("2024-13-01", &d));
  CHECK_FALSE(parseDate("24-01-01", &d));
  CHECK_FALSE(parseDate("2024-01-01x", &d));
  CHECK_FALSE(parseDate("2024 10:00", &d));
  CHECK(formatDate(19782) == "2024-02-29");
  CHECK(formatDate(-719162) == "0001-01-01");
  CHECK(formatDate(2932897) == "+10000-01-01");
}

TEST_CASE("timestamp: format/parse round trip") {
  for (int64_t us : {0LL, 1LL, -1LL, 1714557600123456LL, -86400000000LL * 365 * 100 + 7, 253402300799999999LL}) {
    int64_t back = 0;
    REQUIRE(parseTimestamp(formatTimestamp(us), &back));
    CHECK(back == us);
    REQUIRE(parseTimestamp(formatTimestamp(us, true), &back));
    CHECK(back == us);
  }
}
