#include "common/row_codec.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "common/error.h"
#include "common/types.h"
#include "common/value.h"

using namespace rtsql;

namespace {

std::string key(const Value& v) {
  std::string out;
  encodeKey(out, v);
  return out;
}

int sign(int c) {
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

// Same type at every level and equal by compare(); doubles also by sign bit so
// -0.0 survives a value round trip.
bool identical(const Value& a, const Value& b) {
  if (a.type() != b.type()) return false;
  if (a.type() == TypeId::Double) {
    double x = a.asDouble(), y = b.asDouble();
    if (std::isnan(x) || std::isnan(y)) return std::isnan(x) && std::isnan(y);
    return x == y && std::signbit(x) == std::signbit(y);
  }
  if (a.type() == TypeId::Array || a.type() == TypeId::Struct) {
    const auto& l = a.asList();
    const auto& r = b.asList();
    if (l.size() != r.size()) return false;
    for (size_t i = 0; i < l.size(); ++i)
      if (!identical(l[i], r[i])) return false;
    return true;
  }
  return a.compare(b) == 0;
}

// Every pair orders the same by Value::compare as by its encoded bytes.
void checkOrder(const std::vector<Value>& values) {
  std::vector<std::string> keys;
  for (const auto& v : values) keys.push_back(key(v));
  for (size_t i = 0; i < values.size(); ++i) {
    for (size_t j = 0; j < values.size(); ++j) {
      int byValue = sign(values[i].compare(values[j]));
      int byKey = sign(keys[i].compare(keys[j]));
      if (byValue != byKey) {
        FAIL_CHECK("order differs for " << values[i].toString() << " vs " << values[j].toString()
                                        << ": " << byValue << " by value, " << byKey << " by key");
        return;
      }
    }
  }
  // And sorting by bytes gives a compare()-sorted sequence.
  std::vector<size_t> idx(values.size());
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return keys[a] < keys[b]; });
  for (size_t i = 1; i < idx.size(); ++i) CHECK(values[idx[i - 1]].compare(values[idx[i]]) <= 0);
}

std::string randomBytes(std::mt19937_64& rng, size_t maxLen) {
  // A small alphabet including NUL and 0xFF makes prefixes, shared prefixes and
  // escapes frequent.
  static const char alphabet[] = {'\0', '\x01', 'a', 'b', '\xfe', '\xff'};
  std::string s(rng() % (maxLen + 1), ' ');
  for (auto& c : s) c = alphabet[rng() % sizeof(alphabet)];
  return s;
}

int64_t randomInt(std::mt19937_64& rng) {
  switch (rng() % 4) {
    case 0:
      return static_cast<int64_t>(rng());  // anywhere in the range
    case 1:
      return static_cast<int64_t>(rng() % 2001) - 1000;  // small, both signs
    case 2:
      return std::numeric_limits<int64_t>::min() + static_cast<int64_t>(rng() % 3);
    default:
      return std::numeric_limits<int64_t>::max() - static_cast<int64_t>(rng() % 3);
  }
}

double randomDouble(std::mt19937_64& rng) {
  static const double specials[] = {0.0,
                                    -0.0,
                                    std::numeric_limits<double>::infinity(),
                                    -std::numeric_limits<double>::infinity(),
                                    std::numeric_limits<double>::quiet_NaN(),
                                    -std::numeric_limits<double>::quiet_NaN(),
                                    std::numeric_limits<double>::denorm_min(),
                                    -std::numeric_limits<double>::denorm_min(),
                                    std::numeric_limits<double>::max(),
                                    std::numeric_limits<double>::lowest(),
                                    1.0,
                                    -1.0};
  switch (rng() % 3) {
    case 0:
      return specials[rng() % std::size(specials)];
    case 1:
      return std::uniform_real_distribution<double>(-10, 10)(rng);
    default:
      return std::ldexp(std::uniform_real_distribution<double>(-1, 1)(rng),
                        static_cast<int>(rng() % 600) - 300);
  }
}

