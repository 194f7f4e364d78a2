// The executor's side of connectors: the interfaces a source task reads from and
// a sink task writes to. Implementations live in connectors/ (Kafka, datagen,
// files); the server hands the executor a ConnectorProvider that makes them, so
// the executor never depends on a particular connector.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/row_kind.h"
#include "common/value.h"
#include "executor/exchange.h"
#include "planner/physical_plan.h"

namespace rtsql {

struct SourceRecord {
  Row row;                      // decoded, in ScanSpec::schema layout
  int64_t timestampMicros = 0;  // the record's Kafka timestamp (datagen: creation time)
  int64_t readMicros = 0;       // wall clock when the source task received it
  int32_t partition = -1;
  int64_t offset = -1;
  // What the row does to the stream: always Insert, except from a changelog
  // source (format 'debezium-json'), whose rows also retract earlier ones.
  RowKind kind = RowKind::Insert;
};

struct PartitionProgress {
  std::string topic;  // empty for sources without topics (datagen)
  int32_t partition = -1;
  int64_t startOffset = -1;   // first offset of the current epoch
  int64_t endOffset = -1;     // next offset to read (last read + 1)
  int64_t latestOffset = -1;  // the broker's high watermark, -1 when unknown
  // Offsets passed over without a record (removed by retention before they
  // were read) since the task opened.
  int64_t offsetsSkipped = 0;
  // Where to resume, for sources whose positions are not numbers (a Kinesis
  // shard's sequence number): a token of the source's own, without spaces,
  // checkpointed with endOffset and handed back to seek(). Empty for Kafka.
  std::string position = {};
};

// One source task: reads a fixed set of partitions. Used from one thread only,
// except progress()/decodeErrors()/description()/wake(), which any thread may
// call.
class SourceTask {
 public:
  virtual ~SourceTask() = default;
  // Appends the records that are ready to `out` (at most `maxRecords`), waiting
  // up to `timeoutMs` when none is: it returns as soon as a record is ready,
  // so a long timeout costs no latency. A record that cannot be decoded is
  // skipped and counted with on.error = 'skip', or raised as SqlError with
  // 'fail'.
  virtual void poll(std::vector<SourceRecord>& out, size_t maxRecords, int timeoutMs) = 0;
  // Makes the poll() in progress return at once, with what it has, or the
  // next poll() if none is in progress: the flow has something else for the
  // task to do (end an epoch, commit, stop). Wakes are not counted; several
  // may end one wait. Only sources whose wakes() says so implement it; the
  // others are polled with a short timeout, so that the task still gets to
  // its other work in time.
  virtual void wake() {}
  virtual bool wakes() const { return false; }
  // Epoch end: makes the offsets of every record returned so far durable (Kafka:
  // commits them for the source's consumer group) and starts a new epoch range.
  virtual void commit() = 0;
  // Commits the positions `upTo` (each partition's endOffset): the offsets a
  // task had reached at an epoch's barrier, committed once every stage of the
  // flow has flushed that epoch. Later records may already have been read; they
  // stay uncommitted. The next epoch's startOffset becomes these positions.
  // The default, for sources whose commit() has no external effect, is commit().
  virtual void commit(const std::vector<PartitionProgress>& upTo) {
    (void)upTo;
    commit();
  }
  // Recovery: reads each listed partition (of this task's) from its
  // endOffset on, as if the records before it had been read and committed.
  // Called before the first poll(). Sources that cannot seek (datagen) ignore it.
  virtual void seek(const std::vector<PartitionProgress>& positions) { (void)positions; }
  // A reset flow (START FLOW ... RESET STATE): reads every partition from the
  // source's startingOffsets, as a new flow would, whatever offsets an earlier
  // run committed. Called before the first poll(). Sources without committed
  // positions ignore it.
  virtual void startFromStartingOffsets() {}
  virtual std::vector<PartitionProgress> progress() const = 0;
  // Whether `partition` has been read to the end of what the source holds now
  // (Kafka: up to the broker's end offset). A partition with records left to
  // read is never idle for the watermark (executor/watermark_tracker.h).
  // Called by the task's thread between polls. Sources that generate records
  // (datagen) have nothing waiting: the default says yes.
  virtual bool caughtUp(int32_t partition) const {
    (void)partition;
    return true;
  }
  // A source whose messages carry their producers' event-time progress (a
  // sharded flow's exchange: executor/exchange.h) says here where it stands,
  // after each poll(); the task then takes this watermark instead of the one
  // its records' event times make, and is idle when every producer is.
  struct OwnWatermark {
    int64_t watermark = INT64_MIN;
    bool allIdle = false;
  };
  virtual std::optional<OwnWatermark> ownWatermark() const { return std::nullopt; }
  virtual int64_t decodeErrors() const = 0;
  virtual std::string description() const = 0;  // "KafkaV2[Subscribe[clicks]]"
  // Records written to the source's dead-letter topic since the task opened
  // (on.error = 'dead-letter'); any thread may call it.
  virtual int64_t deadLetters() const { return 0; }
  // Epoch end, before progress() gives the epoch's offsets: waits until every
  // dead letter written so far is acknowledged, so that no offset past one is
  // checkpointed or committed before it is durable. Throws SqlError when one
  // could not be delivered.
  virtual void flushDeadLetters(int timeoutMs) { (void)timeoutMs; }
};

// One sink task's writer. Used from one thread.
class SinkWriter {
 public:
  virtual ~SinkWriter() = default;
  // Hands one row to the sink without waiting for the broker. `sourceTimestampMicros`
  // is the timestamp of the input record that produced the row.
  virtual void write(const Row& row, int64_t sourceTimestampMicros) = 0;
  // A row of a stream that is not append-only (common/row_kind.h). By default
  // a sink keeps each key's latest row, as Spark's update mode does: an
  // UpdateAfter is written like an insert and an UpdateBefore is dropped. A
  // Delete reaches only sinks that can write it (the planner refuses the
  // flow otherwise), so the default treats it as an internal error.
  virtual void writeChange(const Row& row, int64_t sourceTimestampMicros, RowKind kind);
  // The changes of the rows the task took together are all written: a sink
  // that holds an UpdateBefore for the UpdateAfter that may follow writes it
  // now as a delete (connectors/format/changes.h).
  virtual void endOfChanges() {}
  // Epoch end and shutdown: waits until every written row is acknowledged.
  // Throws SqlError when delivery failed.
  virtual void flush(int timeoutMs) = 0;
  // The flow is stopping (STOP FLOW, DROP FLOW, the server's stop): the
  // flush of its final epoch comes next. A sink that retries deliveries
  // stops retrying: what it has not delivered gets one more attempt at most,
  // and what fails fails that flush, so the epoch is not committed and a
  // later start sends its rows again. Any thread, while the writer lives.
  virtual void flowStopping() {}
  virtual int64_t deliveryErrors() const = 0;
  virtual std::string description() const = 0;
  // Exactly-once writers (see SinkTransaction): after the barrier's flush the
  // epoch's transaction is about to commit, so rows written from then on are
  // held back; resume() sends them into the next transaction.
  virtual void pause() {}
  virtual void resume() {}
};

// Where a row goes that arrived below the watermark, at a stateful operator
// that cannot take it any more (a closed window, a join bound passed, a
// forgotten dedup key), when the flow sets 'late.rows' = 'dead-letter'.
struct LateRowOrigin {
  std::string_view operatorName;  // "WindowAggregate", as the progress JSON names it
  int operatorId = 0;
  std::string_view input;  // a join's "left" or "right"; empty for one input
  int64_t eventTimeMicros = 0;
  int64_t watermarkMicros = 0;  // the operator's watermark when the row arrived
};

// Where a row goes whose evaluation failed with a data error (SQLSTATE class
// 22) at an operator, when the flow sets 'on.error' = 'dead-letter'
// (planner/row_errors.h): the operator's input row and the error.
struct RowErrorOrigin {
  std::string_view operatorName;  // as the progress JSON names it
  int operatorId = 0;             // the plan's; -1 for the task's sink or shuffle writer
  std::string_view input;         // a join's "left" or "right"; empty for one input
  std::string_view sqlstate;
  std::string_view message;
  std::string_view detail;  // a Python exception's traceback; may be empty
};

// The flow's dead-letter topics (planner/flow_dead_letters.h): late rows or
// rows whose evaluation failed.
enum class FlowDeadLetters { LateRows, RowErrors };

// One task's writer of rows to one of the flow's dead-letter topics. Used from
// the task's thread.
class FlowDeadLetterWriter {
 public:
  virtual ~FlowDeadLetterWriter() = default;
  // Hands one row, in `schema` (the operator's input), to the producer
  // without waiting for the broker: a late row, or one whose evaluation failed.
  virtual void writeLate(const Row& row, const Schema& schema, const LateRowOrigin& origin) = 0;
  virtual void writeError(const Row& row, const Schema& schema, const RowErrorOrigin& origin) = 0;
  // Epoch end, before the task reports: waits until every row written so far
  // is acknowledged (at least once). Throws SqlError when one could not be
  // delivered.
  virtual void flush(int timeoutMs) = 0;
};

// Exactly-once output: one transaction per epoch over every sink task of a
// flow run, committed by the flow's coordinator once the epoch's checkpoint is
// complete. The transaction also records the epoch, atomically with the rows,
// so recovery knows which checkpoint the sink's output agrees with.
class SinkTransaction {
 public:
  virtual ~SinkTransaction() = default;
  // Fences the flow's earlier writers (their open transaction is aborted) and
  // returns the last epoch whose transaction committed, or -1 for none.
  virtual int64_t recover() = 0;
  virtual void begin() = 0;
  // Commits the open transaction as epoch `epoch`'s. Throws SqlError (the
  // transaction is then aborted).
  virtual void commit(uint64_t epoch) = 0;

