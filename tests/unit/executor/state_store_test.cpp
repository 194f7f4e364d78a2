#include "executor/state/state_store.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "common/error.h"
#include "common/row_codec.h"
#include "tests/unit/executor/state_test_util.h"

using namespace rtsql;

namespace {

std::unique_ptr<StateStore> openStore(const std::string& path, int64_t cacheBytes = 64LL << 20) {
  StateStoreOptions o;
  o.path = path;
  o.cacheBytes = cacheBytes;
  return StateStore::open(o);
}

std::string intKey(int64_t i) {
  std::string k;
  encodeKeyInt(k, i);
  return k;
}

std::map<std::string, std::string> contents(StateTable& t) {
  std::map<std::string, std::string> out;
  t.scan("", "", [&](std::string_view k, std::string_view v) {
    out.emplace(k, v);
    return true;
  });
  return out;
}

std::string valueFor(int i) {
  return "value-" + std::to_string(i) + std::string(static_cast<size_t>(i % 7), 'x');
}

}  // namespace

TEST_CASE("state store: put, get, erase and size") {
  testing::TempDir dir("state_test");
  auto store = openStore(dir.sub("db"));
  auto t = store->table(1, 0);
  std::string v;
  CHECK_FALSE(t->get("a", v));
  CHECK(t->size() == 0);
  t->put("a", "1");
  t->put("b", "2");
  CHECK(t->size() == 2);
  REQUIRE(t->get("a", v));
  CHECK(v == "1");
  t->put("a", "11");  // overwrite: no new key
  CHECK(t->size() == 2);
  REQUIRE(t->get("a", v));
  CHECK(v == "11");
  t->erase("a");
  CHECK(t->size() == 1);
  CHECK_FALSE(t->get("a", v));
  t->erase("a");  // erasing twice, or a key never stored, changes nothing
  t->erase("zzz");
  CHECK(t->size() == 1);
  t->put("a", "again");
  CHECK(t->size() == 2);
  CHECK(t->memoryBytes() > 0);

  // The same through RocksDB: flushed keys are known to exist when the cache
  // no longer holds them (a fresh table has an empty cache).
  t->put(std::string("k\0ey", 4), std::string("\0v", 2));
  t->flush();
  t.reset();
  auto t2 = store->table(1, 0);
  CHECK(t2->size() == 3);
  CHECK(t2->memoryBytes() == 0);
  REQUIRE(t2->get(std::string("k\0ey", 4), v));
  CHECK(v == std::string("\0v", 2));
  t2->put("b", "22");  // exists only on disk: still not a new key
  CHECK(t2->size() == 3);
  t2->erase("a");
  CHECK(t2->size() == 2);
  t2->erase("a");
  CHECK(t2->size() == 2);
  t2->put("c", "3");
  CHECK(t2->size() == 3);
  CHECK(contents(*t2) ==
        std::map<std::string, std::string>{
            {"b", "22"}, {"c", "3"}, {std::string("k\0ey", 4), std::string("\0v", 2)}});
}

TEST_CASE("state store: tables of different operators and tasks are isolated") {
  testing::TempDir dir("state_test");
  auto store = openStore(dir.sub("db"));
  // Neighbouring ids, and ids whose prefixes carry into the next byte.
  std::vector<std::pair<int, int>> ids = {{1, 0},   {1, 1},   {2, 0},  {0, 1},
                                          {1, 255}, {1, 256}, {3, -1}, {4, 0}};
  std::vector<std::unique_ptr<StateTable>> tables;
  for (auto [op, task] : ids) tables.push_back(store->table(op, task));
  for (size_t i = 0; i < tables.size(); ++i) {
    tables[i]->put("shared", "t" + std::to_string(i));
    tables[i]->put("\xff\xff\xff\xff\xff\xff\xff\xff\xff", "high" + std::to_string(i));
    tables[i]->put("", "empty" + std::to_string(i));
    if (i % 2 == 0) tables[i]->flush();  // some on disk, some only cached
  }
  for (size_t i = 0; i < tables.size(); ++i) {
    CAPTURE(i);
    std::string v;
    REQUIRE(tables[i]->get("shared", v));
    CHECK(v == "t" + std::to_string(i));
    auto all = contents(*tables[i]);
    CHECK(all.size() == 3);
    CHECK(all["shared"] == "t" + std::to_string(i));
    CHECK(all[""] == "empty" + std::to_string(i));
    CHECK(tables[i]->size() == 3);
  }
  tables[0]->erase("shared");
  std::string v;
  CHECK_FALSE(tables[0]->get("shared", v));
  REQUIRE(tables[1]->get("shared", v));
  CHECK(v == "t1");

  // A key space is opened once at a time.
  CHECK_THROWS_AS(store->table(1, 0), InternalError);
  tables[0].reset();
  CHECK_NOTHROW(store->table(1, 0));
}

