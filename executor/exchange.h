// The exchange of a sharded flow (planner/shard_plan.h): how its rows cross
// from the copy that reads them to the copy that keeps their key, through an
// internal Kafka topic of one partition per copy.
//
// Copy s of N reads the source partitions i with i % N == s and runs the
// stages before the flow's shuffle on them (its front). The front's last
// operator, the ExchangeWriter, sends each row to partition shard(key) of the
// exchange topic (shardOfKeyHash, executor/shuffle.h). The copy's back stage
// reads partition s of the topic (and only it) and shuffles the rows into its
// stateful tasks as a flow of its own would. So each copy reads 1/N of the
// input, and each key's rows reach one copy.
//
// What a message of the topic holds (encodeExchangeRow / encodeExchangeMarker):
//  - a row: its origin (the source record's partition and offset, and which
//    of the rows that record gave it is), the source record's timestamp, the
//    row's kind and the row;
//  - a marker: a front task's watermark, or that its partitions went idle,
//    written to every partition of the topic. Each front task is a producer
//    (copy * front tasks + task); the back's watermark is the minimum over
//    the producers that are not idle, as a shuffle task's is over its
//    producing tasks (InputWatermarks), and a front task repeats its marker
//    every second so that a back that starts anywhere in the topic hears from
//    every producer.
//
// The copy's own shard (ExchangeSpec::local, the flows CREATE FLOW makes
// now): a front hands the rows of its own copy's shard straight to the
// copy's stateful stage through the in-process shuffle, as a flow of one
// copy would, with its epoch barriers and (at the markers' pace) its
// watermark; only the rows of other
// shards, and the markers for other copies, go through the topic. So 1/N of
// the rows skips the topic, and the stateful stage has two kinds of
// producers: the copy's front tasks, and the back, whose watermark is the
// minimum over the other copies' front tasks. The back drops anything of
// the copy's own fronts it finds in the topic (none but a guard: the topic
// is the flow's own). Each origin partition is read by one copy, so its
// rows still reach a key's copy by one path, in order.
//
// Delivery: a front writes at least once (after a recovery it writes again
// the rows of the records after its checkpoint). The back drops what it has
// taken before: per origin partition, rows arrive in (offset, index) order
// from the task that reads it (one idempotent producer writes a partition's
// rows in order and without gaps), so a row at or below the last position
// taken is a repeat (ExchangeReceiver). Those positions are part of the
// back's checkpoint (the position token of its exchange partition), so the
// back's state holds each row exactly once, and its output is at least once,
// or exactly once with 'delivery' = 'exactly-once', as a flow's of its own.
// The own rows are in the checkpoint as a flow's of one copy are: the
// stateful stage aligns the fronts' barriers with the back's, so its state
// at an epoch holds exactly the own rows before the fronts' positions.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/expr.h"
#include "common/row_kind.h"
#include "common/types.h"
#include "common/value.h"
#include "executor/operators/operator.h"
#include "executor/watermark_tracker.h"

namespace rtsql {

class ShuffleWriter;

// Where an exchanged row came from.
struct ExchangeOrigin {
  int32_t partition = -1;  // the source record's partition (numbered over the scan's topics)
  int64_t offset = -1;     // and offset
  int32_t index = 0;       // which of the rows that record gave, from 0

  bool operator<=(const ExchangeOrigin& o) const {
    return offset < o.offset || (offset == o.offset && index <= o.index);
  }
};

// One message of an exchange partition, decoded.
struct ExchangeMessage {
  enum class Kind : uint8_t { Row = 1, Watermark = 2, Idle = 3 };
  Kind kind = Kind::Row;
  // Row.
  ExchangeOrigin origin;
  int64_t sourceTimestampMicros = 0;
  RowKind rowKind = RowKind::Insert;
  Row row;
  // Watermark and Idle: which producer, of how many.
  uint32_t producer = 0;
  uint32_t producers = 0;
  int64_t watermark = INT64_MIN;  // Watermark
};

// Writes the message into `out` (replacing what it held: a writer keeps one
// buffer for all its rows).
void encodeExchangeRow(std::string& out, const ExchangeOrigin& origin,
                       int64_t sourceTimestampMicros, RowKind kind, const Row& row);
std::string encodeExchangeRow(const ExchangeOrigin& origin, int64_t sourceTimestampMicros,
                              RowKind kind, const Row& row);
std::string encodeExchangeMarker(ExchangeMessage::Kind kind, uint32_t producer, uint32_t producers,
                                 int64_t watermark);
// Decodes a message whose rows have columns of `types`. Throws SqlError
// XX001 (data corrupted) for bytes that are no such message.
ExchangeMessage decodeExchange(std::string_view bytes, const std::vector<DataTypePtr>& types);

// The back's side: which rows are repeats, and the watermark over the
// producers. Used by the back's source task only.
class ExchangeReceiver {
 public:
  // `producers` front tasks over `shards` copies. With `ownShard` >= 0 (the
  // copy's own rows stay in process: ExchangeSpec::local) the receiver
  // leaves out that copy's front tasks: their markers count for nothing (its
  // producers are idle here from the start), and a row from a partition
  // they read (origin partition % shards == ownShard) is dropped.
  explicit ExchangeReceiver(uint32_t producers, int ownShard = -1, int shards = 1);

