// Counters that one thread writes and any thread reads: the task thread counts
// records, progress requests read the counts live. With a single writer an
// increment needs no locked read-modify-write (lock xadd costs tens of cycles
// per record); a relaxed load and store is exact, and a reader on another thread
// sees a recent value, never a torn one. A second writer would lose counts, so
// each counter has exactly one owning thread.
#pragma once

#include <atomic>
#include <cstdint>

namespace rtsql {

template <typename T>
inline void addOwned(std::atomic<T>& counter, T n = 1) {
  counter.store(counter.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
}

}  // namespace rtsql
