#include "executor/metrics/histogram.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <random>
#include <thread>

using namespace rtsql;

TEST_CASE("histogram buckets cover values contiguously") {
  for (int b = 0; b < LatencyHistogram::kBuckets - 1; ++b) {
    CHECK(LatencyHistogram::bucketHigh(b) == LatencyHistogram::bucketLow(b + 1));
  }
  for (uint64_t v : {0ULL, 1ULL, 31ULL, 32ULL, 33ULL, 1000ULL, 123456ULL, 987654321ULL}) {
    int b = LatencyHistogram::bucketOf(v);
    CHECK(LatencyHistogram::bucketLow(b) <= v);
    CHECK(v < LatencyHistogram::bucketHigh(b));
  }
}

TEST_CASE("histogram percentiles are within the bucket error of the exact ones") {
  LatencyHistogram h;
  std::vector<int64_t> values;
  std::mt19937_64 gen(7);
  std::lognormal_distribution<double> dist(6.0, 1.0);  // around 400 us, long tail
  for (int i = 0; i < 100000; ++i) {
    auto v = static_cast<int64_t>(dist(gen));
    values.push_back(v);
    h.record(v);
  }
  std::sort(values.begin(), values.end());
  CHECK(h.count() == values.size());
  CHECK(h.percentile(0) == values.front());
  CHECK(h.percentile(1) == values.back());
  for (double q : {0.5, 0.9, 0.95, 0.99}) {
    auto exact = static_cast<double>(values[static_cast<size_t>(q * (values.size() - 1))]);
    auto approx = static_cast<double>(h.percentile(q));
    CHECK(std::abs(approx - exact) <= exact * 0.04 + 1);
  }
  CHECK(h.percentile(0.5) <= h.percentile(0.9));
  CHECK(h.percentile(0.9) <= h.percentile(0.99));
}

TEST_CASE("empty, negative and merged histograms") {
  LatencyHistogram a, b;
  CHECK(a.percentile(0.5) == 0);
  a.record(-5);  // clock skew between hosts: counted as zero, never dropped
  CHECK(a.count() == 1);
  CHECK(a.percentile(0.5) == 0);
  for (int i = 1; i <= 100; ++i) b.record(i * 10);
  a.merge(b);
  CHECK(a.count() == 101);
  CHECK(a.max() == 1000);
  CHECK(a.min() == 0);
  a.reset();
  CHECK(a.count() == 0);
}

TEST_CASE("a histogram read on another thread while its owner records stays consistent") {
  LatencyHistogram h;
  constexpr int64_t kCount = 100000;
  std::atomic<bool> done{false};
  bool ordered = true;
  uint64_t lastCount = 0;
  std::thread reader([&] {
    // Bounded by the owner finishing; every read sees values the owner wrote.
    while (!done.load(std::memory_order_acquire)) {
      uint64_t n = h.count();
      if (n < lastCount) ordered = false;
      lastCount = n;
      int64_t p50 = h.percentile(0.5), p99 = h.percentile(0.99);
      if (p50 > p99 || p99 > 1000) ordered = false;
    }
  });
  for (int64_t i = 0; i < kCount; ++i) h.record(i % 1000 + 1);
  done.store(true, std::memory_order_release);
  reader.join();
  CHECK(ordered);
  CHECK(h.count() == static_cast<uint64_t>(kCount));
  CHECK(h.min() == 1);
  CHECK(h.max() == 1000);
}

TEST_CASE("a histogram's text form carries its counts and range to another histogram") {
  LatencyHistogram h;
  std::mt19937_64 gen(11);
  std::lognormal_distribution<double> dist(7.0, 1.5);
  for (int i = 0; i < 20000; ++i) h.record(static_cast<int64_t>(dist(gen)));
  LatencyHistogram copy;
  REQUIRE(copy.addText(h.toText()));
  CHECK(copy.count() == h.count());
  CHECK(copy.min() == h.min());
  CHECK(copy.max() == h.max());
  for (double q : {0.0, 0.5, 0.9, 0.99, 1.0}) CHECK(copy.percentile(q) == h.percentile(q));

  // Added twice: twice the counts, the same percentiles; an empty one adds nothing.
  REQUIRE(copy.addText(h.toText()));
  CHECK(copy.count() == 2 * h.count());
  CHECK(copy.percentile(0.5) == h.percentile(0.5));
  CHECK(LatencyHistogram().toText().empty());
  CHECK(copy.addText(""));
  CHECK(copy.count() == 2 * h.count());

  // Not a text of one: refused whole, nothing added.
  for (const char* bad : {"x", "5 3 1:1", "1 9", "1 9 2:0", "1 9 3:1 2:1", "1 9 99999:1",
                          "1 9 2:1 ", "1 9 2-1", "-1 9 2:1"}) {
    LatencyHistogram other;
    CHECK_MESSAGE(!other.addText(bad), bad);
    CHECK(other.count() == 0);
  }
}
