#include "connectors/kafka/tap.h"

#include <fmt/format.h>
#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <future>
#include <optional>
#include <set>
#include <thread>
#include <utility>

#include "common/clock.h"
#include "common/error.h"
#include "common/schema.h"
#include "common/thread_priority.h"
#include "connectors/kafka/assigned_consumer.h"
#include "connectors/kafka/client.h"
#include "connectors/kafka/decode.h"
#include "connectors/kafka/fetch_errors.h"
#include "connectors/kafka/kafka_connector.h"
#include "connectors/registry.h"

namespace rtsql {

namespace {

// Records the tap takes from its consumer per round after the first; one
// round is handed to the subscriptions under one lock each.
constexpr size_t kBatch = 256;
// How long the tap's thread waits for a record: bounds how late it notices
// that it should stop, never how late a record is handed on.
constexpr int kTapPollMs = 100;
// After an error from the consumer, how often the tap asks the broker until it
// answers, and how long one question may take.
constexpr int kRecheckMs = 1000;
constexpr int kCheckTimeoutMs = 1000;
// What a queued record costs beyond its bytes (the record, its shared
// pointer, the queue's slot).
constexpr size_t kRecordOverhead = 96;

// One Kafka record as the tap read it, copied once and shared by every
// subscription that owns its partition.
struct TapRecord {
  int global = 0;  // partition index over the topics, in 'subscribe' order
  int topicIndex = 0;
  int32_t partition = 0;
  int64_t offset = 0;
  int64_t timestampMs = -1;  // -1: the record has none
  int32_t timestampType = 0;
  bool hasKey = false;
  bool hasValue = false;
  std::string key;
  std::string value;
  kafka::Headers headers;
  // Why the client could not fetch or decompress the record at `offset`
  // (fetch_errors.h), which then has no key, value or headers; empty for a
  // record that was read.
  std::string unreadable;
  size_t bytes = 0;  // what it counts against a subscription's queue

  void countBytes() {
    bytes = kRecordOverhead + key.size() + value.size();
    for (const auto& [k, v] : headers) bytes += k.size() + v.size();
  }
};
using TapRecordPtr = std::shared_ptr<const TapRecord>;

// One source task's share of a tap: the records of its partitions that the
// task has not taken yet. The tap pushes; the task pops.
struct Subscription {
  std::string flow;
  std::vector<char> owns;  // by global partition index
  std::mutex mu;
  std::condition_variable cv;
  std::deque<TapRecordPtr> queue;
  size_t bytes = 0;
  std::optional<SqlError> failure;  // raised once the queued records are taken
  bool woken = false;               // SourceTask::wake(): the task's poll returns
};

struct TapPartition {
  int global = 0;
  PartitionProgress progress;
};

using kafka::ListPtr;

std::string joinTopics(const std::vector<std::string>& topics) {
  std::string out;
  for (const std::string& t : topics) out += (out.empty() ? "" : ",") + t;
  return out;
}

std::string sizeText(size_t bytes) {
  if (bytes >= (size_t(1) << 20) && bytes % (size_t(1) << 20) == 0) {
    return fmt::format("{} MiB", bytes >> 20);
  }
  return fmt::format("{} bytes", bytes);
}

// Taps are shared by what their consumer's configuration comes from: the
// servers, the topics in order (they number the partitions), and every
// `kafka.<name>` option. Columns, format and on.error are each subscriber's.
std::string tapKey(const ScanSpec& scan, const std::string& bootstrap,
                   const std::vector<std::string>& topics) {
  std::vector<std::string> props;
  for (const OptionEntry& e : scan.options.entries()) {
    std::string key = toLower(e.key);
    if (key.rfind("kafka.", 0) != 0 || key == "kafka.bootstrap.servers") continue;
    props.push_back(key + "=" + e.value);
  }
  std::sort(props.begin(), props.end());
  std::string out = bootstrap + "\x1f" + joinTopics(topics);
  for (const std::string& p : props) out += "\x1f" + p;
  return out;
}

}  // namespace

class KafkaTaps::Tap {
 public:
  Tap(const ScanSpec& scan, std::string bootstrap, const KafkaTapOptions& options)
      : bootstrap_(std::move(bootstrap)),
        topics_(sourceOptionsOf(scan).topics),
        options_(options) {
    if (topics_.empty()) {
      throw SqlError(sqlstate::kInvalidParameterValue,
                     "option 'subscribe' of source '" + scan.name + "' names no topic");
    }
    kafka::ensureEmbeddedTopics(bootstrap_, topics_);
    // The consumer is opened on the tap's own thread, which lowers its
    // priority first: the client's threads inherit it. The tap serves live
    // queries only, and flows come first.
    // The thread owns the promise too: this constructor may return (and
    // drop its future) while set_value() is still waking it.
    auto opened = std::make_shared<std::promise<void>>();
    std::future<void> result = opened->get_future();
    thread_ = std::thread([this, &scan, opened] {
      lowerCurrentThreadPriority(kLiveQueryNice);
      try {
        open(scan);  // `scan` is used only until the constructor is answered
      } catch (...) {
        opened->set_exception(std::current_exception());
        return;
      }
      opened->set_value();
      run();
    });
    pthread_setname_np(thread_.native_handle(), "live-tap");
    try {
      result.get();
    } catch (...) {
      thread_.join();
      throw;
    }
  }

