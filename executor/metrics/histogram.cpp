#include "executor/metrics/histogram.h"

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <vector>

#include <fmt/format.h>

namespace rtsql {

// Values below kSub get one bucket each; above, each power of two [2^e, 2^(e+1))
// is split into kSub equal sub-buckets.
int LatencyHistogram::bucketOf(uint64_t v) {
  if (v < static_cast<uint64_t>(kSub)) return static_cast<int>(v);
  int e = 63 - std::countl_zero(v);  // e >= kSubBits
  int shift = e - kSubBits;
  int sub = static_cast<int>((v >> shift) & (kSub - 1));
  int b = (e - kSubBits + 1) * kSub + sub;
  return std::min(b, kBuckets - 1);
}

uint64_t LatencyHistogram::bucketLow(int b) {
  if (b < kSub) return static_cast<uint64_t>(b);
  int e = b / kSub + kSubBits - 1;
  int sub = b % kSub;
  return (uint64_t{1} << e) + (static_cast<uint64_t>(sub) << (e - kSubBits));
}

uint64_t LatencyHistogram::bucketHigh(int b) {
  if (b < kSub) return static_cast<uint64_t>(b) + 1;
  int e = b / kSub + kSubBits - 1;
  return bucketLow(b) + (uint64_t{1} << (e - kSubBits));
}

void LatencyHistogram::reset() {
  for (auto& b : buckets_) b.store(0, std::memory_order_relaxed);
  count_.store(0, std::memory_order_relaxed);
  min_.store(INT64_MAX, std::memory_order_relaxed);
  max_.store(0, std::memory_order_relaxed);
}

void LatencyHistogram::merge(const LatencyHistogram& other) {
  uint64_t n = other.count();
  if (n == 0) return;
  for (int i = 0; i < kBuckets; ++i) {
    uint64_t c = other.buckets_[i].load(std::memory_order_relaxed);
    if (c) buckets_[i].fetch_add(c, std::memory_order_relaxed);
  }
  count_.fetch_add(n, std::memory_order_relaxed);
  min_.store(std::min(min_.load(std::memory_order_relaxed), other.min_.load(std::memory_order_relaxed)),
             std::memory_order_relaxed);
  max_.store(std::max(max_.load(std::memory_order_relaxed), other.max_.load(std::memory_order_relaxed)),
             std::memory_order_relaxed);
}

int64_t LatencyHistogram::min() const {
  int64_t m = min_.load(std::memory_order_relaxed);
  return m == INT64_MAX ? 0 : m;
}

int64_t LatencyHistogram::max() const { return max_.load(std::memory_order_relaxed); }

int64_t LatencyHistogram::percentile(double q) const {
  // Read every bucket once into a snapshot and rank within it: a writer on
  // another thread keeps adding to the buckets, and ranking against a total
  // taken earlier than the walk would stop short at buckets that grew since.
  std::array<uint64_t, kBuckets> snapshot;
  uint64_t total = 0;
  for (int i = 0; i < kBuckets; ++i) {
    snapshot[static_cast<size_t>(i)] = buckets_[static_cast<size_t>(i)].load(std::memory_order_relaxed);
    total += snapshot[static_cast<size_t>(i)];
  }
  if (total == 0) return 0;
  if (q <= 0) return min();
  if (q >= 1) return max();
  auto rank = static_cast<uint64_t>(q * static_cast<double>(total) + 0.5);
  rank = std::clamp<uint64_t>(rank, 1, total);
  uint64_t seen = 0;
  for (int i = 0; i < kBuckets; ++i) {
    seen += snapshot[static_cast<size_t>(i)];
    if (seen >= rank) {
      uint64_t lo = bucketLow(i), hi = bucketHigh(i);
      auto mid = static_cast<int64_t>(lo + (hi - 1 - lo) / 2);
      return std::clamp(mid, min(), max());
    }
  }
  return max();
}

std::string LatencyHistogram::toText() const {
  if (count() == 0) return {};
  std::string out = fmt::format("{} {}", min(), max());
  for (int i = 0; i < kBuckets; ++i) {
    uint64_t c = buckets_[static_cast<size_t>(i)].load(std::memory_order_relaxed);
    if (c) fmt::format_to(std::back_inserter(out), " {}:{}", i, c);
  }
  return out;
}

bool LatencyHistogram::addText(std::string_view text) {
  if (text.empty()) return true;
  const char* p = text.data();
  const char* end = p + text.size();
  auto number = [&](auto& v) {
    auto [next, ec] = std::from_chars(p, end, v);
    if (ec != std::errc()) return false;
    p = next;
    return true;
  };
  auto skip = [&](char c) {
    if (p == end || *p != c) return false;
    ++p;
    return true;
  };
  int64_t lo = 0, hi = 0;
  if (!number(lo) || !skip(' ') || !number(hi) || lo < 0 || hi < lo) return false;
  std::vector<std::pair<int, uint64_t>> counts;
  uint64_t total = 0;
  while (p != end) {
    int b = 0;
    uint64_t c = 0;
    if (!skip(' ') || !number(b) || !skip(':') || !number(c)) return false;
    if (b < 0 || b >= kBuckets || c == 0 || (!counts.empty() && b <= counts.back().first)) return false;
    counts.emplace_back(b, c);
    total += c;
  }
  if (counts.empty()) return false;
  for (const auto& [b, c] : counts) buckets_[static_cast<size_t>(b)].fetch_add(c, std::memory_order_relaxed);
  count_.fetch_add(total, std::memory_order_relaxed);
  min_.store(std::min(min_.load(std::memory_order_relaxed), lo), std::memory_order_relaxed);
  max_.store(std::max(max_.load(std::memory_order_relaxed), hi), std::memory_order_relaxed);
  return true;
}

}  // namespace rtsql
