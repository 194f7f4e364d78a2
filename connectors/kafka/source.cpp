#include "connectors/kafka/source.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <map>
#include <optional>
#include <iterator>
#include <set>
#include <string_view>
#include <thread>
#include <unordered_map>

#include "common/clock.h"
#include "common/error.h"
#include "common/schema.h"
#include "connectors/format/codec.h"
#include "connectors/kafka/assigned_consumer.h"
#include "connectors/kafka/client.h"
#include "connectors/kafka/consume_loop.h"
#include "connectors/kafka/dead_letter.h"
#include "connectors/kafka/decode.h"
#include "connectors/kafka/fetch_errors.h"
#include "connectors/kafka/fetch_rate.h"
#include "connectors/registry.h"
#include "connectors/restore_position.h"
#include "executor/source_fetch_mode.h"

namespace rtsql {

namespace {

using kafka::ListPtr;
using kafka::MessagePtr;

struct PartitionState {
  std::string topic;
  int topicIndex = 0;
  int32_t partition = 0;
  int64_t startOffset = -1;
  int64_t endOffset = -1;
  int64_t committed = -1;
  // Offsets passed over without a record since the task opened: the next
  // record's offset was beyond the last one read + 1.
  int64_t skipped = 0;
  bool skipLogged = false;
  // The batch of messages taken from the client (KafkaSourceTask::heldBatch_)
  // in which the task last moved past a record it cannot read, -1 for none.
  int64_t movedInBatch = -1;
};

// How long an epoch's offset commit may wait for the broker.
constexpr int kCommitTimeoutMs = 10000;

// The resume token a Kafka position carries in a checkpoint
// (PartitionProgress::position): the id of the cluster its offsets belong to,
// so that a restore on another cluster (a broker replaced by an empty one, an
// embedded broker started again) is told from a restore on the same one.
constexpr std::string_view kClusterTokenPrefix = "kafka-cluster:";

// Empty when the id is unknown or not one that fits in a token: the broker
// names it, so only a short id of plain characters is kept.
std::string clusterPositionToken(const std::string& id) {
  if (id.empty() || id.size() > 128) return {};
  for (char c : id) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                       c == '-' || c == '_' || c == '.';
    if (!plain) return {};
  }
  return std::string(kClusterTokenPrefix) + id;
}

std::string clusterOfToken(const std::string& token) {
  return token.starts_with(kClusterTokenPrefix) ? token.substr(kClusterTokenPrefix.size())
                                                : std::string();
}

// The client the tasks of one source of one flow share on a node: one
// librdkafka consumer, so one fetch request (and one I/O thread's wakeup)
// serves every partition the node reads, where a client per task made one per
// task. Each task still reads its own partitions alone, from a queue of its
// own that the partitions' queues are forwarded to, and assigns, seeks and
// commits only those. Client-level errors land on the consumer's own queue,
// which every task drains in passing.
//
// A source whose records come fast (connectors/kafka/fetch_rate.h) has a
// second shared client that fetches in batches; the tasks move their
// partitions to it and back as the rate changes (KafkaSourceTask::
// switchFetch()), so a node holds one client of each mode at most.
struct SharedConsumer {
  kafka::HandlePtr rk;
  kafka::FetchMode mode = kafka::FetchMode::Prompt;
  rd_kafka_queue_t* errors = nullptr;  // the consumer queue: client-level errors
  std::mutex mu;
  std::set<std::pair<std::string, int32_t>> claimed;  // partitions a task reads

  ~SharedConsumer() { kafka::destroyAssignedConsumer(rk, errors); }