  // Whether a row from `origin` is new (and takes it); false for a repeat
  // (or a row of the copy's own fronts, which reach it in process).
  bool accept(const ExchangeOrigin& origin);
  // A marker. Throws SqlError XX001 for a producer out of range (a topic
  // written by a plan of another shape).
  void marker(const ExchangeMessage& m);

  // The minimum over the producers that are not idle; INT64_MIN while one of
  // them has said nothing yet. It only grows.
  int64_t watermark() const { return watermarks_.current(); }
  // Every producer has said it is idle.
  bool allIdle() const { return idleCount_ == producers_ && producers_ > 0; }
  uint64_t repeatsDropped() const { return repeats_; }

  // The positions taken, per origin partition, as a token without spaces
  // (SourceTask's PartitionProgress::position), and back. restore() throws
  // SqlError XX001 for a damaged token.
  std::string position() const;
  void restore(std::string_view token);

 private:
  bool own(uint32_t producer) const { return producer >= ownFirst_ && producer < ownEnd_; }

  uint32_t producers_;
  int ownShard_;
  int shards_;
  uint32_t ownFirst_ = 0;  // the own copy's producers: [ownFirst_, ownEnd_)
  uint32_t ownEnd_ = 0;
  InputWatermarks watermarks_;
  std::vector<bool> idle_ = std::vector<bool>(producers_, false);
  uint32_t idleCount_ = 0;
  std::map<int32_t, ExchangeOrigin> taken_;  // by origin partition
  uint64_t repeats_ = 0;
};

// The front's side, as a connector writes it: one front task's writer into
// the exchange topic. Used from the task's thread.
class ExchangeOut {
 public:
  virtual ~ExchangeOut() = default;
  // Hands a message to partition `partition` (a copy's shard) without
  // waiting for the broker; `timestampMicros` becomes the message's
  // timestamp. The bytes are the caller's again when it returns.
  virtual void send(int partition, std::string_view bytes, int64_t timestampMicros) = 0;
  // Epoch end and shutdown: waits until everything sent is acknowledged.
  // Throws SqlError when delivery failed.
  virtual void flush(int timeoutMs) = 0;
  virtual std::string description() const = 0;
};

// The terminal operator of a front stage: hashes the row's shuffle keys to
// its shard and sends it there with its origin (set by the source task before
// each record: setOrigin); sends the task's watermark, or that it is idle,
// to every shard, and repeats it every kMarkerEveryMillis.
//
// A watermark that advances within `paceMillis` of the last marker waits
// until then (the task wakes for it): a front sends at most one marker per
// pace to each shard, where a watermark that advances with every record
// would cost a message per record to every shard. The back's watermark lags
// the front's by up to the pace (windows close that much later). That a
// task is idle, and the first watermark after it was, go at once.
class ExchangeWriter final : public Operator {
 public:
  static constexpr int64_t kMarkerEveryMillis = 1000;
  static constexpr int64_t kMarkerPaceMillis = 100;

  ExchangeWriter(std::vector<ExprPtr> keys, int shards, uint32_t producer, uint32_t producers,
                 ExchangeOut& out, int64_t paceMillis = kMarkerPaceMillis)
      : keys_(std::move(keys)),
        shards_(shards),
        producer_(producer),
        producers_(producers),
        out_(out),
        paceMillis_(paceMillis) {}

  // The rows of shard `ownShard` (the copy this front belongs to) go to
  // `local`, the in-process shuffle into the copy's stateful stage, and its
  // watermark with each marker, at the markers' pace; markers go to the
  // other shards only. The task's idleness and barriers reach `local` from
  // the task itself.
  void keepOwnShard(int ownShard, ShuffleWriter& local) {
    ownShard_ = ownShard;
    local_ = &local;
  }
  // The record whose rows come next.
  void setOrigin(int32_t partition, int64_t offset) { origin_ = {partition, offset, 0}; }
  void push(Row& row, const RecordContext& ctx) override;
  void onWatermark(int64_t watermarkMicros) override;
  // Every partition of the task is idle (until the next onWatermark()).
  void onIdle();
  void onBatchEnd() override;
  int64_t wakeAtMillis() override {
    return markerHeld_ ? std::min(nextMarkerMillis_, lastMarkerMillis_ + paceMillis_)
                       : nextMarkerMillis_;
  }
  void flush(int timeoutMs) { out_.flush(timeoutMs); }
  std::string name() const override { return "ExchangeWriter"; }

 private:
  void sendMarker();

  std::vector<ExprPtr> keys_;
  int shards_;
  uint32_t producer_;
  uint32_t producers_;
  ExchangeOut& out_;
  int64_t paceMillis_;
  int ownShard_ = -1;
  ShuffleWriter* local_ = nullptr;
  ExchangeOrigin origin_;
  bool idle_ = false;
  int64_t watermark_ = INT64_MIN;
  int64_t nextMarkerMillis_ = INT64_MIN;  // at once: a new task says where it is
  int64_t lastMarkerMillis_ = INT64_MIN / 2;
  bool markerHeld_ = false;               // a watermark waits for the pace
  std::string message_;                   // the row being sent, in a buffer kept across rows
};

}  // namespace rtsql
