#include "connectors/format/codec.h"

#include <fmt/format.h>

#include "connectors/format/decoders.h"
#include "connectors/format/protobuf_schema.h"
#include "connectors/schema_registry/schema_registry.h"

namespace rtsql {

std::unique_ptr<RecordDecoder> makeDecoder(const std::string& format, const Schema& schema,
                                           const Options& options) {
  return makeDecoder(format, schema, options, decodeOptions(format, options));
}

DecodeOptions decodeOptions(const std::string& sourceFormat, const Options& options) {
  // Only the format's own settings, as its decoder reads them: another
  // format's are not checked (a json source's 'csv.delimiter' is not).
  DecodeOptions decode;
  if (iequals(sourceFormat, "csv")) decode.csvDelimiter = format::csvDelimiter(options);
  if (iequals(sourceFormat, "json") || iequals(sourceFormat, "debezium-json")) {
    decode.jsonIgnoreMissing = options.getBool("json.ignore-missing", true);
  }
  if (iequals(sourceFormat, "avro")) {
    decode.avroConfluent = iequals(options.getString("avro.framing", "none"), "confluent");
  }
  if (iequals(sourceFormat, "protobuf")) {
    decode.protobufConfluent = format::protobufConfluentFraming(options);
  }
  return decode;
}

std::unique_ptr<RecordDecoder> makeDecoder(const std::string& format, const Schema& schema,
                                           const Options& options, const DecodeOptions& decode) {
  if (iequals(format, "json")) return format::makeJsonDecoder(schema, decode);
  if (iequals(format, "csv")) return format::makeCsvDecoder(schema, decode);
  if (iequals(format, "raw")) return format::makeRawDecoder(schema);
  if (iequals(format, "debezium-json")) return format::makeDebeziumJsonDecoder(schema, decode);
  if (iequals(format, "avro")) return format::makeAvroDecoder(schema, options, decode);
  if (iequals(format, "protobuf")) return format::makeProtobufDecoder(schema, options, decode);
  throw SqlError(sqlstate::kFeatureNotSupported,
                 fmt::format("source format '{}' is not supported", format), SqlError::npos,
                 "Use format 'json', 'csv', 'raw', 'avro', 'protobuf' or 'debezium-json'.");
}

std::unique_ptr<RecordEncoder> makeEncoder(const SinkSpec& sink) {
  if (iequals(sink.format, "json")) return format::makeJsonEncoder(sink);
  if (iequals(sink.format, "csv")) return format::makeCsvEncoder(sink);
  if (iequals(sink.format, "raw")) return format::makeRawEncoder(sink);
  if (iequals(sink.format, "avro")) return format::makeAvroEncoder(sink);
  if (iequals(sink.format, "protobuf")) return format::makeProtobufEncoder(sink);
  throw SqlError(sqlstate::kFeatureNotSupported,
                 fmt::format("sink format '{}' is not supported", sink.format), SqlError::npos,
                 "Use format 'json', 'csv', 'avro', 'protobuf' or 'raw'.");
}

void checkSinkColumns(const SinkSpec& sink,
                      const std::vector<std::pair<std::string, size_t>>& columns) {
  if (iequals(sink.format, "avro")) {
    format::checkAvroSinkRegistry(sink, columns.empty() ? SqlError::npos : columns.front().second);
    return;
  }
  if (!iequals(sink.format, "protobuf")) return;
  std::vector<size_t> positions;
  for (const Column& c : sink.input.columns) {
    size_t pos = SqlError::npos;
    for (const auto& [name, at] : columns)
      if (iequals(name, c.name)) pos = at;
    positions.push_back(pos);
  }
  if (schema_registry::hasRegistry(sink.options)) {
    // The message is generated from the columns.
    format::checkProtobufSinkRegistry(sink, positions);
    return;
  }
  // The descriptor file as CREATE SINK read it.
  auto proto = format::ProtobufSchema::fromOptions(sink.options, SqlError::npos, false);
  format::checkProtobufSinkColumns(*proto, sink.input, positions);
}

}  // namespace rtsql
