// The cap on the size of a value a function builds (see internal.h).
#include <fmt/format.h>

#include "common/functions/internal.h"

namespace rtsql::expr_internal {

void checkValueSize(std::string_view fn, size_t bytes) {
  if (bytes <= kMaxValueBytes) return;
  throw SqlError(
      sqlstate::kProgramLimitExceeded,
      fmt::format("{} would build a value of {} bytes, over the limit of {} MiB per value", fn,
                  bytes, kMaxValueBytes >> 20),
      SqlError::npos, "a string, binary or array value holds at most 64 MiB");
}

}  // namespace rtsql::expr_internal
