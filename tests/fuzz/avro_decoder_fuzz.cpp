// Fuzz target: a Kafka record through the avro decoder (see
// record_decoder_fuzz.h), which reads it with libavro: lengths and counts in
// the datum are the writer's, so a hostile one must be rejected, not trusted.
// The schema holds every Avro type a source reads, logical types included.
#include "connectors/format/avro_schema.h"
#include "record_decoder_fuzz.h"

namespace {

std::unique_ptr<rtsql::RecordDecoder> makeAvroFuzzDecoder() {
  using namespace rtsql;
  auto stmts = parseStatements(R"(
    CREATE SOURCE s WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
      subscribe = 'clicks', format = 'avro', 'avro.schema' = '{"type": "record", "name": "R",
      "fields": [{"name": "i", "type": "int"}, {"name": "b", "type": "long"},
        {"name": "d", "type": "double"}, {"name": "f", "type": "float"},
        {"name": "s", "type": ["null", "string"]}, {"name": "flag", "type": "boolean"},
        {"name": "bin", "type": "bytes"},
        {"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["A", "B", "C"]}},
        {"name": "fx", "type": {"type": "fixed", "name": "F", "size": 3}},
        {"name": "ts", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "day", "type": {"type": "int", "logicalType": "date"}},
        {"name": "tags", "type": {"type": "array", "items": ["null", "string"]}},
        {"name": "info", "type": ["null", {"type": "record", "name": "I", "fields": [
          {"name": "country", "type": "string"}, {"name": "zip", "type": ["int", "null"]}]}]}]}'))");
  const auto& s = static_cast<const ast::CreateSource&>(*stmts.at(0));
  Options options = bindOptions(s.options);
  const OptionEntry& entry = *options.find("avro.schema");
  auto avro = format::AvroSchema::parse(entry.value, entry.valuePos);
  Schema payload = format::avroSourceColumns(*avro, Schema{}, {}, entry.valuePos);
  Schema schema = bindKafkaRecordSchema(s, "avro", false, &payload);
  return makeDecoder("avro", schema, options);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static auto decoder = makeAvroFuzzDecoder();
  return rtsql::fuzz::decodeRecord(*decoder, data, size);
}
