// The streaming shuffle between stages. Each task of a shuffle stage owns one
// ShuffleQueue; every task of every stage that feeds it pushes into it. A
// record crosses as soon as it is produced: no batching, no timer. The queue is
// bounded: a producer that finds it full waits (backpressure up to the source,
// which then stops polling), so memory stays bounded and nothing is dropped.
// A consumer with nothing to do blocks on a condition variable; nobody spins.
//
// Besides records, producers send control messages in the same order as their
// records: their watermark, that they went idle, and epoch barriers.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <vector>

#include "common/expr.h"
#include "common/value.h"
#include "executor/operators/operator.h"

namespace rtsql {

struct ShuffleMessage {
  enum class Kind : uint8_t { Record, Watermark, Idle, Barrier };
  Kind kind = Kind::Record;
  uint8_t input = 0;       // which input of the consuming stage (join: 0 left, 1 right)
  uint16_t producer = 0;   // index of the producing task among the stage's producers
  int64_t value = 0;       // Watermark: micros; Barrier: epoch number
  Row row;
  RecordContext ctx;
};

class ShuffleQueue {
 public:
  explicit ShuffleQueue(size_t capacity) : capacity_(capacity) {}

  // Appends a message, waiting while the queue is full. Returns false without
  // appending when `stopping` became true while waiting.
  bool push(ShuffleMessage&& m, const std::atomic<bool>& stopping);
  // Appends every message of `ms` in order (as push() would, one by one) and
  // clears it. Returns false when `stopping` became true while waiting for
  // room; the messages not yet appended are dropped then.
  bool pushAll(std::vector<ShuffleMessage>& ms, const std::atomic<bool>& stopping);
  // Moves every queued message to `out` (appending), waiting up to `timeoutMs`
  // for the first one. Returns false on timeout, or at once when wakeAll()
  // came before any message: the consumer then has something else to do.
  bool popAll(std::deque<ShuffleMessage>& out, int timeoutMs);
  // Wakes every waiting producer and the consumer: at stop, and when the
  // consumer task has a commit to make. A wake that comes while the consumer
  // is not waiting ends its next wait.
  void wakeAll();
  size_t size() const;

 private:
  const size_t capacity_;
  mutable std::mutex mu_;
  std::condition_variable notEmpty_;
  std::condition_variable notFull_;
  std::deque<ShuffleMessage> items_;
  // Waits while the queue is full; false when `stopping` became true.
  bool waitForRoom(std::unique_lock<std::mutex>& lock, const std::atomic<bool>& stopping);
  // Wakes the consumer when it waits and nobody woke it yet.
  void wakeConsumer();

  bool consumerWaiting_ = false;
  bool consumerNotified_ = false;  // woken since it began to wait
  bool woken_ = false;             // wakeAll() since the consumer last returned
  int producersWaiting_ = 0;
};

// The hash of a row's shuffle keys (evaluated on it): what picks the task a
// shuffle hands the row to (hash % tasks), and a sharded flow's copy.
size_t shuffleKeyHash(const std::vector<ExprPtr>& keys, const Row& row);
// The same hash of keys whose values are `values`, in the keys' order: which
// task of a stage shuffled by them holds a key (a view's lookup by key,
// executor/state/view_table.cpp).
size_t shuffleKeyHashOf(const std::vector<Value>& values);

// The shard, of `shards`, of a row whose shuffle key hashes to `keyHash`
// (planner/shard_plan.h): the copy of a sharded flow that keeps its key.
// The hash is mixed first, so that a shard's keys are spread over all the
// copy's tasks (keyHash % tasks) and not a few.
int shardOfKeyHash(size_t keyHash, int shards);

// The terminal operator of a stage whose output is a shuffle: hashes the output
// row's keys to pick the target task and moves the row there (the producer's
// row is left with as many NULL columns, so an operator that reuses its output
// row still finds its columns). Watermarks go to every target task.
//
// Between beginBatch() and endBatch() the records are kept per target and
// handed over together at endBatch(), before any control message, or when a
// target has kMaxBatch of them; outside a batch each record is handed over at
// once.
class ShuffleWriter final : public Operator {
 public:
  ShuffleWriter(std::vector<ExprPtr> keys, std::vector<ShuffleQueue*> targets, uint8_t input,
                uint16_t producer, const std::atomic<bool>& stopping)
      : keys_(std::move(keys)),
        targets_(std::move(targets)),
        input_(input),
        producer_(producer),
        stopping_(stopping),
        pending_(targets_.size()) {}

  void push(Row& row, const RecordContext& ctx) override;
  // push() of a row whose keys hash to `keyHash` (shuffleKeyHash): a sharded
  // flow's front, which hashed them already, hands its own copy's rows on.
  void pushHashed(Row& row, const RecordContext& ctx, size_t keyHash);
  void onWatermark(int64_t watermarkMicros) override;
  std::string name() const override { return "ShuffleWriter"; }

  // Control messages to every target, in order with the records already sent.
  void broadcast(ShuffleMessage::Kind kind, int64_t value);

  // The producer starts working through records that arrived together.
  void beginBatch() { batching_ = true; }
  // It is done with them: the records kept since beginBatch() go now.
  void endBatch() {
    batching_ = false;
    handOver();
  }

  // Records a target's batch holds at most: bounds how long the first of
  // them waits for the producer to finish the others.
  static constexpr size_t kMaxBatch = 64;

 private:
  // Hands every target's kept records over.
  void handOver();

  std::vector<ExprPtr> keys_;
  std::vector<ShuffleQueue*> targets_;
  uint8_t input_;
  uint16_t producer_;
  const std::atomic<bool>& stopping_;
  bool batching_ = false;
  std::vector<std::vector<ShuffleMessage>> pending_;  // by target, while batching
  size_t pendingCount_ = 0;
};

}  // namespace rtsql