  // What must become visible exactly with an epoch's rows rides the same
  // transaction (in a cluster, the flow's state copy): the id of the Kafka
  // cluster the transaction writes to (empty: none), and a record added to
  // the open transaction, for partition `partition` of `topic` on that
  // cluster (a null value is a tombstone). add() throws SqlError 08006.
  virtual std::string kafkaClusterId() { return {}; }
  virtual void add(const std::string& topic, int partition, std::string_view key,
                   const std::string* value);
};

class ConnectorProvider {
 public:
  virtual ~ConnectorProvider() = default;
  // Partitions of the source (Kafka: of its topics together; datagen: 1 unless
  // maxPartitions says otherwise). Throws SqlError when the source is unreachable.
  virtual int sourcePartitions(const ScanSpec& scan) = 0;
  // Opens source task `task` of `tasks`; it owns partitions p with p % tasks == task.
  virtual std::unique_ptr<SourceTask> openSource(const ScanSpec& scan, const std::string& flowName,
                                                 int task, int tasks) = 0;
  virtual std::unique_ptr<SinkWriter> openSink(const SinkSpec& sink, const std::string& flowName,
                                               int task) = 0;
  // Exactly-once sinks (PhysicalPlan::exactlyOnce). `timeoutMs` bounds how long
  // a transaction may stay open (a checkpoint interval and then some). The
  // defaults refuse: only Kafka sinks have transactions.
  virtual std::unique_ptr<SinkTransaction> openSinkTransaction(const SinkSpec& sink,
                                                               const std::string& flowName,
                                                               int64_t timeoutMs);
  virtual std::unique_ptr<SinkWriter> openTransactionalSink(const SinkSpec& sink,
                                                            const std::string& flowName, int task,
                                                            SinkTransaction& transaction);
  // 'late.rows' = 'dead-letter' or 'on.error' = 'dead-letter'
  // (the topic CREATE FLOW read, PhysicalPlan::lateRowsTopic or
  // rowErrorsTopic): task `task`'s writer of the rows `which` names. The
  // default refuses: only Kafka receives them.
  virtual std::unique_ptr<FlowDeadLetterWriter> openFlowDeadLetters(const PhysicalPlan& plan,
                                                                    FlowDeadLetters which,
                                                                    int task);
  // A sharded flow's exchange (executor/exchange.h): front task `task`'s
  // writer into `spec`'s topic, and the back's source task over the
  // partitions `scan.share` gives of `scan.exchange`'s topic. Either
  // creates the topic when it does not exist yet. The defaults refuse:
  // only Kafka carries an exchange.
  virtual std::unique_ptr<ExchangeOut> openExchangeWriter(const ExchangeSpec& spec,
                                                          const std::string& flowName, int task);
  virtual std::unique_ptr<SourceTask> openExchangeSource(const ScanSpec& scan,
                                                         const std::string& flowName);
  // CREATE-time checks that need the running server (e.g. 'embedded' names a
  // broker only when the server runs one). Throws SqlError at the option.
  virtual void checkCreate(const std::string& connector, const Options& options) const {
    (void)connector;
    (void)options;
  }
};

}  // namespace rtsql
