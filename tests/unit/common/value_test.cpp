#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "common/schema.h"
#include "common/types.h"
#include "common/value.h"

using namespace rtsql;

TEST_CASE("types: singletons, nesting and SQL spelling") {
  CHECK(DataType::of(TypeId::BigInt) == DataType::of(TypeId::BigInt));
  CHECK(DataType::of(TypeId::BigInt)->toString() == "BIGINT");
  auto kv = DataType::structOf({{"key", DataType::of(TypeId::String)}, {"value", DataType::of(TypeId::Binary)}});
  auto headers = DataType::arrayOf(kv);
  CHECK(headers->toString() == "ARRAY<STRUCT<key: STRING, value: BINARY>>");
  CHECK(kv->fieldIndex("VALUE") == 1);
  CHECK(kv->fieldIndex("nope") == -1);
  auto kv2 = DataType::structOf({{"KEY", DataType::of(TypeId::String)}, {"value", DataType::of(TypeId::Binary)}});
  CHECK(kv->equals(*kv2));
  CHECK_FALSE(kv->equals(*DataType::structOf({{"key", DataType::of(TypeId::String)}})));
  CHECK_FALSE(DataType::arrayOf(DataType::of(TypeId::Int))->equals(*DataType::arrayOf(DataType::of(TypeId::BigInt))));
}

TEST_CASE("types: scalar names") {
  CHECK(scalarTypeFromName("varchar") == TypeId::String);
  CHECK(scalarTypeFromName("TEXT") == TypeId::String);
  CHECK(scalarTypeFromName("Integer") == TypeId::Int);
  CHECK(scalarTypeFromName("smallint") == TypeId::SmallInt);
  CHECK(scalarTypeFromName("LONG") == TypeId::BigInt);
  CHECK(scalarTypeFromName("float") == TypeId::Float);
  CHECK(scalarTypeFromName("REAL") == TypeId::Float);
  CHECK(scalarTypeFromName("bool") == TypeId::Boolean);
  CHECK(scalarTypeFromName("bytea") == TypeId::Binary);
  CHECK(scalarTypeFromName("DATE") == TypeId::Date);
  CHECK_FALSE(scalarTypeFromName("blob").has_value());
  CHECK(std::string(typeIdName(TypeId::Timestamp)) == "TIMESTAMP");
}

TEST_CASE("schema: case-insensitive find and text") {
  Schema s{{{"user_id", DataType::of(TypeId::String)}, {"Amount", DataType::of(TypeId::Double)}}};
  CHECK(s.find("USER_ID") == 0);
  CHECK(s.find("amount") == 1);
  CHECK(s.find("x") == -1);
  CHECK(s.toString() == "(user_id STRING, Amount DOUBLE)");
  CHECK(iequals("AbC", "aBc"));
  CHECK_FALSE(iequals("abc", "abd"));
  CHECK(toLower("MiXed") == "mixed");
  CHECK(toUpper("MiXed") == "MIXED");
}

TEST_CASE("value: ordering") {
  CHECK(Value().compare(Value::integer(1)) < 0);  // NULL first
  CHECK(Value().compare(Value()) == 0);
  CHECK(Value::integer(1) == Value::bigint(1));
  CHECK(Value::integer(1) == Value::float64(1.0));
  CHECK(Value::bigint(2).compare(Value::float64(1.5)) > 0);
  CHECK(Value::float64(1.5).compare(Value::bigint(2)) < 0);
  // Large integers compare exactly against doubles.
  CHECK(Value::bigint(9007199254740993LL).compare(Value::float64(9007199254740992.0)) > 0);
  double nan = std::numeric_limits<double>::quiet_NaN();
  CHECK(Value::float64(nan).compare(Value::float64(1e300)) > 0);
  CHECK(Value::float64(nan) == Value::float64(nan));
  CHECK(Value::float64(-0.0) == Value::float64(0.0));
  CHECK(Value::string("a").compare(Value::string("b")) < 0);
  CHECK(Value::string("\xc3\xa9").compare(Value::string("z")) > 0);  // bytes compare unsigned
  CHECK(Value::array({Value::integer(1), Value::integer(2)}).compare(Value::array({Value::integer(1)})) > 0);
  CHECK(Value::structure({Value::integer(1), Value::string("x")}) ==
        Value::structure({Value::bigint(1), Value::string("x")}));
  CHECK(Value::timestamp(5).compare(Value::timestamp(7)) < 0);
}