  // Claims `parts` for one task; false when another task holds any of them
  // (a task of an earlier run of the flow still closing): that task then
  // opens a client of its own.
  bool claim(const std::vector<std::pair<std::string, int32_t>>& parts) {
    std::lock_guard lock(mu);
    for (const auto& p : parts) {
      if (claimed.count(p)) return false;
    }
    claimed.insert(parts.begin(), parts.end());
    return true;
  }
  void release(const std::vector<std::pair<std::string, int32_t>>& parts) {
    std::lock_guard lock(mu);
    for (const auto& p : parts) claimed.erase(p);
  }
};

// The shared consumers by source, flow, group and broker: held by their
// tasks, gone with the last of them.
std::mutex gConsumersMutex;
std::map<std::string, std::weak_ptr<SharedConsumer>> gConsumers;
// The rate the tasks of a source read at on this node, by the same key.
std::map<std::string, std::weak_ptr<kafka::FetchRateDetector>> gFetchRates;

// The key of the shared client of `mode` among the source's.
std::string consumerKey(const std::string& sourceKey, kafka::FetchMode mode) {
  return mode == kafka::FetchMode::Batching ? sourceKey + "\nbatching" : sourceKey;
}

// The rate from which the source's consumer fetches in batches, 0 when it
// never does: the option says 0, or the user set a fetch setting the switch
// would change.
int64_t fetchBatchingRate(const Options& options) {
  if (options.has("kafka.fetch.min.bytes") || options.has("kafka.fetch.wait.max.ms")) return 0;
  return options.getInt(kafka::kFetchBatchingRateOption, kafka::kDefaultFetchBatchingRate, 0,
                        kafka::kMaxFetchBatchingRate);
}

class KafkaSourceTask final : public SourceTask, public SourceFetchMode {
 public:
  KafkaSourceTask(const ScanSpec& scan, const std::string& bootstrap, const std::string& flowName,
                  const kafka::FlowKafkaIds& ids, int task, int tasks)
      : topics_(sourceOptionsOf(scan).topics),
        bootstrap_(bootstrap),
        decoder_(scan) {
    group_ = ids.group();
    // A group of the user's ('kafka.group.id') was never another one.
    if (!sourceOptionsOf(scan).userGroup) {
      legacyGroup_ = ids.legacy;
      options_ = scan.options;
    }
    if (topics_.empty()) {
      throw SqlError(sqlstate::kInvalidParameterValue,
                     "option 'subscribe' of source '" + scan.name + "' names no topic");
    }
    const SourceOptions parsed = sourceOptionsOf(scan);
    const bool earliest = parsed.fromEarliest;
    earliest_ = earliest;
    failOnDataLoss_ = parsed.failOnDataLoss;
    flowName_ = flowName;

    kafka::ensureEmbeddedTopics(bootstrap_, topics_);
    sourceOptions_ = scan.options;
    sourceKey_ = fmt::format("{}\n{}\n{}\n{}\n{}", flowName, scan.name, group_, bootstrap_,
                             fmt::join(topics_, ","));
    consumer_ = sharedConsumer(kafka::FetchMode::Prompt);
    if (const int64_t rate = fetchBatchingRate(scan.options); rate > 0) {
      std::lock_guard lock(gConsumersMutex);
      fetchRate_ = gFetchRates[sourceKey_].lock();
      if (!fetchRate_) {
        kafka::FetchRateDetector::Settings settings;
        settings.rate = rate;
        fetchRate_ = std::make_shared<kafka::FetchRateDetector>(settings);
        gFetchRates[sourceKey_] = fetchRate_;
      }
      for (auto it = gFetchRates.begin(); it != gFetchRates.end();) {
        it = it->second.expired() ? gFetchRates.erase(it) : std::next(it);
      }
    }
    rk_ = consumer_->rk.get();
    if (parsed.onError == RowErrorPolicy::DeadLetter) {
      deadLetters_ =
          std::make_unique<kafka::DeadLetterWriter>(scan, scan.options, bootstrap_, flowName, task);
    }
    std::vector<int> counts = kafka::partitionCounts(rk_, topics_, bootstrap_);
    // Known from the metadata just read: no further round trip.
    clusterToken_ = clusterPositionToken(kafka::clusterId(rk_));

    // Partitions are numbered over the topics in their order in `subscribe`, so
    // that a list of several small topics still spreads over the tasks.
    int index = 0;
    for (size_t t = 0; t < topics_.size(); ++t) {
      for (int p = 0; p < counts[t]; ++p, ++index) {
        // In a cluster, a flow spread over the nodes (or a sharded flow's
        // copy) reads only its share, spread over its tasks in turn.
        if (!scan.share.reads(index) || scan.share.rank(index) % tasks != task) continue;
        PartitionState s;
        s.topic = topics_[t];
        s.topicIndex = static_cast<int>(t);
        s.partition = p;
        byKey_[key(s.topicIndex, p)] = parts_.size();
        parts_.push_back(std::move(s));
      }
    }
    if (parts_.empty()) return;
    std::vector<std::pair<std::string, int32_t>> mine;
    for (const PartitionState& s : parts_) mine.emplace_back(s.topic, s.partition);
    if (!consumer_->claim(mine)) {
      consumer_ = openConsumer(kafka::FetchMode::Prompt);
      consumer_->claim(mine);
      rk_ = consumer_->rk.get();
    }
    claimed_ = std::move(mine);
    try {
      openQueues();
      assign(earliest, true);
    } catch (...) {
      close();
      throw;
    }
  }

  ~KafkaSourceTask() override { close(); }

  void poll(std::vector<SourceRecord>& out, size_t maxRecords, int timeoutMs) override {
    if (parts_.empty()) {
      idleWait_.wait(timeoutMs);  // more tasks than partitions: nothing to read
      return;
    }
    // A restored offset the log no longer holds ends the flow before any record.
    if (restoreFailure_) throw *restoreFailure_;
    // A record that could not be decoded with on.error = 'fail' ends the flow,
    // but only after the records before it were handed over.
    if (decoder_.failure()) throw *decoder_.failure();
    drainClientErrors();
    const size_t added =
        kafka::consumeBatches(queue_, held_, maxRecords, timeoutMs, [&](std::vector<MessagePtr>& held) {
          ++heldBatch_;
          const int64_t readMicros = nowMicros();
          kafka::BatchTaken t;
          std::lock_guard lock(mutex_);
          for (MessagePtr& m : held) {
            t.records += process(m.get(), readMicros, out);
            if (decoder_.failure()) break;
          }
          t.stop = decoder_.failure().has_value();
          return t;
        });
    if (decoder_.failure() && added == 0) throw *decoder_.failure();
    if (fetchRate_) {
      const kafka::FetchMode wanted = fetchRate_->add(int64_t(added), monotonicMicros());
      if (wanted != consumer_->mode) switchFetch(wanted);
    }
  }

  void wake() override {
    if (parts_.empty()) {
      idleWait_.wake();
      return;
    }
    // The queue changes when the task switches its fetch mode.
    std::lock_guard lock(mutex_);
    if (queue_) rd_kafka_queue_yield(queue_);
  }

  bool wakes() const override { return true; }

  void commit() override {
    std::vector<PartitionProgress> upTo;
    {
      std::lock_guard lock(mutex_);
      for (const PartitionState& s : parts_) {
        PartitionProgress p;
        p.topic = s.topic;
        p.partition = s.partition;
        p.endOffset = s.endOffset;
        upTo.push_back(p);
      }
    }
    commit(upTo);
  }

