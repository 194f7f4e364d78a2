// CPU priority of rtsql's own threads.
//
// Flows come first: work that no one waits on by the millisecond (a live
// query's tasks, the consumer that feeds them) runs at a lower priority, so
// that its bursts take the CPU only when flows leave it. On Linux the nice
// value is per thread; raising it needs no privilege, and since lowering it
// again would, only threads that end with their work are made nicer.
#pragma once

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace rtsql {

// How much nicer than the process the threads that serve live queries are.
constexpr int kLiveQueryNice = 19;

// The calling thread's nice value.
inline int currentThreadNice() {
  const auto tid = static_cast<id_t>(::syscall(SYS_gettid));
  return ::getpriority(PRIO_PROCESS, tid);
}

// Makes the calling thread `by` nicer than it is (at most 19, the lowest
// priority); best effort: returns false when the system refuses.
inline bool lowerCurrentThreadPriority(int by) {
  const auto tid = static_cast<id_t>(::syscall(SYS_gettid));
  const int target = currentThreadNice() + by;
  return ::setpriority(PRIO_PROCESS, tid, target > 19 ? 19 : target) == 0;
}

}  // namespace rtsql