TEST_CASE("state store: scan order and bounds with cached writes and erases") {
  testing::TempDir dir("state_test");
  auto store = openStore(dir.sub("db"));
  auto t = store->table(7, 3);
  // Keys -50..49 as order-preserving integers, inserted out of order; half are
  // flushed, then some flushed and some cached keys are rewritten or erased.
  std::map<std::string, std::string> expected;
  for (int i = 0; i < 100; ++i) {
    int k = (i * 37) % 100 - 50;
    t->put(intKey(k), "v" + std::to_string(k));
    expected[intKey(k)] = "v" + std::to_string(k);
    if (i == 50) t->flush();
  }
  for (int k = -50; k < 50; k += 5) {
    t->erase(intKey(k));
    expected.erase(intKey(k));
  }
  t->put(intKey(-49), "rewritten");
  expected[intKey(-49)] = "rewritten";
  CHECK(t->size() == expected.size());

  std::vector<std::pair<std::string, std::string>> seen;
  t->scan(intKey(-49), intKey(10), [&](std::string_view k, std::string_view v) {
    seen.emplace_back(k, v);
    return true;
  });
  std::vector<std::pair<std::string, std::string>> want(expected.lower_bound(intKey(-49)),
                                                        expected.lower_bound(intKey(10)));
  CHECK(seen == want);
  CHECK(seen.front().second == "rewritten");

  // An empty upper bound scans to the end of the table; `false` stops the scan.
  int visited = 0;
  t->scan(intKey(40), "", [&](std::string_view, std::string_view) { return ++visited < 3; });
  CHECK(visited == 3);
  visited = 0;
  t->scan(intKey(40), "", [&](std::string_view, std::string_view) { return ++visited, true; });
  CHECK(visited ==
        static_cast<int>(std::distance(expected.lower_bound(intKey(40)), expected.end())));
  // Empty and inverted ranges.
  visited = 0;
  t->scan(intKey(3), intKey(3),
          [&](std::string_view, std::string_view) { return ++visited, true; });
  t->scan(intKey(9), intKey(3),
          [&](std::string_view, std::string_view) { return ++visited, true; });
  CHECK(visited == 0);

  // Erasing during a scan: each visited key, plus one key ahead of the scan,
  // which must then not be visited.
  t->put(intKey(100), "cached-only");
  expected[intKey(100)] = "cached-only";
  std::vector<std::string> erasedKeys;
  t->scan("", "", [&](std::string_view k, std::string_view v) {
    CHECK(expected.at(std::string(k)) == v);
    erasedKeys.emplace_back(k);
    t->erase(k);
    if (k == intKey(-49)) t->erase(intKey(49));
    return true;
  });
  CHECK(erasedKeys.size() == expected.size() - 1);
  CHECK(std::find(erasedKeys.begin(), erasedKeys.end(), intKey(49)) == erasedKeys.end());
  CHECK(t->size() == 0);
  CHECK(contents(*t).empty());
  t->flush();
  CHECK(contents(*t).empty());
}

