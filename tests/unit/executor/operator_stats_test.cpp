// OperatorStats counting: the owning task thread counts rows in and out with
// a plain relaxed load and store, and another thread (a progress request)
// reads the counts while the owner goes on counting.
#include <doctest/doctest.h>

#include <atomic>
#include <cstdint>
#include <thread>

#include "capture_operator.h"
#include "common/expr.h"
#include "executor/operators/filter.h"

using namespace rtsql;

TEST_CASE("operator stats: rowsIn and rowsOut count what an operator took and emitted") {
  // v IS NOT NULL over rows (v BIGINT) where v is NULL for even i.
  auto v = makeColumnRef(0, DataType::of(TypeId::BigInt), "v");
  FilterSpec spec;
  spec.predicate = makeIsNull(v, true);
  auto op = makeFilter(spec);
  testing::Capture out;
  op->setNext(&out);
  for (int64_t i = 0; i < 5; ++i) {
    Row r{i % 2 == 0 ? Value() : Value::bigint(i)};
    op->push(r, {});
  }
  CHECK(op->stats().rowsIn.load() == 5);
  CHECK(op->stats().rowsOut.load() == 2);
  CHECK(out.rows.size() == 2);
}

TEST_CASE("operator stats: a reader on another thread sees the owner's counts grow") {
  OperatorStats stats;
  constexpr uint64_t kCount = 200000;
  std::atomic<bool> done{false};
  uint64_t lastSeen = 0;
  bool monotonic = true;
  std::thread reader([&] {
    // Bounded by the owner finishing; every value read is one the owner wrote.
    while (!done.load(std::memory_order_acquire)) {
      uint64_t now = stats.rowsIn.load(std::memory_order_relaxed);
      if (now < lastSeen) monotonic = false;
      lastSeen = now;
    }
  });
  for (uint64_t i = 0; i < kCount; ++i) OperatorStats::count(stats.rowsIn);
  done.store(true, std::memory_order_release);
  reader.join();
  CHECK(monotonic);
  CHECK(stats.rowsIn.load() == kCount);
}
