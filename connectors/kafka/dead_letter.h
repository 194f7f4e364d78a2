// Dead letters of a source. With 'on.error' = 'dead-letter' a record that
// cannot be decoded is written, unchanged, to the Kafka topic named by
// 'dead-letter.topic', with headers added that name the error, the flow, the
// source and where the record was read. The flow then goes on as with 'skip'.
// A Kafka source writes its dead letters on its own cluster (its key, value
// and headers); a Kinesis source, which has no cluster of its own, on the one
// 'dead-letter.kafka.bootstrap.servers' names (the record's data as the value,
// its partition key as the key).
//
// The writes go through a raw Kafka sink writer (sink.h): the same producer
// settings (acks=all, idempotence), the same backpressure and the same
// delivery checks as a sink's rows. Delivery is at least once: the source task
// flushes its dead letters at each epoch end before it reports the epoch's
// offsets (SourceTask::flushDeadLetters), so no offset past a dead-lettered
// record is checkpointed or committed before the broker acknowledged it; a
// flow that fails or is killed in between reads the record again from its
// last checkpoint and writes it again.
//
// Late rows ('late.rows' = 'dead-letter' on a flow, planner/late_rows.h) go
// through the same writer: each row that arrived below the watermark at a
// stateful operator, as JSON, to 'late.rows.topic' on the sink's cluster (or
// 'late.rows.kafka.bootstrap.servers'), with headers naming the reason
// (`late`), the flow, the operator, the row's event time and the watermark.
// Rows whose evaluation failed ('on.error' = 'dead-letter' on a flow,
// planner/row_errors.h) go the same way, to 'dead-letter.topic' on the sink's
// cluster (or 'dead-letter.kafka.bootstrap.servers'): the failing operator's
// input row as JSON, with headers naming the reason (`error`), the flow, the
// operator, the SQLSTATE, the message and the detail (a Python traceback).
// The task that holds the operator flushes them at each epoch end before it
// reports the epoch, so they too are written at least once.
#pragma once

#include <librdkafka/rdkafka.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "common/options.h"
#include "connectors/kafka/decode.h"
#include "executor/connector_provider.h"

