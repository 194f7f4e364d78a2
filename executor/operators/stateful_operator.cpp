#include "executor/operators/stateful_operator.h"

#include <utility>

#include "executor/connector_provider.h"

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

void StatefulOperator::sendLateRowsTo(FlowDeadLetterWriter* writer, std::vector<Schema> inputs,
                                      int id) {
  lateRows_ = writer;
  lateInputs_ = std::move(inputs);
  id_ = id;
}

void StatefulOperator::late(const Row& row, int64_t eventTime, int input) {
  if (!lateRows_) {
    OperatorStats::count(stats_.numRowsDroppedByWatermark);
    return;
  }
  const auto side = static_cast<size_t>(input);
  if (side >= lateInputs_.size()) throw InternalError(name() + ": late row of an unknown input");
  const std::string operatorName = name();
  LateRowOrigin origin;
  origin.operatorName = operatorName;
  origin.operatorId = id_;
  if (lateInputs_.size() > 1) origin.input = side == 0 ? "left" : "right";
  origin.eventTimeMicros = eventTime;
  origin.watermarkMicros = watermark_;
  lateRows_->writeLate(row, lateInputs_[side], origin);
  OperatorStats::count(stats_.numLateRowsDeadLettered);
}

void StatefulOperator::refreshStats() {
  stats_.numRowsTotal.store(stateRows(), std::memory_order_relaxed);
  stats_.memoryUsedBytes.store(state_.memoryBytes(), std::memory_order_relaxed);
}

}  // namespace rtsql