TEST_CASE("state store: state larger than the memory budget") {
  testing::TempDir dir("state_test");
  const int64_t budget = 64 * 1024;
  auto store = openStore(dir.sub("db"), budget);
  auto t = store->table(1, 0);
  const int n = 100000;
  int64_t maxMemory = 0;
  for (int i = 0; i < n; ++i) {
    t->put(intKey(i), valueFor(i));
    maxMemory = std::max(maxMemory, t->memoryBytes());
  }
  CHECK(t->size() == static_cast<uint64_t>(n));
  // Within the budget, plus the one entry that pushed it over.
  CHECK(maxMemory <= budget + 256);
  CHECK(t->memoryBytes() > budget / 2);
  std::string v;
  int wrong = 0;
  for (int i = 0; i < n; ++i) {
    if (!t->get(intKey(i), v) || v != valueFor(i)) ++wrong;
    maxMemory = std::max(maxMemory, t->memoryBytes());
  }
  CHECK(wrong == 0);
  CHECK(maxMemory <= budget + 256);
  for (int i = 0; i < n; i += 2) t->erase(intKey(i));
  CHECK(t->size() == static_cast<uint64_t>(n / 2));
  CHECK_FALSE(t->get(intKey(0), v));
  REQUIRE(t->get(intKey(1), v));
  CHECK(v == valueFor(1));
  int64_t count = 0;
  bool ordered = true;
  std::string prev;
  t->scan("", "", [&](std::string_view k, std::string_view val) {
    std::string_view kv = k;
    int64_t i = decodeKeyInt(kv);
    if (i % 2 == 0 || val != valueFor(static_cast<int>(i)) || (count && std::string(k) <= prev))
      ordered = false;
    prev = k;
    ++count;
    return true;
  });
  CHECK(ordered);
  CHECK(count == n / 2);
  CHECK(store->diskBytes() > 0);
}

TEST_CASE("state store: tables of several tasks share the budget from several threads") {
  testing::TempDir dir("state_test");
  const int64_t budget = 128 * 1024;
  auto store = openStore(dir.sub("db"), budget);
  const int tasks = 2, n = 20000;
  std::vector<std::unique_ptr<StateTable>> tables;
  for (int i = 0; i < tasks; ++i) tables.push_back(store->table(5, i));
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int task = 0; task < tasks; ++task) {
    threads.emplace_back([&, task] {
      auto& t = *tables[task];
      for (int i = 0; i < n; ++i) t.put(intKey(i), std::to_string(task) + ":" + valueFor(i));
      t.flush();
      std::string v;
      for (int i = 0; i < n; ++i)
        if (!t.get(intKey(i), v) || v != std::to_string(task) + ":" + valueFor(i))
          wrong.fetch_add(1);
    });
  }
  for (auto& th : threads) th.join();
  CHECK(wrong.load() == 0);
  // A table evicts only its own entries, on its own access; at the epoch end
  // every task flushes, which brings the store back within its budget.
  for (auto& t : tables) t->flush();
  int64_t total = 0;
  for (auto& t : tables) {
    CHECK(t->size() == static_cast<uint64_t>(n));
    CHECK(t->memoryBytes() > 0);
    total += t->memoryBytes();
  }
  CHECK(total <= budget);
}

