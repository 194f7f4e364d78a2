// .proto text both ways: a registry's schema with an import, a well-known
// type and a nested message built into descriptors (and refused with the
// place at fault), Confluent's message indexes resolved to messages, and the
// text a protobuf sink generates from its columns.
#include "connectors/format/proto_text.h"

#include <doctest/doctest.h>
#include <google/protobuf/descriptor.h>

#include "common/error.h"
#include "connector_test_util.h"
#include "connectors/format/protobuf_schema.h"

using namespace rtsql;
using namespace rtsql::format;
using testing::t;

namespace {

const char* kCommon = R"(syntax = "proto3";
package shop;
message Money { int64 cents = 1; string currency = 2; }
)";

const char* kOrder = R"(syntax = "proto3";
package shop;
import "shop/common.proto";
import "google/protobuf/timestamp.proto";

message Customer { string name = 1; }
message Order {
  message Line {
    string sku = 1;
    Money price = 2;
    message Note { string text = 1; }
    repeated Note notes = 3;
  }
  int64 id = 1;
  repeated Line lines = 2;
  google.protobuf.Timestamp at = 3;
  optional string memo = 4;
}
)";

}  // namespace

TEST_CASE("proto text: a schema with an import, a well-known type and nested messages") {
  ProtoFiles files;
  std::string error;
  REQUIRE_MESSAGE(
      buildProtoFiles(kOrder, "order.proto", {{"shop/common.proto", kCommon}}, files, error),
      error);
  REQUIRE(files.file);
  CHECK(files.file->name() == "order.proto");
  CHECK(files.pool->FindMessageTypeByName("shop.Money"));
  CHECK(messageAtIndexes(*files.file, {0})->full_name() == "shop.Customer");
  CHECK(messageAtIndexes(*files.file, {1})->full_name() == "shop.Order");
  CHECK(messageAtIndexes(*files.file, {1, 0})->full_name() == "shop.Order.Line");
  CHECK(messageAtIndexes(*files.file, {1, 0, 0})->full_name() == "shop.Order.Line.Note");
  CHECK_FALSE(messageAtIndexes(*files.file, {2}));
  CHECK_FALSE(messageAtIndexes(*files.file, {1, 1}));
  CHECK_FALSE(messageAtIndexes(*files.file, {}));

  // The SQL columns of shop.Order: the timestamp a TIMESTAMP, the lines
  // structs with the imported Money inside.
  auto schema = ProtobufSchema::fromProtoText(
      kOrder, "order.proto", {{"shop/common.proto", kCommon}}, "shop.Order", "the schema", 0, 0);
  Schema columns = protobufSourceColumns(*schema, Schema{}, {}, 0);
  REQUIRE(columns.columns.size() == 4);
  CHECK(columns.columns[1].type->toString() ==
        "ARRAY<STRUCT<sku: STRING, price: STRUCT<cents: BIGINT, currency: STRING>, notes: "
        "ARRAY<STRUCT<text: STRING>>>>");
  CHECK(columns.columns[2].type->id == TypeId::Timestamp);
  // No message named: the file's first.
  CHECK(ProtobufSchema::fromProtoText(kOrder, "order.proto", {{"shop/common.proto", kCommon}}, "",
                                      "the schema", 0, 0)
            ->root()
            .name == "shop.Customer");
}

TEST_CASE("proto text: what does not build is an error with its place") {
  ProtoFiles files;
  std::string error;
  CHECK_FALSE(buildProtoFiles("syntax = \"proto3\";\nmessage M {\n  int64 id = ;\n}\n", "m.proto",
                              {}, files, error));
  CHECK(error.find("m.proto:3:") == 0);
  CHECK_FALSE(buildProtoFiles("syntax = \"proto3\"; message M { Unknown u = 1; }", "m.proto", {},
                              files, error));
  CAPTURE(error);
  CHECK(error.find("m.proto: M.u: \"Unknown\" is not defined.") == 0);
  // An import that is neither a reference nor a well-known type.
  CHECK_FALSE(buildProtoFiles(kOrder, "order.proto", {}, files, error));
  CHECK(error ==
        "order.proto: imports \"shop/common.proto\", which is neither one of the schema's "
        "references nor a well-known type");
  // A reference that does not parse names its own file.
  CHECK_FALSE(
      buildProtoFiles(kOrder, "order.proto", {{"shop/common.proto", "message {"}}, files, error));
  CHECK(error.find("shop/common.proto:1:") == 0);
  // Imports that go round.
  CHECK_FALSE(buildProtoFiles(
      "import \"a.proto\";", "root.proto",
      {{"a.proto", "import \"b.proto\";"}, {"b.proto", "import \"a.proto\";"}}, files, error));
  CHECK(error.find("an import cycle") != std::string::npos);
  // Not text at all.
  CHECK_FALSE(buildProtoFiles(std::string("\0\x01\x02\xff", 4), "x.proto", {}, files, error));

  // At CREATE: 22023 at the text's position, 42704 at the message's.
  auto e = testing::sqlErrorOf(
      [] { ProtobufSchema::fromProtoText("message {", "x.proto", {}, "", "the schema", 7, 9); });
  CHECK(e.sqlstate() == std::string(sqlstate::kInvalidParameterValue));
  CHECK(e.position() == 7);
  CHECK(std::string(e.what()).find("the schema is not a protobuf schema rtsql can read") == 0);
  e = testing::sqlErrorOf([] {
    ProtobufSchema::fromProtoText(kCommon, "c.proto", {}, "shop.Nope", "the schema", 7, 9);
  });
  CHECK(e.sqlstate() == std::string(sqlstate::kUndefinedObject));
  CHECK(e.position() == 9);
  CHECK(e.hint().find("shop.Money") != std::string::npos);
  e = testing::sqlErrorOf([] {
    ProtobufSchema::fromProtoText("syntax = \"proto3\";", "e.proto", {}, "", "the schema", 7, 9);
  });
  CHECK(e.sqlstate() == std::string(sqlstate::kUndefinedObject));
  CHECK(std::string(e.what()) == "the schema declares no message");
}

