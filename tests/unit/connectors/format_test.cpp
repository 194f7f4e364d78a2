#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "connector_test_util.h"
#include "common/error.h"
#include "common/json.h"
#include "connectors/format/codec.h"

using namespace rtsql;

namespace {

using testing::opts;
using testing::t;

Schema allTypesSchema() {
  Schema s;
  s.columns.push_back({"i", t(TypeId::Int), false});
  s.columns.push_back({"b", t(TypeId::BigInt), false});
  s.columns.push_back({"d", t(TypeId::Double), false});
  s.columns.push_back({"s", t(TypeId::String), false});
  s.columns.push_back({"flag", t(TypeId::Boolean), false});
  s.columns.push_back({"ts", t(TypeId::Timestamp), false});
  s.columns.push_back({"bin", t(TypeId::Binary), false});
  return s;
}

Schema withMeta(Schema s) {
  s.columns.push_back({kMetaKey, t(TypeId::Binary), true});
  s.columns.push_back({kMetaTimestamp, t(TypeId::Timestamp), true});
  s.columns.push_back({kMetaPartition, t(TypeId::Int), true});
  s.columns.push_back({kMetaOffset, t(TypeId::BigInt), true});
  s.columns.push_back(
      {kMetaHeaders,
       DataType::arrayOf(DataType::structOf({{"key", t(TypeId::String)}, {"value", t(TypeId::Binary)}})),
       true});
  return s;
}

RecordView view(const std::string& value) {
  RecordView r;
  r.value = value.data();
  r.valueLen = value.size();
  return r;
}

struct Decoded {
  bool ok;
  Row row;
  std::string error;
};

Decoded decodeWith(RecordDecoder& d, const std::string& value) {
  Decoded out;
  out.ok = d.decode(view(value), out.row, out.error);
  return out;
}

int64_t ts(const char* text) {
  int64_t micros = 0;
  REQUIRE(parseTimestamp(text, &micros));
  return micros;
}

}  // namespace

TEST_CASE("json decoder: every scalar type") {
  auto d = makeDecoder("json", allTypesSchema(), Options());
  auto r = decodeWith(*d, R"({"i": 42, "b": 9007199254740993, "d": 2.5, "s": "h\u00e9\"llo",
      "flag": true, "ts": "2024-05-01T10:00:00Z", "bin": "aGk="})");
  REQUIRE_MESSAGE(r.ok, r.error);
  REQUIRE(r.row.size() == 7);
  CHECK(r.row[0] == Value::integer(42));
  CHECK(r.row[0].type() == TypeId::Int);
  CHECK(r.row[1] == Value::bigint(9007199254740993LL));
  CHECK(r.row[2] == Value::float64(2.5));
  CHECK(r.row[3] == Value::string("h\xC3\xA9\"llo"));
  CHECK(r.row[4] == Value::boolean(true));
  CHECK(r.row[5] == Value::timestamp(ts("2024-05-01 10:00:00")));
  CHECK(r.row[6] == Value::binary("hi"));
}

TEST_CASE("json decoder: missing fields and nulls are NULL, unknown fields ignored, names case-insensitive") {
  auto d = makeDecoder("json", allTypesSchema(), Options());
  auto r = decodeWith(*d, R"({"extra": {"deep": [1, 2, {"x": null}]}, "I": 7, "s": null, "D": 1})");
  REQUIRE_MESSAGE(r.ok, r.error);
  CHECK(r.row[0] == Value::integer(7));
  CHECK(r.row[1].isNull());
  CHECK(r.row[2] == Value::float64(1.0));
  CHECK(r.row[2].type() == TypeId::Double);
  CHECK(r.row[3].isNull());
  for (size_t i = 4; i < 7; ++i) CHECK(r.row[i].isNull());
}

TEST_CASE("json decoder: an exact name wins over a case-insensitive one") {
  Schema s;
  s.columns.push_back({"Amount", t(TypeId::Int), false});
  auto d = makeDecoder("json", s, Options());
  auto r = decodeWith(*d, R"({"amount": 1, "Amount": 2})");
  REQUIRE(r.ok);
  CHECK(r.row[0] == Value::integer(2));
}