  ~Tap() {
    stop_.store(true, std::memory_order_relaxed);
    if (thread_.joinable()) thread_.join();
    closeConsumer();
  }

  // Adds `sub` for task `task` of `tasks`: from now on it gets the records of
  // its partitions. Returns those partitions, starting where the tap is.
  std::vector<TapPartition> subscribe(Subscription& sub, int task, int tasks) {
    std::lock_guard lock(mu_);
    std::vector<TapPartition> parts;
    sub.owns.assign(topicOf_.size(), 0);
    for (size_t g = 0; g < topicOf_.size(); ++g) {
      if (static_cast<int>(g) % tasks != task) continue;
      sub.owns[g] = 1;
      TapPartition& p = parts.emplace_back();
      p.global = static_cast<int>(g);
      p.progress.topic = topics_[topicOf_[g]];
      p.progress.partition = partitionOf_[g];
      p.progress.startOffset = p.progress.endOffset = next_[g];
    }
    if (failure_) {
      // Failed between the registry's look and now: the task fails at once.
      std::lock_guard subLock(sub.mu);
      sub.failure = failure_;
    } else {
      subs_.push_back(&sub);
    }
    return parts;
  }

  void unsubscribe(Subscription& sub) {
    std::lock_guard lock(mu_);
    subs_.erase(std::remove(subs_.begin(), subs_.end(), &sub), subs_.end());
  }

  bool failed() const {
    std::lock_guard lock(mu_);
    return failure_.has_value();
  }

  // The partition's high watermark from the last fetch response; -1 unknown.
  int64_t latestOffset(int global) const {
    int64_t low = -1, high = -1;
    if (rd_kafka_get_watermark_offsets(rk_.get(), topics_[topicOf_[global]].c_str(),
                                       partitionOf_[global], &low, &high) !=
        RD_KAFKA_RESP_ERR_NO_ERROR) {
      return -1;
    }
    return high;
  }

  const std::vector<std::string>& topics() const { return topics_; }

  KafkaTapInfo info() const {
    KafkaTapInfo info;
    info.bootstrap = bootstrap_;
    info.topics = joinTopics(topics_);
    std::lock_guard lock(mu_);
    std::set<std::string> flows;
    for (const Subscription* s : subs_) flows.insert(s->flow);
    info.liveQueries = static_cast<int64_t>(flows.size());
    info.tasks = static_cast<int64_t>(subs_.size());
    info.records = records_;
    return info;
  }

 private:
  // The tap reads with librdkafka's simple consumer: partitions started at
  // fixed offsets into one queue, no consumer group at all. (The group
  // consumer's assign() would do as well, but in librdkafka 2.0 a group
  // consumer whose topic was deleted never finishes its destruction.)
  void openConsumer(const ScanSpec& scan) {
    // The source's `kafka.<name>` options win over the tap's settings (a
    // live query's relaxed fetch settings arrive that way), but the tap
    // commits nothing, whatever they say.
    rk_ = kafka::newClient(RD_KAFKA_CONSUMER, bootstrap_, scan.options,
                           {{"socket.nagle.disable", "true"},
                            {"queued.max.messages.kbytes", "16384"},
                            {"allow.auto.create.topics", "false"},
                            {"client.id", "rtsql-live-tap"}},
                           {{"enable.auto.commit", "false"},
                            {"enable.auto.offset.store", "false"}});
    queue_ = rd_kafka_queue_new(rk_.get());
    for (const std::string& topic : topics_) {
      rd_kafka_topic_conf_t* tconf = rd_kafka_default_topic_conf_dup(rk_.get());
      // The simple consumer's own commit switch.
      rd_kafka_topic_conf_set(tconf, "auto.commit.enable", "false", nullptr, 0);
      rkts_.push_back(rd_kafka_topic_new(rk_.get(), topic.c_str(), tconf));
    }
  }

