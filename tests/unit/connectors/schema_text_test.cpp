// Schema texts past the depth and size bounds (schema_text.h) are refused
// with the reason before any parser sees them: a .proto and an Avro schema
// nested 20,000 deep would otherwise overflow the stack of libprotoc's parser
// and of libavro's JSON reader. Nesting within the bounds still builds.
#include "connectors/format/schema_text.h"

#include <doctest/doctest.h>
#include <google/protobuf/descriptor.h>

#include <string>

#include "common/error.h"
#include "connector_test_util.h"
#include "connectors/format/avro_schema.h"
#include "connectors/format/proto_text.h"
#include "connectors/format/protobuf_schema.h"

using namespace rtsql;
using namespace rtsql::format;

namespace {

// A .proto whose message M0 holds M1, which holds M2, ... `depth` deep.
std::string nestedProto(int depth) {
  std::string text = "syntax = \"proto3\";\n";
  for (int i = 0; i < depth; ++i) text += "message M" + std::to_string(i) + " {\n";
  text += "int64 id = 1;\n";
  for (int i = 0; i < depth; ++i) text += "}\n";
  return text;
}

// An Avro record whose field holds a record, which holds a record, ...
// `depth` deep.
std::string nestedAvro(int depth) {
  std::string text;
  for (int i = 0; i < depth; ++i) {
    text += R"({"type": "record", "name": "R)" + std::to_string(i) +
            R"(", "fields": [{"name": "f", "type": )";
  }
  text += "\"long\"";
  for (int i = 0; i < depth; ++i) text += "}]}";
  return text;
}

}  // namespace

TEST_CASE("schema text: depth and size are bounded, strings and comments aside") {
  CHECK(schemaTextProblem(nestedProto(kMaxSchemaTextDepth), SchemaTextSyntax::Proto).empty());
  const std::string deep = schemaTextProblem(nestedProto(20000), SchemaTextSyntax::Proto);
  CAPTURE(deep);
  CHECK(deep.find("nests more than 256 levels deep (at line 258)") != std::string::npos);
  CHECK_FALSE(schemaTextProblem(std::string(100000, '['), SchemaTextSyntax::Json).empty());
  CHECK_FALSE(schemaTextProblem(std::string(100000, '<'), SchemaTextSyntax::Proto).empty());
  // Brackets in strings and comments are not levels; a closing bracket too
  // many does not let the next ones go deeper.
  const std::string many(1000, '{');
  CHECK(schemaTextProblem("\"" + many + "\"", SchemaTextSyntax::Json).empty());
  CHECK(schemaTextProblem("\"\\\"" + many + "\"", SchemaTextSyntax::Json).empty());
  CHECK(schemaTextProblem("'" + many + "'", SchemaTextSyntax::Proto).empty());
  CHECK(schemaTextProblem("// " + many + "\n", SchemaTextSyntax::Proto).empty());
  CHECK(schemaTextProblem("/* " + many + " */", SchemaTextSyntax::Proto).empty());
  CHECK_FALSE(schemaTextProblem("// x\n" + many, SchemaTextSyntax::Proto).empty());
  CHECK_FALSE(schemaTextProblem("/* x */" + many, SchemaTextSyntax::Proto).empty());
  CHECK_FALSE(schemaTextProblem(std::string(300, '}') + many, SchemaTextSyntax::Json).empty());
  // Size: past the cap, however flat.
  const std::string big(kMaxSchemaTextBytes + 1, ' ');
  CHECK(schemaTextProblem(big, SchemaTextSyntax::Json).find("more than the 4194304") !=
        std::string::npos);
  CHECK(schemaTextProblem(big.substr(1), SchemaTextSyntax::Json).empty());
}