namespace rtsql::kafka {

inline constexpr const char* kDeadLetterTopicOption = "dead-letter.topic";
// The cluster of the dead-letter topic of a source that is not Kafka.
inline constexpr const char* kDeadLetterBootstrapOption = "dead-letter.kafka.bootstrap.servers";

// The header names added to a dead letter, after the record's own headers.
inline constexpr const char* kErrorHeader = "rtsql.error";    // why it could not be decoded
inline constexpr const char* kFlowHeader = "rtsql.flow";      // the flow that read it
inline constexpr const char* kSourceHeader = "rtsql.source";  // the source's name
// Where a Kafka source read it.
inline constexpr const char* kTopicHeader = "rtsql.topic";
inline constexpr const char* kPartitionHeader = "rtsql.partition";  // as decimal text
inline constexpr const char* kOffsetHeader = "rtsql.offset";        // as decimal text
// Where a Kinesis source read it.
inline constexpr const char* kStreamHeader = "rtsql.stream";
inline constexpr const char* kShardHeader = "rtsql.shard";  // the shard id
// The record's sequence number, as the service gives it.
inline constexpr const char* kSequenceNumberHeader = "rtsql.sequence.number";
// A late row's: kErrorHeader is kLateReason; after kFlowHeader come these.
inline constexpr const char* kLateReason = "late";
inline constexpr const char* kOperatorHeader = "rtsql.operator";       // as progress names it
inline constexpr const char* kOperatorIdHeader = "rtsql.operator.id";  // as decimal text
inline constexpr const char* kInputHeader = "rtsql.input";             // a join's left or right
inline constexpr const char* kEventTimeHeader = "rtsql.event.time";    // ISO 8601, UTC
inline constexpr const char* kWatermarkHeader = "rtsql.watermark";     // ISO 8601, UTC
// A failed row's: kErrorHeader is kErrorReason; after kFlowHeader come the
// operator's headers above, then these.
inline constexpr const char* kErrorReason = "error";
inline constexpr const char* kSqlstateHeader = "rtsql.sqlstate";
inline constexpr const char* kMessageHeader = "rtsql.message";
inline constexpr const char* kDetailHeader = "rtsql.detail";  // only when there is one

// CREATE SOURCE: 'on.error' = 'dead-letter' needs a 'dead-letter.topic', and a
// 'dead-letter.topic' needs 'on.error' = 'dead-letter'; the topic name must be
// one Kafka accepts. A source that is not Kafka (`ownCluster` false) also
// needs 'dead-letter.kafka.bootstrap.servers', which likewise applies only with
// 'dead-letter'. SqlError 22023 at the option, with a hint.
void validateDeadLetterOptions(const Options& options, size_t stmtPos, bool ownCluster = true);

// The `kafka.<name>` options of the dead-letter producer of a source that is
// not Kafka: its 'dead-letter.kafka.bootstrap.servers' (`bootstrap`, as
// SourceOptions::deadLetterBootstrap holds it) as 'kafka.bootstrap.servers'
// (possibly 'embedded', for resolveBootstrap).
Options deadLetterKafkaOptions(const std::string& bootstrap);

// Where a dead letter came from and why. `where` names the record's position
// in the source's terms: kafkaPosition() or kinesisPosition().
struct DeadLetterOrigin {
  std::string_view reason;
  std::string_view flow;
  std::string_view source;
  Headers where;
};

// rtsql.topic, rtsql.partition, rtsql.offset.
Headers kafkaPosition(std::string_view topic, int32_t partition, int64_t offset);
// rtsql.stream, rtsql.shard, rtsql.sequence.number.
Headers kinesisPosition(std::string_view stream, std::string_view shard,
                        std::string_view sequenceNumber);

// The headers of a dead letter: the record's own, in order, then the rtsql.*
// headers above.
Headers deadLetterHeaders(Headers original, const DeadLetterOrigin& origin);

// The headers of a late row (no headers of its own): rtsql.error = `late`,
// rtsql.flow, rtsql.operator, rtsql.operator.id, rtsql.input for a join's
// row only, rtsql.event.time and rtsql.watermark.
Headers lateRowHeaders(std::string_view flow, const LateRowOrigin& origin);

// The headers of a row whose evaluation failed: rtsql.error = `error`,
// rtsql.flow, rtsql.operator, rtsql.operator.id, rtsql.input for a join's
// row only, rtsql.sqlstate, rtsql.message and rtsql.detail when the error has
// one.
Headers rowErrorHeaders(std::string_view flow, const RowErrorOrigin& origin);

// One task's dead-letter writer. Used from the task's thread, except
// count(), which any thread may read.
class DeadLetterWriter {
 public:
  // A source's dead letters, through a producer with the `kafka.<name>`
  // options of `kafkaOptions` on the resolved `bootstrap` (never 'embedded'):
  // a Kafka source's own options (its cluster, its security settings), so it
  // reaches the cluster as the source's consumer does; another source's
  // deadLetterKafkaOptions().
  DeadLetterWriter(const ScanSpec& scan, const Options& kafkaOptions, const std::string& bootstrap,
                   const std::string& flowName, int task);
  // Dead letters to `topic` through a producer with `kafkaOptions` (its
  // `kafka.<name>` options) on the resolved `bootstrap`; `what` names them in
  // errors and keeps their producer apart ("late rows of flow 'f'").
  DeadLetterWriter(std::string what, const Options& kafkaOptions, std::string topic,
                   const std::string& bootstrap, const std::string& flowName, int task);
  ~DeadLetterWriter();

  DeadLetterWriter(const DeadLetterWriter&) = delete;
  DeadLetterWriter& operator=(const DeadLetterWriter&) = delete;

  // Hands the record `m`, read from `topic`, to the producer without waiting
  // for the broker (a full producer queue waits for room, never drops).
  void write(const rd_kafka_message_t* m, std::string_view topic, std::string_view reason);
  // Hands a record another source read to the producer: `value` and `key` as
  // read (BINARY, or NULL when absent), then the rtsql.* headers with `where`.
  void writeRecord(Value value, Value key, std::string_view reason, Headers where);
  // Hands one dead letter to the producer: `value` and `key` BINARY or NULL.
  void write(Value value, Value key, Headers headers);
  // Waits until every dead letter written is acknowledged. Throws SqlError
  // when one could not be delivered or the broker did not answer in time.
  void flush(int timeoutMs);

  // Dead letters written since the task opened.
  int64_t count() const { return count_.load(std::memory_order_relaxed); }
  const std::string& topic() const { return topic_; }

 private:
  std::string what_;  // "dead letters of source 'orders'"
  std::string source_;
  std::string flow_;
  std::string topic_;
  std::unique_ptr<SinkWriter> sink_;
  Headers headers_;
  Row row_;
  std::atomic<int64_t> count_{0};
};

// 'late.rows' = 'dead-letter' or 'on.error' = 'dead-letter': task `task`'s
// writer of the flow's late rows or failed rows (see above), on the cluster
// planner/flow_dead_letters.h chooses; `embeddedBootstrap` is what 'embedded'
// means on this server.
std::unique_ptr<FlowDeadLetterWriter> openFlowDeadLetterWriter(const PhysicalPlan& plan,
                                                               FlowDeadLetters which,
                                                               const std::string& embeddedBootstrap,
                                                               int task);

}  // namespace rtsql::kafka