TEST_CASE("state store: snapshot, reopen and destroy on close") {
  testing::TempDir dir("state_test");
  std::string snap = dir.sub("snap-1");
  {
    auto store = openStore(dir.sub("db"), 16 * 1024);
    auto t = store->table(2, 1);
    for (int i = 0; i < 2000; ++i) t->put(intKey(i), valueFor(i));
    t->erase(intKey(5));
    t->flush();
    store->snapshot(snap);
    // Written after the snapshot: in the database, not in the snapshot.
    t->put(intKey(5), "after");
    t->erase(intKey(6));
    t->flush();
    CHECK_THROWS_AS(store->snapshot(snap), SqlError);  // the directory exists
  }
  {
    auto restored = openStore(snap);
    auto t = restored->table(2, 1);
    CHECK(t->size() == 1999);
    std::string v;
    CHECK_FALSE(t->get(intKey(5), v));
    REQUIRE(t->get(intKey(6), v));
    CHECK(v == valueFor(6));
    auto all = contents(*t);
    CHECK(all.size() == 1999);
    CHECK(all[intKey(1999)] == valueFor(1999));
    CHECK(restored->table(2, 0)->size() == 0);
  }
  {
    // The original store reopened after close has everything flushed.
    auto store = openStore(dir.sub("db"));
    auto t = store->table(2, 1);
    CHECK(t->size() == 1999);
    std::string v;
    REQUIRE(t->get(intKey(5), v));
    CHECK(v == "after");
    CHECK_FALSE(t->get(intKey(6), v));
    // Two stores on one directory: RocksDB's lock refuses the second.
    try {
      openStore(dir.sub("db"));
      FAIL("a second open of a locked store succeeded");
    } catch (const SqlError& e) {
      CHECK(e.sqlstate() == "58030");
    }
  }
  {
    StateStoreOptions o;
    o.path = dir.sub("scratch");
    o.destroyOnClose = true;
    auto store = StateStore::open(o);
    auto t = store->table(1, 1);
    t->put("k", "v");
    t->flush();
    CHECK(std::filesystem::exists(o.path));
    t.reset();
    store.reset();
    CHECK_FALSE(std::filesystem::exists(o.path));
  }
}

TEST_CASE("state store: an unusable path is SQLSTATE 58030 naming the path") {
  testing::TempDir dir("state_test");
  std::filesystem::create_directories(dir.path);
  std::string file = dir.sub("not-a-dir");
  std::ofstream(file) << "x";
  std::string path = file + "/state";
  try {
    openStore(path);
    FAIL("opening a store under a regular file succeeded");
  } catch (const SqlError& e) {
    CHECK(e.sqlstate() == "58030");
    CHECK(e.message().find(path) != std::string::npos);
  }
  try {
    openStore(file);  // the path itself is a regular file
    FAIL("opening a store on a regular file succeeded");
  } catch (const SqlError& e) {
    CHECK(e.sqlstate() == "58030");
    CHECK(e.message().find(file) != std::string::npos);
  }
}

TEST_CASE("state store: throughput (printed, not asserted)") {
  testing::TempDir dir("state_test");
  const int n = 200000;
  for (int64_t budget : {int64_t{256} << 20, int64_t{1} << 20}) {
    auto store = openStore(dir.sub("db-" + std::to_string(budget)), budget);
    auto t = store->table(1, 0);
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < n; ++i) t->put(intKey((i * 7919LL) % n), valueFor(i));
    auto beforeFlush = std::chrono::steady_clock::now();
    t->flush();
    auto mid = std::chrono::steady_clock::now();
    std::string v;
    int found = 0;
    for (int i = 0; i < n; ++i) found += t->get(intKey((i * 104729LL) % n), v);
    auto end = std::chrono::steady_clock::now();
    CHECK(found == n);
    double putSec = std::chrono::duration<double>(mid - start).count();
    double getSec = std::chrono::duration<double>(end - mid).count();
    double flushSec = std::chrono::duration<double>(mid - beforeFlush).count();
    MESSAGE("budget " << (budget >> 10) << " KiB, " << n
                      << " keys: " << static_cast<int64_t>(n / putSec) << " puts/s (flush "
                      << static_cast<int64_t>(flushSec * 1000) << " ms), "
                      << static_cast<int64_t>(n / getSec) << " gets/s, memory "
                      << (t->memoryBytes() >> 10) << " KiB, disk " << (store->diskBytes() >> 10)
                      << " KiB");
  }
}

