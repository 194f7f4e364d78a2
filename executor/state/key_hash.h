// The one hash of a state key. A table hashes a key once, when an operator
// hands it over, and carries that hash with the key wherever the table needs
// it again: its cache's map (lookup, insert, rehash, eviction) and the filter
// of the keys it wrote to RocksDB (stored_key_filter.h). State keys are often
// kilobytes (a GROUP BY over a long string), so the hash is XXH3 (libxxhash,
// with the widest vector instructions the CPU has): on a 1.2 KB key a
// quarter of the instructions of std::hash's Murmur, 8 bytes a step.
#pragma once

#include <cstdint>
#include <string_view>

namespace rtsql {

// XXH3 (64 bits) of the key's bytes. Not a file format: hashes live in
// memory only and are recomputed when a table opens.
uint64_t stateKeyHash(std::string_view key) noexcept;

}  // namespace rtsql