Value randomScalar(std::mt19937_64& rng, TypeId t) {
  if (rng() % 10 == 0) return Value();
  switch (t) {
    case TypeId::Boolean:
      return Value::boolean(rng() % 2);
    case TypeId::Int:
      return Value::integer(static_cast<int32_t>(randomInt(rng)));
    case TypeId::BigInt:
      return Value::bigint(randomInt(rng));
    case TypeId::Double:
      return Value::float64(randomDouble(rng));
    case TypeId::String:
      return Value::string(randomBytes(rng, 4));
    case TypeId::Binary:
      return Value::binary(randomBytes(rng, 4));
    case TypeId::Timestamp:
      return Value::timestamp(randomInt(rng));
    case TypeId::Interval:
      return Value::interval(randomInt(rng));
    default:
      return Value();
  }
}

Value randomNested(std::mt19937_64& rng, int depth) {
  if (depth == 0 || rng() % 3 == 0)
    return randomScalar(rng, rng() % 2 ? TypeId::BigInt : TypeId::String);
  ValueList items(rng() % 4);
  for (auto& item : items) item = randomNested(rng, depth - 1);
  return rng() % 2 ? Value::array(std::move(items)) : Value::structure(std::move(items));
}

const TypeId kScalarTypes[] = {TypeId::Boolean,   TypeId::Int,     TypeId::BigInt,
                               TypeId::Double,    TypeId::String,  TypeId::Binary,
                               TypeId::Timestamp, TypeId::Interval};

}  // namespace

TEST_CASE("row codec: key order matches Value::compare for every scalar type") {
  std::mt19937_64 rng(42);
  for (TypeId t : kScalarTypes) {
    CAPTURE(typeIdName(t));
    std::vector<Value> values;
    for (int i = 0; i < 300; ++i) values.push_back(randomScalar(rng, t));
    checkOrder(values);
  }
}

TEST_CASE("row codec: key order of edge cases") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  checkOrder({Value(), Value::float64(-inf), Value::float64(-1e300), Value::float64(-1.5),
              Value::float64(-0.0), Value::float64(0.0), Value::float64(1e-310),
              Value::float64(2.5), Value::float64(inf), Value::float64(nan), Value::float64(-nan)});
  checkOrder({Value::string(""), Value::string(std::string("\0", 1)),
              Value::string(std::string("\0\0", 2)), Value::string(std::string("\0\x01", 2)),
              Value::string("\x01"), Value::string("a"), Value::string(std::string("a\0", 2)),
              Value::string(std::string("a\0b", 3)), Value::string("ab"), Value::string("b"),
              Value::string("\xff"), Value::string("\xff\xff"), Value()});
  checkOrder({Value::bigint(std::numeric_limits<int64_t>::min()), Value::bigint(-1),
              Value::integer(0), Value::bigint(0), Value::integer(1),
              Value::bigint(std::numeric_limits<int64_t>::max())});
  // Values of different types order by type, as compare() orders them (NULL first).
  checkOrder({Value(), Value::boolean(false), Value::boolean(true), Value::integer(-5),
              Value::bigint(7), Value::string(""), Value::binary(""), Value::timestamp(-1),
              Value::interval(0), Value::array({}), Value::structure({})});
  // A list sorts before its extensions, and NULL elements first.
  checkOrder({Value::array({}), Value::array({Value()}), Value::array({Value::bigint(1)}),
              Value::array({Value::bigint(1), Value()}),
              Value::array({Value::bigint(1), Value::bigint(2)}), Value::array({Value::bigint(2)}),
              Value::array({Value::string("")}), Value::array({Value::array({})})});
}

TEST_CASE("row codec: INT and BIGINT share an encoding; -0.0 and NaNs are normalised") {
  CHECK(key(Value::integer(1)) == key(Value::bigint(1)));
  CHECK(key(Value::integer(-7)) == key(Value::bigint(-7)));
  CHECK(key(Value::float64(-0.0)) == key(Value::float64(0.0)));
  CHECK(key(Value::float64(std::numeric_limits<double>::quiet_NaN())) ==
        key(Value::float64(-std::numeric_limits<double>::quiet_NaN())));
  CHECK(key(Value::timestamp(1)) != key(Value::bigint(1)));
  CHECK(key(Value()).size() == 1);
}