TEST_CASE("state store: a scan merges the writes since the last flush and writes nothing") {
  testing::TempDir dir("state_test");
  std::string snap = dir.sub("snap");
  {
    auto store = openStore(dir.sub("db"));
    auto t = store->table(3, 0);
    t->put(intKey(1), "one");
    t->put(intKey(2), "two");
    t->flush();
    CHECK(contents(*t) ==
          std::map<std::string, std::string>{{intKey(1), "one"}, {intKey(2), "two"}});
    // Written after the scan above made its view of the database: the next
    // scans see them all the same, each as it is now.
    t->put(intKey(3), "three");
    t->erase(intKey(1));
    t->put(intKey(2), "two again");
    CHECK(contents(*t) ==
          std::map<std::string, std::string>{{intKey(2), "two again"}, {intKey(3), "three"}});
    t->put(intKey(0), "zero");
    t->erase(intKey(3));
    CHECK(contents(*t) ==
          std::map<std::string, std::string>{{intKey(0), "zero"}, {intKey(2), "two again"}});
    // The scans wrote nothing: RocksDB still holds what the flush wrote.
    store->snapshot(snap);
    t->flush();
    t->put(intKey(4), "four");
    CHECK(contents(*t) == std::map<std::string, std::string>{
                              {intKey(0), "zero"}, {intKey(2), "two again"}, {intKey(4), "four"}});
  }
  auto restored = openStore(snap);
  auto t = restored->table(3, 0);
  CHECK(contents(*t) == std::map<std::string, std::string>{{intKey(1), "one"}, {intKey(2), "two"}});
}

TEST_CASE("state store: a scan sees the entries evicted while it runs") {
  testing::TempDir dir("state_test");
  auto store = openStore(dir.sub("db"), 32 * 1024);
  auto t = store->table(4, 0);
  // Dirty entries in the scanned range; the visitor writes far more than the
  // budget elsewhere, which evicts (writes) those not yet visited.
  for (int i = 0; i < 50; ++i) t->put(intKey(i), valueFor(i));
  int visited = 0, wrong = 0, next = 1000;
  t->scan(intKey(0), intKey(50), [&](std::string_view k, std::string_view v) {
    std::string_view kv = k;
    const int64_t i = decodeKeyInt(kv);
    if (i != visited || v != valueFor(static_cast<int>(i))) ++wrong;
    ++visited;
    for (int j = 0; j < 100; ++j, ++next) t->put(intKey(next), valueFor(next));
    return true;
  });
  CHECK(visited == 50);
  CHECK(wrong == 0);
  CHECK(t->size() == static_cast<uint64_t>(50 + next - 1000));
}

TEST_CASE("state store: erased keys leave the cache at the flush") {
  testing::TempDir dir("state_test");
  auto store = openStore(dir.sub("db"));
  auto t = store->table(6, 0);
  for (int i = 0; i < 1000; ++i) t->put(intKey(i), valueFor(i));
  t->flush();
  const int64_t full = t->memoryBytes();
  // Expiry-like churn: every key erased, new keys put, epoch after epoch.
  for (int round = 1; round <= 5; ++round) {
    for (int i = 0; i < 1000; ++i) {
      t->erase(intKey((round - 1) * 1000 + i));
      t->put(intKey(round * 1000 + i), valueFor(i));
    }
    t->flush();
    // The cache holds the live keys, not the erased ones.
    CHECK(t->memoryBytes() <= full + 1000);
  }
  CHECK(t->size() == 1000);
  std::string v;
  CHECK_FALSE(t->get(intKey(0), v));
  CHECK_FALSE(t->get(intKey(4999), v));
  REQUIRE(t->get(intKey(5000), v));
  CHECK(v == valueFor(0));
  CHECK(contents(*t).size() == 1000);
}