  void closeConsumer() {
    for (size_t g = 0; g < started_; ++g) {
      rd_kafka_consume_stop(rkts_[topicOf_[g]], partitionOf_[g]);
    }
    started_ = 0;
    for (rd_kafka_topic_t* rkt : rkts_) {
      if (rkt) rd_kafka_topic_destroy(rkt);
    }
    rkts_.clear();
    // The client waits for its queues and topics to be let go of before it goes.
    if (queue_) rd_kafka_queue_destroy(queue_);
    queue_ = nullptr;
    rk_.reset();
  }

  // Starts every partition at the offset its next record will get, resolved
  // now: a record produced after the first subscription is never missed
  // while the client would still be looking the end up.
  void startAtEnd() {
    for (rd_kafka_topic_t* rkt : rkts_) {
      if (!rkt) {
        throw SqlError(sqlstate::kInvalidParameterValue,
                       fmt::format("invalid topic name in '{}': {}", joinTopics(topics_),
                                   rd_kafka_err2str(rd_kafka_last_error())));
      }
    }
    ListPtr list(rd_kafka_topic_partition_list_new(static_cast<int>(topicOf_.size())));
    for (size_t g = 0; g < topicOf_.size(); ++g) {
      rd_kafka_topic_partition_list_add(list.get(), topics_[topicOf_[g]].c_str(), partitionOf_[g])
          ->offset = RD_KAFKA_OFFSET_END;
    }
    // A timestamp of -1 (RD_KAFKA_OFFSET_END) asks for each partition's end.
    rd_kafka_resp_err_t err = rd_kafka_offsets_for_times(rk_.get(), list.get(),
                                                         kafka::kMetadataTimeoutMs);
    for (int i = 0; !err && i < list->cnt; ++i) err = list->elems[i].err;
    if (err) {
      throw SqlError(sqlstate::kConnectionFailure,
                     fmt::format("cannot look up the end offsets of {} on {}: {}",
                                 joinTopics(topics_), bootstrap_, rd_kafka_err2str(err)),
                     SqlError::npos, "check that the broker is running");
    }
    next_.resize(topicOf_.size());
    for (size_t g = 0; g < topicOf_.size(); ++g) {
      const char* topic = topics_[topicOf_[g]].c_str();
      const int32_t partition = partitionOf_[g];
      next_[g] = rd_kafka_topic_partition_list_find(list.get(), topic, partition)->offset;
      if (rd_kafka_consume_start_queue(rkts_[topicOf_[g]], partition, next_[g], queue_) != 0) {
        throw SqlError(sqlstate::kConnectionFailure,
                       fmt::format("cannot start reading {} partition {}: {}",
                                   topics_[topicOf_[g]], partitionOf_[g],
                                   rd_kafka_err2str(rd_kafka_last_error())));
      }
      started_ = g + 1;
    }
  }

  void open(const ScanSpec& scan) {
    openConsumer(scan);
    try {
      std::vector<int> counts = kafka::partitionCounts(rk_.get(), topics_, bootstrap_);
      for (size_t t = 0; t < topics_.size(); ++t) {
        base_.push_back(static_cast<int>(topicOf_.size()));
        for (int p = 0; p < counts[t]; ++p) {
          topicOf_.push_back(static_cast<int>(t));
          partitionOf_.push_back(p);
        }
      }
      startAtEnd();
    } catch (...) {
      closeConsumer();
      throw;
    }
    lastCheckMicros_ = monotonicMicros();
  }

