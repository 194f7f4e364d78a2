// The csv sink encoder: RFC 4180 quoting, the delimiter option, NULL against
// the empty string, each scalar type's text, the Kafka key, and a round trip
// through the csv decoder.
#include <doctest/doctest.h>

#include <limits>
#include <string>
#include <vector>

#include "common/error.h"
#include "connector_test_util.h"
#include "connectors/format/codec.h"
#include "connectors/format/decoders.h"

using namespace rtsql;

namespace {

using testing::opts;
using testing::t;

std::string field(const Value& v, char delimiter = ',') {
  std::string out;
  format::appendCsvField(out, v, delimiter);
  return out;
}

SinkSpec csvSink(std::vector<std::pair<std::string, std::string>> options = {}) {
  SinkSpec sink;
  sink.format = "csv";
  sink.options = opts(std::move(options));
  sink.input.columns.push_back({"i", t(TypeId::Int), false});
  sink.input.columns.push_back({"b", t(TypeId::BigInt), false});
  sink.input.columns.push_back({"d", t(TypeId::Double), false});
  sink.input.columns.push_back({"s", t(TypeId::String), false});
  sink.input.columns.push_back({"flag", t(TypeId::Boolean), false});
  sink.input.columns.push_back({"ts", t(TypeId::Timestamp), false});
  sink.input.columns.push_back({"bin", t(TypeId::Binary), false});
  return sink;
}

constexpr int64_t kMay1At10 = 1714557600LL * 1000000;  // 2024-05-01T10:00:00Z

}  // namespace

TEST_CASE("csv field: quoting follows RFC 4180") {
  CHECK(field(Value::string("plain")) == "plain");
  CHECK(field(Value::string("a,b")) == "\"a,b\"");
  CHECK(field(Value::string("say \"hi\"")) == "\"say \"\"hi\"\"\"");
  CHECK(field(Value::string("two\nlines")) == "\"two\nlines\"");
  CHECK(field(Value::string("cr\rhere")) == "\"cr\rhere\"");
  CHECK(field(Value::string(" spaced ")) == " spaced ");
  // A semicolon is only special when it is the delimiter.
  CHECK(field(Value::string("a;b")) == "a;b");
  CHECK(field(Value::string("a;b"), ';') == "\"a;b\"");
  CHECK(field(Value::string("a,b"), ';') == "a,b");
}

TEST_CASE("csv field: NULL is empty, the empty string is a quoted empty field") {
  CHECK(field(Value()) == "");
  CHECK(field(Value::string("")) == "\"\"");
  CHECK(field(Value::binary("")) == "\"\"");
}

TEST_CASE("csv field: each scalar type") {
  CHECK(field(Value::integer(-7)) == "-7");
  CHECK(field(Value::bigint(9007199254740993LL)) == "9007199254740993");
  CHECK(field(Value::float64(1.5)) == "1.5");
  CHECK(field(Value::float64(0)) == "0.0");
  CHECK(field(Value::float64(1e20)) == "1.0E20");
  CHECK(field(Value::float64(std::numeric_limits<double>::quiet_NaN())) == "NaN");
  CHECK(field(Value::boolean(true)) == "true");
  CHECK(field(Value::boolean(false)) == "false");
  CHECK(field(Value::timestamp(kMay1At10)) == "2024-05-01T10:00:00.000Z");
  CHECK(field(Value::timestamp(kMay1At10 + 123456)) == "2024-05-01T10:00:00.123456Z");
  CHECK(field(Value::interval(90LL * 60 * 1000000)) == "01:30:00");
  CHECK(field(Value::binary(std::string("a\x01", 2))) == std::string("a\x01", 2));
  // A number is quoted when the delimiter is one of its characters.
  CHECK(field(Value::float64(1.5), '.') == "\"1.5\"");
  CHECK(field(Value::integer(-7), '-') == "\"-7\"");
}

