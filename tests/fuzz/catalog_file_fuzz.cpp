// Fuzz target: the catalog file rtsqld reads at startup (server/catalog_file.h).
// A damaged file must be refused with a SqlError, never crash the server. Each
// input is read twice: as it is (mostly stopped by the header's length and
// checksum), and as the body of a file whose header is made to match, so the
// record parser behind the checksum sees every input too.
#include <fmt/format.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "common/crc32.h"
#include "common/error.h"
#include "server/catalog_file.h"

namespace {

void parse(const std::string& text) {
  try {
    rtsql::parseCatalogFile(text);
  } catch (const rtsql::SqlError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  parse(text);
  // The body after the input's own header line, if it has one, else the whole.
  const size_t nl = text.find('\n');
  const std::string body = nl == std::string::npos ? text : text.substr(nl + 1);
  parse(fmt::format("rtsql-catalog 1 {} {:08x}\n", body.size(),
                    rtsql::crc32(body.data(), body.size())) +
        body);
  return 0;
}
