// A flow's state copy (executor/state_copy.h) in a compacted Kafka topic: in a
// cluster, `_rtsql-<cluster>-state-<flow id>`, so that the node that takes a
// flow over restores the state its last node checkpointed.
//
// Topic layout (one partition, cleanup.policy=compact):
//   key: a state key (8-byte table prefix + the operator's key, so at least 8
//        bytes)   value: its value; a tombstone when the key was erased
//   key: "ckpt" (4 bytes, so no state key)   value: "checkpoint\n" followed by
//        the checkpoint's metadata file (executor/checkpoint.h: positions,
//        watermarks, CRC), or "reset" (the copy holds no state of the flow)
// Each write is one Kafka transaction: the changed entries, then the "ckpt"
// record. Readers read committed records only, so the copy read from the
// start up to its end is the state of the last "ckpt" record's checkpoint
// (compaction keeps each key's last record, which is what a reader applies
// last). A "reset" clears what was read before it. The transactional id is
// the topic's name: a node that starts writing fences the node that wrote
// before it (one that was cut off, say), whose open transaction Kafka aborts.
// An exactly-once flow's writes go into its output's transaction instead
// (same records; the transactional id is then the flow's, which fences the
// same way), so the copy and the output commit together; its sink must be on
// the cluster's Kafka.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "connectors/kafka/client.h"
#include "executor/state_copy.h"

namespace rtsql::kafka {

class KafkaStateCopy final : public StateCopy {
 public:
  KafkaStateCopy(std::string bootstrap, std::string topic);
  ~KafkaStateCopy() override;

  Contents read() override;
  std::optional<CheckpointInfo> newestCheckpoint() override;
  void write(const CheckpointInfo& info, const std::vector<StateChange>& changes,
             SinkTransaction* within) override;
  void checkWithin(SinkTransaction& transaction) override;
  void clear() override;
  // Between runs: the next run's producer makes sure of the topic again.
  void close() override {
    producer_.reset();
    topicEnsured_ = false;
  }
  // Deletes the topic (an embedded broker, which takes no admin requests,
  // keeps it: the next CREATE FLOW of the name marks it empty).
  void destroy() override;
  // Reads committed records with a consumer of its own (no producer: it
  // fences no writer).
  std::unique_ptr<Follower> follow(int64_t from) override;

  const std::string& topic() const { return topic_; }

 private:
  // The producer, made and its transactions initialized at first use (which
  // fences any earlier writer), and the topic made sure of.
  rd_kafka_t* producer();
  void commit(const std::vector<StateChange>& changes, const std::string& marker,
              SinkTransaction* within);
  // Reads the topic to its end, committed records only, giving each to `fn`:
  // from its start, or with `tail` from that many offsets before its end.
  void scan(int64_t tail, const std::function<void(const rd_kafka_message_t&)>& fn);

  std::string bootstrap_;
  std::string topic_;
  HandlePtr producer_;
  bool topicEnsured_ = false;  // by this run's first producer
};

}  // namespace rtsql::kafka