  // Commits the given positions, then makes them the next epoch's start. Records
  // read since (after an epoch's barrier) stay uncommitted until a later epoch.
  void commit(const std::vector<PartitionProgress>& upTo) override {
    ListPtr list(rd_kafka_topic_partition_list_new(static_cast<int>(upTo.size()) + 1));
    {
      std::lock_guard lock(mutex_);
      for (const PartitionProgress& p : upTo) {
        auto it = byKey_.find(key(topicIndexOf(p.topic.c_str()), p.partition));
        if (it == byKey_.end()) continue;
        const PartitionState& s = parts_[it->second];
        if (p.endOffset < 0 || p.endOffset == s.committed) continue;
        rd_kafka_topic_partition_list_add(list.get(), s.topic.c_str(), s.partition)->offset =
            p.endOffset;
      }
    }
    if (list->cnt > 0) {
      rd_kafka_resp_err_t err = commitBounded(list.get());
      if (err && err != RD_KAFKA_RESP_ERR__NO_OFFSET) {
        throw SqlError(sqlstate::kConnectionFailure,
                       fmt::format("cannot commit the offsets of {} on {}: {}", description(),
                                   bootstrap_, rd_kafka_err2str(err)));
      }
    }
    std::lock_guard lock(mutex_);
    for (const PartitionProgress& p : upTo) {
      auto it = byKey_.find(key(topicIndexOf(p.topic.c_str()), p.partition));
      if (it == byKey_.end() || p.endOffset < 0) continue;
      PartitionState& s = parts_[it->second];
      s.committed = p.endOffset;
      s.startOffset = p.endOffset;
    }
  }

  // Recovery from a checkpoint: the partitions are assigned again, at the
  // checkpoint's positions. Records fetched for the earlier assignment are
  // discarded by librdkafka (they belong to an outdated assignment version).
  void seek(const std::vector<PartitionProgress>& positions) override {
    if (parts_.empty()) return;
    // Each checkpointed offset is checked against the log before the client
    // sees it: out of range, librdkafka would start over silently.
    std::vector<std::pair<size_t, RestoredOffset>> restored;
    for (const PartitionProgress& p : positions) {
      auto it = byKey_.find(key(topicIndexOf(p.topic.c_str()), p.partition));
      if (it == byKey_.end() || p.endOffset < 0) continue;
      restored.emplace_back(it->second, checkRestored(parts_[it->second], p.endOffset, p.position));
    }
    // What the committed offsets said no longer matters: the checkpoint's win.
    restoreFailure_.reset();
    ListPtr list(rd_kafka_topic_partition_list_new(static_cast<int>(parts_.size())));
    {
      std::lock_guard lock(mutex_);
      for (const auto& [index, r] : restored) {
        PartitionState& s = parts_[index];
        s.startOffset = s.endOffset = r.offset;
        // Nothing was read under the assignment seek() replaces.
        s.skipped = r.skipped;
        s.skipLogged = s.skipLogged || r.lost;
      }
      for (const PartitionState& s : parts_) {
        rd_kafka_topic_partition_list_add(list.get(), s.topic.c_str(), s.partition)->offset =
            s.endOffset >= 0 ? s.endOffset : RD_KAFKA_OFFSET_INVALID;
      }
    }
    assignList(*list, "at their checkpointed offsets");
  }

  void startFromStartingOffsets() override {
    if (parts_.empty()) return;
    std::lock_guard lock(mutex_);
    restoreFailure_.reset();
    for (PartitionState& s : parts_) {
      s.startOffset = s.endOffset = s.committed = -1;
      s.skipped = 0;
    }
    assign(earliest_, false);
  }

  std::vector<PartitionProgress> progress() const override {
    std::vector<PartitionProgress> out;
    std::lock_guard lock(mutex_);
    out.reserve(parts_.size());
    for (const PartitionState& s : parts_) {
      PartitionProgress p;
      p.topic = s.topic;
      p.partition = s.partition;
      p.startOffset = s.startOffset;
      p.endOffset = s.endOffset;
      p.offsetsSkipped = s.skipped;
      p.position = clusterToken_;
      // The watermarks cached from the last fetch response: no broker round trip.
      int64_t low = -1, high = -1;
      if (rd_kafka_get_watermark_offsets(rk_, s.topic.c_str(), s.partition, &low, &high) ==
              RD_KAFKA_RESP_ERR_NO_ERROR &&
          high >= 0) {
        p.latestOffset = high;
      }
      out.push_back(p);
    }
    return out;
  }

  // Caught up: the task has taken everything up to the high watermark of the
  // newest fetch response (partitionCaughtUp()). With several topics, every
  // partition of that number must be caught up.
  bool caughtUp(int32_t partition) const override {
    for (const PartitionState& s : parts_) {
      if (s.partition == partition && !partitionCaughtUp(s)) return false;
    }
    return true;
  }

  int64_t decodeErrors() const override { return decoder_.errors(); }

  int64_t deadLetters() const override { return deadLetters_ ? deadLetters_->count() : 0; }

  void flushDeadLetters(int timeoutMs) override {
    if (deadLetters_) deadLetters_->flush(timeoutMs);
  }

  std::string description() const override {
    std::string list;
    for (const std::string& t : topics_) list += (list.empty() ? "" : ",") + t;
    return "KafkaV2[Subscribe[" + list + "]]";
  }

  std::string fetchMode() const override {
    return fetchMode_.load(std::memory_order_relaxed) == kafka::FetchMode::Batching ? "batching"
                                                                                    : "prompt";
  }

 private:
  // Gives the task's partitions back to the shared client. The client cannot
  // be destroyed while the application still holds any of its messages (a
  // poll that threw leaves some here). Offsets are committed only at epoch
  // ends: nothing to commit at the close.
  void close() {
    held_.clear();
    unassign();
    {
      std::lock_guard lock(mutex_);
      closeQueues();
    }
    if (consumer_) consumer_->release(claimed_);
    claimed_.clear();
  }

