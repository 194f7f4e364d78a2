#include "executor/metrics/recent_latency.h"

#include <utility>

namespace rtsql {

void IntervalLatency::reset(int64_t newIndex) {
  index = newIndex;
  processing.reset();
  sourceQueuing.reset();
  e2e.reset();
}

void IntervalLatency::mergeFrom(const IntervalLatency& o) {
  processing.merge(o.processing);
  sourceQueuing.merge(o.sourceQueuing);
  e2e.merge(o.e2e);
}

void RecentLatency::turnOver(int64_t index) {
  std::lock_guard lock(mu_);
  // The interval just left becomes the previous one; the older previous one
  // is reused for the new interval. After a gap of more than one interval
  // the one before `index` had no rows: keep nothing for it.
  std::swap(current_, previous_);
  if (previous_->index != index - 1) previous_->reset(-1);
  current_->reset(index);
}

void RecentLatency::mergeLastComplete(int64_t nowMicros, IntervalLatency& out) const {
  const int64_t want = nowMicros / kIntervalMicros - 1;
  out.index = want;
  std::lock_guard lock(mu_);
  // The task may not have written since the interval ended: its current
  // interval is then the complete one.
  for (const IntervalLatency* s : {current_, previous_}) {
    if (s->index == want) {
      out.mergeFrom(*s);
      return;
    }
  }
}

}  // namespace rtsql
