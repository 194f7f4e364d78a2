// Live taps: one Kafka consumer shared by every live query that reads the same
// source from the latest offsets.
//
// A live query (`SELECT ... FROM <kafka source>`) is a temporary flow, and
// each of its source tasks would otherwise open a consumer of its own: fifty
// live queries on one topic were fifty fetch sessions on the broker and fifty
// sets of client threads in rtsqld, which running flows felt in their latency.
// A query that starts at the latest offsets needs nothing a shared consumer
// cannot give: it wants the records that arrive from now on, and commits no
// offsets. So such queries subscribe to a tap instead: one consumer per
// (bootstrap servers, topic list, `kafka.<name>` options), reading every
// partition of the topics from their end, in no consumer group, committing
// nothing. The tap's thread polls it and hands each record, copied once, to
// every subscription that owns its partition. Each subscription is one source
// task of one live query and decodes with its own source's columns and format
// (kafka/decode.h), so queries with different column lists share a tap.
//
// A subscription gets the records the tap reads after it subscribed. The
// first subscription opens the tap; the last one to leave closes it (thread
// joined, consumer destroyed).
//
// A slow live query never holds up the tap or the other queries: each
// subscription queues at most KafkaTapOptions::queueBytes of records, and one
// that would go past it is failed (SQLSTATE 53400, "the client reads too
// slowly") once the records queued before are taken; no record is skipped
// silently. A broker that stays unreachable for brokerTimeoutMs, or a topic
// that disappears, fails every subscription of the tap with the reason
// (08006, 42704); a new live query then opens a new tap.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "executor/connector_provider.h"

namespace rtsql {

struct KafkaTapOptions {
  // Records a subscription may hold that its task has not taken yet, in bytes:
  // each counts its key, value and headers plus a fixed overhead.
  size_t queueBytes = size_t(16) << 20;
  // How long the tap's broker may stay unreachable before its subscriptions fail.
  int brokerTimeoutMs = 10000;
  // How often a tap asks the broker whether its topics still exist. After an
  // error from the consumer it asks every second until the broker answers.
  int checkIntervalMs = 5000;
};

// What SHOW live_taps tells about one tap.
struct KafkaTapInfo {
  std::string bootstrap;
  std::string topics;       // comma list, in 'subscribe' order
  int64_t liveQueries = 0;  // distinct flows subscribed
  int64_t tasks = 0;        // their subscribed source tasks
  int64_t records = 0;      // records the tap has read
};

class KafkaTaps {
 public:
  // `embeddedBootstrap`: what 'kafka.bootstrap.servers' = 'embedded' means here.
  explicit KafkaTaps(std::string embeddedBootstrap = {}, KafkaTapOptions options = {});
  ~KafkaTaps();
  KafkaTaps(const KafkaTaps&) = delete;
  KafkaTaps& operator=(const KafkaTaps&) = delete;

  // Whether `scan` is a source a tap can read: one of the Kafka connector's.
  static bool serves(const ScanSpec& scan);

  // Source task `task` of `tasks` of live query `flowName`, reading the Kafka
  // source `scan` through its tap, which is opened when there is none (or
  // only a failed one). The task owns partitions p with p % tasks == task,
  // numbered over the topics of 'subscribe' in order as Kafka source tasks do.
  // Its commit() commits nothing and seek() is not supported: a tap always
  // reads on from where it is. Throws SqlError when a new tap cannot open its
  // consumer (08006 broker unreachable, 42704 missing topic, 22023 bad option).
  std::unique_ptr<SourceTask> subscribe(const ScanSpec& scan, const std::string& flowName,
                                        int task, int tasks);

  // The open taps, in no particular order.
  std::vector<KafkaTapInfo> list() const;

  class Tap;  // one shared consumer and its thread (tap.cpp)

 private:
  struct Entry;

  std::string embeddedBootstrap_;
  KafkaTapOptions options_;
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<Entry>> entries_;  // by tap key
};

}  // namespace rtsql
