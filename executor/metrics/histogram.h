// A latency histogram in microseconds with log-linear buckets (32 sub-buckets
// per power of two: about 3% relative error), lock-free to record from one task
// thread while any thread reads percentiles. Fixed size, no allocation after
// construction: recording is a few arithmetic operations and relaxed loads and
// stores (owned_counter.h: one thread records into a histogram, so no locked
// increment), cheap enough for every record.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "executor/metrics/owned_counter.h"

namespace rtsql {

class LatencyHistogram {
 public:
  static constexpr int kSubBits = 5;
  static constexpr int kSub = 1 << kSubBits;
  // One row of kSub buckets below kSub, then one per power of two up to 2^63.
  static constexpr int kBuckets = (64 - kSubBits + 1) * kSub;

  LatencyHistogram() { reset(); }

  void record(int64_t micros) {
    if (micros < 0) micros = 0;
    addOwned<uint64_t>(buckets_[bucketOf(static_cast<uint64_t>(micros))]);
    addOwned<uint64_t>(count_);
    // min/max are advisory under concurrent readers; the recording thread is the only writer.
    if (micros < min_.load(std::memory_order_relaxed)) min_.store(micros, std::memory_order_relaxed);
    if (micros > max_.load(std::memory_order_relaxed)) max_.store(micros, std::memory_order_relaxed);
  }
  void reset();
  // Adds another histogram's counts to this one (used to merge tasks). Not
  // for a histogram that a task thread is recording into.
  void merge(const LatencyHistogram& other);

  uint64_t count() const { return count_.load(std::memory_order_relaxed); }
  int64_t min() const;
  int64_t max() const;
  // Value at quantile q in [0, 1], in microseconds (0 when empty). q = 0 gives the
  // exact minimum, q = 1 the exact maximum; others are bucket midpoints clamped
  // to [min, max].
  int64_t percentile(double q) const;

  // A compact text form, for a histogram sent to another process (a cluster's
  // nodes publish their flows' recent latencies): "MIN MAX B:N B:N ..." with
  // the non-empty buckets only; "" when empty. addText adds such a text's
  // counts to this histogram and returns false (adding nothing) when it is
  // not one.
  std::string toText() const;
  bool addText(std::string_view text);

  static int bucketOf(uint64_t v);
  static uint64_t bucketLow(int b);
  static uint64_t bucketHigh(int b);  // exclusive

 private:
  std::array<std::atomic<uint64_t>, kBuckets> buckets_;
  std::atomic<uint64_t> count_{0};
  std::atomic<int64_t> min_{INT64_MAX};
  std::atomic<int64_t> max_{0};
};

}  // namespace rtsql