  // The task's own queue on rk_, which its partitions' queues are forwarded
  // to before they are assigned (an application's forward outlives the
  // client's own at each assignment).
  void openQueues() {
    rd_kafka_queue_t* queue = rd_kafka_queue_new(rk_);
    {
      std::lock_guard lock(mutex_);
      queue_ = queue;
    }
    for (const PartitionState& s : parts_) {
      rd_kafka_queue_t* pq = rd_kafka_queue_get_partition(rk_, s.topic.c_str(), s.partition);
      if (!pq) {
        throw SqlError(sqlstate::kConnectionFailure,
                       fmt::format("{}: no queue for partition {}-{} on {}", description(),
                                   s.topic, s.partition, bootstrap_));
      }
      rd_kafka_queue_forward(pq, queue_);
      partitionQueues_.push_back(pq);
    }
  }

  // Undoes openQueues(); what was forwarded and not read goes with the
  // queue. Called with mutex_ held (wake() yields queue_ from any thread).
  void closeQueues() {
    for (rd_kafka_queue_t* pq : partitionQueues_) {
      rd_kafka_queue_forward(pq, nullptr);
      rd_kafka_queue_destroy(pq);
    }
    partitionQueues_.clear();
    if (queue_) rd_kafka_queue_destroy(queue_);
    queue_ = nullptr;
  }

  // The source's shared client of `mode` on this node, opened when there is
  // none yet (`opened` then says so).
  std::shared_ptr<SharedConsumer> sharedConsumer(kafka::FetchMode mode, bool* opened = nullptr) {
    const std::string key = consumerKey(sourceKey_, mode);
    std::lock_guard lock(gConsumersMutex);
    std::shared_ptr<SharedConsumer> c = gConsumers[key].lock();
    if (!c) {
      c = openConsumer(mode);
      gConsumers[key] = c;
      if (opened) *opened = true;
    }
    // Forget the sources that are gone.
    for (auto it = gConsumers.begin(); it != gConsumers.end();) {
      it = it->second.expired() ? gConsumers.erase(it) : std::next(it);
    }
    return c;
  }

  // Moves the task's partitions to the source's shared client of `mode`, at
  // exactly the offsets after the last records poll() handed out: what the
  // old client had fetched beyond them is dropped with its queue and fetched
  // again, so nothing is lost or read twice, and the epoch's progress goes
  // on as if nothing happened. Called by poll() between batches, holding no
  // message. A partition whose position is not yet a number (startingOffsets
  // not resolved) keeps the task where it is for now, as does a client that
  // another task (of an earlier run still closing) holds the partitions on.
  void switchFetch(kafka::FetchMode mode) {
    for (const PartitionState& s : parts_) {
      if (s.endOffset < 0) return;
    }
    bool opened = false;
    std::shared_ptr<SharedConsumer> next = sharedConsumer(mode, &opened);
    if (next == consumer_ || !next->claim(claimed_)) return;
    unassign();
    std::shared_ptr<SharedConsumer> previous = std::move(consumer_);
    {
      std::lock_guard lock(mutex_);
      closeQueues();
      consumer_ = next;
      rk_ = next->rk.get();
      fetchMode_.store(mode, std::memory_order_relaxed);
    }
    previous->release(claimed_);
    ListPtr list(rd_kafka_topic_partition_list_new(static_cast<int>(parts_.size())));
    for (const PartitionState& s : parts_) {
      rd_kafka_topic_partition_list_add(list.get(), s.topic.c_str(), s.partition)->offset =
          s.endOffset;
    }
    openQueues();
    assignList(*list, mode == kafka::FetchMode::Batching ? "to fetch in batches"
                                                         : "to fetch each record at once");
    // A wake() that went to the old queue is not lost: the next poll returns
    // at once.
    wake();
    // Said once per switch of the source on this node, by the task that
    // opened the new client; the others follow it.
    if (opened) {
      fmt::print(stderr, "rtsql: {} of flow {}: now fetching {}\n", description(), flowName_,
                 mode == kafka::FetchMode::Batching
                     ? "in batches (records come fast: fewer fetches per record)"
                     : "each record at once (records come slowly again)");
    }
    // The previous client goes with its last task.
  }

  // Whether the task has taken everything of `s` up to the high watermark of
  // the client's newest fetch response for it (none yet: not caught up). The
  // next offset to take is the furthest of: the one after the task's last
  // record (s.endOffset, also where an assignment or a seek started it), the
  // client's position, which moves past the transaction markers the client
  // takes without handing them over (a committed or aborted transaction ends
  // in one), and the log's start (records the broker removed before they were
  // read, which the client skips by resetting its fetch position). With
  // read_committed, an open transaction keeps the position at its first
  // record, below the high watermark: not caught up until it ends, as the
  // end-of-partition events this replaces said.
  bool partitionCaughtUp(const PartitionState& s) const {
    int64_t low = -1, high = -1;
    if (rd_kafka_get_watermark_offsets(rk_, s.topic.c_str(), s.partition, &low, &high) !=
            RD_KAFKA_RESP_ERR_NO_ERROR ||
        high < 0) {
      return false;
    }
    int64_t next = std::max(s.endOffset, low);
    // rd_kafka_position() reads the position the client keeps for the
    // application: a lock and a lookup, no broker request. A seek resets it.
    ListPtr one(rd_kafka_topic_partition_list_new(1));
    rd_kafka_topic_partition_list_add(one.get(), s.topic.c_str(), s.partition);
    if (rd_kafka_position(rk_, one.get()) == RD_KAFKA_RESP_ERR_NO_ERROR && !one->elems[0].err) {
      next = std::max(next, one->elems[0].offset);
    }
    return next >= 0 && next >= high;
  }

  static int64_t key(int topicIndex, int32_t partition) {
    return (int64_t(topicIndex) << 32) | uint32_t(partition);
  }

  int topicIndexOf(const char* name) const {
    for (size_t i = 0; i < topics_.size(); ++i) {
      if (topics_[i] == name) return static_cast<int>(i);
    }
    return -1;
  }

