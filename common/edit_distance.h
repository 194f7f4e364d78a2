// How far apart two names are, for the "perhaps you meant" hints of errors
// that name an unknown option, function or column.
#pragma once

#include <cstddef>
#include <string_view>

namespace rtsql {

// Levenshtein distance, ignoring ASCII case: the fewest insertions, deletions
// and substitutions of characters that turn `a` into `b`.
size_t editDistance(std::string_view a, std::string_view b);

}  // namespace rtsql
