// The protobuf format's wire walk on hand-made values: protobuf's parsing
// rules (packed and unpacked repeated scalars, the last value winning, messages
// merging, oneof members clearing each other, unknown fields of every wire type
// skipped) and hostile values refused with a reason; the encoder's bytes for
// a few rows checked against the wire format by hand.
#include <doctest/doctest.h>
#include <google/protobuf/descriptor.pb.h>
#include <google/protobuf/text_format.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "common/error.h"
#include "connector_test_util.h"
#include "connectors/format/codec.h"
#include "connectors/format/protobuf_schema.h"

using namespace rtsql;

namespace {

using testing::opts;
using testing::t;

// A descriptor set written to a temporary file, removed at the end.
class DescriptorFile {
 public:
  explicit DescriptorFile(const std::string& textFormat) {
    google::protobuf::FileDescriptorSet set;
    REQUIRE(google::protobuf::TextFormat::ParseFromString(textFormat, &set));
    path_ = (std::filesystem::temp_directory_path() /
             ("rtsql_pb_" + std::to_string(reinterpret_cast<uintptr_t>(this)) + ".desc"))
                .string();
    std::ofstream(path_, std::ios::binary) << set.SerializeAsString();
  }
  ~DescriptorFile() { std::filesystem::remove(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

const char* kProto = R"(
file {
  name: "t.proto" package: "t" syntax: "proto3"
  enum_type { name: "Color" value { name: "RED" number: 0 } value { name: "BLUE" number: 2 } }
  message_type {
    name: "Inner"
    field { name: "a" number: 1 type: TYPE_INT32 label: LABEL_OPTIONAL }
    field { name: "b" number: 2 type: TYPE_STRING label: LABEL_OPTIONAL }
  }
  message_type {
    name: "M"
    field { name: "n" number: 1 type: TYPE_INT32 label: LABEL_REPEATED }
    field { name: "x" number: 2 type: TYPE_INT64 label: LABEL_OPTIONAL }
    field { name: "inner" number: 3 type: TYPE_MESSAGE type_name: ".t.Inner" label: LABEL_OPTIONAL }
    field { name: "e" number: 4 type: TYPE_STRING label: LABEL_OPTIONAL oneof_index: 0 }
    field { name: "p" number: 5 type: TYPE_STRING label: LABEL_OPTIONAL oneof_index: 0 }
    field { name: "color" number: 6 type: TYPE_ENUM type_name: ".t.Color" label: LABEL_OPTIONAL }
    field { name: "u" number: 7 type: TYPE_UINT64 label: LABEL_OPTIONAL }
    field { name: "d" number: 8 type: TYPE_DOUBLE label: LABEL_OPTIONAL }
    field { name: "s32" number: 9 type: TYPE_SINT32 label: LABEL_OPTIONAL }
    oneof_decl { name: "contact" }
  }
}
)";

std::string bytes(std::initializer_list<int> b) {
  std::string s;
  for (int c : b) s += static_cast<char>(c);
  return s;
}

struct Decoded {
  bool ok = false;
  Row row;
  std::string error;
};

class Fixture {
 public:
  Fixture() : file_(kProto) {
    options_ = opts({{"protobuf.descriptor", file_.path()}, {"protobuf.message", "t.M"}});
    auto proto = format::ProtobufSchema::fromOptions(options_, 0, true);
    schema_ = format::protobufSourceColumns(*proto, Schema{}, {}, 0);
    decoder_ = makeDecoder("protobuf", schema_, options_);
  }
  Decoded decode(const std::string& value) {
    Decoded d;
    RecordView rec;
    rec.value = value.data();
    rec.valueLen = value.size();
    d.ok = decoder_->decode(rec, d.row, d.error);
    return d;
  }
  int col(const char* name) const { return schema_.find(name); }
  const Options& options() const { return options_; }
  const std::string& path() const { return file_.path(); }

 private:
  DescriptorFile file_;
  Options options_;
  Schema schema_;
  std::unique_ptr<RecordDecoder> decoder_;
};

}  // namespace

TEST_CASE("protobuf: the columns and an empty message's defaults") {
  Fixture f;
  Decoded d = f.decode("");
  REQUIRE(d.ok);
  CHECK(d.row[f.col("n")].asList().empty());
  CHECK(d.row[f.col("x")].asInt() == 0);
  CHECK(d.row[f.col("inner")].isNull());
  CHECK(d.row[f.col("e")].isNull());
  CHECK(d.row[f.col("color")].asString() == "RED");
  CHECK(d.row[f.col("u")].asInt() == 0);
}

TEST_CASE("protobuf: repeated scalars packed and not, last value wins, messages merge") {
  Fixture f;
  // n: 5 unpacked, then packed [1, 2]; x twice; inner {a: 7} then {b: "q"};
  // e then p of the oneof; color 2; s32 -3 (zigzag 5).
  std::string v = bytes({0x08, 0x05, 0x0a, 0x02, 0x01, 0x02, 0x10, 0x01, 0x10, 0x09,
                         0x1a, 0x02, 0x08, 0x07, 0x1a, 0x03, 0x12, 0x01, 'q',  0x22,
                         0x01, 'e',  0x2a, 0x01, 'p',  0x30, 0x02, 0x48, 0x05});
  Decoded d = f.decode(v);
  REQUIRE_MESSAGE(d.ok, d.error);
  const ValueList& n = d.row[f.col("n")].asList();
  REQUIRE(n.size() == 3);
  CHECK(n[0].asInt() == 5);
  CHECK(n[1].asInt() == 1);
  CHECK(n[2].asInt() == 2);
  CHECK(d.row[f.col("x")].asInt() == 9);
  const ValueList& inner = d.row[f.col("inner")].asList();
  CHECK(inner[0].asInt() == 7);
  CHECK(inner[1].asString() == "q");
  CHECK(d.row[f.col("e")].isNull());
  CHECK(d.row[f.col("p")].asString() == "p");
  CHECK(d.row[f.col("color")].asString() == "BLUE");
  CHECK(d.row[f.col("s32")].asInt() == -3);
}

TEST_CASE("protobuf: unknown fields of every wire type and wrong wire types are skipped") {
  Fixture f;
  // field 50 varint, 51 fixed64, 52 length, 53 group holding a varint and a
  // nested group, 54 fixed32; then x (2) as fixed32, a wire type it does not
  // have; then x = 4.
  std::string v =
      bytes({0x90, 0x03, 0x7f, 0x99, 0x03, 1,    2,    3,    4,    5,    6,    7,    8,    0xa2,
             0x03, 0x01, 'z',  0xab, 0x03, 0x08, 0x01, 0xb3, 0x03, 0xb4, 0x03, 0xac, 0x03, 0xb5,
             0x03, 1,    2,    3,    4,    0x15, 1,    1,    1,    1,    0x10, 0x04});
  Decoded d = f.decode(v);
  REQUIRE_MESSAGE(d.ok, d.error);
  CHECK(d.row[f.col("x")].asInt() == 4);
}

TEST_CASE("protobuf: hostile values are decode errors") {
  Fixture f;
  auto refused = [&](const std::string& v, const char* why) {
    Decoded d = f.decode(v);
    CHECK_FALSE(d.ok);
    CHECK_MESSAGE(d.error.find(why) != std::string::npos, d.error);
  };
  // inner (3) claims 2^62 bytes.
  refused(bytes({0x1a, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40, 0x01}), "beyond");
  refused(bytes({0x10}), "beyond");  // x's value missing
  refused(bytes({0x10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}),
          "beyond");
  refused(bytes({0x0e}), "wire type 6");
  refused(bytes({0x00, 0x00}), "field number");
  refused(bytes({0xac, 0x03}), "wire type 4");  // an end group with no start
  refused(bytes({0xab, 0x03, 0xb4, 0x03}), "another group");
  // u (7) = 2^64 - 1.
  refused(bytes({0x38, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}),
          "beyond BIGINT's range");
  // 200 nested groups of an unknown field.
  std::string deep;
  for (int i = 0; i < 200; ++i) deep += bytes({0xab, 0x03});
  refused(deep, "100 deep");
  // e (4, a string) that is not UTF-8; the same bytes in a valid string read.
  refused(bytes({0x22, 0x02, 0xc3, 0x28}), "field e: a string that is not valid UTF-8");
  refused(bytes({0x22, 0x01, 0xff}), "not valid UTF-8");
  Decoded text = f.decode(bytes({0x22, 0x02, 0xc3, 0xa9}));
  REQUIRE_MESSAGE(text.ok, text.error);
  CHECK(text.row[f.col("e")].asString() == "\xc3\xa9");
  // An enum number the enum does not name reads as its number.
  Decoded d = f.decode(bytes({0x30, 0x07}));
  REQUIRE(d.ok);
  CHECK(d.row[f.col("color")].asString() == "7");
}

TEST_CASE("protobuf: the encoder's bytes") {
  Fixture f;
  SinkSpec sink;
  sink.name = "out";
  sink.connector = "kafka";
  sink.format = "protobuf";
  sink.options = f.options();
  sink.input.columns = {{"s32", t(TypeId::Int), false},
                        {"x", t(TypeId::BigInt), false},
                        {"n", DataType::arrayOf(t(TypeId::Int)), false},
                        {"d", t(TypeId::Double), false},
                        {"e", t(TypeId::String), false},
                        {"u", t(TypeId::BigInt), false}};
  auto encoder = makeEncoder(sink);
  EncodedRecord out;
  // Fields in number order; n packed, its -1 in ten bytes; x at its default
  // (0) and a NULL oneof member not written; -0.0 written.
  encoder->encode(Row{Value::integer(-3), Value::bigint(0),
                      Value::array({Value::integer(-1), Value::integer(1)}), Value::float64(-0.0),
                      Value(), Value::bigint(1)},
                  out);
  CHECK(out.value ==
        bytes({0x0a, 0x0b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0x01,
               0x38, 0x01, 0x41, 0,    0,    0,    0,    0,    0,    0,    0x80, 0x48, 0x05}));
  // What it wrote decodes to the row (the defaults where it wrote nothing).
  Decoded d = f.decode(out.value);
  REQUIRE(d.ok);
  CHECK(d.row[f.col("s32")].asInt() == -3);
  CHECK(d.row[f.col("n")].asList().size() == 2);
  // An empty oneof member is present, so it is written.
  encoder->encode(Row{Value(), Value(), Value(), Value(), Value::string(""), Value()}, out);
  CHECK(out.value == bytes({0x22, 0x00}));
  // A negative value has no uint64 form.
  auto e = testing::sqlErrorOf([&] {
    encoder->encode(Row{Value(), Value(), Value(), Value(), Value(), Value::bigint(-1)}, out);
  });
  CHECK(e.sqlstate() == std::string(sqlstate::kNumericOutOfRange));
}

TEST_CASE("protobuf: a sink's columns must be fields of fitting types") {
  Fixture f;
  auto proto = format::ProtobufSchema::fromOptions(f.options(), 0, false);
  Schema cols;
  cols.columns = {{"nope", t(TypeId::Int), false}};
  auto e = testing::sqlErrorOf([&] { format::checkProtobufSinkColumns(*proto, cols); });
  CHECK(e.sqlstate() == std::string(sqlstate::kUndefinedColumn));
  cols.columns = {{"x", t(TypeId::String), false}};
  e = testing::sqlErrorOf([&] { format::checkProtobufSinkColumns(*proto, cols); });
  CHECK(e.sqlstate() == std::string(sqlstate::kDatatypeMismatch));
  // INT widens into a BIGINT field; a STRUCT's fields must be the message's.
  cols.columns = {{"x", t(TypeId::Int), false},
                  {"inner", DataType::structOf({{"b", t(TypeId::String)}}), false}};
  CHECK_NOTHROW(format::checkProtobufSinkColumns(*proto, cols));
}