TEST_CASE("json decoder: a reused row never keeps a previous record's values") {
  Schema s;
  s.columns.push_back({"id", t(TypeId::BigInt), false});
  s.columns.push_back({"url", t(TypeId::String), false});
  s.columns.push_back({"tags", DataType::arrayOf(t(TypeId::String)), false});
  s.columns.push_back({"hidden", t(TypeId::String), true});
  s = withMeta(s);
  auto d = makeDecoder("json", s, Options());
  Row row;
  std::string error;
  const std::string first =
      R"({"id": 1, "url": "https://example.com/a/long/enough/path", "tags": ["a"], "hidden": "h"})";
  RecordView v1 = view(first);
  v1.offset = 10;
  REQUIRE(d->decode(v1, row, error));
  REQUIRE(row.size() == s.size());
  CHECK(row[1] == Value::string("https://example.com/a/long/enough/path"));
  CHECK(row[3].isNull());  // a hidden column is not read from the payload
  CHECK(row[7] == Value::bigint(10));

  // The same keys in another order, one missing, one null: the key cache by
  // position must not map them to the previous record's columns.
  const std::string second = R"({"url": "u2", "id": null})";
  RecordView v2 = view(second);
  v2.offset = 11;
  REQUIRE(d->decode(v2, row, error));
  CHECK(row[0].isNull());
  CHECK(row[1] == Value::string("u2"));
  CHECK(row[2].isNull());
  CHECK(row[7] == Value::bigint(11));

  // A key written with an escape, then the plain spelling at the same place.
  REQUIRE(d->decode(view(R"({"\u0069d": 3, "url": "x"})"), row, error));
  CHECK(row[0] == Value::bigint(3));
  REQUIRE(d->decode(view(R"({"id": 4})"), row, error));
  CHECK(row[0] == Value::bigint(4));
  CHECK(row[1].isNull());

  // A record that fails leaves a row the next good record fully refills.
  CHECK_FALSE(d->decode(view(R"({"id": "not a number", "url": "bad"})"), row, error));
  REQUIRE(d->decode(view(R"({"tags": ["b", "c"]})"), row, error));
  CHECK(row[0].isNull());
  CHECK(row[1].isNull());
  CHECK(row[2] == Value::array({Value::string("b"), Value::string("c")}));

  // A row the caller sized for another schema is resized.
  Row wide(20, Value::string("stale"));
  REQUIRE(d->decode(view(R"({"id": 5})"), wide, error));
  CHECK(wide.size() == s.size());
  CHECK(wide[1].isNull());
}

TEST_CASE("csv decoder: a reused row never keeps a previous record's values") {
  Schema s;
  s.columns.push_back({"id", t(TypeId::BigInt), false});
  s.columns.push_back({"url", t(TypeId::String), false});
  auto d = makeDecoder("csv", s, Options());
  Row row;
  std::string error;
  REQUIRE(d->decode(view("1,https://example.com/a/long/enough/path"), row, error));
  CHECK(row[1] == Value::string("https://example.com/a/long/enough/path"));
  REQUIRE(d->decode(view("2,"), row, error));
  CHECK(row[0] == Value::bigint(2));
  CHECK(row[1].isNull());
}

TEST_CASE("json decoder: timestamps from epoch millis, strings from other JSON values") {
  Schema s;
  s.columns.push_back({"ts", t(TypeId::Timestamp), false});
  s.columns.push_back({"s1", t(TypeId::String), false});
  s.columns.push_back({"s2", t(TypeId::String), false});
  s.columns.push_back({"s3", t(TypeId::String), false});
  auto d = makeDecoder("json", s, Options());
  auto r = decodeWith(*d, R"({"ts": 1714557600123, "s1": 12.5, "s2": {"a": [1,2]}, "s3": false})");
  REQUIRE_MESSAGE(r.ok, r.error);
  CHECK(r.row[0] == Value::timestamp(1714557600123LL * 1000));
  CHECK(r.row[1] == Value::string("12.5"));
  CHECK(r.row[2] == Value::string(R"({"a": [1,2]})"));
  CHECK(r.row[3] == Value::string("false"));
}

