// The higher-order functions' entries in the function table, private to the
// common layer like internal.h (see common/lambda.h for what they are).
#pragma once

#include <string>
#include <vector>

#include "common/functions/internal.h"

namespace rtsql::expr_internal {

void registerHigherOrderFunctions(FunctionTable& t);
// array_sort(arr, (l, r) -> n), for array_sort's builder (nested.cpp).
ExprPtr buildArraySortWithComparator(const std::string& name, std::vector<ExprPtr>& args, size_t pos);

}  // namespace rtsql::expr_internal
