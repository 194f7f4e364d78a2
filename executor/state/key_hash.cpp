#include "executor/state/key_hash.h"

// The hash is compiled in from xxHash's header (libxxhash-dev), so that the
// binaries need no libxxhash at run time.
#define XXH_INLINE_ALL
#include <xxhash.h>

namespace rtsql {

uint64_t stateKeyHash(std::string_view key) noexcept {
  return XXH3_64bits(key.data(), key.size());
}

}  // namespace rtsql