  void run() {
    std::vector<rd_kafka_message_t*> held;
    std::vector<TapRecordPtr> batch;
    rd_kafka_message_t* more[kBatch];
    while (!stop_.load(std::memory_order_relaxed)) {
      held.clear();
      // Client-wide errors (broker down) go to the log through the callbacks
      // this serves; a partition's errors come with its records.
      rd_kafka_poll(rk_.get(), 0);
      if (rd_kafka_message_t* m = rd_kafka_consume_queue(queue_, kTapPollMs)) {
        held.push_back(m);
        ssize_t n = rd_kafka_consume_batch_queue(queue_, 0, more, kBatch);
        for (ssize_t i = 0; i < n; ++i) held.push_back(more[i]);
      }
      batch.clear();
      ++heldBatch_;
      for (rd_kafka_message_t* m : held) {
        if (m->err && kafka::isUnreadableRecordError(m->err)) {
          if (TapRecordPtr r = unreadable(*m, batch)) batch.push_back(std::move(r));
        } else if (m->err) {
          noteError(m);
        } else if (TapRecordPtr r = copy(m)) {
          batch.push_back(std::move(r));
        }
        rd_kafka_message_destroy(m);
      }
      if (!batch.empty()) dispatch(batch);
      checkIfDue();
      if (failed()) break;  // every subscription has its error; nothing left to do
    }
  }

  // The global index of the partition of `m`, or -1 for one the tap did not
  // start (cannot happen).
  int globalOf(const rd_kafka_message_t& m) const {
    int ti = topicIndexOf(m.rkt);
    if (ti < 0 || m.partition < 0 || base_[ti] + m.partition >= static_cast<int>(topicOf_.size()) ||
        topicOf_[base_[ti] + m.partition] != ti) {
      return -1;
    }
    return base_[ti] + m.partition;
  }

  TapRecordPtr copy(const rd_kafka_message_t* m) {
    const int global = globalOf(*m);
    if (global < 0) return nullptr;
    const int ti = topicOf_[global];
    auto r = std::make_shared<TapRecord>();
    r->global = global;
    r->topicIndex = ti;
    r->partition = m->partition;
    r->offset = m->offset;
    rd_kafka_timestamp_type_t tsType = RD_KAFKA_TIMESTAMP_NOT_AVAILABLE;
    r->timestampMs = rd_kafka_message_timestamp(m, &tsType);
    r->timestampType = tsType == RD_KAFKA_TIMESTAMP_LOG_APPEND_TIME ? 1 : 0;
    if (m->key) {
      r->hasKey = true;
      r->key.assign(static_cast<const char*>(m->key), m->key_len);
    }
    if (m->payload) {
      r->hasValue = true;
      r->value.assign(static_cast<const char*>(m->payload), m->len);
    }
    kafka::readHeaders(m, r->headers);
    r->countBytes();
    return r;
  }

  // A record the client cannot fetch or decompress (fetch_errors.h): the
  // partition moves past it, and it is handed on with the reason, for each
  // live query's decoder to count under its source's 'on.error'. `batch`
  // holds the records taken since the last dispatch.
  TapRecordPtr unreadable(const rd_kafka_message_t& m, const std::vector<TapRecordPtr>& batch) {
    const int global = globalOf(m);
    if (global < 0) return nullptr;
    if (movedInBatch_.size() < topicOf_.size()) movedInBatch_.resize(topicOf_.size(), -1);
    // The client reports the record again at every fetch until the seek: the
    // reports taken with the first were made before it.
    if (movedInBatch_[global] == heldBatch_) return nullptr;
    int64_t position;
    {
      std::lock_guard lock(mu_);
      position = next_[global];
    }
    for (const TapRecordPtr& r : batch) {
      if (r->global == global) position = r->offset + 1;
    }
    const int64_t offset = kafka::unreadableRecordOffset(m, position);
    std::string why;
    if (offset < 0 || !kafka::seekStartedPartition(m.rkt, m.partition, offset + 1, why)) {
      noteError(&m);
      return nullptr;
    }
    movedInBatch_[global] = heldBatch_;
    auto r = std::make_shared<TapRecord>();
    r->global = global;
    r->topicIndex = topicOf_[global];
    r->partition = m.partition;
    r->offset = offset;
    r->unreadable = kafka::unreadableRecordReason(m);
    r->countBytes();
    return r;
  }