  int topicIndexOf(const rd_kafka_topic_t* rkt) {
    for (const auto& [t, i] : topicCache_) {
      if (t == rkt) return i;
    }
    int i = topicIndexOf(rd_kafka_topic_name(rkt));
    topicCache_.emplace_back(rkt, i);
    return i;
  }

  // librdkafka's synchronous commit waits for the group coordinator for as long
  // as it takes (tens of seconds with the broker down); a checkpoint must not.
  // The commit is sent asynchronously and its answer awaited for a bounded time.
  rd_kafka_resp_err_t commitBounded(rd_kafka_topic_partition_list_t* list) {
    rd_kafka_queue_t* replies = rd_kafka_queue_new(rk_);
    rd_kafka_resp_err_t err = rd_kafka_commit_queue(rk_, list, replies, nullptr, nullptr);
    if (err) {
      rd_kafka_queue_destroy(replies);
      return err;
    }
    const int64_t deadline = monotonicMicros() + int64_t(kCommitTimeoutMs) * 1000;
    err = RD_KAFKA_RESP_ERR__TIMED_OUT;
    for (;;) {
      int64_t remainingMs = (deadline - monotonicMicros()) / 1000;
      if (remainingMs <= 0) break;
      rd_kafka_event_t* ev = rd_kafka_queue_poll(replies, static_cast<int>(remainingMs));
      if (!ev) break;
      if (rd_kafka_event_type(ev) != RD_KAFKA_EVENT_OFFSET_COMMIT) {
        rd_kafka_event_destroy(ev);
        continue;
      }
      err = rd_kafka_event_error(ev);
      if (const rd_kafka_topic_partition_list_t* done = rd_kafka_event_topic_partition_list(ev)) {
        for (int i = 0; !err && i < done->cnt; ++i) err = done->elems[i].err;
      }
      rd_kafka_event_destroy(ev);
      break;
    }
    // A late answer goes to a queue nobody reads; librdkafka keeps it alive.
    rd_kafka_queue_destroy(replies);
    return err;
  }

  std::shared_ptr<SharedConsumer> openConsumer(kafka::FetchMode mode) {
    const Options& options = sourceOptions_;
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    try {
      kafka::installLogging(conf);
      // Latency first: the broker answers a fetch as soon as any data is
      // there (fetch.min.bytes 1), and a failed fetch is retried almost at
      // once. Kafka holds a fetch that finds nothing until data arrives or
      // fetch.wait.max.ms passes, so a long wait costs no latency and spares
      // both sides a request per wait per idle consumer (fifty live queries
      // fetching every millisecond made that a broker's whole CPU): 500 ms,
      // Kafka's own default, makes an idle consumer two requests a second.
      // The embedded broker does the same through its proxy
      // (connectors/embedded/long_poll_proxy.h).
      // A source whose records come fast fetches in batches instead
      // (connectors/kafka/fetch_rate.h).
      const bool batching = mode == kafka::FetchMode::Batching;
      kafka::setProperty(conf, "fetch.wait.max.ms", batching ? kafka::kBatchingFetchWaitMs : "500",
                         SqlError::npos);
      kafka::setProperty(conf, "fetch.min.bytes", batching ? kafka::kBatchingFetchMinBytes : "1",
                         SqlError::npos);
      kafka::setProperty(conf, "fetch.error.backoff.ms", "10", SqlError::npos);
      kafka::setProperty(conf, "socket.nagle.disable", "true", SqlError::npos);
      // Catching up on a backlog: the client stops fetching once its queue
      // holds queued.min.messages or queued.max.messages.kbytes, and looks
      // again only on its next one-second tick, however soon the task drains
      // the queue. The queue's limit is thus a ceiling on the records read per
      // second: 16 MB held a flow of 200-byte records to 122,000 rows/s, where
      // 64 MB lets it read 365,000/s (docs/benchmarks.md, "Stateless
      // throughput"). The memory is taken only while a backlog lasts.
      kafka::setProperty(conf, "queued.max.messages.kbytes", "65536", SqlError::npos);
      kafka::setProperty(conf, "queued.min.messages", "1000000", SqlError::npos);
      // The task never joins its group, so the session timeout only bounds how
      // long a commit waits for a group coordinator (broker down); the commit
      // then fails before commitBounded() gives up on it, and nothing is left
      // pending that would hold up the task's shutdown.
      kafka::setProperty(conf, "session.timeout.ms", "6000", SqlError::npos);
      kafka::setProperty(conf, "allow.auto.create.topics", "false", SqlError::npos);
      kafka::setProperty(conf, "auto.offset.reset", earliest_ ? "earliest" : "latest",
                         SqlError::npos);
      kafka::setProperty(conf, "group.id", group_, SqlError::npos);
      kafka::setProperty(conf, "client.id", fmt::format("rtsql-{}-source", flowName_),
                         SqlError::npos);
      kafka::applyUserProperties(conf, options, false);
      // No end-of-partition events: caughtUp() works out the same from the
      // client's position and the fetch's watermarks. Each event woke the
      // partition's task a second time per record while records came
      // sparsely (the event follows the record in the next fetch response).
      kafka::setProperty(conf, "enable.partition.eof", "false", SqlError::npos);
      // Offsets are the executor's to commit, at epoch ends only.
      kafka::setProperty(conf, "enable.auto.commit", "false", SqlError::npos);
      kafka::setProperty(conf, "enable.auto.offset.store", "false", SqlError::npos);
      kafka::setProperty(conf, "bootstrap.servers", bootstrap_, SqlError::npos);
    } catch (...) {
      rd_kafka_conf_destroy(conf);
      throw;
    }
    auto c = std::make_shared<SharedConsumer>();
    c->mode = mode;
    c->rk = kafka::newHandle(RD_KAFKA_CONSUMER, conf);
    // Client errors and logs then come on the consumer's queue.
    rd_kafka_poll_set_consumer(c->rk.get());
    c->errors = rd_kafka_queue_get_consumer(c->rk.get());
    return c;
  }