TEST_CASE("row codec: nested keys order like compare()") {
  std::mt19937_64 rng(7);
  std::vector<Value> values;
  for (int i = 0; i < 300; ++i) values.push_back(randomNested(rng, 3));
  checkOrder(values);
}

TEST_CASE("row codec: concatenated keys order as tuples") {
  // An operator's key is encodeKey(a) + encodeKey(b); a string prefix in `a`
  // must not let `b` decide the order.
  std::mt19937_64 rng(3);
  std::vector<std::pair<Value, Value>> tuples;
  for (int i = 0; i < 200; ++i)
    tuples.emplace_back(randomScalar(rng, TypeId::String), randomScalar(rng, TypeId::BigInt));
  for (const auto& [a1, b1] : tuples) {
    for (const auto& [a2, b2] : tuples) {
      int c = a1.compare(a2);
      if (c == 0) c = b1.compare(b2);
      std::string k1 = key(a1) + key(b1), k2 = key(a2) + key(b2);
      REQUIRE(sign(c) == sign(k1.compare(k2)));
    }
  }
}

TEST_CASE("row codec: key ints and key round trips") {
  const int64_t ints[] = {std::numeric_limits<int64_t>::min(), -1000000, -1, 0, 1, 1700000000000000,
                          std::numeric_limits<int64_t>::max()};
  std::string prev;
  for (int64_t v : ints) {
    std::string out;
    encodeKeyInt(out, v);
    CHECK(out.size() == 8);
    CHECK(prev < out);  // ascending integers give ascending bytes
    prev = out;
    std::string_view in = out;
    CHECK(decodeKeyInt(in) == v);
    CHECK(in.empty());
  }
  std::string_view shortInput("abc");
  CHECK_THROWS_AS(decodeKeyInt(shortInput), InternalError);

  std::mt19937_64 rng(11);
  for (TypeId t : kScalarTypes) {
    for (int i = 0; i < 200; ++i) {
      Value v = randomScalar(rng, t);
      std::string k = key(v);
      std::string_view in = k;
      Value back = decodeKey(in, *DataType::of(t));
      CHECK(in.empty());
      if (v.type() == TypeId::Double && v.asDouble() == 0.0) {
        CHECK(back.asDouble() == 0.0);  // -0.0 reads back as 0.0
      } else {
        CHECK_MESSAGE(identical(v, back), v.toString() << " read back as " << back.toString());
      }
    }
  }
  auto listType = DataType::arrayOf(DataType::of(TypeId::Int));
  Value list = Value::array({Value::integer(3), Value(), Value::integer(-4)});
  std::string k = key(list);
  std::string_view in = k;
  CHECK(identical(decodeKey(in, *listType), list));
}

TEST_CASE("row codec: value round trips for every type, nested and NULL") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<Value> values = {
      Value(),
      Value::boolean(true),
      Value::boolean(false),
      Value::integer(0),
      Value::integer(std::numeric_limits<int32_t>::min()),
      Value::integer(std::numeric_limits<int32_t>::max()),
      Value::bigint(std::numeric_limits<int64_t>::min()),
      Value::bigint(std::numeric_limits<int64_t>::max()),
      Value::bigint(-1),
      Value::float64(-0.0),
      Value::float64(3.25),
      Value::float64(nan),
      Value::float64(-std::numeric_limits<double>::infinity()),
      Value::string(""),
      Value::string(std::string("a\0b", 3)),
      Value::string(std::string(300, 'x')),
      Value::binary(std::string("\xff\0\x01", 3)),
      Value::timestamp(1700000000123456),
      Value::timestamp(-5),
      Value::interval(3600000000),
      Value::array({}),
      Value::array({Value::integer(1), Value(), Value::integer(3)}),
      Value::structure({Value::string("k"), Value::binary("v")}),
      Value::array({Value::structure({Value::string("key"), Value()}),
                    Value::structure({Value::string("key2"), Value::binary("val")})}),
  };
  for (const auto& v : values) {
    std::string out;
    encodeValue(out, v);
    std::string_view in = out;
    Value back = decodeValue(in, *DataType::of(TypeId::Null));
    CHECK_MESSAGE(identical(v, back), v.toString() << " read back as " << back.toString());
    CHECK(in.empty());
  }
  // Small integers are compact.
  std::string out;
  encodeValue(out, Value::bigint(-3));
  CHECK(out.size() == 2);

  std::mt19937_64 rng(5);
  for (int i = 0; i < 500; ++i) {
    Value v = randomNested(rng, 4);
    std::string enc;
    encodeValue(enc, v);
    std::string_view in = enc;
    REQUIRE(identical(decodeValue(in, *DataType::of(TypeId::Null)), v));
  }
}