  int topicIndexOf(const rd_kafka_topic_t* rkt) const {
    for (size_t i = 0; i < rkts_.size(); ++i) {
      if (rkts_[i] == rkt) return static_cast<int>(i);
    }
    return -1;
  }

  void dispatch(const std::vector<TapRecordPtr>& batch) {
    std::lock_guard lock(mu_);
    for (const TapRecordPtr& r : batch) next_[r->global] = r->offset + 1;
    records_ += static_cast<int64_t>(batch.size());
    for (size_t i = 0; i < subs_.size();) {
      Subscription& s = *subs_[i];
      bool woken = false, full = false;
      {
        std::lock_guard subLock(s.mu);
        for (const TapRecordPtr& r : batch) {
          if (!s.owns[r->global]) continue;
          size_t bytes = r->bytes;
          // A record larger than the whole queue still goes to an empty one.
          if (!s.queue.empty() && s.bytes + bytes > options_.queueBytes) {
            s.failure = tooSlow();
            full = true;
            break;
          }
          s.queue.push_back(r);
          s.bytes += bytes;
          woken = true;
        }
      }
      if (woken || full) s.cv.notify_one();
      if (full) {
        // It gets nothing more: the records it has queued, then its error.
        subs_.erase(subs_.begin() + static_cast<std::ptrdiff_t>(i));
      } else {
        ++i;
      }
    }
  }

  SqlError tooSlow() const {
    return SqlError(sqlstate::kConfigurationLimitExceeded,
                    fmt::format("the client reads too slowly: {} of records from {} waited for "
                                "this live query, which shares the topic's consumer with other "
                                "live queries and must keep up with it",
                                sizeText(options_.queueBytes), joinTopics(topics_)),
                    SqlError::npos,
                    "read the rows as they come, narrow them with WHERE, or end the query "
                    "with LIMIT");
  }

  void noteError(const rd_kafka_message_t* m) {
    if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) return;
    if (m->err == RD_KAFKA_RESP_ERR__FATAL) {
      char reason[512];
      rd_kafka_fatal_error(rk_.get(), reason, sizeof reason);
      failAll(SqlError(sqlstate::kConnectionFailure,
                       fmt::format("the Kafka consumer of {} on {} failed: {}",
                                   joinTopics(topics_), bootstrap_, reason)));
      return;
    }
    // The client reconnects by itself; whether the broker and the topics are
    // still there is for the next check to tell, and it comes sooner now.
    suspect_ = true;
    if (!errorLog_.due()) return;
    fmt::print(stderr, "rtsql: live tap {} on {}: {}; still polling\n", joinTopics(topics_),
               bootstrap_, rd_kafka_message_errstr(m));
  }

  // Asks the broker whether the topics are still there. A topic missing twice
  // in a row (a second opinion a second later, as a broker's metadata may lag)
  // fails the tap at once; a broker that does not answer fails it after
  // brokerTimeoutMs.
  void checkIfDue() {
    int64_t now = monotonicMicros();
    int everyMs = suspect_ ? kRecheckMs : options_.checkIntervalMs;
    if (now - lastCheckMicros_ < int64_t(everyMs) * 1000) return;
    try {
      kafka::partitionCounts(rk_.get(), topics_, bootstrap_, kCheckTimeoutMs);
      suspect_ = false;
      troubleSinceMicros_ = 0;
      missingChecks_ = 0;
    } catch (const SqlError& e) {
      suspect_ = true;
      if (troubleSinceMicros_ == 0) troubleSinceMicros_ = now;
      if (e.sqlstate() == sqlstate::kUndefinedObject) {
        if (++missingChecks_ >= 2) failAll(e);
      } else {
        missingChecks_ = 0;
        if (now - troubleSinceMicros_ >= int64_t(options_.brokerTimeoutMs) * 1000) {
          const double seconds = options_.brokerTimeoutMs / 1000.0;
          std::string message =
              e.sqlstate() == sqlstate::kConnectionFailure
                  ? fmt::format("lost Kafka at {}: no answer for {:g} s", bootstrap_, seconds)
                  : fmt::format("lost Kafka at {}: {} for {:g} s", bootstrap_, e.message(),
                                seconds);
          failAll(SqlError(e.sqlstate(), std::move(message), SqlError::npos,
                           "check that the broker is running, then run the query again"));
        }
      }
    }
    lastCheckMicros_ = monotonicMicros();
  }