TEST_CASE("proto text: a sink's message from its columns") {
  Schema s;
  s.columns = {
      {"id", t(TypeId::BigInt), false},
      {"name", t(TypeId::String), false},
      {"tags", DataType::arrayOf(t(TypeId::String)), false},
      {"addr",
       DataType::structOf({{"city", t(TypeId::String)},
                           {"geo", DataType::structOf({{"lat", t(TypeId::Double)}})}}),
       false},
      {"at", t(TypeId::Timestamp), false},
      {"lines", DataType::arrayOf(DataType::structOf({{"qty", t(TypeId::Int)}})), false},
      {"ok", t(TypeId::Boolean), false},
      {"raw", t(TypeId::Binary), false},
      {"wait", t(TypeId::Interval), false},
      {"_key", t(TypeId::Binary), true},
  };
  const std::string text = protobufSinkProto(s, "shop.Out");
  CHECK(text == R"(syntax = "proto3";
package shop;
import "google/protobuf/timestamp.proto";

message Out {
  optional int64 id = 1;
  optional string name = 2;
  repeated string tags = 3;
  addr_1 addr = 4;
  google.protobuf.Timestamp at = 5;
  repeated lines_2 lines = 6;
  optional bool ok = 7;
  optional bytes raw = 8;
  optional int64 wait = 9;

  message addr_1 {
    optional string city = 1;
    geo_3 geo = 2;

    message geo_3 {
      optional double lat = 1;
    }
  }

  message lines_2 {
    optional int32 qty = 1;
  }
}
)");
  // It builds, and reads back as the columns (INTERVAL as BIGINT).
  auto schema = ProtobufSchema::fromProtoText(text, "out.proto", {}, "shop.Out", "the sink", 0, 0);
  Schema back = protobufSourceColumns(*schema, Schema{}, {}, 0);
  REQUIRE(back.columns.size() == 9);
  for (size_t i = 0; i < 8; ++i) {
    CAPTURE(i);
    CHECK(back.columns[i].type->equals(*s.columns[i].type));
  }
  CHECK(back.columns[8].type->id == TypeId::BigInt);
  // A nested message's name steps past a field of the same name.
  Schema clash;
  clash.columns = {{"a", DataType::structOf({{"x", t(TypeId::Int)}}), false},
                   {"a_1", t(TypeId::Int), false}};
  CHECK(protobufSinkProto(clash, "m").find("a_2 a = 1;") != std::string::npos);

  // Refusals at the column.
  Schema bad;
  bad.columns = {{"id", t(TypeId::BigInt), false}, {"my col", t(TypeId::Int), false}};
  auto e = testing::sqlErrorOf([&] { protobufSinkProto(bad, "m", {10, 20}); });
  CHECK(e.sqlstate() == std::string(sqlstate::kInvalidParameterValue));
  CHECK(e.position() == 20);
  bad.columns[1] = {"s", DataType::structOf({{"1x", t(TypeId::Int)}}), false};
  e = testing::sqlErrorOf([&] { protobufSinkProto(bad, "m", {10, 20}); });
  CHECK(std::string(e.what()) ==
        "column \"s\" has field \"1x\", which is not a valid protobuf field name");
  CHECK(e.position() == 20);
  bad.columns[1] = {"nested", DataType::arrayOf(DataType::arrayOf(t(TypeId::Int))), false};
  e = testing::sqlErrorOf([&] { protobufSinkProto(bad, "m", {10, 20}); });
  CHECK(e.sqlstate() == std::string(sqlstate::kFeatureNotSupported));
  CHECK(e.position() == 20);

  // The message's name.
  CHECK(protobufSinkMessageName(testing::opts({}), "orders") == "orders");
  CHECK(protobufSinkMessageName(testing::opts({}), "my-sink") == "row");
  CHECK(protobufSinkMessageName(testing::opts({{"protobuf.message", "a.b.C"}}), "x") == "a.b.C");
  for (const char* name : {"a..C", ".C", "C.", "a.1b", ""}) {
    CAPTURE(name);
    e = testing::sqlErrorOf([&] {
      protobufSinkMessageName(testing::opts({{"protobuf.message", name}}), "x");
    });
    CHECK(e.sqlstate() == std::string(sqlstate::kInvalidParameterValue));
    CHECK(e.position() == 50);
  }
}