TEST_CASE("value: hash agrees with equality") {
  CHECK(Value::integer(7).hash() == Value::bigint(7).hash());
  CHECK(Value::integer(7).hash() == Value::float64(7.0).hash());
  CHECK(Value::float64(-0.0).hash() == Value::float64(0.0).hash());
  CHECK(Value::string("abc").hash() == Value::string("abc").hash());
  CHECK(Value::string("abc").hash() != Value::string("abd").hash());
  CHECK(Value::array({Value::integer(1)}).hash() == Value::array({Value::bigint(1)}).hash());
}

TEST_CASE("value: text as shown to users") {
  CHECK(Value().toString() == "NULL");
  CHECK(Value::boolean(true).toString() == "true");
  CHECK(Value::integer(-3).toString() == "-3");
  CHECK(Value::float64(1.0).toString() == "1.0");
  CHECK(Value::float64(0.1).toString() == "0.1");
  CHECK(Value::float64(1e20).toString() == "1.0E20");
  CHECK(Value::float64(1.5e-5).toString() == "1.5E-5");
  CHECK(Value::float64(1234567.0).toString() == "1234567.0");
  CHECK(Value::float64(-2.5).toString() == "-2.5");
  CHECK(Value::string("plain").toString() == "plain");
  CHECK(Value::binary(std::string("\x01\xab", 2)).toString() == "\\x01ab");
  CHECK(Value::timestamp(1714557600123000LL).toString() == "2024-05-01 10:00:00.123");
  CHECK(Value::interval(10000000).toString() == "00:00:10");
  CHECK(Value::interval(90061500000LL).toString() == "1 day 01:01:01.5");
  CHECK(Value::array({Value::integer(1), Value::integer(2)}).toString() == "[1, 2]");
  CHECK(Value::array({Value::integer(1), Value()}).toString() == "[1, null]");
  CHECK(Value::structure({Value::string("a"), Value::integer(2)}).toString() == "{a, 2}");
}

TEST_CASE("value: setString and setBinary replace any value, reusing a held string") {
  Value v = Value::bigint(3);
  v.setString("a text longer than the short-string buffer");
  CHECK(v == Value::string("a text longer than the short-string buffer"));
  v.setBinary("bytes");
  CHECK(v.type() == TypeId::Binary);
  CHECK(v.asString() == "bytes");
  v.setString(v.asString());  // its own text
  CHECK(v == Value::string("bytes"));
  Value list = Value::array({Value::integer(1)});
  list.setString("");
  CHECK(list == Value::string(""));
  CHECK(Value::null().isNull());
}

TEST_CASE("value: a wide DECIMAL is kept out of line, shared by copies, and moves like any value") {
  // 38 digits, past the 64-bit form: the two words live behind a pointer.
  const Int128 big = static_cast<Int128>(9999999999999999999ULL) * 10000000000000000000ULL + 9;
  Value a = Value::decimal(big, 38, 2);
  Value b = Value::decimal(-big, 38, 2);
  CHECK(a.asDecimal() == big);
  CHECK(b.asDecimal() == -big);
  CHECK(a.decimalPrecision() == 38);
  CHECK(a.decimalScale() == 2);
  Value copy = a;  // shares the words
  CHECK(copy == a);
  CHECK(copy.hash() == a.hash());
  a = Value::string("a text longer than the short-string buffer, replacing the decimal");
  CHECK(copy.asDecimal() == big);
  Value moved = std::move(copy);
  CHECK(moved.asDecimal() == big);
  moved = b;
  CHECK(moved.asDecimal() == -big);
  CHECK(moved.compare(Value::decimal(big, 38, 2)) < 0);
  // The 18-digit form stays inline, and both forms of one number are equal.
  Value narrow = Value::decimal(12345, 18, 2);
  CHECK(narrow.asDecimal() == 12345);
  CHECK(narrow == Value::decimal(12345, 20, 2));
  CHECK(Value::decimal(12345, 20, 2).toString() == "123.45");
  // Arrays still share the pointer the wide form uses.
  std::vector<Value> row{Value::array({Value::decimal(big, 38, 0), Value::integer(1)}), narrow};
  std::vector<Value> again = row;
  CHECK(again[0].asList()[0].asDecimal() == big);
  CHECK(again[0].asList()[1] == Value::integer(1));
  CHECK(sizeof(Value) <= 48);
}

TEST_CASE("value: a DATE is its day number, shown as yyyy-mm-dd") {
  CHECK(Value::date(0).toString() == "1970-01-01");
  CHECK(Value::date(19782).toString() == "2024-02-29");
  CHECK(Value::date(-719162).toString() == "0001-01-01");
  CHECK(Value::date(2932896).toString() == "9999-12-31");
  CHECK(Value::date(1).compare(Value::date(2)) < 0);
  CHECK(Value::date(7).hash() == Value::date(7).hash());
}
