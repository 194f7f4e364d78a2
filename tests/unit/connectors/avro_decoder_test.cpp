// The avro decoder on hand-encoded datums: what it refuses before libavro
// reads a byte. (Every type against another implementation is in
// tests/e2e/test_avro.py; hostile bytes in tests/fuzz/avro_decoder_fuzz.cpp.)
#include <doctest/doctest.h>

#include <string>

#include "common/schema.h"
#include "connector_test_util.h"
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
