// Wall-clock and monotonic time in microseconds, the unit of every timestamp and
// latency in rtsql.
#pragma once

#include <chrono>
#include <cstdint>

namespace rtsql {

inline int64_t nowMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}
inline int64_t monotonicMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace rtsql