TEST_CASE("json decoder: nested struct and array") {
  Schema s;
  auto item = DataType::structOf({{"sku", t(TypeId::String)}, {"qty", t(TypeId::Int)}});
  s.columns.push_back({"items", DataType::arrayOf(item), false});
  s.columns.push_back({"geo", DataType::structOf({{"lat", t(TypeId::Double)}, {"lon", t(TypeId::Double)}}),
                       false});
  s.columns.push_back({"tags", DataType::arrayOf(t(TypeId::String)), false});
  auto d = makeDecoder("json", s, Options());
  auto r = decodeWith(*d, R"({"items": [{"sku": "a", "qty": 2}, {"QTY": 3}, null],
      "geo": {"lon": 2.35, "lat": 48.85, "alt": 35}, "tags": []})");
  REQUIRE_MESSAGE(r.ok, r.error);
  Value expectedItems = Value::array({Value::structure({Value::string("a"), Value::integer(2)}),
                                      Value::structure({Value(), Value::integer(3)}), Value()});
  CHECK(r.row[0] == expectedItems);
  CHECK(r.row[1] == Value::structure({Value::float64(48.85), Value::float64(2.35)}));
  CHECK(r.row[2] == Value::array({}));
}

TEST_CASE("json decoder: numbers given as strings are converted") {
  auto d = makeDecoder("json", allTypesSchema(), Options());
  auto r = decodeWith(*d, R"({"i": "12", "d": "3.5", "flag": "false"})");
  REQUIRE_MESSAGE(r.ok, r.error);
  CHECK(r.row[0] == Value::integer(12));
  CHECK(r.row[2] == Value::float64(3.5));
  CHECK(r.row[4] == Value::boolean(false));
}

TEST_CASE("json decoder: wrong types are errors naming the field and the expected type") {
  auto d = makeDecoder("json", allTypesSchema(), Options());
  struct Case {
    const char* json;
    const char* error;
  };
  const Case cases[] = {
      {R"({"d": "abc"})", R"(field 'd': expected DOUBLE, got "abc")"},
      {R"({"i": 1.5})", "field 'i': expected INT, got 1.5"},
      {R"({"i": 3000000000})", "field 'i': expected INT, got 3000000000"},
      {R"({"b": 99999999999999999999})", "field 'b': expected BIGINT, got 99999999999999999999"},
      {R"({"flag": 1})", "field 'flag': expected BOOLEAN, got 1"},
      {R"({"ts": "yesterday"})", R"(field 'ts': expected TIMESTAMP, got "yesterday")"},
      {R"({"bin": "***"})", R"(field 'bin': expected BINARY, got "***")"},
      {R"({"i": {"x": 1}})", "field 'i': expected INT, got an object"},
      {R"({"d": [1]})", "field 'd': expected DOUBLE, got an array"},
      {R"({"s": "ok", "i": true})", "field 'i': expected INT, got true"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.json);
    auto r = decodeWith(*d, c.json);
    CHECK_FALSE(r.ok);
    CHECK(r.error == c.error);
  }
}

TEST_CASE("json decoder: errors inside nested values carry the path") {
  Schema s;
  s.columns.push_back(
      {"items", DataType::arrayOf(DataType::structOf({{"qty", t(TypeId::Int)}})), false});
  auto d = makeDecoder("json", s, Options());
  auto r = decodeWith(*d, R"({"items": [{"qty": 1}, {"qty": "many"}]})");
  CHECK_FALSE(r.ok);
  CHECK(r.error == R"(field 'items[1].qty': expected INT, got "many")");
}

