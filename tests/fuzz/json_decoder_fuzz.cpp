// Fuzz target: a Kafka record through the json decoder (see record_decoder_fuzz.h).
#include "record_decoder_fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static auto decoder = rtsql::fuzz::decoderFor(R"(
    CREATE SOURCE s (i INT, b BIGINT, d DOUBLE, s STRING, flag BOOLEAN, ts TIMESTAMP,
                     bin BINARY, tags ARRAY<STRING>, nums ARRAY<BIGINT>,
                     info STRUCT<country STRING, zip INT, loc STRUCT<lat DOUBLE, lon DOUBLE>>,
                     events ARRAY<STRUCT<name STRING, at TIMESTAMP>>)
    WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded', subscribe = 'clicks',
          format = 'json', includeHeaders = 'true', 'json.ignore-missing' = 'true'))");
  return rtsql::fuzz::decodeRecord(*decoder, data, size);
}
