// try_cast(x AS type), as Spark has it: the cast ANSI mode does, in either
// mode, with NULL where that cast raises (text that does not parse, a number
// that does not fit). The parser reads it as a Cast node named "try_cast".
#pragma once

#include "common/expr.h"

namespace rtsql {

// try_cast(e AS target); 42804 at `pos` for a cast CAST refuses too.
ExprPtr makeTryCast(ExprPtr e, DataTypePtr target, size_t pos);

}  // namespace rtsql
