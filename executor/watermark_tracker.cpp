#include "executor/watermark_tracker.h"

#include <algorithm>

namespace rtsql {

void ActivityClock::delivered(int64_t monotonicMicros) {
  std::lock_guard lock(mu_);
  if (lastDelivery_ != INT64_MIN && monotonicMicros > lastDelivery_) {
    int64_t gap = std::min(monotonicMicros - lastDelivery_, maxGap_);
    clock_.store(clock_.load(std::memory_order_relaxed) + gap, std::memory_order_release);
  }
  lastDelivery_ = std::max(lastDelivery_, monotonicMicros);
}

PartitionWatermarks::Partition& PartitionWatermarks::at(int32_t partition, int64_t clockNow) {
  auto [it, inserted] = partitions_.try_emplace(partition);
  // A partition's quiet time starts when the task first knows of it.
  if (inserted) it->second.lastDelivery = clockNow;
  return it->second;
}

bool InputWatermarks::watermark(uint16_t producer, int64_t micros) {
  Input& in = inputs_[producer];
  in.watermark = std::max(in.watermark, micros);
  in.idle = false;
  return advance();
}

bool InputWatermarks::idle(uint16_t producer) {
  inputs_[producer].idle = true;
  return advance();
}

bool InputWatermarks::advance() {
  int64_t wm = INT64_MAX;
  for (const Input& in : inputs_) {
    if (!in.idle) wm = std::min(wm, in.watermark);
  }
  // INT64_MAX: every producer is idle; INT64_MIN: one has no watermark yet.
  if (wm == INT64_MAX || wm == INT64_MIN || wm <= current_) return false;
  current_ = wm;
  return true;
}

}  // namespace rtsql
