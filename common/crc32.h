// CRC-32 (IEEE 802.3, as zlib and java.util.zip.CRC32 compute it): the
// checksum of checkpoint metadata and the catalog file, and SQL's crc32().
#pragma once

#include <cstddef>
#include <cstdint>

namespace rtsql {

uint32_t crc32(const void* data, size_t size);

}  // namespace rtsql