TEST_CASE("state store: new keys are written behind in small batches, not all at the flush") {
  testing::TempDir dir("state_test");
  // A budget far above what is put: nothing is evicted, so only writing
  // behind brings an entry into RocksDB before the flush.
  auto store = openStore(dir.sub("db"), 256LL << 20);
  auto t = store->table(7, 0);
  const std::string pad(1000, 'p');
  const int n = 12000;  // about 12 MB of new keys
  for (int i = 0; i < n; ++i) t->put(intKey(i) + pad, valueFor(i));
  auto reader = store->readers()();
  REQUIRE(reader);
  auto stored = [&](int i) {
    return reader->get(std::string("\0\0\0\x07\0\0\0\0", 8) + intKey(i) + pad).has_value();
  };
  // The oldest keys are in RocksDB already; the newest wait in the cache.
  CHECK(stored(0));
  CHECK(stored(n / 4));
  CHECK_FALSE(stored(n - 1));
  reader.reset();
  t->flush();
  CHECK(store->readers()()->get(std::string("\0\0\0\x07\0\0\0\0", 8) + intKey(n - 1) + pad) ==
        valueFor(n - 1));
  CHECK(t->size() == static_cast<uint64_t>(n));
  CHECK(contents(*t).size() == static_cast<size_t>(n));
}

TEST_CASE("state store: held writes are not written behind, so a snapshot is the barrier's state") {
  testing::TempDir dir("state_test");
  const std::string pad(1000, 'p');
  const std::string snap = dir.sub("snap");
  {
    auto store = openStore(dir.sub("db"), 256LL << 20);
    auto t = store->table(8, 1);
    for (int i = 0; i < 100; ++i) t->put(intKey(i) + pad, valueFor(i));
    t->flush();
    store->holdWrites(8, 1, true);
    // Far more than write-behind lets wait, put while the checkpoint is taken.
    for (int i = 100; i < 12000; ++i) t->put(intKey(i) + pad, valueFor(i));
    store->snapshot(snap);
    store->holdWrites(8, 1, false);
    // Let go, the table writes behind again.
    CHECK(store->readers()()->get(std::string("\0\0\0\x08\0\0\0\x01", 8) + intKey(100) + pad) ==
          valueFor(100));
  }
  auto restored = openStore(snap);
  auto t = restored->table(8, 1);
  CHECK(t->size() == 100);
  CHECK(contents(*t).size() == 100);
}

TEST_CASE("state store: what piled up while the writes were held is written in proportion to "
          "the writes after the hold, not at once") {
  testing::TempDir dir("state_test");
  const std::string pad(1000, 'p');
  auto store = openStore(dir.sub("db"), 256LL << 20);
  auto t = store->table(10, 0);
  for (int i = 0; i < 100; ++i) t->put(intKey(i) + pad, valueFor(i));
  t->flush();
  store->holdWrites(10, 0, true);
  // About 12 MB put while a checkpoint is taken, far more than write-behind
  // lets wait.
  const int held = 12000;
  for (int i = 100; i < held; ++i) t->put(intKey(i) + pad, valueFor(i));
  const auto reader = store->readers();
  auto storedHeld = [&] {
    auto r = reader();
    int n = 0;
    for (int i = 100; i < held; ++i)
      if (r->get(std::string("\0\0\0\x0a\0\0\0\0", 8) + intKey(i) + pad)) ++n;
    return n;
  };
  CHECK(storedHeld() == 0);
  store->holdWrites(10, 0, false);
  // As the hold ends, one batch of about a megabyte (about 1,000 entries of
  // 1 KB), what the puts during the hold earned.
  const int atRelease = storedHeld();
  CHECK(atRelease > 0);
  CHECK(atRelease <= 1100);
  // A poll of 100 records writes about four times what it brought, not a
  // megabyte per record (which wrote the whole backlog in that poll).
  int next = held;
  for (int i = 0; i < 100; ++i, ++next) t->put(intKey(next) + pad, valueFor(next));
  const int afterPoll = storedHeld();
  CHECK(afterPoll > atRelease);
  CHECK(afterPoll - atRelease <= 4 * 100 + 100);
  // The backlog is drained by the writes that follow: 4,000 records earn
  // 16 MB.
  for (int i = 0; i < 4000; ++i, ++next) t->put(intKey(next) + pad, valueFor(next));
  CHECK(storedHeld() == held - 100);
  t->flush();
  CHECK(t->size() == static_cast<uint64_t>(next));
  CHECK(contents(*t).size() == static_cast<size_t>(next));
}

