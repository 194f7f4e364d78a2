// Spark's XxHash64Function for the layers above common: the hash of a value
// by Spark's rules for its type (a BOOLEAN or INT hashed as a 4-byte int, a
// BIGINT or TIMESTAMP as a long, a DOUBLE with -0.0 and NaN normalized, a
// STRING's UTF-8 bytes), chained from `seed`. xxhash64() (seed 42) and
// approx_count_distinct (executor/operators/aggregates/hyperloglog.cpp) use
// it, so that both answer as Spark does for the same values.
#pragma once

#include <cstdint>

#include "common/value.h"

namespace rtsql {

uint64_t sparkXxHash64(const Value& v, uint64_t seed);

}  // namespace rtsql
