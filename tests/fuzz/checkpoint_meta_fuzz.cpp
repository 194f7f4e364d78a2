// Fuzz target: a checkpoint's metadata file (executor/checkpoint.h), read when a
// flow recovers. A damaged file must be skipped (nullopt), never crash the
// server. Each input is read as it is, and as the body of a file whose header
// is made to match, so the parser behind the checksum sees every input too.
#include <fmt/format.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "common/crc32.h"
#include "executor/checkpoint.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  rtsql::parseCheckpointMeta(text);
  const size_t nl = text.find('\n');
  const std::string body = nl == std::string::npos ? text : text.substr(nl + 1);
  rtsql::parseCheckpointMeta(fmt::format("rtsql-checkpoint 1 {} {:08x}\n", body.size(),
                                         rtsql::crc32(body.data(), body.size())) +
                             body);
  return 0;
}