TEST_CASE("row codec: rows round trip; truncated or mismatched input throws") {
  auto headersType = DataType::arrayOf(DataType::structOf(
      {{"key", DataType::of(TypeId::String)}, {"value", DataType::of(TypeId::Binary)}}));
  std::vector<DataTypePtr> types = {DataType::of(TypeId::BigInt), DataType::of(TypeId::String),
                                    DataType::of(TypeId::Double), headersType,
                                    DataType::of(TypeId::Timestamp)};
  Row row = {Value::bigint(42), Value(), Value::float64(-2.5),
             Value::array({Value::structure({Value::string("h"), Value::binary("x")})}),
             Value::timestamp(99)};
  std::string enc;
  encodeRow(enc, row);
  Row back = decodeRow(enc, types);
  REQUIRE(back.size() == row.size());
  for (size_t i = 0; i < row.size(); ++i) CHECK(identical(back[i], row[i]));

  Row empty;
  std::string encEmpty;
  encodeRow(encEmpty, empty);
  CHECK(decodeRow(encEmpty, {}).empty());

  CHECK_THROWS_AS(decodeRow(enc, {DataType::of(TypeId::BigInt)}), InternalError);
  for (size_t n = 0; n < enc.size(); ++n)
    CHECK_THROWS_AS(decodeRow(std::string_view(enc).substr(0, n), types), InternalError);
  CHECK_THROWS_AS(decodeRow(enc + "x", types), InternalError);

  std::string k;
  encodeKey(k, Value::array({Value::string("abc"), Value::float64(1)}));
  for (size_t n = 0; n < k.size(); ++n) {
    std::string_view in = std::string_view(k).substr(0, n);
    CHECK_THROWS_AS(decodeKey(in, *DataType::of(TypeId::Null)), InternalError);
  }
  std::string_view bad("\x7f");
  CHECK_THROWS_AS(decodeKey(bad, *DataType::of(TypeId::Null)), InternalError);
  std::string_view badValue("\x63");
  CHECK_THROWS_AS(decodeValue(badValue, *DataType::of(TypeId::Null)), InternalError);
}

namespace {

std::string hexOf(const std::string& bytes) {
  static const char* kDigits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out += kDigits[c >> 4];
    out += kDigits[c & 15];
  }
  return out;
}

std::string valueBytes(const Value& v) {
  std::string out;
  encodeValue(out, v);
  return hexOf(out);
}

}  // namespace

