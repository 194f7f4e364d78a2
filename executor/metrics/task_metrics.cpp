#include "executor/metrics/task_metrics.h"

#include <algorithm>

namespace rtsql {

void EpochMetrics::mergeFrom(const EpochMetrics& o) {
  inputRows.fetch_add(o.inputRows.load(std::memory_order_relaxed), std::memory_order_relaxed);
  outputRows.fetch_add(o.outputRows.load(std::memory_order_relaxed), std::memory_order_relaxed);
  droppedRows.fetch_add(o.droppedRows.load(std::memory_order_relaxed), std::memory_order_relaxed);
  maxEventTimeMicros.store(std::max(maxEventTimeMicros.load(std::memory_order_relaxed),
                                    o.maxEventTimeMicros.load(std::memory_order_relaxed)),
                           std::memory_order_relaxed);
  processingLatency.merge(o.processingLatency);
  sourceQueuingLatency.merge(o.sourceQueuingLatency);
  e2eLatency.merge(o.e2eLatency);
}

}  // namespace rtsql
