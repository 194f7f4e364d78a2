#include "executor/operators/sink.h"

#include "common/clock.h"

namespace rtsql {

void SinkOperator::push(Row& row, const RecordContext& ctx) {
  countIn();
  writer_.write(row, ctx.sourceTimestampMicros);
  int64_t now = nowMicros();
  EpochMetrics& m = metrics_.current();
  addOwned<uint64_t>(m.outputRows);
  m.processingLatency.record(now - ctx.readMicros);
  m.e2eLatency.record(now - ctx.sourceTimestampMicros);
  countOut();
}

}  // namespace rtsql
