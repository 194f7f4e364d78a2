#include "server/memory_trim.h"

#include <malloc.h>
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace rtsql {

MemoryTrimmer::MemoryTrimmer(Options options)
    : options_(options), floor_(residentNotInUse()), last_(floor_) {
  thread_ = std::thread([this] { run(); });
  pthread_setname_np(thread_.native_handle(), "memory-trim");
}

MemoryTrimmer::~MemoryTrimmer() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

size_t MemoryTrimmer::freeBytes() { return mallinfo2().fordblks; }

size_t MemoryTrimmer::residentNotInUse() {
  long pages = 0;
  long resident = 0;
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  const bool read = std::fscanf(f, "%ld %ld", &pages, &resident) == 2;
  std::fclose(f);
  if (!read) return 0;
  const size_t rss = static_cast<size_t>(resident) * static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const struct mallinfo2 m = mallinfo2();
  return rss - std::min(rss, m.uordblks + m.hblkhd);
}

bool MemoryTrimmer::pass() {
  std::lock_guard lock(passMu_);
  const size_t held = residentNotInUse();
  const size_t moved = held > last_ ? held - last_ : last_ - held;
  last_ = held;
  backoff_ = moved >= options_.minFreeBytes / 8 ? 1 : std::min(backoff_ * 2, options_.maxBackoff);
  // Memory taken again since the last trim: what is freed after it counts
  // from there.
  floor_ = std::min(floor_, held);
  if (held < floor_ + options_.minFreeBytes) return false;
  malloc_trim(0);
  floor_ = last_ = residentNotInUse();
  backoff_ = 1;
  return true;
}

std::chrono::milliseconds MemoryTrimmer::nextWait() {
  std::lock_guard lock(passMu_);
  return options_.interval * backoff_;
}

void MemoryTrimmer::run() {
  std::unique_lock lock(mu_);
  while (!cv_.wait_for(lock, nextWait(), [this] { return stopping_; })) {
    lock.unlock();
    pass();
    lock.lock();
  }
}

}  // namespace rtsql
