// The part every record-writing sink (Kafka, file, HTTP) shares: turning the
// rows a flow hands its SinkWriter into encoded records. A sink derives from
// EncodingSinkWriter and says only how one encoded record is delivered and how
// a flush waits for what it delivered; which record a row or a change becomes
// is decided here, once, for all of them:
//
//   - an append-only sink's row is one record of the sink's row encoder
//     (json, csv or raw: codec.h);
//   - a sink that writes every change ('mode' = 'upsert', format =
//     'debezium-json': changes.h) hands each row and its kind to its
//     ChangeEncoder, inserts included, and releases what that encoder holds at
//     the end of a batch of changes and before every flush;
//   - any other sink that is given a change keeps each key's latest row
//     (SinkWriter::writeChange's default).
#pragma once

#include <memory>

#include "connectors/format/changes.h"
#include "connectors/format/codec.h"
#include "executor/connector_provider.h"

namespace rtsql {

class EncodingSinkWriter : public SinkWriter {
 public:
  // Builds the row encoder of a sink that does not write changes.
  using RowEncoderFactory = std::unique_ptr<RecordEncoder> (*)(const SinkSpec& sink);

  // The row encoder is made by `rowEncoder` only when the sink writes no
  // changes, so a format no row encoder knows (debezium-json) never reaches it.
  EncodingSinkWriter(const SinkSpec& sink, RowEncoderFactory rowEncoder);

  void write(const Row& row, int64_t sourceTimestampMicros) override;
  void writeChange(const Row& row, int64_t sourceTimestampMicros, RowKind kind) override;
  void endOfChanges() override;
  // Releases the held changes (endOfChanges()), then flushRecords().
  void flush(int timeoutMs) final;

 protected:
  // Whether the sink writes every change (upsert or debezium-json).
  bool writesChanges() const { return changes_ != nullptr; }

  // Hands one encoded record to the sink. The record is reused after.
  virtual void deliver(const EncodedRecord& record) = 0;
  // Epoch end and shutdown: sends what deliver() was given and waits for it
  // (SinkWriter::flush).
  virtual void flushRecords(int timeoutMs) = 0;

 private:
  std::unique_ptr<ChangeEncoder> changes_;  // null: rows go through rows_
  std::unique_ptr<RecordEncoder> rows_;     // null when changes_ is set
  ChangeEncoder::Emit emit_ = [this](const EncodedRecord& record) { deliver(record); };
  EncodedRecord record_;
};

}  // namespace rtsql