  // Checks a restored offset of `s` against what its log holds now
  // (connectors/restore_position.h); `token` is the checkpoint's resume token
  // for it (the cluster it was read on), or empty.
  RestoredOffset checkRestored(const PartitionState& s, int64_t offset, const std::string& token) {
    int64_t low = -1, high = -1;
    rd_kafka_resp_err_t err = rd_kafka_query_watermark_offsets(
        rk_, s.topic.c_str(), s.partition, &low, &high, kafka::kMetadataTimeoutMs);
    if (err) {
      // Never go on unchecked: the flow fails now and is started again later.
      throw SqlError(sqlstate::kConnectionFailure,
                     fmt::format("{}: cannot read which offsets partition {}-{} holds on {}, to "
                                 "check the restored offset {}: {}",
                                 description(), s.topic, s.partition, bootstrap_, offset,
                                 rd_kafka_err2str(err)));
    }
    const std::string was = clusterOfToken(token);
    const std::string now = clusterOfToken(clusterToken_);
    std::string changed;
    if (!was.empty() && !now.empty() && was != now) {
      changed = fmt::format("cluster id {}, where the checkpoint's is {}", now, was);
    }
    RestoreSubject at{description(), flowName_, s.topic, std::to_string(s.partition)};
    return checkRestoredOffset(at, offset, low, high, failOnDataLoss_, changed);
  }

  // The partitions of `list` with no committed offset in the flow's group
  // take the one its legacy group holds, when there is one
  // (connectors/kafka/flow_ids.h): a cluster's flow goes on from where it was
  // before its group carried the cluster's name.
  void committedBefore(rd_kafka_topic_partition_list_t& list) {
    if (legacyGroup_.empty()) return;
    ListPtr missing(rd_kafka_topic_partition_list_new(list.cnt));
    for (int i = 0; i < list.cnt; ++i) {
      if (list.elems[i].offset < 0)
        rd_kafka_topic_partition_list_add(missing.get(), list.elems[i].topic,
                                          list.elems[i].partition);
    }
    if (missing->cnt == 0) return;
    kafka::HandlePtr legacy =
        kafka::newClient(RD_KAFKA_CONSUMER, bootstrap_, options_, {},
                         {{"group.id", legacyGroup_.c_str()}, {"enable.auto.commit", "false"}});
    if (rd_kafka_committed(legacy.get(), missing.get(), kafka::kMetadataTimeoutMs) !=
        RD_KAFKA_RESP_ERR_NO_ERROR)
      return;  // as if there were none: startingOffsets
    for (int i = 0; i < missing->cnt; ++i) {
      const rd_kafka_topic_partition_t& old = missing->elems[i];
      if (old.err || old.offset < 0) continue;
      rd_kafka_topic_partition_t* tp =
          rd_kafka_topic_partition_list_find(&list, old.topic, old.partition);
      if (tp) tp->offset = old.offset;
    }
  }

  // Assigns the task's partitions at their committed offsets (with
  // `useCommitted`) or else at startingOffsets.
  void assign(bool earliest, bool useCommitted) {
    ListPtr list(rd_kafka_topic_partition_list_new(static_cast<int>(parts_.size())));
    for (const PartitionState& s : parts_) {
      rd_kafka_topic_partition_list_add(list.get(), s.topic.c_str(), s.partition)->offset =
          RD_KAFKA_OFFSET_INVALID;
    }
    rd_kafka_resp_err_t err = useCommitted
                                  ? rd_kafka_committed(rk_, list.get(), kafka::kMetadataTimeoutMs)
                                  : RD_KAFKA_RESP_ERR_NO_ERROR;
    if (err) {
      throw SqlError(sqlstate::kConnectionFailure,
                     fmt::format("cannot read the committed offsets of {} from {}: {}",
                                 description(), bootstrap_, rd_kafka_err2str(err)));
    }
    if (useCommitted) committedBefore(*list);
    for (int i = 0; i < list->cnt; ++i) {
      rd_kafka_topic_partition_t& tp = list->elems[i];
      PartitionState& s = parts_[byKey_.at(key(topicIndexOf(tp.topic), tp.partition))];
      if (tp.offset >= 0) {
        // A committed offset the log no longer holds is a restore as much as
        // a checkpoint's; the committed one stays what the group holds.
        s.committed = tp.offset;
        RestoredOffset r;
        try {
          r = checkRestored(s, tp.offset, {});
        } catch (const SqlError& e) {
          // Said at the first poll, unless the flow restores a checkpoint
          // (seek) or starts again from empty state first: the partition
          // waits at the start of its log meanwhile, and nothing is read.
          if (!restoreFailure_) restoreFailure_ = e;
          tp.offset = RD_KAFKA_OFFSET_BEGINNING;
          s.startOffset = s.endOffset = -1;
          continue;
        }
        tp.offset = r.offset;
        s.startOffset = s.endOffset = r.offset;
        s.skipped = r.skipped;
        s.skipLogged = s.skipLogged || r.lost;
        continue;
      }
      // No committed offset: resolve startingOffsets to a number now, so that
      // progress shows real offsets from the first epoch on.
      int64_t low = -1, high = -1;
      if (rd_kafka_query_watermark_offsets(rk_, tp.topic, tp.partition, &low, &high,
                                           kafka::kMetadataTimeoutMs) ==
          RD_KAFKA_RESP_ERR_NO_ERROR) {
        tp.offset = earliest ? low : high;
        s.startOffset = s.endOffset = tp.offset;
      } else {
        tp.offset = earliest ? RD_KAFKA_OFFSET_BEGINNING : RD_KAFKA_OFFSET_END;
      }
    }
    assignList(*list, "");
  }

