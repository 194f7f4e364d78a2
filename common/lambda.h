// Lambdas of the higher-order functions (transform, filter, exists, forall,
// aggregate, reduce, zip_with, array_sort with a comparator), for the binder:
// a lambda is makeLambda() over a body whose parameters are
// makeLambdaVariable() nodes, passed to makeCall() (common/expr.h) as an
// argument of the function. The function points one slot per parameter at the
// element it is looking at; a variable reads its slot. The binder numbers the
// slots so that a lambda inside another uses different ones. Implemented in
// common/functions/higher_order.cpp.
#pragma once

#include <string>
#include <vector>

#include "common/expr.h"

namespace rtsql {

// How many parameters the lambdas around a point of an expression may have
// together.
inline constexpr int kMaxLambdaSlots = 32;

ExprPtr makeLambdaVariable(int slot, DataTypePtr type, std::string name);
ExprPtr makeLambda(std::vector<int> slots, std::vector<std::string> names, ExprPtr body);

// The types of the parameters of a lambda written as argument `index` of
// `name` with `arity` parameters, given the arguments bound before it; throws
// 42804 when that argument of `name` cannot be such a lambda, 42883 when
// `name` is no function.
std::vector<DataTypePtr> lambdaParameterTypes(const std::string& name,
                                              const std::vector<ExprPtr>& before, size_t index,
                                              size_t arity, size_t pos);

}  // namespace rtsql
