// The stage's terminal operator when it writes to the flow's sink: hands each
// row to the task's SinkWriter and records the per-record latencies (processing:
// sink write minus source read; end-to-end: sink write minus the source record's
// Kafka timestamp) into the task's current epoch metrics.
#pragma once

#include "executor/connector_provider.h"
#include "executor/metrics/task_metrics.h"
#include "executor/operators/operator.h"

namespace rtsql {

class SinkOperator final : public Operator {
 public:
  SinkOperator(SinkWriter& writer, TaskMetricsSlot& metrics) : writer_(writer), metrics_(metrics) {}

  void push(Row& row, const RecordContext& ctx) override;
  void onBatchEnd() override { writer_.endOfChanges(); }
  std::string name() const override { return "Sink"; }

 private:
  SinkWriter& writer_;
  TaskMetricsSlot& metrics_;
};

}  // namespace rtsql