TEST_CASE("json decoder: invalid JSON, non-objects and tombstones") {
  auto d = makeDecoder("json", allTypesSchema(), Options());
  auto r = decodeWith(*d, R"({"i": 1, "s": tru})");
  CHECK_FALSE(r.ok);
  CHECK(r.error.rfind("invalid JSON at byte ", 0) == 0);

  r = decodeWith(*d, R"({"i": 1}})");
  CHECK_FALSE(r.ok);
  CHECK(r.error == "invalid JSON at byte 8: trailing content");

  r = decodeWith(*d, R"({"i": 1} xyz)");
  CHECK_FALSE(r.ok);
  CHECK(r.error.rfind("invalid JSON at byte ", 0) == 0);

  r = decodeWith(*d, R"({"i" 1})");
  CHECK_FALSE(r.ok);
  CHECK(r.error.rfind("invalid JSON at byte 5: ", 0) == 0);

  r = decodeWith(*d, "");
  CHECK_FALSE(r.ok);
  CHECK(r.error.rfind("invalid JSON at byte 0", 0) == 0);

  r = decodeWith(*d, "[1, 2]");
  CHECK_FALSE(r.ok);
  CHECK(r.error == "expected a JSON object, got an array");

  RecordView tomb;
  Row row;
  std::string error;
  CHECK_FALSE(d->decode(tomb, row, error));
  CHECK(error == "null value");

  // The decoder is reusable after a failure.
  r = decodeWith(*d, R"({"i": 5})");
  REQUIRE(r.ok);
  CHECK(r.row[0] == Value::integer(5));
}

TEST_CASE("json decoder: json.ignore-missing = false rejects missing fields") {
  Schema s;
  s.columns.push_back({"a", t(TypeId::Int), false});
  s.columns.push_back({"b", t(TypeId::Int), false});
  auto d = makeDecoder("json", s, opts({{"json.ignore-missing", "false"}}));
  auto r = decodeWith(*d, R"({"a": 1})");
  CHECK_FALSE(r.ok);
  CHECK(r.error == "field 'b' is missing");
  CHECK(decodeWith(*d, R"({"a": 1, "b": null})").ok);
}

TEST_CASE("json and csv decoders fill hidden metadata columns from the record") {
  Schema s;
  s.columns.push_back({"id", t(TypeId::BigInt), false});
  s = withMeta(s);
  std::vector<std::pair<std::string, std::string>> headers = {{"trace", "abc"}, {"empty", ""}};
  std::string key = "user-1";
  for (const char* format : {"json", "csv"}) {
    CAPTURE(format);
    auto d = makeDecoder(format, s, Options());
    std::string value = std::string(format) == "json" ? R"({"id": 3})" : "3";
    RecordView rec = view(value);
    rec.key = key.data();
    rec.keyLen = key.size();
    rec.partition = 4;
    rec.offset = 1234;
    rec.timestampMicros = 1714557600000000LL;
    rec.headers = &headers;
    Row row;
    std::string error;
    REQUIRE_MESSAGE(d->decode(rec, row, error), error);
    REQUIRE(row.size() == 6);
    CHECK(row[0] == Value::bigint(3));
    CHECK(row[1] == Value::binary("user-1"));
    CHECK(row[2] == Value::timestamp(1714557600000000LL));
    CHECK(row[3] == Value::integer(4));
    CHECK(row[4] == Value::bigint(1234));
    CHECK(row[5] == Value::array({Value::structure({Value::string("trace"), Value::binary("abc")}),
                                  Value::structure({Value::string("empty"), Value::binary("")})}));
    // No key and no header list: NULLs.
    RecordView bare = view(value);
    REQUIRE(d->decode(bare, row, error));
    CHECK(row[1].isNull());
    CHECK(row[5].isNull());
  }
}

TEST_CASE("json decoder: a payload field named like a metadata column does not override it") {
  Schema s = withMeta(Schema{});
  auto d = makeDecoder("json", s, Options());
  std::string value = R"({"_partition": 99})";
  RecordView rec = view(value);
  rec.partition = 2;
  Row row;
  std::string error;
  REQUIRE(d->decode(rec, row, error));
  CHECK(row[2] == Value::integer(2));
}

