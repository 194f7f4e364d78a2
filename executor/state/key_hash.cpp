#include "executor/state/key_hash.h"

#include <xxh_x86dispatch.h>

namespace rtsql {

// libxxhash's dispatching entry point picks the widest vector instructions
// the CPU has: on a long key AVX2 takes half the instructions of the SSE2
// that code compiled for any x86-64 is limited to.
uint64_t stateKeyHash(std::string_view key) noexcept {
  return XXH3_64bits_dispatch(key.data(), key.size());
}

}  // namespace rtsql
