#include "connectors/format/encoding_sink_writer.h"

namespace rtsql {

EncodingSinkWriter::EncodingSinkWriter(const SinkSpec& sink, RowEncoderFactory rowEncoder)
    : changes_(ChangeEncoder::make(sink)) {
  if (!changes_) rows_ = rowEncoder(sink);
}

void EncodingSinkWriter::write(const Row& row, int64_t /*sourceTimestampMicros*/) {
  if (changes_) {
    changes_->add(row, RowKind::Insert, emit_);
    return;
  }
  rows_->encode(row, record_);
  deliver(record_);
}

void EncodingSinkWriter::writeChange(const Row& row, int64_t sourceTimestampMicros, RowKind kind) {
  if (!changes_) {
    SinkWriter::writeChange(row, sourceTimestampMicros, kind);
    return;
  }
  changes_->add(row, kind, emit_);
}

void EncodingSinkWriter::endOfChanges() {
  if (changes_) changes_->finish(emit_);
}

void EncodingSinkWriter::flush(int timeoutMs) {
  endOfChanges();
  flushRecords(timeoutMs);
}

}  // namespace rtsql
