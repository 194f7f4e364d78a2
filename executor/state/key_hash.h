// The one hash of a state key. A table hashes a key once, when an operator
// hands it over, and carries that hash with the key wherever the table needs
// it again: its cache's map (lookup, insert, rehash, eviction) and the filter
// of the keys it wrote to RocksDB (stored_key_filter.h). State keys are often
// kilobytes (a GROUP BY over a long string), so the hash is XXH3, which costs
// a fraction of std::hash's byte-at-a-time Murmur on such keys.
#pragma once

#include <cstdint>
#include <string_view>

namespace rtsql {

// XXH3 (64 bits) of the key's bytes. Not a file format: hashes live in
// memory only and are recomputed when a table opens.
uint64_t stateKeyHash(std::string_view key) noexcept;

}  // namespace rtsql