TEST_CASE("csv decoder: every scalar type, quotes, NULLs") {
  auto d = makeDecoder("csv", allTypesSchema(), Options());
  auto r = decodeWith(*d, "42,-7, 2.5 ,\"a, \"\"quoted\"\" text\",true,2024-05-01 10:00:00,raw\r\n");
  REQUIRE_MESSAGE(r.ok, r.error);
  CHECK(r.row[0] == Value::integer(42));
  CHECK(r.row[1] == Value::bigint(-7));
  CHECK(r.row[2] == Value::float64(2.5));
  CHECK(r.row[3] == Value::string("a, \"quoted\" text"));
  CHECK(r.row[4] == Value::boolean(true));
  CHECK(r.row[5] == Value::timestamp(ts("2024-05-01 10:00:00")));
  CHECK(r.row[6] == Value::binary("raw"));

  r = decodeWith(*d, ",,,,,,");
  REQUIRE(r.ok);
  for (const Value& v : r.row) CHECK(v.isNull());

  r = decodeWith(*d, "1,2,3,\"\",f,,\"\"");
  REQUIRE(r.ok);
  CHECK(r.row[3] == Value::string(""));
  CHECK(r.row[4] == Value::boolean(false));
  CHECK(r.row[6] == Value::binary(""));
}

TEST_CASE("csv decoder: bad records") {
  auto d = makeDecoder("csv", allTypesSchema(), Options());
  auto r = decodeWith(*d, "1,2,3");
  CHECK_FALSE(r.ok);
  CHECK(r.error == "expected 7 fields, got 3");
  r = decodeWith(*d, "1,2,x,s,true,,");
  CHECK_FALSE(r.ok);
  CHECK(r.error == R"(field 'd': expected DOUBLE, got "x")");
  r = decodeWith(*d, "2147483648,2,3,s,true,,");
  CHECK_FALSE(r.ok);
  CHECK(r.error == R"(field 'i': expected INT, got "2147483648")");
  r = decodeWith(*d, "1,2,3,\"open,true,,");
  CHECK_FALSE(r.ok);
  CHECK(r.error == "unterminated quoted field starting at byte 6");
  r = decodeWith(*d, "1,2,3,\"a\"b,true,,");
  CHECK_FALSE(r.ok);
  CHECK(r.error == "unexpected character after closing quote at byte 9");
}

TEST_CASE("csv decoder: delimiter option") {
  Schema s;
  s.columns.push_back({"a", t(TypeId::String), false});
  s.columns.push_back({"b", t(TypeId::Int), false});
  auto d = makeDecoder("csv", s, opts({{"csv.delimiter", ";"}}));
  auto r = decodeWith(*d, "x,y;5");
  REQUIRE(r.ok);
  CHECK(r.row[0] == Value::string("x,y"));
  CHECK(r.row[1] == Value::integer(5));
  auto tab = makeDecoder("csv", s, opts({{"csv.delimiter", "\\t"}}));
  r = decodeWith(*tab, "x\t6");
  REQUIRE(r.ok);
  CHECK(r.row[1] == Value::integer(6));
  try {
    makeDecoder("csv", s, opts({{"csv.delimiter", "::"}}));
    FAIL("expected an error");
  } catch (const SqlError& e) {
    CHECK(e.sqlstate() == "22023");
    CHECK(e.position() == 50);  // the value of the first option
  }
}

