// The cap on the size of one value (64 MiB) for the layers above common: the
// aggregates that build a list per group (collect_list, collect_set,
// string_agg) check it as the functions that build values do
// (common/functions/value_size.cpp).
#pragma once

#include <cstddef>
#include <string_view>

namespace rtsql {

// Throws 54000 (program_limit_exceeded) naming `fn` when a value of `bytes`
// would pass the cap.
void checkBuiltValueSize(std::string_view fn, size_t bytes);

}  // namespace rtsql
