// The avro decoder on hand-encoded datums: what it refuses before libavro
// reads a byte. (Every type against another implementation is in
// tests/e2e/test_avro.py; hostile bytes in tests/fuzz/avro_decoder_fuzz.cpp.)
#include <doctest/doctest.h>

#include <string>

#include "common/schema.h"
#include "connector_test_util.h"
#include "connectors/format/avro_schema.h"
#include "connectors/format/codec.h"

using namespace rtsql;

namespace {

// An Avro string: its zigzag varint length, then its bytes.
std::string avroString(const std::string& bytes) {
  std::string out;
  uint64_t v = static_cast<uint64_t>(bytes.size()) << 1;
  do {
    uint8_t b = v & 0x7f;
    v >>= 7;
    out += static_cast<char>(v ? b | 0x80 : b);
  } while (v);
  return out + bytes;
}

bool decode(RecordDecoder& d, const std::string& value, Row& row, std::string& error) {
  RecordView r;
  r.value = value.data();
  r.valueLen = value.size();
  return d.decode(r, row, error);
}

}  // namespace

TEST_CASE("avro decoder: a string that is not UTF-8 is a decode error naming why") {
  Schema s;
  s.columns.push_back({"s", testing::t(TypeId::String), false});
  auto d = makeDecoder(
      "avro", s,
      testing::opts({{"avro.schema",
                      R"({"type":"record","name":"r","fields":[{"name":"s","type":"string"}]})"}}));
  Row row;
  std::string error;
  REQUIRE_MESSAGE(decode(*d, avroString("chlo\xc3\xa9 \xe6\x97\xa5"), row, error), error);
  CHECK(row[0] == Value::string("chlo\xc3\xa9 \xe6\x97\xa5"));
  for (const char* bad : {"\xff", "ab\xc3", "\xc3\x28", "\xed\xa0\x80" /* a surrogate */,
                          "\xf4\x90\x80\x80" /* past U+10FFFF */, "\xc0\xaf" /* overlong */}) {
    error.clear();
    CHECK_FALSE(decode(*d, avroString(bad), row, error));
    CHECK_MESSAGE(error == "not an Avro datum of the schema: a string that is not valid UTF-8",
                  error);
  }
  // BYTES are bytes: no such check.
  auto b = makeDecoder(
      "avro", [] {
        Schema bs;
        bs.columns.push_back({"b", testing::t(TypeId::Binary), false});
        return bs;
      }(),
      testing::opts({{"avro.schema",
                      R"({"type":"record","name":"r","fields":[{"name":"b","type":"bytes"}]})"}}));
  REQUIRE(decode(*b, avroString(std::string("\xff\x00", 2)), row, error));
  CHECK(row[0] == Value::binary(std::string("\xff\x00", 2)));
}

// local-timestamp-* is a wall clock: a TIMESTAMP_NTZ column, read as written.
TEST_CASE("avro decoder: local-timestamp-micros and -millis are TIMESTAMP_NTZ") {
  Schema s;
  s.columns.push_back({"micros", testing::t(TypeId::TimestampNtz), false});
  s.columns.push_back({"millis", testing::t(TypeId::TimestampNtz), false});
  auto d = makeDecoder(
      "avro", s,
      testing::opts({{"avro.schema",
                      R"({"type":"record","name":"r","fields":[)"
                      R"({"name":"micros","type":{"type":"long","logicalType":"local-timestamp-micros"}},)"
                      R"({"name":"millis","type":{"type":"long","logicalType":"local-timestamp-millis"}}]})"}}));
  // zigzag varints of 3 (micros) and 2 (millis).
  Row row;
  std::string error;
  REQUIRE_MESSAGE(decode(*d, std::string("\x06\x04", 2), row, error), error);
  CHECK(row[0].type() == TypeId::TimestampNtz);
  CHECK(row[0].asInt() == 3);
  CHECK(row[1].type() == TypeId::TimestampNtz);
  CHECK(row[1].asInt() == 2000);
}

// A float is a FLOAT, as Spark reads it; a column declared DOUBLE over it (a
// source declared before, or a flow recorded before: planner/format_floats.h)
// reads it as a DOUBLE, nested ones too.
TEST_CASE("avro decoder: a float is a FLOAT column, or a DOUBLE one declared so") {
  const std::string schema =
      R"({"type":"record","name":"r","fields":[{"name":"f","type":"float"},)"
      R"({"name":"s","type":{"type":"record","name":"in","fields":)"
      R"([{"name":"g","type":"float"}]}}]})";
  auto avro = format::AvroSchema::parse(schema, 0);
  Schema columns = format::avroSourceColumns(*avro, Schema{}, {}, 0);
  REQUIRE(columns.columns.size() == 2);
  CHECK(columns.columns[0].type->id == TypeId::Float);
  CHECK(columns.columns[1].type->toString() == "STRUCT<g: FLOAT>");
  // 0.1f little-endian twice: the field and the nested one.
  const std::string datum("\xcd\xcc\xcc\x3d\xcd\xcc\xcc\x3d", 8);
  Row row;
  std::string error;
  auto d = makeDecoder("avro", columns, testing::opts({{"avro.schema", schema}}));
  REQUIRE_MESSAGE(decode(*d, datum, row, error), error);
  CHECK(row[0].type() == TypeId::Float);
  CHECK(row[0] == Value::float32(0.1f));
  CHECK(row[1].asList()[0] == Value::float32(0.1f));

  Schema declared;
  declared.columns.push_back({"f", testing::t(TypeId::Double), false});
  declared.columns.push_back(
      {"s", DataType::structOf({{"g", testing::t(TypeId::Double)}}), false});
  Schema widened = format::avroSourceColumns(*avro, declared, {0, 0}, 0);
  auto w = makeDecoder("avro", widened, testing::opts({{"avro.schema", schema}}));
  REQUIRE_MESSAGE(decode(*w, datum, row, error), error);
  CHECK(row[0] == Value::float64(static_cast<double>(0.1f)));
  CHECK(row[1].asList()[0] == Value::float64(static_cast<double>(0.1f)));
  // Any other type over a float is still refused.
  Schema wrong;
  wrong.columns.push_back({"f", testing::t(TypeId::BigInt), false});
  CHECK_THROWS_AS(format::avroSourceColumns(*avro, wrong, {0}, 0), SqlError);
}