TEST_CASE("raw decoder: Spark's Kafka schema") {
  Schema s;
  s.columns.push_back({"key", t(TypeId::Binary), false});
  s.columns.push_back({"value", t(TypeId::Binary), false});
  s.columns.push_back({"topic", t(TypeId::String), false});
  s.columns.push_back({"partition", t(TypeId::Int), false});
  s.columns.push_back({"offset", t(TypeId::BigInt), false});
  s.columns.push_back({"timestamp", t(TypeId::Timestamp), false});
  s.columns.push_back({"timestampType", t(TypeId::Int), false});
  s.columns.push_back(
      {"headers",
       DataType::arrayOf(DataType::structOf({{"key", t(TypeId::String)}, {"value", t(TypeId::Binary)}})),
       false});
  auto d = makeDecoder("raw", s, Options());
  std::string key = "k1", value = std::string("v\0x", 3);
  std::vector<std::pair<std::string, std::string>> headers = {{"h", "1"}};
  RecordView rec;
  rec.key = key.data();
  rec.keyLen = key.size();
  rec.value = value.data();
  rec.valueLen = value.size();
  rec.topic = "clicks";
  rec.partition = 2;
  rec.offset = 77;
  rec.timestampMicros = 1000;
  rec.timestampType = 1;
  rec.headers = &headers;
  Row row;
  std::string error;
  REQUIRE(d->decode(rec, row, error));
  CHECK(row[0] == Value::binary("k1"));
  CHECK(row[1] == Value::binary(std::string("v\0x", 3)));
  CHECK(row[2] == Value::string("clicks"));
  CHECK(row[3] == Value::integer(2));
  CHECK(row[4] == Value::bigint(77));
  CHECK(row[5] == Value::timestamp(1000));
  CHECK(row[6] == Value::integer(1));
  CHECK(row[7] == Value::array({Value::structure({Value::string("h"), Value::binary("1")})}));

  // A tombstone without a key is a row with NULL key and value, not an error.
  RecordView tomb;
  tomb.topic = "clicks";
  REQUIRE(d->decode(tomb, row, error));
  CHECK(row[0].isNull());
  CHECK(row[1].isNull());
  CHECK(row[2] == Value::string("clicks"));

  // The reused row is refilled: nothing of the records before stays in it.
  std::string shortValue = "w";
  RecordView again;
  again.value = shortValue.data();
  again.valueLen = shortValue.size();
  again.topic = "c";
  REQUIRE(d->decode(again, row, error));
  CHECK(row[0].isNull());
  CHECK(row[1] == Value::binary("w"));
  CHECK(row[1].type() == TypeId::Binary);
  CHECK(row[2] == Value::string("c"));
  CHECK(row[7].isNull());
}

TEST_CASE("unknown formats are refused") {
  CHECK_THROWS_AS(makeDecoder("protobuf", Schema{}, Options()), SqlError);
  SinkSpec sink;
  sink.format = "protobuf";
  CHECK_THROWS_AS(makeEncoder(sink), SqlError);
}

TEST_CASE("json encoder: the row as an object, key column as text") {
  SinkSpec sink;
  sink.format = "json";
  sink.input.columns.push_back({"user", t(TypeId::String), false});
  sink.input.columns.push_back({"n", t(TypeId::BigInt), false});
  sink.input.columns.push_back({"avg", t(TypeId::Double), false});
  sink.input.columns.push_back({"secret", t(TypeId::String), true});
  sink.input.columns.push_back({"tags", DataType::arrayOf(t(TypeId::String)), false});
  sink.keyColumn = 0;
  auto e = makeEncoder(sink);
  EncodedRecord out;
  e->encode({Value::string("al\"ice"), Value::bigint(3), Value(), Value::string("x"),
             Value::array({Value::string("a")})},
            out);
  CHECK(out.hasValue);
  CHECK(out.value == R"({"user":"al\"ice","n":3,"avg":null,"tags":["a"]})");
  CHECK(out.hasKey);
  CHECK(out.key == "al\"ice");
  CHECK(out.headers.empty());
  CHECK(out.topic.empty());

  // A NULL key column gives no key; the buffers are reused without leftovers.
  e->encode({Value(), Value::bigint(4), Value::float64(1.5), Value(), Value()}, out);
  CHECK_FALSE(out.hasKey);
  CHECK(out.key.empty());
  CHECK(out.value == R"({"user":null,"n":4,"avg":1.5,"tags":null})");

  sink.keyColumn = 1;
  auto numericKey = makeEncoder(sink);
  numericKey->encode({Value::string("a"), Value::bigint(42), Value(), Value(), Value()}, out);
  CHECK(out.key == "42");

  sink.keyColumn = -1;
  auto noKey = makeEncoder(sink);
  noKey->encode({Value::string("a"), Value::bigint(42), Value(), Value(), Value()}, out);
  CHECK_FALSE(out.hasKey);
}