// Checkpoints hold these bytes: a change to any of them makes old state
// unreadable, so each type's encoding is pinned here, the old ones as they
// have always been and DECIMAL and DATE as they were added.
TEST_CASE("row codec: the bytes of every type's key and value encoding are pinned") {
  CHECK(hexOf(key(Value())) == "01");
  CHECK(hexOf(key(Value::boolean(true))) == "1001");
  CHECK(hexOf(key(Value::integer(1))) == "208000000000000001");
  CHECK(hexOf(key(Value::bigint(-1))) == "207fffffffffffffff");
  CHECK(hexOf(key(Value::float64(1.5))) == "28bff8000000000000");
  CHECK(hexOf(key(Value::string("a"))) == "30610001");
  CHECK(hexOf(key(Value::binary(std::string("\0", 1)))) == "3800ff0001");
  CHECK(hexOf(key(Value::timestamp(2))) == "408000000000000002");
  CHECK(hexOf(key(Value::interval(3))) == "488000000000000003");
  CHECK(hexOf(key(Value::array({Value::integer(1)}))) == "5020800000000000000100");
  CHECK(hexOf(key(Value::structure({Value::boolean(false)}))) == "58100000");
  CHECK(hexOf(key(Value::decimal(-150, 5, 2))) == "607fffffffffffffffffffffffffffff6a");
  CHECK(hexOf(key(Value::decimal(1, 38, 0))) == "6080000000000000000000000000000001");
  CHECK(hexOf(key(Value::date(19845))) == "688000000000004d85");
  CHECK(hexOf(key(Value::timestampNtz(5))) == "708000000000000005");

  CHECK(valueBytes(Value()) == "00");
  CHECK(valueBytes(Value::boolean(true)) == "0101");
  CHECK(valueBytes(Value::integer(-1)) == "0201");
  CHECK(valueBytes(Value::bigint(64)) == "038001");
  CHECK(valueBytes(Value::float64(1.5)) == "04000000000000f83f");
  CHECK(valueBytes(Value::string("ab")) == "05026162");
  CHECK(valueBytes(Value::binary("c")) == "060163");
  CHECK(valueBytes(Value::timestamp(1)) == "0702");
  CHECK(valueBytes(Value::interval(-2)) == "0803");
  CHECK(valueBytes(Value::array({Value::integer(1)})) == "09010202");
  CHECK(valueBytes(Value::structure({Value()})) == "0a0100");
  CHECK(valueBytes(Value::decimal(-150, 5, 2)) == "0b0502ab02");
  CHECK(valueBytes(Value::date(1)) == "0c02");
  CHECK(valueBytes(Value::timestampNtz(-3)) == "0d05");
}

// TINYINT, SMALLINT and FLOAT were added after the others: their value tags
// are their TypeIds (0x0e, 0x0f, 0x10); their keys are the integer and double
// keys, read back as the column's type.
TEST_CASE("row codec: the bytes of TINYINT, SMALLINT and FLOAT are pinned and round trip") {
  CHECK(hexOf(key(Value::tinyint(1))) == "208000000000000001");
  CHECK(hexOf(key(Value::smallint(-1))) == "207fffffffffffffff");
  CHECK(hexOf(key(Value::float32(1.5f))) == "28bff8000000000000");
  CHECK(valueBytes(Value::tinyint(-1)) == "0e01");
  CHECK(valueBytes(Value::smallint(64)) == "0f8001");
  CHECK(valueBytes(Value::float32(1.5f)) == "100000c03f");

  for (const Value& v : {Value::tinyint(-128), Value::tinyint(127), Value::smallint(-32768),
                         Value::smallint(32767), Value::float32(0.1f), Value::float32(-0.0f),
                         Value::float32(std::numeric_limits<float>::infinity())}) {
    CAPTURE(v.toString());
    std::string bytes;
    encodeValue(bytes, v);
    std::string_view in = bytes;
    Value back = decodeValue(in, *DataType::of(v.type()));
    CHECK(back.type() == v.type());
    CHECK(back.compare(v) == 0);
    std::string k = key(v);
    std::string_view kin = k;
    Value fromKey = decodeKey(kin, *DataType::of(v.type()));
    CHECK(fromKey.type() == v.type());
    CHECK(fromKey.compare(v) == 0);
  }
  // A float's value, not the nearest double's text: 0.1f prints as 0.1.
  CHECK(Value::float32(0.1f).toString() == "0.1");
  CHECK(Value::float32(0.1f).toDouble() == static_cast<double>(0.1f));
  CHECK(Value::float32(1e10f).toString() == "1.0E10");
  std::string truncatedFloat("\x10\x00\x00", 3);
  std::string_view tin = truncatedFloat;
  CHECK_THROWS(decodeValue(tin, *DataType::of(TypeId::Float)));
}

