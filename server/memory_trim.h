// Gives back to the system the memory that glibc's malloc holds free.
// A burst (a view loading millions of keys: records queued between a
// source and its aggregation, RocksDB's memtables filling) leaves the
// process with a large heap that, once freed, malloc keeps: only the top of
// each arena's heap is returned by itself, and a chunk still in use above
// the freed ones keeps them all. After a 2 million key view loaded, rtsqld
// held 1.5 GB of which malloc had 244 MB in use (docs/benchmarks.md, "View
// lookups"). malloc_trim() returns the free pages inside the heaps too; the
// trimmer calls it every few seconds when the process's resident memory
// beyond what malloc has in use grew by much since its last trim, and not
// otherwise, since a trim walks every arena under its lock; while the passes
// find the process's memory as it was, each waits twice as long as the one
// before (an idle server's trimmer wakes about once in 160 s). (Not malloc's
// count of free bytes: the chunks a trim gave back stay free chunks in it,
// and a burst that takes them again and frees them leaves it as it was.)
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <thread>

namespace rtsql {

class MemoryTrimmer {
 public:
  struct Options {
    std::chrono::milliseconds interval{10000};
    // The longest wait, in intervals, after passes that found the memory
    // as it was.
    int maxBackoff = 16;
    // Free memory malloc may hold before a trim is worth its walk.
    size_t minFreeBytes = size_t{64} << 20;
  };

  // Starts the trimmer's thread.
  explicit MemoryTrimmer(Options options);
  MemoryTrimmer() : MemoryTrimmer(Options{}) {}
  // Stops and joins the thread.
  ~MemoryTrimmer();
  MemoryTrimmer(const MemoryTrimmer&) = delete;
  MemoryTrimmer& operator=(const MemoryTrimmer&) = delete;

  // The free bytes malloc holds in its heaps (mallinfo2's fordblks).
  static size_t freeBytes();
  // The process's resident bytes that malloc does not have in use: its free
  // chunks that are resident, and what is not malloc's (code, stacks).
  static size_t residentNotInUse();
  // One pass of the thread's: trims when residentNotInUse() is at least
  // options.minFreeBytes above what it was after the last trim (or the
  // least it was since); true when it trimmed.
  bool pass();
  // How long the thread waits before its next pass: the interval after a
  // pass that trimmed or found the memory moved by an eighth of
  // minFreeBytes, twice the last wait (up to maxBackoff intervals) otherwise.
  std::chrono::milliseconds nextWait();

 private:
  void run();

  const Options options_;
  std::mutex passMu_;
  size_t floor_;  // residentNotInUse() after the last trim, or the least since
  size_t last_;   // residentNotInUse() at the last pass
  int backoff_ = 1;  // the next wait, in intervals
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace rtsql