TEST_CASE("json encoder: several key columns give the key as a JSON object") {
  // A GROUP BY's group keys (SinkSpec::keyColumns, in GROUP BY order): the
  // key holds each of them as the value writes it, escapes included.
  SinkSpec sink;
  sink.format = "json";
  sink.input.columns.push_back({"pad", t(TypeId::String), false});
  sink.input.columns.push_back({"n", t(TypeId::BigInt), false});
  sink.input.columns.push_back({"ts_us", t(TypeId::BigInt), false});
  sink.input.columns.push_back({"secret", t(TypeId::String), true});
  sink.keyColumn = -1;
  sink.keyColumns = {2, 0};
  auto e = makeEncoder(sink);
  EncodedRecord out;
  const std::string pad = std::string(1200, 'x') + "\"\n";
  e->encode({Value::string(pad), Value::bigint(1), Value::bigint(1700000000000000), Value()}, out);
  const std::string padJson = "\"" + std::string(1200, 'x') + "\\\"\\n\"";
  CHECK(out.value == "{\"pad\":" + padJson + ",\"n\":1,\"ts_us\":1700000000000000}");
  CHECK(out.hasKey);
  CHECK(out.key == "{\"ts_us\":1700000000000000,\"pad\":" + padJson + "}");
  // The next row's key has nothing of this one's; a NULL key column is null.
  e->encode({Value::string("b"), Value::bigint(2), Value(), Value()}, out);
  CHECK(out.key == R"({"ts_us":null,"pad":"b"})");
  // A row narrower than the sink's columns: the missing ones are null in both.
  e->encode({Value::string("c")}, out);
  CHECK(out.value == R"({"pad":"c","n":null,"ts_us":null})");
  CHECK(out.key == R"({"ts_us":null,"pad":"c"})");

  // A hidden key column is not in the value: the key is written on its own.
  sink.keyColumns = {0, 3};
  auto hidden = makeEncoder(sink);
  hidden->encode({Value::string("a"), Value::bigint(1), Value::bigint(2), Value::string("s")}, out);
  CHECK(out.value == R"({"pad":"a","n":1,"ts_us":2})");
  CHECK(out.key == R"({"pad":"a","secret":"s"})");
}

TEST_CASE("raw encoder: value, key, headers, topic, tombstones") {
  SinkSpec sink;
  sink.format = "raw";
  sink.input.columns.push_back({"key", t(TypeId::String), false});
  sink.input.columns.push_back({"value", t(TypeId::Binary), false});
  sink.input.columns.push_back(
      {"headers",
       DataType::arrayOf(DataType::structOf({{"key", t(TypeId::String)}, {"value", t(TypeId::Binary)}})),
       false});
  sink.input.columns.push_back({"topic", t(TypeId::String), false});
  sink.valueColumn = 1;
  sink.headersColumn = 2;
  sink.topicColumn = 3;
  auto e = makeEncoder(sink);
  EncodedRecord out;
  e->encode({Value::string("k"), Value::binary(std::string("\x01\x00", 2)),
             Value::array({Value::structure({Value::string("h1"), Value::binary("v1")}),
                           Value::structure({Value::string("h2"), Value()})}),
             Value::string("other")},
            out);
  CHECK(out.hasKey);
  CHECK(out.key == "k");
  CHECK(out.hasValue);
  CHECK(out.value == std::string("\x01\x00", 2));
  REQUIRE(out.headers.size() == 2);
  CHECK(out.headers[0] == std::make_pair(std::string("h1"), std::string("v1")));
  CHECK(out.headers[1] == std::make_pair(std::string("h2"), std::string()));
  CHECK(out.topic == "other");

  e->encode({Value(), Value(), Value(), Value()}, out);
  CHECK_FALSE(out.hasKey);
  CHECK_FALSE(out.hasValue);  // tombstone
  CHECK(out.headers.empty());
  CHECK(out.topic.empty());

  // A STRING value column is sent as its bytes.
  SinkSpec textSink;
  textSink.format = "raw";
  textSink.input.columns.push_back({"value", t(TypeId::String), false});
  textSink.valueColumn = 0;
  auto text = makeEncoder(textSink);
  text->encode({Value::string("hello")}, out);
  CHECK(out.value == "hello");
  CHECK_FALSE(out.hasKey);
}