TEST_CASE("row codec: DECIMAL and DATE round trip, keys order by value") {
  auto big = Value::decimal(decimal::pow10(37) * 9 + 12345, 38, 4);
  for (const Value& v : {Value::decimal(-150, 5, 2), Value::decimal(0, 1, 0), big,
                         Value::decimal(-big.asDecimal(), 38, 4), Value::date(-719162), Value::date(2932896)}) {
    std::string enc;
    encodeValue(enc, v);
    std::string_view in = enc;
    Value back = decodeValue(in, v.type() == TypeId::Date ? *DataType::of(TypeId::Date)
                                                          : *DataType::decimal(v.decimalPrecision(), v.decimalScale()));
    CHECK(in.empty());
    CHECK(back.type() == v.type());
    CHECK(back.compare(v) == 0);
    CHECK(back.decimalPrecision() == v.decimalPrecision());
    CHECK(back.decimalScale() == v.decimalScale());
    std::string k = key(v);
    std::string_view kin = k;
    Value kback = decodeKey(kin, v.type() == TypeId::Date ? *DataType::of(TypeId::Date)
                                                          : *DataType::decimal(v.decimalPrecision(), v.decimalScale()));
    CHECK(kback.compare(v) == 0);
  }
  CHECK(key(Value::decimal(-2, 38, 4)) < key(Value::decimal(-1, 38, 4)));
  CHECK(key(Value::decimal(-1, 38, 4)) < key(Value::decimal(0, 38, 4)));
  CHECK(key(Value::decimal(1, 38, 4)) < key(big));
  // A precision byte out of range is corrupt input, not a crash.
  std::string bad("\x0b\x40\x00\x02", 4);
  std::string_view in = bad;
  CHECK_THROWS_AS(decodeValue(in, *DataType::decimal(10, 0)), InternalError);
}

// State written when DECIMAL was DOUBLE holds doubles in DECIMAL columns.
TEST_CASE("row codec: a DOUBLE read for a DECIMAL column comes back as that DECIMAL") {
  std::string enc;
  encodeValue(enc, Value::float64(12.345));
  std::string_view in = enc;
  Value v = decodeValue(in, *DataType::decimal(10, 2));
  CHECK(v.type() == TypeId::Decimal);
  CHECK(v.toString() == "12.35");
  std::string k = key(Value::float64(1e30));
  std::string_view kin = k;
  CHECK(decodeKey(kin, *DataType::decimal(10, 2)).isNull());
}


// State written when DATE was TIMESTAMP holds midnights in DATE columns.
TEST_CASE("row codec: a TIMESTAMP read for a DATE column comes back as its day") {
  const DataTypePtr date = DataType::of(TypeId::Date);
  std::string enc;
  encodeValue(enc, Value::timestamp(19782LL * 86400 * 1000000));  // 2024-02-29
  std::string_view in = enc;
  Value v = decodeValue(in, *date);
  CHECK(v.type() == TypeId::Date);
  CHECK(v.toString() == "2024-02-29");
  std::string k = key(Value::timestamp(-1));  // 1969-12-31 23:59:59.999999
  std::string_view kin = k;
  Value d = decodeKey(kin, *date);
  CHECK(d.type() == TypeId::Date);
  CHECK(d.toString() == "1969-12-31");
  // A TIMESTAMP column is read as it was written.
  std::string_view again = enc;
  CHECK(decodeValue(again, *DataType::of(TypeId::Timestamp)).type() == TypeId::Timestamp);
}

// MAP came after the pins above: its tag byte is its TypeId, 17, and its key
// tag 0x78; the bytes are pinned as they were added.
TEST_CASE("row codec: MAP bytes are pinned and round trip with their key and value types") {
  Value m = Value::map({Value::string("a"), Value::integer(1), Value::string("b"), Value()});
  CHECK(hexOf(key(Value::map({Value::string("a"), Value::integer(1)}))) ==
        "783061000120800000000000000100");
  CHECK(valueBytes(Value::map({Value::string("a"), Value::integer(1)})) == "11010501610202");

  auto type = DataType::mapOf(DataType::of(TypeId::String), DataType::of(TypeId::Int));
  std::string bytes;
  encodeValue(bytes, m);
  std::string_view in(bytes);
  Value back = decodeValue(in, *type);
  CHECK(in.empty());
  REQUIRE(back.type() == TypeId::Map);
  CHECK(back.asList().size() == 4);
  CHECK(back.compare(m) == 0);
  CHECK(back.toString() == "{a -> 1, b -> null}");

  std::string k = key(m);
  std::string_view kin(k);
  CHECK(decodeKey(kin, *type).compare(m) == 0);
  CHECK(kin.empty());

  // A count larger than the bytes left is corrupt input, not a huge allocation.
  std::string bad = "\x11\xff\xff\xff\x0f";
  std::string_view badIn(bad);
  CHECK_THROWS(decodeValue(badIn, *type));
}

