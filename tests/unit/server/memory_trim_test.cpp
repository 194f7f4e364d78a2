// The memory trimmer gives back what malloc holds free after a burst, which
// malloc itself keeps while a chunk above the freed ones is in use.
#include <doctest/doctest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "server/memory_trim.h"
#include "server_test_util.h"

namespace {

constexpr size_t kMiB = size_t{1} << 20;

// Under AddressSanitizer or ThreadSanitizer malloc is the sanitizer's, which
// keeps no glibc heaps: mallinfo2() reads zeros and malloc_trim() has nothing
// to give back, so these tests are for the plain builds only.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitizerMalloc = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool kSanitizerMalloc = true;
#else
constexpr bool kSanitizerMalloc = false;
#endif
#else
constexpr bool kSanitizerMalloc = false;
#endif

size_t residentBytes() {
  long pages = 0;
  long resident = 0;
  FILE* f = std::fopen("/proc/self/statm", "r");
  REQUIRE(f != nullptr);
  REQUIRE(std::fscanf(f, "%ld %ld", &pages, &resident) == 2);
  std::fclose(f);
  return static_cast<size_t>(resident) * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

// A burst on a thread of its own (an arena of its own, as a flow's task
// has): 160 MiB of small chunks, written so that they are resident, all
// freed but the last, which keeps malloc from returning the heap's top.
// Returns the chunk kept.
void* burst() {
  constexpr size_t kChunk = 1024;
  constexpr size_t kChunks = 160 * 1024;
  void* kept = nullptr;
  std::thread t([&] {
    std::vector<void*> chunks;
    chunks.reserve(kChunks);
    for (size_t i = 0; i < kChunks; ++i) {
      chunks.push_back(std::malloc(kChunk));
      static_cast<char*>(chunks.back())[0] = 1;
      static_cast<char*>(chunks.back())[kChunk - 1] = 1;
    }
    kept = chunks.back();
    chunks.pop_back();
    for (void* p : chunks) std::free(p);
  });
  t.join();
  return kept;
}

}  // namespace

TEST_CASE("memory trim: what malloc holds free after a burst goes back to the system" *
          doctest::skip(kSanitizerMalloc)) {
  rtsql::MemoryTrimmer::Options o;
  o.interval = std::chrono::hours(1);  // the passes below are the test's
  rtsql::MemoryTrimmer trimmer(o);
  void* first = burst();
  CHECK(rtsql::MemoryTrimmer::freeBytes() >= 100 * kMiB);
  size_t before = residentBytes();
  CHECK(trimmer.pass());
  CHECK(before - std::min(before, residentBytes()) >= 100 * kMiB);
  // Nothing freed since: no other walk of the heaps.
  CHECK_FALSE(trimmer.pass());
  // Another burst is given back in its turn.
  void* second = burst();
  before = residentBytes();
  CHECK(trimmer.pass());
  CHECK(before - std::min(before, residentBytes()) >= 100 * kMiB);
  std::free(first);
  std::free(second);
}

TEST_CASE("memory trim: the trimmer's thread trims by itself" * doctest::skip(kSanitizerMalloc)) {
  rtsql::MemoryTrimmer::Options o;
  o.interval = std::chrono::milliseconds(10);
  rtsql::MemoryTrimmer trimmer(o);
  const size_t before = residentBytes();
  void* kept = burst();
  CHECK(rtsql::testing::eventually(
      [&] { return residentBytes() < before + 100 * kMiB; }, std::chrono::seconds(30)));
  std::free(kept);
}

TEST_CASE("memory trim: passes that find the memory as it was wait longer, up to a bound") {
  rtsql::MemoryTrimmer::Options o;
  o.interval = std::chrono::hours(1);  // the passes below are the test's
  o.maxBackoff = 8;
  rtsql::MemoryTrimmer trimmer(o);
  using std::chrono::hours;
  CHECK(trimmer.nextWait() == hours(1));
  // Nothing allocated or freed in between (a few pages at most).
  trimmer.pass();
  CHECK(trimmer.nextWait() == hours(2));
  trimmer.pass();
  trimmer.pass();
  CHECK(trimmer.nextWait() == hours(8));
  trimmer.pass();
  CHECK(trimmer.nextWait() == hours(8));
  if (kSanitizerMalloc) return;  // no glibc heaps to grow or trim
  // A burst moves the memory: the next pass trims it and waits one interval.
  void* kept = burst();
  CHECK(trimmer.pass());
  CHECK(trimmer.nextWait() == hours(1));
  std::free(kept);
}
