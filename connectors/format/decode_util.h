// Helpers shared by the record decoders (json, csv, raw), the datagen source and
// the file table loader: strict text-to-Value conversion, base64, the wording of
// decode errors, and the hidden Kafka metadata columns. Internal to connectors/.
#pragma once

#include <string>
#include <string_view>

#include "common/schema.h"
#include "common/value.h"
#include "connectors/format/codec.h"

namespace rtsql::format {

// Converts `text` to a value of `type`. Unlike castValue, a text that is not a
// valid `type` is a failure (false), never a NULL: decoders report it as a bad
// record. Integers are range-checked; booleans accept true/false/t/f/yes/no/1/0;
// timestamps use parseTimestamp. BINARY takes the bytes as they are, or decodes
// base64 when `binaryIsBase64` (JSON carries bytes as base64 strings). ARRAY and
// STRUCT have no text form here and always fail.
bool textToValue(std::string_view text, const DataType& type, Value& out, bool binaryIsBase64);

// Standard base64 (RFC 4648, padding optional, no line breaks); false on bad input.
bool decodeBase64(std::string_view in, std::string& out);

// `text` shortened for an error message: at most 40 bytes, then "...".
std::string shortText(std::string_view text);
// "field 'amount': expected DOUBLE, got \"abc\"" with `got` shortened;
// "field 'amount': expected DOUBLE" when `got` is empty.
std::string mismatchError(std::string_view field, const DataType& type, std::string_view got);

// Hidden metadata columns a decoder fills from the RecordView rather than from
// the payload. Only hidden columns with the names of codec.h qualify, so a user
// column that happens to be called `_key` is still read from the payload.
enum class MetaKind { None, Key, Timestamp, Partition, Offset, Headers };
MetaKind metaKindOf(const Column& column);
// The value of a metadata column for `rec`. Headers are NULL when the record
// carries no header list at all and an array (possibly empty) otherwise.
Value metaValue(MetaKind kind, const RecordView& rec);
// Kafka headers as ARRAY<STRUCT<key STRING, value BINARY>>.
Value headersToValue(const std::vector<std::pair<std::string, std::string>>& headers);

// Whether a writer's field of SQL type `writer` (a schema registry's writer
// schema, avro or protobuf) can fill a column of type `column`: the same
// type, or the promotions int to long and int or long to double that Avro
// readers make (and protobuf's int32 to int64 follows).
bool writerTypeFills(const DataType& writer, const DataType& column);
// `v` (a writer's value) as a value of the column's type, after writerTypeFills().
void widenWriterValue(Value& v, const DataType& column);

// Resets `row` to `size` NULLs, keeping its allocation. A fresh (empty) row is
// only sized: its Values are NULL already.
inline void resetRow(Row& row, size_t size) {
  if (row.size() > size) row.resize(size);
  for (auto& v : row)
    if (!v.isNull()) v = Value();
  row.resize(size);
}

}  // namespace rtsql::format
