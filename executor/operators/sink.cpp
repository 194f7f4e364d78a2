#include "executor/operators/sink.h"

#include "common/clock.h"

namespace rtsql {

void SinkOperator::push(Row& row, const RecordContext& ctx) {
  countIn();
  if (ctx.kind == RowKind::Insert)
    writer_.write(row, ctx.sourceTimestampMicros);
  else
    writer_.writeChange(row, ctx.sourceTimestampMicros, ctx.kind);
  int64_t now = nowMicros();
  EpochMetrics& m = metrics_.current();
  addOwned<uint64_t>(m.outputRows);
  m.processingLatency.record(now - ctx.readMicros);
  m.e2eLatency.record(now - ctx.sourceTimestampMicros);
  metrics_.recent().record(now, now - ctx.readMicros, ctx.readMicros - ctx.sourceTimestampMicros,
                           now - ctx.sourceTimestampMicros);
  countOut();
}

}  // namespace rtsql
