// The body of the record decoder fuzz targets (json_decoder_fuzz.cpp,
// csv_decoder_fuzz.cpp, raw_decoder_fuzz.cpp, avro_decoder_fuzz.cpp,
// protobuf_decoder_fuzz.cpp): one
// Kafka record value, as a producer could write it, through a source's
// decoder. The schema is bound from a CREATE SOURCE the way rtsqld binds it,
// with a column of every type (nested ones too) and the hidden Kafka metadata
// columns. The first byte of the input picks the record's shape (key or none,
// tombstone, headers); the rest is the value. A record either decodes or is
// rejected with a reason; nothing may throw.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/options.h"
#include "connectors/format/codec.h"
#include "parser/parser.h"
#include "planner/planner.h"

namespace rtsql::fuzz {

inline std::unique_ptr<RecordDecoder> decoderFor(const std::string& createSource) {
  auto stmts = parseStatements(createSource);
  const auto& s = static_cast<const ast::CreateSource&>(*stmts.at(0));
  Options options = bindOptions(s.options);
  const std::string format = toLower(options.getString("format"));
  Schema schema = bindKafkaRecordSchema(s, format, options.getBool("includeHeaders", false));
  return makeDecoder(format, schema, options);
}

inline int decodeRecord(RecordDecoder& decoder, const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t shape = data[0];
  std::string value(reinterpret_cast<const char*>(data + 1), size - 1);
  static const std::vector<std::pair<std::string, std::string>> headers = {
      {"trace", "abc"}, {"", std::string("\0\xff", 2)}};
  static const std::string key = "user-1";
  RecordView rec;
  rec.topic = "clicks";
  rec.partition = shape & 3;
  rec.offset = 42;
  rec.timestampMicros = 1714557600000000;
  if (shape & 4) {
    rec.key = key.data();
    rec.keyLen = key.size();
  }
  if (!(shape & 8)) {
    rec.value = value.data();
    rec.valueLen = value.size();
  }
  if (shape & 16) rec.headers = &headers;
  Row row;
  std::string error;
  decoder.decode(rec, row, error);
  return 0;
}

}  // namespace rtsql::fuzz