TEST_CASE("schema text: a .proto nested 20,000 deep is refused, no crash") {
  ProtoFiles files;
  std::string error;
  CHECK_FALSE(buildProtoFiles(nestedProto(20000), "deep.proto", {}, files, error));
  CAPTURE(error);
  CHECK(error.find("deep.proto: the text nests more than 256 levels deep") == 0);
  // An import as deep names its own file.
  CHECK_FALSE(buildProtoFiles("import \"d.proto\";", "root.proto",
                              {{"d.proto", nestedProto(20000)}}, files, error));
  CHECK(error.find("d.proto: the text nests more than") == 0);
  // Too long.
  CHECK_FALSE(buildProtoFiles("syntax = \"proto3\";" + std::string(kMaxSchemaTextBytes, ' '),
                              "long.proto", {}, files, error));
  CHECK(error.find("long.proto: the text is") == 0);
  // At CREATE SOURCE: 22023 at the text's position.
  auto e = testing::sqlErrorOf([] {
    ProtobufSchema::fromProtoText(nestedProto(20000), "x.proto", {}, "", "the schema", 7, 9);
  });
  CHECK(e.sqlstate() == std::string(sqlstate::kInvalidParameterValue));
  CHECK(e.position() == 7);
  CHECK(std::string(e.what()).find("nests more than 256 levels deep") != std::string::npos);
  // Within the bound the parser reads it, and the descriptor pool refuses
  // messages nested past its own limit (32) with its reason.
  REQUIRE(buildProtoFiles(nestedProto(20), "ok.proto", {}, files, error));
  CHECK(files.file->message_type_count() == 1);
  CHECK_FALSE(buildProtoFiles(nestedProto(100), "ok.proto", {}, files, error));
  CHECK(error.find("maximum recursion limit") != std::string::npos);
}

TEST_CASE("schema text: an Avro schema nested 20,000 deep is refused, no crash") {
  auto e = testing::sqlErrorOf([] { AvroSchema::parse(nestedAvro(20000), 5); });
  CHECK(e.sqlstate() == std::string(sqlstate::kInvalidParameterValue));
  CHECK(e.position() == 5);
  CAPTURE(e.what());
  CHECK(std::string(e.what()).find("'avro.schema' is not a valid Avro schema: the text nests "
                                   "more than 256 levels deep") == 0);
  e = testing::sqlErrorOf([] { AvroSchema::parse(std::string(20000, '['), 5); });
  CHECK(std::string(e.what()).find("nests more than 256 levels") != std::string::npos);
  e = testing::sqlErrorOf([] {
    AvroSchema::parse("\"long\"" + std::string(kMaxSchemaTextBytes, ' '), 5);
  });
  CHECK(std::string(e.what()).find("the text is") != std::string::npos);
  // A record nested within the bound still parses; deeper than its 64 levels
  // of types is the schema walker's own refusal.
  CHECK(AvroSchema::parse(nestedAvro(20), 0)->root().name == "R0");
  e = testing::sqlErrorOf([] { AvroSchema::parse(nestedAvro(80), 5); });
  CHECK(std::string(e.what()).find("nested more than 64 levels") != std::string::npos);
}

TEST_CASE("schema text: an Avro name defined twice is refused before libavro reads the text") {
  // libavro's reader leaks what it built when it meets a second definition;
  // rtsql's reader, which runs first, refuses it with the name.
  const std::string twice =
      R"({"type": "record", "name": "R", "fields": [)"
      R"({"name": "a", "type": {"type": "record", "name": "S", "fields": []}},)"
      R"({"name": "b", "type": {"type": "record", "name": "S", "fields": []}}]})";
  auto e = testing::sqlErrorOf([&] { AvroSchema::parse(twice, 3); });
  CHECK(e.sqlstate() == std::string(sqlstate::kInvalidParameterValue));
  CHECK(e.position() == 3);
  CHECK(std::string(e.what()).find("type \"S\" is defined twice") != std::string::npos);
  // A reference by name to a type defined once is no second definition.
  const std::string reused =
      R"({"type": "record", "name": "R", "fields": [)"
      R"({"name": "a", "type": {"type": "record", "name": "S", "fields": []}},)"
      R"({"name": "b", "type": "S"}]})";
  CHECK(AvroSchema::parse(reused, 0)->root().name == "R");
}
