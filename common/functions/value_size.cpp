// The cap on the size of a value a function builds (see internal.h).
#include <fmt/format.h>

#include "common/functions/internal.h"
#include "common/value_size.h"

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

namespace rtsql {

void checkBuiltValueSize(std::string_view fn, size_t bytes) {
  expr_internal::checkValueSize(fn, bytes);
}

}  // namespace rtsql