TEST_CASE("csv encoder: visible columns in order, delimiter, no key by default") {
  SinkSpec sink = csvSink();
  sink.input.columns.push_back({"secret", t(TypeId::String), true});
  auto e = makeEncoder(sink);
  EncodedRecord out;
  e->encode({Value::integer(1), Value::bigint(2), Value::float64(2.25), Value::string("x, \"y\""),
             Value::boolean(true), Value::timestamp(kMay1At10), Value::binary("raw"),
             Value::string("hidden")},
            out);
  CHECK(out.hasValue);
  CHECK(out.value == "1,2,2.25,\"x, \"\"y\"\"\",true,2024-05-01T10:00:00.000Z,raw");
  CHECK_FALSE(out.hasKey);
  CHECK(out.headers.empty());
  CHECK(out.topic.empty());

  // The buffer is reused without leftovers; NULLs are empty fields.
  e->encode({Value(), Value(), Value(), Value::string(""), Value(), Value(), Value(), Value()},
            out);
  CHECK(out.value == ",,,\"\",,,");

  auto tab = makeEncoder(csvSink({{"csv.delimiter", "\\t"}}));
  tab->encode({Value::integer(1), Value(), Value::float64(0.5), Value::string("a\tb"),
               Value::boolean(false), Value(), Value()},
              out);
  CHECK(out.value == "1\t\t0.5\t\"a\tb\"\tfalse\t\t");
}

TEST_CASE("csv encoder: the Kafka key as the json sink writes it") {
  SinkSpec sink = csvSink();
  sink.keyColumn = 3;
  auto e = makeEncoder(sink);
  EncodedRecord out;
  Row row{Value::integer(1), Value::bigint(2), Value(), Value::string("k,1"),
          Value(),           Value(),          Value()};
  e->encode(row, out);
  CHECK(out.hasKey);
  CHECK(out.key == "k,1");  // the key's bytes, not a csv field

  sink.keyColumn = -1;
  sink.keyColumns = {0, 3};
  auto group = makeEncoder(sink);
  group->encode(row, out);
  CHECK(out.hasKey);
  CHECK(out.key == R"({"i":1,"s":"k,1"})");
}

TEST_CASE("csv encoder: a bad delimiter is refused at the option's value") {
  try {
    makeEncoder(csvSink({{"csv.delimiter", "::"}}));
    FAIL("expected an error");
  } catch (const SqlError& e) {
    CHECK(e.sqlstate() == sqlstate::kInvalidParameterValue);
    CHECK(e.position() == 50);
  }
}

TEST_CASE("csv encoder: what it writes the csv decoder reads back") {
  for (const char* delimiter : {",", ";", "\\t", "|"}) {
    SinkSpec sink = csvSink({{"csv.delimiter", delimiter}});
    auto e = makeEncoder(sink);
    auto d = makeDecoder("csv", sink.input, sink.options);
    std::vector<Row> rows = {
        {Value::integer(-1), Value::bigint(1LL << 40), Value::float64(-0.125),
         Value::string("a,b;c|d\te \"q\""), Value::boolean(true),
         Value::timestamp(kMay1At10 + 1000), Value::binary("bytes")},
        {Value(), Value(), Value(), Value::string(""), Value(), Value(), Value::binary("")},
        {Value::integer(0), Value::bigint(0), Value::float64(1e-7), Value::string("x"),
         Value::boolean(false), Value::timestamp(0), Value()},
    };
    for (const Row& row : rows) {
      EncodedRecord out;
      e->encode(row, out);
      RecordView rec;
      rec.value = out.value.data();
      rec.valueLen = out.value.size();
      Row back;
      std::string error;
      REQUIRE_MESSAGE(d->decode(rec, back, error), error);
      REQUIRE(back.size() == row.size());
      for (size_t i = 0; i < row.size(); ++i) CHECK_MESSAGE(back[i] == row[i], out.value);
    }
  }
}