  void failAll(const SqlError& e) {
    std::lock_guard lock(mu_);
    if (failure_) return;
    failure_ = e;
    for (Subscription* s : subs_) {
      {
        std::lock_guard subLock(s->mu);
        s->failure = e;
      }
      s->cv.notify_one();
    }
    subs_.clear();
  }

  const std::string bootstrap_;
  const std::vector<std::string> topics_;
  const KafkaTapOptions options_;
  kafka::HandlePtr rk_;
  rd_kafka_queue_t* queue_ = nullptr;
  std::vector<rd_kafka_topic_t*> rkts_;  // by topic index
  size_t started_ = 0;                   // partitions started, in global order
  // Partitions numbered over the topics: global index -> topic, partition.
  std::vector<int> topicOf_;
  std::vector<int32_t> partitionOf_;
  std::vector<int> base_;  // first global index of each topic

  // The thread's own.
  int64_t heldBatch_ = 0;  // counts the batches of messages taken from the client
  // By global index: the batch in which the tap last moved past a record it
  // cannot read.
  std::vector<int64_t> movedInBatch_;
  bool suspect_ = false;
  int64_t lastCheckMicros_ = 0;
  int64_t troubleSinceMicros_ = 0;
  int missingChecks_ = 0;
  kafka::ErrorLogPace errorLog_;

  mutable std::mutex mu_;  // guards what follows
  std::vector<Subscription*> subs_;
  std::vector<int64_t> next_;  // by global index: the next offset the tap hands on
  int64_t records_ = 0;
  std::optional<SqlError> failure_;

  std::atomic<bool> stop_{false};
  std::thread thread_;  // last: started once everything above is ready
};

namespace {

// A live query's source task reading through a tap.
class TapSourceTask final : public SourceTask {
 public:
  TapSourceTask(std::shared_ptr<KafkaTaps::Tap> tap, const ScanSpec& scan,
                const std::string& flowName, int task, int tasks)
      : tap_(std::move(tap)), decoder_(scan) {
    sub_.flow = flowName;
    parts_ = tap_->subscribe(sub_, task, tasks);
  }

  ~TapSourceTask() override { tap_->unsubscribe(sub_); }

  void poll(std::vector<SourceRecord>& out, size_t maxRecords, int timeoutMs) override {
    // A record that could not be decoded with on.error = 'fail' ends the query,
    // but only after the records before it were handed over.
    if (decoder_.failure()) throw *decoder_.failure();
    taken_.clear();
    {
      std::unique_lock lock(sub_.mu);
      sub_.cv.wait_for(lock, std::chrono::milliseconds(std::max(timeoutMs, 0)),
                       [&] { return !sub_.queue.empty() || sub_.failure || sub_.woken; });
      sub_.woken = false;
      while (!sub_.queue.empty() && taken_.size() < maxRecords) {
        sub_.bytes -= sub_.queue.front()->bytes;
        taken_.push_back(std::move(sub_.queue.front()));
        sub_.queue.pop_front();
      }
      if (taken_.empty() && sub_.failure) throw *sub_.failure;
    }
    const int64_t readMicros = nowMicros();
    size_t added = 0;
    std::lock_guard lock(mutex_);
    for (const TapRecordPtr& r : taken_) {
      TapPartition* p = partitionOf(r->global);
      if (!p) continue;
      RecordView view;
      view.key = r->hasKey ? r->key.data() : nullptr;
      view.keyLen = r->key.size();
      view.value = r->hasValue ? r->value.data() : nullptr;
      view.valueLen = r->value.size();
      view.topic = tap_->topics()[r->topicIndex];
      view.partition = r->partition;
      view.offset = r->offset;
      view.timestampMicros = kafka::recordMicros(r->timestampMs, readMicros);
      view.timestampType = r->timestampType;
      if (decoder_.needsHeaders()) view.headers = &r->headers;
      p->progress.endOffset = r->offset + 1;
      if (!r->unreadable.empty()) {
        decoder_.unreadable(view.topic, r->partition, r->offset, r->unreadable);
      } else if (decoder_.decode(view, readMicros, out)) {
        ++added;
        continue;
      }
      if (decoder_.failure()) {
        p->progress.endOffset = r->offset;  // the bad record is not consumed
        break;
      }
    }
    taken_.clear();
    if (decoder_.failure() && added == 0) throw *decoder_.failure();
  }

