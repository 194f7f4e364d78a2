#include "executor/operators/stateful_operator.h"

#include <utility>

namespace rtsql {

StatefulOperator::StatefulOperator(std::unique_ptr<StateTable> state) : state_(std::move(state)) {}

void StatefulOperator::onWatermark(int64_t watermarkMicros) {
  if (watermarkMicros > watermark_) {
    watermark_ = watermarkMicros;
    expire(watermarkMicros);
    refreshStats();
  }
  if (next_) next_->onWatermark(watermarkMicros);
}

void StatefulOperator::onEpochEnd() {
  beforeFlush();
  state_.flush();
  stats_.numRowsUpdated.store(0, std::memory_order_relaxed);
  refreshStats();
  if (next_) next_->onEpochEnd();
}

void StatefulOperator::refreshStats() {
  stats_.numRowsTotal.store(stateRows(), std::memory_order_relaxed);
  stats_.memoryUsedBytes.store(state_.memoryBytes(), std::memory_order_relaxed);
}

}  // namespace rtsql
