// How a Kafka source task turns records into rows. Two kinds of task read
// Kafka: one that owns its consumer (source.cpp) and a live query's
// subscription to a consumer shared by several live queries (tap.cpp). Both
// decode with this, so that the source's format, its hidden metadata columns,
// 'on.error' and the decode-error count behave the same whichever reads.
#pragma once

#include <librdkafka/rdkafka.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/error.h"
#include "connectors/format/codec.h"
#include "executor/connector_provider.h"

namespace rtsql::kafka {

using Headers = std::vector<std::pair<std::string, std::string>>;

// The headers of `m`, in order, into `out` (cleared first). A header without a
// value reads as an empty string.
void readHeaders(const rd_kafka_message_t* m, Headers& out);

// The Kafka timestamp of a record in microseconds, or `fallbackMicros` when the
// record has none (timestampMs < 0).
inline int64_t recordMicros(int64_t timestampMs, int64_t fallbackMicros) {
  return timestampMs >= 0 ? timestampMs * 1000 : fallbackMicros;
}

class SourceDecoder {
 public:
  // Reads the source's format, columns and 'on.error' from `scan`.
  explicit SourceDecoder(const ScanSpec& scan);

  // Whether the source's columns read the records' headers (RecordView::headers
  // must then be set).
  bool needsHeaders() const { return needHeaders_; }

  // Decodes `view` (timestampMicros already resolved) into a record appended to
  // `out`, and returns true. A record that cannot be decoded is counted and
  // nothing is appended; with on.error = 'fail' failure() is then set: the
  // record is not consumed, and the task raises the error once the records
  // before it are handed over. With 'skip' and 'dead-letter' the record is
  // consumed; lastError() says why it could not be decoded.
  bool decode(const RecordView& view, int64_t readMicros, std::vector<SourceRecord>& out);

  // Counts the record at `offset` of `topic` partition `partition`, which the
  // client could not fetch or decompress (fetch_errors.h), as one that cannot
  // be decoded, for reason `why`: with on.error = 'fail' failure() is then set
  // and the record is not consumed; with 'skip' and 'dead-letter' the task
  // goes on past it, and lastError() says why.
  void unreadable(std::string_view topic, int32_t partition, int64_t offset, std::string why);

  const std::optional<SqlError>& failure() const { return failure_; }
  // The reason the last record that could not be decoded failed.
  const std::string& lastError() const { return error_; }
  // Any thread may read the count.
  int64_t errors() const { return errors_.load(std::memory_order_relaxed); }

 private:
  // Counts a record that cannot be decoded, failing with on.error = 'fail'.
  void countError(std::string_view topic, int32_t partition, int64_t offset);

  bool failOnError_ = true;
  bool needHeaders_ = false;
  std::unique_ptr<RecordDecoder> decoder_;
  std::string error_;
  std::atomic<int64_t> errors_{0};
  std::optional<SqlError> failure_;
};

}  // namespace rtsql::kafka