TEST_CASE("state store: the engine's statistics name its files, flushes and stalls") {
  testing::TempDir dir("state_test");
  StateStoreOptions o;
  o.path = dir.sub("db");
  o.statistics = true;
  auto store = StateStore::open(o);
  auto t = store->table(1, 0);
  for (int i = 0; i < 1000; ++i) t->put(intKey(i), valueFor(i));
  t->flush();
  store->snapshot(dir.sub("snap"));  // flushes the memtable into a level-0 file
  const auto stats = store->engineStats();
  REQUIRE(stats.count("flushes"));
  CHECK(stats.at("flushes") >= 1);
  REQUIRE(stats.count("num-files-at-level0"));
  CHECK(stats.at("num-files-at-level0") >= 1);
  CHECK(stats.count("stall-micros"));
  CHECK(stats.count("io_stalls.level0_slowdown"));
  CHECK(stats.at("cache-bytes") == static_cast<uint64_t>(t->memoryBytes()));
}

TEST_CASE("state store: a cache over its budget whose oldest entries are dirty evicts in time "
          "proportional to what it writes") {
  // A new key per put, far over a small budget: the least recently used
  // entries are dirty (waiting to be written behind, or held for a
  // checkpoint). Eviction used to walk past every one of them at each put,
  // which made n puts cost about n * n / 2 steps (21 s of CPU for 150,000
  // puts, 0.2 s now).
  testing::TempDir dir("state_test");
  auto store = openStore(dir.sub("db"), 2LL << 20);
  auto t = store->table(9, 0);
  auto cpuSeconds = [] {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
  };
  const double start = cpuSeconds();
  const int n = 300000;
  for (int i = 0; i < n; ++i) {
    // A third of them while the writes are held, as between a barrier and
    // its checkpoint.
    if (i == n / 3) store->holdWrites(9, 0, true);
    if (i == 2 * n / 3) store->holdWrites(9, 0, false);
    t->put(intKey(i), valueFor(i));
  }
  t->flush();
  const double cpu = cpuSeconds() - start;
  MESSAGE("300,000 new keys over a 2 MB budget: " << cpu << " s of CPU");
  CHECK(cpu < 10.0);  // under a second; the walk took more than a minute
  CHECK(t->size() == static_cast<uint64_t>(n));
  std::string v;
  CHECK(t->get(intKey(0), v));
  CHECK(v == valueFor(0));
  CHECK(t->get(intKey(n / 2), v));
  CHECK(v == valueFor(n / 2));
  CHECK(t->get(intKey(n - 1), v));
  CHECK(v == valueFor(n - 1));
}

