// Barrier alignment of a shuffle task's producers (executor/barrier_aligner.h).
#include "executor/barrier_aligner.h"

#include <algorithm>

namespace rtsql {

bool BarrierAligner::barrier(uint16_t producer, uint64_t epoch) {
  barriers_[producer] = epoch + 1;
  const bool aligned =
      std::all_of(barriers_.begin(), barriers_.end(), [&](uint64_t b) { return b > aligned_; });
  if (!aligned) blocked_[producer] = true;
  return aligned;
}

void BarrierAligner::release(std::deque<ShuffleMessage>& out) {
  ++aligned_;
  std::fill(blocked_.begin(), blocked_.end(), false);
  if (out.empty()) {
    out.swap(held_);
  } else {
    for (ShuffleMessage& m : held_) out.push_back(std::move(m));
    held_.clear();
  }
}

}  // namespace rtsql
