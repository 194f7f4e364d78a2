// Fuzz target: a Kafka record through the raw decoder (see record_decoder_fuzz.h).
#include "record_decoder_fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static auto decoder = rtsql::fuzz::decoderFor(R"(
    CREATE SOURCE s WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
                          subscribe = 'clicks', format = 'raw', includeHeaders = 'true'))");
  return rtsql::fuzz::decodeRecord(*decoder, data, size);
}
