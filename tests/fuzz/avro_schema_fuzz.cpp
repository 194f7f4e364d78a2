// Fuzz target: an Avro schema's JSON as 'avro.schema' or a schema registry
// gives it, read as a source reads it (AvroSchema::parse: the text's bounds,
// libavro's own reader, then rtsql's tree) and turned into the source's SQL
// columns, then into a libavro value class as the decoder builds one: the
// text is the user's or the registry's, so a hostile one (nested thousands
// deep, recursive, huge) must be an error, never a crash.
#include <cstdint>
#include <string_view>

#include "common/error.h"
#include "connectors/format/avro_schema.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace rtsql;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    auto schema = format::AvroSchema::parse(text, 0);
    format::avroSourceColumns(*schema, Schema{}, {}, 0);
  } catch (const SqlError&) {
    // Not a schema a source reads: refused with the reason.
  }
  return 0;
}
