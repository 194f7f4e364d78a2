// Internal factories behind makeDecoder/makeEncoder, one per format, so that each
// format lives in its own file.
#pragma once

#include <memory>

#include "connectors/format/codec.h"

namespace rtsql::format {

std::unique_ptr<RecordDecoder> makeJsonDecoder(const Schema& schema, const DecodeOptions& decode);
std::unique_ptr<RecordDecoder> makeCsvDecoder(const Schema& schema, const DecodeOptions& decode);
std::unique_ptr<RecordDecoder> makeRawDecoder(const Schema& schema);
std::unique_ptr<RecordDecoder> makeDebeziumJsonDecoder(const Schema& schema,
                                                       const DecodeOptions& decode);
std::unique_ptr<RecordEncoder> makeJsonEncoder(const SinkSpec& sink);
std::unique_ptr<RecordEncoder> makeRawEncoder(const SinkSpec& sink);
std::unique_ptr<RecordEncoder> makeCsvEncoder(const SinkSpec& sink);
std::unique_ptr<RecordDecoder> makeAvroDecoder(const Schema& schema, const Options& options,
                                               const DecodeOptions& decode);
std::unique_ptr<RecordEncoder> makeAvroEncoder(const SinkSpec& sink);
// A sink with 'schema.registry.url' (sink_registry.cpp): CREATE FLOW's
// check that the registry takes the sink's `schema` of `schemaType` (AVRO,
// PROTOBUF) under the topic's subject (42804 at `pos`, with `hint`, when it
// is incompatible with the latest version; 08006 when the registry does not
// answer); it registers nothing. registerSinkSchema, as the sink's encoder
// starts, registers `schema` and returns its id (08006, or 22023 when the
// registry refuses).
void checkSinkSchemaCompatible(const SinkSpec& sink, const std::string& schema,
                               const std::string& schemaType, size_t pos, const std::string& hint);
int32_t registerSinkSchema(const SinkSpec& sink, const std::string& schema,
                           const std::string& schemaType);
// The check above for an avro sink with 'schema.registry.url' (nothing
// without it).
void checkAvroSinkRegistry(const SinkSpec& sink, size_t pos);
// 'protobuf.framing' = 'confluent': each record opens with the schema
// registry's framing (read at CREATE into DecodeOptions and SinkOptions).
bool protobufConfluentFraming(const Options& options);
std::unique_ptr<RecordDecoder> makeProtobufDecoder(const Schema& schema, const Options& options,
                                                   const DecodeOptions& decode);
std::unique_ptr<RecordEncoder> makeProtobufEncoder(const SinkSpec& sink);
// The check above for a protobuf sink with 'schema.registry.url': the
// message generated from the sink's columns (protobufSinkProto), which is
// also checked here (22023 or 0A000 at the column at fault, its entry of
// `positions`, parallel to the sink's columns).
void checkProtobufSinkRegistry(const SinkSpec& sink, const std::vector<size_t>& positions);

// The Kafka key of an encoded row: the chosen key column's bytes, else the
// group keys (one as its bytes, several as a JSON object), else no key.
void encodeKey(const Row& row, const Schema& schema, int keyColumn,
               const std::vector<int>& keyColumns, EncodedRecord& out);

// One csv field as a csv sink writes it (RFC 4180): NULL is an empty field, an
// empty string is "", and a text holding the delimiter, a quote, CR or LF is
// quoted with its quotes doubled. Booleans are true/false, timestamps ISO-8601
// as in json, doubles as the json encoder writes them.
void appendCsvField(std::string& out, const Value& v, char delimiter, const DataType* type = nullptr);
void appendCsvText(std::string& out, std::string_view text, char delimiter);

// The 'csv.delimiter' option as one byte: a single character, or "\t" spelled
// with a backslash. Throws SqlError 22023 at the value otherwise.
char csvDelimiter(const Options& options);

}  // namespace rtsql::format