  // Makes `list` the task's assignment on the shared client, leaving the
  // other tasks' partitions alone: added to the client's assignment the first
  // time, and after that (a restore, a new start) each partition moved to
  // its new offset, which discards what was fetched for it before (librdkafka
  // drops the records of an older position when they are taken). A
  // partition without an offset stays where it is.
  void assignList(rd_kafka_topic_partition_list_t& list, std::string_view how) {
    std::string what;
    if (!assigned_) {
      if (rd_kafka_error_t* error = rd_kafka_incremental_assign(rk_, &list)) {
        what = rd_kafka_error_string(error);
        rd_kafka_error_destroy(error);
      } else {
        assigned_ = true;
      }
    } else {
      ListPtr moved(rd_kafka_topic_partition_list_new(list.cnt));
      for (int i = 0; i < list.cnt; ++i) {
        if (list.elems[i].offset == RD_KAFKA_OFFSET_INVALID) continue;
        rd_kafka_topic_partition_list_add(moved.get(), list.elems[i].topic,
                                          list.elems[i].partition)
            ->offset = list.elems[i].offset;
      }
      if (moved->cnt == 0) return;
      rd_kafka_error_t* error =
          rd_kafka_seek_partitions(rk_, moved.get(), kafka::kSeekTimeoutMs);
      if (error) {
        what = rd_kafka_error_string(error);
        rd_kafka_error_destroy(error);
      }
      for (int i = 0; what.empty() && i < moved->cnt; ++i) {
        if (moved->elems[i].err) what = rd_kafka_err2str(moved->elems[i].err);
      }
    }
    if (!what.empty()) {
      throw SqlError(sqlstate::kConnectionFailure,
                     fmt::format("cannot assign the partitions of {}{}{}: {}", description(),
                                 how.empty() ? "" : " ", how, what));
    }
  }

  // Takes the task's partitions out of the shared client's assignment.
  void unassign() {
    if (!assigned_ || !rk_) return;
    assigned_ = false;
    ListPtr list(rd_kafka_topic_partition_list_new(static_cast<int>(parts_.size())));
    for (const PartitionState& s : parts_) {
      rd_kafka_topic_partition_list_add(list.get(), s.topic.c_str(), s.partition);
    }
    if (rd_kafka_error_t* error = rd_kafka_incremental_unassign(rk_, list.get())) {
      rd_kafka_error_destroy(error);  // not assigned: nothing to take out
    }
  }

  // Client-level errors (a broker away, say) come on the consumer's queue,
  // not a partition's: said at most every 10 s, as the partitions' errors.
  // Looked at every 100 ms at most: the tasks share the queue, and each
  // look takes its lock.
  void drainClientErrors() {
    const int64_t now = monotonicMicros();
    if (now - errorsLooked_ < 100'000) return;
    errorsLooked_ = now;
    while (rd_kafka_message_t* raw = rd_kafka_consume_queue(consumer_->errors, 0)) {
      MessagePtr m(raw);
      if (m->err) reportConsumerError(m.get());
    }
  }

  // Decodes one message into `out`; returns the number of records added (0 or 1;
  // a changelog's update gives 2, its tombstone 0).
  // Called with mutex_ held.
  size_t process(rd_kafka_message_t* m, int64_t readMicros, std::vector<SourceRecord>& out) {
    if (m->err) {
      if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
        // Not asked for (openConsumer()); nothing to do if a client sends one.
      } else if (kafka::isUnreadableRecordError(m->err)) {
        skipUnreadable(*m);
      } else {
        // The client reconnects by itself; a dead broker must not kill the flow.
        reportConsumerError(m);
      }
      return 0;
    }
    int ti = topicIndexOf(m->rkt);
    auto it = byKey_.find(key(ti, m->partition));
    if (it == byKey_.end()) return 0;  // not ours: cannot happen with assign()
    PartitionState& s = parts_[it->second];

    rd_kafka_timestamp_type_t tsType = RD_KAFKA_TIMESTAMP_NOT_AVAILABLE;
    int64_t tsMs = rd_kafka_message_timestamp(m, &tsType);

    RecordView view;
    view.key = static_cast<const char*>(m->key);
    view.keyLen = m->key_len;
    view.value = static_cast<const char*>(m->payload);
    view.valueLen = m->len;
    view.topic = topics_[ti];
    view.partition = m->partition;
    view.offset = m->offset;
    view.timestampMicros = kafka::recordMicros(tsMs, readMicros);
    view.timestampType = tsType == RD_KAFKA_TIMESTAMP_LOG_APPEND_TIME ? 1 : 0;
    if (decoder_.needsHeaders()) {
      kafka::readHeaders(m, headers_);
      view.headers = &headers_;
    }

    if (s.endOffset >= 0 && m->offset > s.endOffset) countSkipped(s, m->offset);
    s.endOffset = m->offset + 1;
    const size_t before = out.size();
    if (decoder_.decode(view, readMicros, out)) return out.size() - before;
    if (decoder_.failure()) {
      s.endOffset = m->offset;  // the bad record is not consumed
    } else if (deadLetters_) {
      deadLetters_->write(m, view.topic, decoder_.lastError());
    }
    return 0;
  }