// A TIMESTAMP_NTZ is a wall clock: JSON and CSV read it from text (an offset
// read and left out) and write it as ISO text without an offset.
TEST_CASE("json and csv: a TIMESTAMP_NTZ column round trips as text without an offset") {
  Schema s;
  s.columns.push_back({"at", t(TypeId::TimestampNtz), false});
  auto json = makeDecoder("json", s, Options());
  auto r = decodeWith(*json, R"({"at":"2024-03-10T02:30:00.5+05:00"})");
  REQUIRE_MESSAGE(r.ok, r.error);
  CHECK(r.row[0].type() == TypeId::TimestampNtz);
  CHECK(r.row[0].toString() == "2024-03-10 02:30:00.5");
  auto csv = makeDecoder("csv", s, Options());
  r = decodeWith(*csv, "2024-03-10 02:30:00");
  REQUIRE_MESSAGE(r.ok, r.error);
  CHECK(r.row[0] == Value::timestampNtz(ts("2024-03-10 02:30:00")));

  SinkSpec sink;
  sink.format = "json";
  sink.input = s;
  EncodedRecord out;
  makeEncoder(sink)->encode({Value::timestampNtz(ts("2024-03-10 02:30:00.5"))}, out);
  CHECK(out.value == R"({"at":"2024-03-10T02:30:00.500"})");
  sink.format = "csv";
  makeEncoder(sink)->encode({Value::timestampNtz(ts("2024-03-10 02:30:00"))}, out);
  CHECK(out.value == "2024-03-10T02:30:00.000");
}

TEST_CASE("json and csv: TINYINT, SMALLINT and FLOAT columns round trip, out of range is an error") {
  for (const char* format : {"json", "csv"}) {
    CAPTURE(format);
    SinkSpec sink;
    sink.format = format;
    sink.input.columns.push_back({"t", t(TypeId::TinyInt), false});
    sink.input.columns.push_back({"s", t(TypeId::SmallInt), false});
    sink.input.columns.push_back({"f", t(TypeId::Float), false});
    auto e = makeEncoder(sink);
    auto d = makeDecoder(format, sink.input, Options());
    std::vector<Row> rows = {
        {Value::tinyint(-128), Value::smallint(32767), Value::float32(0.1f)},
        {Value::tinyint(127), Value::smallint(-32768), Value::float32(-3.4028235e38f)},
        {Value(), Value(), Value()},
    };
    for (const Row& row : rows) {
      EncodedRecord out;
      e->encode(row, out);
      auto r = decodeWith(*d, out.value);
      REQUIRE_MESSAGE(r.ok, r.error);
      REQUIRE(r.row.size() == row.size());
      for (size_t i = 0; i < row.size(); ++i) {
        CHECK_MESSAGE(r.row[i] == row[i], out.value);
        CHECK(r.row[i].type() == row[i].type());
      }
    }
    // A FLOAT is written as the float's shortest text.
    EncodedRecord out;
    e->encode({Value::tinyint(1), Value::smallint(2), Value::float32(0.1f)}, out);
    CHECK(out.value.find("0.1") != std::string::npos);
    CHECK(out.value.find("0.10000000149011612") == std::string::npos);
  }
  Schema s;
  s.columns.push_back({"t", t(TypeId::TinyInt), false});
  s.columns.push_back({"s", t(TypeId::SmallInt), false});
  auto d = makeDecoder("json", s, Options());
  CHECK_FALSE(decodeWith(*d, R"({"t": 128, "s": 1})").ok);
  CHECK_FALSE(decodeWith(*d, R"({"t": 1, "s": -32769})").ok);
  CHECK_FALSE(decodeWith(*d, R"({"t": "200", "s": 1})").ok);
  auto ok = decodeWith(*d, R"({"t": "-5", "s": 300})");
  REQUIRE_MESSAGE(ok.ok, ok.error);
  CHECK(ok.row[0].type() == TypeId::TinyInt);
  CHECK(ok.row[0].asInt() == -5);
  CHECK(ok.row[1].type() == TypeId::SmallInt);
}
