#include "connectors/kafka/fetch_rate.h"

#include <algorithm>

namespace rtsql::kafka {

FetchMode FetchRateDetector::add(int64_t records, int64_t nowMicros) {
  if (settings_.rate <= 0) return FetchMode::Prompt;
  std::lock_guard lock(mu_);
  if (windowStart_ < 0) windowStart_ = nowMicros;
  if (nowMicros - windowStart_ >= settings_.windowMicros) closeWindow(nowMicros);
  count_ += records;
  return mode_;
}

FetchMode FetchRateDetector::mode() const {
  std::lock_guard lock(mu_);
  return mode_;
}

void FetchRateDetector::closeWindow(int64_t nowMicros) {
  const int64_t span = nowMicros - windowStart_;
  // A gap of several windows without a poll (an idle source polls about
  // once a second) counts as that many windows at the rate of the whole gap.
  const int64_t windows = std::max<int64_t>(1, span / settings_.windowMicros);
  // Records a second over the span, compared without division: count /
  // (span / 1e6) against the thresholds.
  const bool fast = count_ * 1'000'000 >= settings_.rate * span;
  const bool slow = count_ * 2'000'000 < settings_.rate * span;
  if (mode_ == FetchMode::Prompt) {
    streak_ = fast ? streak_ + static_cast<int>(std::min<int64_t>(windows, 1 << 20)) : 0;
    if (streak_ >= settings_.upWindows) {
      mode_ = FetchMode::Batching;
      streak_ = 0;
    }
  } else {
    streak_ = slow ? streak_ + static_cast<int>(std::min<int64_t>(windows, 1 << 20)) : 0;
    if (streak_ >= settings_.downWindows) {
      mode_ = FetchMode::Prompt;
      streak_ = 0;
    }
  }
  windowStart_ = nowMicros;
  count_ = 0;
}

}  // namespace rtsql::kafka