  // A record the client cannot fetch or decompress (fetch_errors.h) is one
  // that cannot be decoded: under on.error = 'fail' the flow fails at it;
  // else it is dead-lettered (as an empty record with the headers that say
  // where it was and why) or skipped, and the partition goes on past it.
  // Called with mutex_ held.
  void skipUnreadable(const rd_kafka_message_t& m) {
    auto it = m.rkt ? byKey_.find(key(topicIndexOf(m.rkt), m.partition)) : byKey_.end();
    if (it == byKey_.end() || decoder_.failure()) return;
    PartitionState& s = parts_[it->second];
    // The client reports the same record again at every fetch until the seek
    // below: the reports taken with the first were made before it.
    if (s.movedInBatch == heldBatch_) return;
    const int64_t offset = kafka::unreadableRecordOffset(m, s.endOffset);
    if (offset < 0) return reportConsumerError(&m);
    decoder_.unreadable(s.topic, s.partition, offset, kafka::unreadableRecordReason(m));
    if (decoder_.failure()) return;  // not consumed: s.endOffset stays before it
    if (deadLetters_) {
      deadLetters_->writeRecord(Value(), Value(), decoder_.lastError(),
                                kafka::kafkaPosition(s.topic, s.partition, offset));
    }
    kafka::seekPartition(rk_, s.topic, s.partition, offset + 1);
    if (s.endOffset >= 0 && offset > s.endOffset) countSkipped(s, offset);
    s.endOffset = offset + 1;
    s.movedInBatch = heldBatch_;
  }

  // Records between the last one read and `next` are gone: the broker removed
  // them (retention, compaction) before they were read, or they were
  // transaction markers. Counted for the progress; said once per partition.
  void countSkipped(PartitionState& s, int64_t next) {
    s.skipped += next - s.endOffset;
    if (s.skipLogged) return;
    s.skipLogged = true;
    fmt::print(stderr,
               "rtsql: {}: partition {}-{} went on at offset {} after offset {}: {} offsets were "
               "never read (removed by the broker's retention or by compaction, or transaction "
               "markers); the progress counts them in offsetsSkipped\n",
               description(), s.topic, s.partition, next, s.endOffset - 1, next - s.endOffset);
  }

  void reportConsumerError(const rd_kafka_message_t* m) {
    if (!errorLog_.due()) return;
    fmt::print(stderr, "rtsql: {}: {}; still polling\n", description(),
               rd_kafka_message_errstr(m));
  }

  std::string group_;        // where the positions are committed
  std::string legacyGroup_;  // where they were before (empty: nowhere else)
  Options options_;          // the source's, for a client of the legacy group
  bool earliest_ = false;  // startingOffsets = 'earliest'
  bool failOnDataLoss_ = true;
  std::string flowName_;
  // This cluster's resume token (empty when its id is unknown).
  std::string clusterToken_;
  // A committed offset outside its log with failOnDataLoss: poll() throws it.
  std::optional<SqlError> restoreFailure_;
  std::vector<std::string> topics_;
  std::string bootstrap_;
  kafka::SourceDecoder decoder_;
  std::unique_ptr<kafka::DeadLetterWriter> deadLetters_;  // on.error = 'dead-letter'
  std::shared_ptr<SharedConsumer> consumer_;
  Options sourceOptions_;  // for the clients this task opens
  std::string sourceKey_;  // the source's on this node: its shared clients and rate
  // The source's rate on this node, null when its fetch mode never changes.
  std::shared_ptr<kafka::FetchRateDetector> fetchRate_;
  // consumer_'s mode, for fetchMode() from other threads.
  std::atomic<kafka::FetchMode> fetchMode_{kafka::FetchMode::Prompt};
  rd_kafka_t* rk_ = nullptr;  // consumer_'s client
  rd_kafka_queue_t* queue_ = nullptr;  // the task's own: its partitions' records
  std::vector<rd_kafka_queue_t*> partitionQueues_;  // forwarded to queue_
  std::vector<std::pair<std::string, int32_t>> claimed_;
  bool assigned_ = false;  // the task's partitions are in the client's assignment
  int64_t errorsLooked_ = INT64_MIN / 2;  // drainClientErrors()
  // wake() for a task without partitions, which waits on no queue.
  kafka::IdleWait idleWait_;

  mutable std::mutex mutex_;  // guards parts_' offsets against progress() readers
  std::vector<PartitionState> parts_;
  std::unordered_map<int64_t, size_t> byKey_;
  std::vector<std::pair<const rd_kafka_topic_t*, int>> topicCache_;

  std::vector<MessagePtr> held_;
  int64_t heldBatch_ = 0;  // counts the batches of messages taken from the client
  kafka::Headers headers_;
  kafka::ErrorLogPace errorLog_;
};

}  // namespace

int kafkaSourcePartitions(const ScanSpec& scan, const std::string& bootstrap) {
  std::vector<std::string> topics = sourceOptionsOf(scan).topics;
  if (topics.empty()) {
    throw SqlError(sqlstate::kInvalidParameterValue,
                   "option 'subscribe' of source '" + scan.name + "' names no topic");
  }
  kafka::ensureEmbeddedTopics(bootstrap, topics);
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  try {
    kafka::installLogging(conf);
    kafka::applyUserProperties(conf, scan.options, false);
    // Looking a topic up must never create it on a broker that auto-creates.
    kafka::setProperty(conf, "allow.auto.create.topics", "false", SqlError::npos);
    kafka::setProperty(conf, "client.id", "rtsql-metadata", SqlError::npos);
    kafka::setProperty(conf, "bootstrap.servers", bootstrap, SqlError::npos);
  } catch (...) {
    rd_kafka_conf_destroy(conf);
    throw;
  }
  kafka::HandlePtr rk = kafka::newHandle(RD_KAFKA_PRODUCER, conf);
  int total = 0;
  for (int n : kafka::partitionCounts(rk.get(), topics, bootstrap)) total += n;
  return total;
}

std::unique_ptr<SourceTask> makeKafkaSource(const ScanSpec& scan, const std::string& bootstrap,
                                            const std::string& flowName,
                                            const kafka::FlowKafkaIds& ids, int task, int tasks) {
  if (tasks < 1 || task < 0 || task >= tasks) {
    throw InternalError(fmt::format("source task {} of {}", task, tasks));
  }
  return std::make_unique<KafkaSourceTask>(scan, bootstrap, flowName, ids, task, tasks);
}

}  // namespace rtsql
