#include "executor/state/stored_key_filter.h"

namespace rtsql {
namespace {

// 14 bits a key and 7 of them set, all in one 512-bit block: about 0.3% of
// absent keys pass a full part (measured in stored_key_filter_test.cpp).
constexpr int kProbes = 7;
constexpr uint64_t kBitsPerKey = 14;
constexpr uint64_t kBlockBits = 512;
constexpr uint32_t kProbeMultiplier = 0x9E3779B9u;  // odd: every step a new bit pattern

}  // namespace

// The high half of the hash picks the block (multiply-shift rather than a
// modulo), the low half the bits within it: each probe multiplies it by an
// odd constant and takes the top 9 bits.
size_t StoredKeyFilter::blockOf(const Part& part, uint64_t hash) {
  return static_cast<size_t>(((hash >> 32) * part.blocks.size()) >> 32);
}

void StoredKeyFilter::set(Part& part, uint64_t hash) {
  Block& b = part.blocks[blockOf(part, hash)];
  uint32_t x = static_cast<uint32_t>(hash);
  for (int i = 0; i < kProbes; ++i) {
    x *= kProbeMultiplier;
    b.words[x >> 29] |= uint64_t{1} << ((x >> 23) & 63);
  }
}

bool StoredKeyFilter::test(const Part& part, uint64_t hash) {
  const Block& b = part.blocks[blockOf(part, hash)];
  uint32_t x = static_cast<uint32_t>(hash);
  for (int i = 0; i < kProbes; ++i) {
    x *= kProbeMultiplier;
    if ((b.words[x >> 29] & (uint64_t{1} << ((x >> 23) & 63))) == 0) return false;
  }
  return true;
}

int64_t StoredKeyFilter::add(uint64_t hash, int64_t limitBytes) {
  if (saturated_) return 0;
  int64_t grown = 0;
  if (parts_.empty() || parts_.back().count >= parts_.back().capacity) {
    const uint64_t capacity = parts_.empty() ? kFirstCapacity : parts_.back().capacity * 2;
    const uint64_t blocks = (capacity * kBitsPerKey + kBlockBits - 1) / kBlockBits;
    grown = static_cast<int64_t>(blocks * sizeof(Block));
    // Past its bound the filter can no longer say "not stored" for keys
    // written from now on, so it says "maybe" for all.
    if (bytes_ + grown > limitBytes) return saturate();
    Part part;
    part.blocks.assign(blocks, Block{});
    part.capacity = capacity;
    parts_.push_back(std::move(part));
    bytes_ += grown;
  }
  set(parts_.back(), hash);
  ++parts_.back().count;
  ++keys_;
  return grown;
}

bool StoredKeyFilter::mayContain(uint64_t hash) const {
  if (saturated_) return true;
  // The newest part holds most keys: a stored key is usually found there first.
  for (auto p = parts_.rbegin(); p != parts_.rend(); ++p)
    if (test(*p, hash)) return true;
  return false;
}

int64_t StoredKeyFilter::saturate() {
  const int64_t freed = bytes_;
  parts_.clear();
  parts_.shrink_to_fit();
  bytes_ = 0;
  saturated_ = true;
  return -freed;
}

}  // namespace rtsql
