#include "executor/state/stored_key_filter.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <string>

#include "executor/state/key_hash.h"

using namespace rtsql;

namespace {

uint64_t hashOf(const std::string& prefix, int i) {
  return stateKeyHash(prefix + std::to_string(i));
}

}  // namespace

TEST_CASE("stored key filter: every key added is found, across parts that double") {
  StoredKeyFilter f;
  CHECK_FALSE(f.mayContain(hashOf("k", 0)));
  const int n = 300000;  // 4096, 8192, ... : seven parts
  int64_t bytes = 0;
  for (int i = 0; i < n; ++i) bytes += f.add(hashOf("k", i), int64_t{1} << 30);
  CHECK(bytes == f.memoryBytes());
  CHECK(f.keys() == static_cast<uint64_t>(n));
  // 14 bits a key, the last part at most twice what it holds.
  CHECK(f.memoryBytes() <= int64_t{n} * 14 / 8 * 2 + 8192);
  int missing = 0;
  for (int i = 0; i < n; ++i)
    if (!f.mayContain(hashOf("k", i))) ++missing;
  CHECK(missing == 0);
  // Absent keys: a fraction of a percent per full part.
  int passed = 0;
  const int absent = 200000;
  for (int i = 0; i < absent; ++i)
    if (f.mayContain(hashOf("absent", i))) ++passed;
  MESSAGE("false positives: " << passed << " of " << absent);
  CHECK(passed < absent / 50);
}

TEST_CASE("stored key filter: past its limit it says maybe for every key and frees its parts") {
  StoredKeyFilter f;
  const int64_t limit = 64 * 1024;
  int64_t bytes = 0;
  int i = 0;
  while (!f.saturated()) {
    bytes += f.add(hashOf("k", i++), limit);
    CHECK(f.memoryBytes() <= limit);
    REQUIRE(i < 1000000);
  }
  CHECK(bytes == 0);  // what it allocated came back as it saturated
  CHECK(f.memoryBytes() == 0);
  CHECK(f.mayContain(hashOf("absent", 1)));
  CHECK(f.add(hashOf("k", i), limit) == 0);
}

TEST_CASE("stored key filter: saturate() gives its memory back") {
  StoredKeyFilter f;
  const int64_t grown = f.add(hashOf("k", 1), int64_t{1} << 20);
  CHECK(grown > 0);
  CHECK_FALSE(f.mayContain(hashOf("absent", 1)));
  CHECK(f.saturate() == -grown);
  CHECK(f.memoryBytes() == 0);
  CHECK(f.mayContain(hashOf("absent", 1)));
}