TEST_CASE("state store: a new key is not read from RocksDB once the cache has evicted, and the "
          "size stays exact, also on restored state") {
  // Each put of a new key needs to know whether RocksDB has it (for an exact
  // size()). Once the cache no longer holds every entry, the table's filter
  // of the keys it wrote answers that for almost every new key, without the
  // read; a restored table fills the filter with the keys it finds stored.
  testing::TempDir dir("state_test");
  auto openWithStats = [&](const std::string& path) {
    StateStoreOptions o;
    o.path = path;
    o.cacheBytes = 1 << 20;
    o.statistics = true;
    return StateStore::open(o);
  };
  auto keysRead = [](StateStore& s) { return s.engineStats().at("keys-read"); };
  const std::string pad(200, 'p');
  const int n = 20000;  // about 5 MB of entries over a 1 MB budget
  {
    auto store = openWithStats(dir.sub("db"));
    auto t = store->table(3, 0);
    for (int i = 0; i < n; ++i) t->put(intKey(i) + pad, valueFor(i));
    CHECK(t->memoryBytes() <= (1 << 20) + 512);
    CHECK(t->size() == static_cast<uint64_t>(n));
    // Nearly every one of them was known new without a read.
    const uint64_t reads = keysRead(*store);
    MESSAGE("reads behind " << n << " new keys: " << reads);
    CHECK(reads < static_cast<uint64_t>(n / 50));
    // Keys written and evicted are found, by a read: the filter has them.
    std::string v;
    REQUIRE(t->get(intKey(0) + pad, v));
    CHECK(v == valueFor(0));
    CHECK(keysRead(*store) > reads);
    // Writing an evicted key again does not count it twice.
    t->put(intKey(1) + pad, "again");
    CHECK(t->size() == static_cast<uint64_t>(n));
    t->erase(intKey(2) + pad);
    CHECK(t->size() == static_cast<uint64_t>(n - 1));
    t->flush();
    store->snapshot(dir.sub("snap"));
  }
  auto restored = openWithStats(dir.sub("snap"));
  auto t = restored->table(3, 0);
  CHECK(t->size() == static_cast<uint64_t>(n - 1));
  const uint64_t before = keysRead(*restored);
  // Keys of the restored state are known to be stored; new ones are not.
  for (int i = 0; i < n; ++i) t->put(intKey(i) + pad, "restored");
  CHECK(t->size() == static_cast<uint64_t>(n));  // only the erased key was new
  for (int i = n; i < 2 * n; ++i) t->put(intKey(i) + pad, valueFor(i));
  CHECK(t->size() == static_cast<uint64_t>(2 * n));
  const uint64_t reads = keysRead(*restored) - before;
  MESSAGE("reads behind " << n << " stored and " << n << " new keys: " << reads);
  CHECK(reads >= static_cast<uint64_t>(n - 1) - 2000);  // the stored ones (minus those cached)
  CHECK(reads < static_cast<uint64_t>(n + n / 50));
  std::string v;
  REQUIRE(t->get(intKey(1) + pad, v));
  CHECK(v == "restored");
}

TEST_CASE("state store: a table's filter of stored keys gives way when more tables share the "
          "budget, and its size stays exact") {
  // The filter may hold a quarter of the table's share of the budget. When
  // more tables open, the share shrinks; a filter past half of it is
  // dropped (every new key is read again) rather than leave the table's
  // entries too little room.
  testing::TempDir dir("state_test");
  StateStoreOptions o;
  o.path = dir.sub("db");
  o.cacheBytes = 1 << 20;
  o.statistics = true;
  auto store = StateStore::open(o);
  auto t = store->table(4, 0);
  const std::string pad(200, 'p');
  const int n = 20000;
  for (int i = 0; i < n; ++i) t->put(intKey(i) + pad, valueFor(i));
  auto filterBytes = [&] {
    return static_cast<int64_t>(store->engineStats().at("cache-bytes")) - t->memoryBytes();
  };
  const int64_t before = filterBytes();
  CHECK(before > 0);
  // Sixteen more (empty) tables: the share is a seventeenth of the budget.
  std::vector<std::unique_ptr<StateTable>> others;
  for (int task = 1; task <= 16; ++task) others.push_back(store->table(4, task));
  const int64_t share = (1 << 20) / 17;
  REQUIRE(before > share / 2);
  const uint64_t readsBefore = store->engineStats().at("keys-read");
  for (int i = n; i < n + 1000; ++i) t->put(intKey(i) + pad, valueFor(i));
  CHECK(filterBytes() == 0);
  // Without the filter each new key is read (all but the few put before the
  // next eviction dropped it); the size stays exact.
  CHECK(store->engineStats().at("keys-read") - readsBefore >= 900);
  CHECK(t->size() == static_cast<uint64_t>(n + 1000));
  t->put(intKey(5) + pad, "again");
  CHECK(t->size() == static_cast<uint64_t>(n + 1000));
  std::string v;
  REQUIRE(t->get(intKey(5) + pad, v));
  CHECK(v == "again");
  REQUIRE(t->get(intKey(n + 999) + pad, v));
  CHECK(v == valueFor(n + 999));
}