// TIMESTAMP_NTZ (tag 13, key tag 0x70) round trips as itself; state written
// when TIMESTAMP_NTZ was a name of TIMESTAMP holds TIMESTAMPs in its columns.
TEST_CASE("row codec: TIMESTAMP_NTZ round trips; a TIMESTAMP read for it is its UTC wall clock") {
  const DataTypePtr ntz = DataType::of(TypeId::TimestampNtz);
  for (const Value& v : {Value::timestampNtz(0), Value::timestampNtz(-62135596800000000LL),
                         Value::timestampNtz(1710037800500000LL)}) {
    std::string enc;
    encodeValue(enc, v);
    std::string_view in = enc;
    Value back = decodeValue(in, *ntz);
    CHECK(in.empty());
    CHECK(back.type() == TypeId::TimestampNtz);
    CHECK(back.asInt() == v.asInt());
    std::string k = key(v);
    std::string_view kin = k;
    Value kback = decodeKey(kin, *ntz);
    CHECK(kback.type() == TypeId::TimestampNtz);
    CHECK(kback.asInt() == v.asInt());
  }
  CHECK(key(Value::timestampNtz(-1)) < key(Value::timestampNtz(0)));
  std::string enc;
  encodeValue(enc, Value::timestamp(1710037800000000LL));
  std::string_view in = enc;
  Value v = decodeValue(in, *ntz);
  CHECK(v.type() == TypeId::TimestampNtz);
  CHECK(v.toString() == "2024-03-10 02:30:00");
  std::string k = key(Value::timestamp(1710037800000000LL));
  std::string_view kin = k;
  CHECK(decodeKey(kin, *ntz).type() == TypeId::TimestampNtz);
}

// YEAR-MONTH INTERVAL was added after MAP: its value tag is its TypeId (0x12),
// its key tag 0x80, both followed by its months as the other integers are; no
// tag of an older type moved, so state written before it still reads.
TEST_CASE("row codec: the bytes of a YEAR-MONTH INTERVAL are pinned and round trip") {
  CHECK(hexOf(key(Value::yearMonthInterval(14))) == "80800000000000000e");
  CHECK(hexOf(key(Value::yearMonthInterval(-1))) == "807fffffffffffffff");
  CHECK(valueBytes(Value::yearMonthInterval(14)) == "121c");
  CHECK(valueBytes(Value::yearMonthInterval(-1)) == "1201");
  CHECK(key(Value::yearMonthInterval(-1)) < key(Value::yearMonthInterval(0)));
  for (const DataTypePtr& t : {DataType::of(TypeId::YearMonthInterval),
                               DataType::yearMonthInterval(YmField::Year, YmField::Year),
                               DataType::yearMonthInterval(YmField::Month, YmField::Month)}) {
    for (int32_t months : {0, 14, -14, INT32_MAX, INT32_MIN}) {
      const Value v = Value::yearMonthInterval(months);
      std::string bytes;
      encodeValue(bytes, v);
      std::string_view in = bytes;
      Value back = decodeValue(in, *t);
      CHECK(in.empty());
      CHECK(back.type() == TypeId::YearMonthInterval);
      CHECK(back.asInt() == months);
      std::string k = key(v);
      std::string_view kin = k;
      Value fromKey = decodeKey(kin, *t);
      CHECK(fromKey.type() == TypeId::YearMonthInterval);
      CHECK(fromKey.asInt() == months);
    }
  }
}
