// Fuzz target: a Kafka record through the protobuf decoder (see
// record_decoder_fuzz.h), which walks the wire format itself: tags, wire
// types, lengths and nesting are the writer's, so a hostile one must be
// rejected, not trusted. The message is shop.Order of
// tests/data/protobuf/shop.proto: every field type a source reads, nested
// and repeated messages, a oneof, Timestamps.
#include "connectors/format/protobuf_schema.h"
#include "record_decoder_fuzz.h"

namespace {

std::unique_ptr<rtsql::RecordDecoder> makeProtobufFuzzDecoder() {
  using namespace rtsql;
  auto stmts = parseStatements(
      "CREATE SOURCE s WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded', "
      "subscribe = 'orders', format = 'protobuf', 'protobuf.descriptor' = '" RTSQL_TEST_DATA_DIR
      "/protobuf/shop.desc', 'protobuf.message' = 'shop.Order')");
  const auto& s = static_cast<const ast::CreateSource&>(*stmts.at(0));
  Options options = bindOptions(s.options);
  auto proto = format::ProtobufSchema::fromOptions(options, 0, true);
  Schema payload = format::protobufSourceColumns(*proto, Schema{}, {}, 0);
  Schema schema = bindKafkaRecordSchema(s, "protobuf", false, &payload);
  return makeDecoder("protobuf", schema, options);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static auto decoder = makeProtobufFuzzDecoder();
  return rtsql::fuzz::decodeRecord(*decoder, data, size);
}