  void wake() override {
    std::lock_guard lock(sub_.mu);
    sub_.woken = true;
    sub_.cv.notify_all();
  }

  bool wakes() const override { return true; }

  // A live query commits no offsets; an epoch's end only moves the start.
  void commit() override {
    std::lock_guard lock(mutex_);
    for (TapPartition& p : parts_) p.progress.startOffset = p.progress.endOffset;
  }

  std::vector<PartitionProgress> progress() const override {
    std::vector<PartitionProgress> out;
    std::lock_guard lock(mutex_);
    out.reserve(parts_.size());
    for (const TapPartition& p : parts_) {
      out.push_back(p.progress);
      out.back().latestOffset = tap_->latestOffset(p.global);
    }
    return out;
  }

  int64_t decodeErrors() const override { return decoder_.errors(); }

  std::string description() const override {
    return "KafkaV2[Subscribe[" + joinTopics(tap_->topics()) + "]] via live tap";
  }

 private:
  TapPartition* partitionOf(int global) {
    for (TapPartition& p : parts_) {
      if (p.global == global) return &p;
    }
    return nullptr;
  }

  std::shared_ptr<KafkaTaps::Tap> tap_;
  kafka::SourceDecoder decoder_;
  Subscription sub_;
  std::vector<TapRecordPtr> taken_;
  mutable std::mutex mutex_;  // guards parts_' offsets against progress() readers
  std::vector<TapPartition> parts_;
};

}  // namespace

struct KafkaTaps::Entry {
  std::mutex opening;            // held while a tap for this key is being opened
  std::weak_ptr<Tap> tap;        // guarded by KafkaTaps::mu_
};

KafkaTaps::KafkaTaps(std::string embeddedBootstrap, KafkaTapOptions options)
    : embeddedBootstrap_(std::move(embeddedBootstrap)), options_(options) {}

KafkaTaps::~KafkaTaps() = default;

bool KafkaTaps::serves(const ScanSpec& scan) { return iequals(scan.connector, KafkaConnector::kName); }

std::unique_ptr<SourceTask> KafkaTaps::subscribe(const ScanSpec& scan, const std::string& flowName,
                                                 int task, int tasks) {
  if (tasks < 1 || task < 0 || task >= tasks) {
    throw InternalError(fmt::format("source task {} of {}", task, tasks));
  }
  const std::string bootstrap = kafka::resolveBootstrap(scan.options, embeddedBootstrap_);
  const std::string key =
      tapKey(scan, bootstrap, sourceOptionsOf(scan).topics);
  std::shared_ptr<Entry> entry;
  {
    std::lock_guard lock(mu_);
    // Entries whose tap is gone and that nobody is opening are dropped; only
    // this lock hands out an entry, so a count of one means nobody has it.
    for (auto it = entries_.begin(); it != entries_.end();) {
      it = it->second.use_count() == 1 && it->second->tap.expired() ? entries_.erase(it)
                                                                     : std::next(it);
    }
    std::shared_ptr<Entry>& e = entries_[key];
    if (!e) e = std::make_shared<Entry>();
    entry = e;
  }
  // Live queries of one source that start together wait for one tap to open,
  // instead of each opening its own; other sources' taps do not wait.
  std::lock_guard opening(entry->opening);
  std::shared_ptr<Tap> tap;
  {
    std::lock_guard lock(mu_);
    tap = entry->tap.lock();
  }
  if (!tap || tap->failed()) {
    tap = std::make_shared<Tap>(scan, bootstrap, options_);
    std::lock_guard lock(mu_);
    entry->tap = tap;
  }
  return std::make_unique<TapSourceTask>(std::move(tap), scan, flowName, task, tasks);
}

std::vector<KafkaTapInfo> KafkaTaps::list() const {
  std::vector<std::shared_ptr<Tap>> taps;
  {
    std::lock_guard lock(mu_);
    for (const auto& [key, entry] : entries_) {
      if (auto tap = entry->tap.lock()) taps.push_back(std::move(tap));
    }
  }
  std::vector<KafkaTapInfo> out;
  for (const auto& tap : taps) out.push_back(tap->info());
  return out;
}

}  // namespace rtsql
