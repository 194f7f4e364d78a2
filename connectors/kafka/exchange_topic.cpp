#include "connectors/kafka/exchange_topic.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <optional>
#include <vector>

#include "common/clock.h"
#include "common/error.h"
#include "common/schema.h"
#include "connectors/kafka/assigned_consumer.h"
#include "connectors/kafka/client.h"
#include "connectors/kafka/consume_loop.h"
#include "connectors/kafka/sink_topic.h"

namespace rtsql::kafka {

namespace {

// How long opening either side may wait for the topic to be there.
constexpr int kTopicWaitMs = 10000;
// How long send() lets a full producer queue drain before the flow fails, and
// the slices it waits in (delivery reports are served meanwhile).
constexpr int kQueueFullMs = 30000;
constexpr int kQueueFullSliceMs = 10;

// Rows that cross stay a week, counted from when they crossed: the broker
// stamps each message with its append time, so a row whose source time is
// old is neither refused (message.timestamp.*.max.ms) nor removed by
// retention before a back that lags has read it.
const TopicConfigs& topicConfigs() {
  static const TopicConfigs configs = {{"cleanup.policy", "delete"},
                                       {"retention.ms", "604800000"},
                                       {"message.timestamp.type", "LogAppendTime"}};
  return configs;
}

// Makes sure the exchange topic exists, through client `rk`, with at least
// the flow's copies as partitions.
void ensureTopic(rd_kafka_t* rk, const ExchangeSpec& spec) {
  InternalTopic t = ensureInternalTopic(
      rk, spec.bootstrap, spec.topic, spec.partitions, topicConfigs(), kTopicWaitMs,
      fmt::format("the cluster's Kafka must let rtsqld create its internal topics: create {} "
                  "with {} partitions, or check the broker's ACLs",
                  spec.topic, spec.partitions));
  if (t.partitions < spec.partitions) {
    throw SqlError(
        sqlstate::kObjectNotInPrerequisiteState,
        fmt::format("the exchange topic {} on {} has {} partition{}, and the flow has "
                    "{} copies{}",
                    spec.topic, spec.bootstrap, t.partitions, t.partitions == 1 ? "" : "s",
                    spec.partitions, t.notCreated.empty() ? "" : ": " + t.notCreated),
        SqlError::npos,
        fmt::format("delete the topic, or create it with {} partitions", spec.partitions));
  }
}

void checkSpec(const ExchangeSpec& spec) {
  if (spec.topic.empty() || spec.bootstrap.empty() || spec.partitions < 1 || spec.producers < 1) {
    throw InternalError(
        fmt::format("an exchange of topic '{}' on '{}' with {} partitions and {} "
                    "producers",
                    spec.topic, spec.bootstrap, spec.partitions, spec.producers));
  }
}

// ---------------------------------------------------------------------------
// The writer.

class KafkaExchangeWriter final : public ExchangeOut {
 public:
  KafkaExchangeWriter(const ExchangeSpec& spec, const std::string& flowName, int task)
      : topic_(spec.topic), bootstrap_(spec.bootstrap) {
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    try {
      installLogging(conf);
      rd_kafka_conf_set_dr_msg_cb(conf, &KafkaExchangeWriter::onDelivery);
      // Latency as the Kafka sink's (connectors/kafka/sink.cpp): messages
      // wait at most half a millisecond to share a request, Nagle never holds
      // one back.
      setProperty(conf, "linger.ms", "0.5", SqlError::npos);
      setProperty(conf, "socket.nagle.disable", "true", SqlError::npos);
      setProperty(conf, "batch.num.messages", "1000", SqlError::npos);
      setProperty(conf, "client.id", fmt::format("rtsql-{}-exchange-{}", flowName, task),
                  SqlError::npos);
      // The back's dedupe: each partition takes this task's messages in the
      // order sent, none twice and none left out. A message that cannot be
      // delivered is a fatal error of the producer, never a hole.
      setProperty(conf, "acks", "all", SqlError::npos);
      setProperty(conf, "enable.idempotence", "true", SqlError::npos);
      setProperty(conf, "enable.gapless.guarantee", "true", SqlError::npos);
      refuseAutoCreate(conf);
      setProperty(conf, "bootstrap.servers", bootstrap_, SqlError::npos);
    } catch (...) {
      rd_kafka_conf_destroy(conf);
      throw;
    }
    rk_ = newHandle(RD_KAFKA_PRODUCER, conf);
    ensureTopic(rk_.get(), spec);
    rkt_ = rd_kafka_topic_new(rk_.get(), topic_.c_str(), nullptr);
    if (!rkt_) {
      throw SqlError(sqlstate::kInvalidParameterValue,
                     fmt::format("invalid exchange topic name '{}': {}", topic_,
                                 rd_kafka_err2str(rd_kafka_last_error())));
    }
  }

  ~KafkaExchangeWriter() override {
    // Flushed at every epoch end and at shutdown: what is still queued here
    // belongs to a failed or cancelled run, whose front writes it again from
    // its checkpoint.
    rd_kafka_purge(rk_.get(), RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
    rd_kafka_poll(rk_.get(), 0);
    if (rkt_) rd_kafka_topic_destroy(rkt_);
    rk_.reset();  // before the members its delivery reports write to
  }

  KafkaExchangeWriter(const KafkaExchangeWriter&) = delete;
  KafkaExchangeWriter& operator=(const KafkaExchangeWriter&) = delete;

  void send(int partition, std::string_view bytes, int64_t timestampMicros) override {
    checkFailed();
    rd_kafka_vu_t vus[6];
    vus[0].vtype = RD_KAFKA_VTYPE_RKT;
    vus[0].u.rkt = rkt_;
    vus[1].vtype = RD_KAFKA_VTYPE_PARTITION;
    vus[1].u.i32 = partition;
    vus[2].vtype = RD_KAFKA_VTYPE_VALUE;
    vus[2].u.mem.ptr = const_cast<char*>(bytes.data());  // copied (F_COPY)
    vus[2].u.mem.size = bytes.size();
    vus[3].vtype = RD_KAFKA_VTYPE_MSGFLAGS;
    vus[3].u.i = RD_KAFKA_MSG_F_COPY;
    vus[4].vtype = RD_KAFKA_VTYPE_OPAQUE;
    vus[4].u.ptr = this;
    // Kafka takes no timestamp before 1970; 0 has the client stamp it now.
    vus[5].vtype = RD_KAFKA_VTYPE_TIMESTAMP;
    vus[5].u.i64 = std::max<int64_t>(0, timestampMicros / 1000);
    const int64_t giveUp = monotonicMicros() + int64_t(kQueueFullMs) * 1000;
    for (;;) {
      rd_kafka_error_t* error = rd_kafka_produceva(rk_.get(), vus, 6);
      if (!error) break;
      const rd_kafka_resp_err_t code = rd_kafka_error_code(error);
      std::string reason = rd_kafka_error_string(error);
      rd_kafka_error_destroy(error);
      if (code == RD_KAFKA_RESP_ERR__FATAL) checkFailed();
      if (code != RD_KAFKA_RESP_ERR__QUEUE_FULL) {
        throw SqlError(sqlstate::kConnectionFailure,
                       fmt::format("{}: cannot send a message to partition {} on {}: {}",
                                   description(), partition, bootstrap_, reason));
      }
      // Backpressure: the broker's acknowledgements make room.
      if (monotonicMicros() >= giveUp) {
        throw SqlError(sqlstate::kConnectionFailure,
                       fmt::format("{}: the producer's queue stayed full for {} s: {} did not "
                                   "take the messages",
                                   description(), kQueueFullMs / 1000, bootstrap_),
                       SqlError::npos, "check that the cluster's Kafka is up and reachable");
      }
      rd_kafka_poll(rk_.get(), kQueueFullSliceMs);
      checkFailed();
    }
    ++outstanding_;
    // Serves delivery reports without waiting.
    rd_kafka_poll(rk_.get(), 0);
  }

  void flush(int timeoutMs) override {
    const int64_t deadline = monotonicMicros() + int64_t(std::max(timeoutMs, 0)) * 1000;
    for (;;) {
      checkFailed();
      if (outstanding_ == 0) return;
      const int64_t remainingMs = (deadline - monotonicMicros()) / 1000;
      if (remainingMs <= 0) {
        throw SqlError(
            sqlstate::kConnectionFailure,
            fmt::format("{}: {} message{} not acknowledged by {} within {} ms", description(),
                        outstanding_, outstanding_ == 1 ? "" : "s", bootstrap_, timeoutMs),
            SqlError::npos, "check that the cluster's Kafka is up and reachable");
      }
      rd_kafka_poll(rk_.get(), static_cast<int>(std::min<int64_t>(remainingMs, 10)));
    }
  }

  std::string description() const override { return "Exchange[" + topic_ + "]"; }

 private:
  static void onDelivery(rd_kafka_t*, const rd_kafka_message_t* m, void*) {
    auto* self = static_cast<KafkaExchangeWriter*>(m->_private);
    if (!self) return;
    --self->outstanding_;
    if (m->err && !self->deliveryError_) {
      self->deliveryError_ =
          fmt::format("partition {}: {}", m->partition, rd_kafka_err2str(m->err));
    }
  }

  // A delivery that failed, a fatal error (the gapless guarantee could not be
  // kept) or credentials the broker refused: the writer cannot go on, and
  // neither can the epoch.
  void checkFailed() {
    char reason[512];
    if (rd_kafka_resp_err_t err = rd_kafka_fatal_error(rk_.get(), reason, sizeof reason)) {
      throw SqlError(sqlstate::kConnectionFailure,
                     fmt::format("{}: the producer failed on {}: {} ({})", description(),
                                 bootstrap_, reason, rd_kafka_err2name(err)),
                     SqlError::npos, "the flow restarts from its last checkpoint");
    }
    if (deliveryError_) {
      throw SqlError(sqlstate::kConnectionFailure,
                     fmt::format("{}: a message could not be delivered to {}: {}", description(),
                                 bootstrap_, *deliveryError_),
                     SqlError::npos, "the flow restarts from its last checkpoint");
    }
    if (std::optional<std::string> refused = authenticationFailure(rk_.get())) {
      throw authenticationError(rk_.get(), bootstrap_, *refused);
    }
  }

  std::string topic_;
  std::string bootstrap_;
  // Written by delivery reports, which the task's own polls serve.
  int64_t outstanding_ = 0;
  std::optional<std::string> deliveryError_;  // the first one
  rd_kafka_topic_t* rkt_ = nullptr;
  HandlePtr rk_;
};

// ---------------------------------------------------------------------------
// The source.

struct ExchangePartition {
  int32_t partition = 0;
  int64_t startOffset = -1;
  int64_t endOffset = -1;
  // The end of the log as of the last end-of-partition event since the
  // partition's last message, -1 when there was none: caughtUp().
  int64_t eofOffset = -1;
  int64_t skipped = 0;
  bool skipLogged = false;
  ExchangeReceiver receiver;
};

class KafkaExchangeSource final : public SourceTask {
 public:
  KafkaExchangeSource(const ScanSpec& scan, const std::string& flowName)
      : spec_(scan.exchange), producers_(static_cast<uint32_t>(scan.exchange.producers)) {
    checkSpec(spec_);
    types_.reserve(scan.schema.columns.size());
    for (const Column& c : scan.schema.columns) types_.push_back(c.type);
    for (int p = 0; p < spec_.partitions; ++p) {
      if (!scan.share.reads(p)) continue;
      byPartition_.resize(static_cast<size_t>(p) + 1, -1);
      byPartition_[p] = static_cast<int>(parts_.size());
      parts_.push_back(ExchangePartition{p, -1, -1, -1, 0, false, receiverFor(p)});
    }

    // The topic first, through a client of its own.
    {
      HandlePtr admin = newInternalClient(RD_KAFKA_PRODUCER, spec_.bootstrap,
                                                  {{"client.id", "rtsql-exchange-admin"}}, {});
      ensureTopic(admin.get(), spec_);
    }
    openConsumer(flowName);
    if (!parts_.empty()) assignFromStart();
  }

  ~KafkaExchangeSource() override {
    // The client cannot be destroyed while any of its messages is held.
    held_.clear();
    destroyAssignedConsumer(rk_, queue_);
  }

  void poll(std::vector<SourceRecord>& out, size_t maxRecords, int timeoutMs) override {
    if (parts_.empty()) {
      idleWait_.wait(timeoutMs);  // nothing to read
      return;
    }
    consumeBatches(queue_, held_, maxRecords, timeoutMs, [&](std::vector<MessagePtr>& held) {
      const int64_t readMicros = nowMicros();
      BatchTaken t;
      bool moved = false;  // caughtUp() or ownWatermark() changed
      {
        std::lock_guard lock(mutex_);
        for (MessagePtr& m : held) t.records += process(m.get(), readMicros, out, moved);
      }
      // The task looks at its watermark again without waiting for a row.
      t.stop = moved;
      return t;
    });
  }

  void wake() override {
    if (parts_.empty()) {
      idleWait_.wake();
      return;
    }
    rd_kafka_queue_yield(queue_);
  }

  bool wakes() const override { return true; }

  // The positions are the flow's checkpoint's: an epoch's end only starts the
  // next epoch's range.
  void commit() override {
    std::lock_guard lock(mutex_);
    for (ExchangePartition& s : parts_) s.startOffset = s.endOffset;
  }

  void commit(const std::vector<PartitionProgress>& upTo) override {
    std::lock_guard lock(mutex_);
    for (const PartitionProgress& p : upTo) {
      ExchangePartition* s = find(p.topic, p.partition);
      if (s && p.endOffset >= 0) s->startOffset = p.endOffset;
    }
  }

  // Recovery: each listed partition goes on after the checkpoint's offset,
  // its receiver holding the positions taken up to there; the others read
  // from the start.
  void seek(const std::vector<PartitionProgress>& positions) override {
    if (parts_.empty()) return;
    {
      std::lock_guard lock(mutex_);
      for (const PartitionProgress& p : positions) {
        ExchangePartition* s = find(p.topic, p.partition);
        if (!s || p.endOffset < 0) continue;
        s->receiver = receiverFor(s->partition);
        s->receiver.restore(p.position);
        s->startOffset = s->endOffset = p.endOffset;
      }
    }
    assign();
  }

  void startFromStartingOffsets() override {
    if (parts_.empty()) return;
    {
      std::lock_guard lock(mutex_);
      for (ExchangePartition& s : parts_) {
        s.startOffset = s.endOffset = -1;
        s.receiver = receiverFor(s.partition);
      }
    }
    assignFromStart();
  }

  std::vector<PartitionProgress> progress() const override {
    std::vector<PartitionProgress> out;
    std::lock_guard lock(mutex_);
    out.reserve(parts_.size());
    for (const ExchangePartition& s : parts_) {
      PartitionProgress p;
      p.topic = spec_.topic;
      p.partition = s.partition;
      p.startOffset = s.startOffset;
      p.endOffset = s.endOffset;
      p.offsetsSkipped = s.skipped;
      p.latestOffset = cachedHigh(s.partition);
      p.position = s.receiver.position();
      out.push_back(std::move(p));
    }
    return out;
  }

  // Read up to the broker's end: the client reported the end of the
  // partition after its last message, and the newest fetch response shows
  // nothing beyond it.
  bool caughtUp(int32_t partition) const override {
    std::lock_guard lock(mutex_);
    for (const ExchangePartition& s : parts_) {
      if (s.partition != partition) continue;
      if (s.eofOffset < 0) return false;
      if (cachedHigh(s.partition) > s.eofOffset) return false;
    }
    return true;
  }

  std::optional<OwnWatermark> ownWatermark() const override {
    std::lock_guard lock(mutex_);
    OwnWatermark w;
    w.watermark = parts_.empty() ? INT64_MIN : INT64_MAX;
    w.allIdle = true;
    for (const ExchangePartition& s : parts_) {
      w.watermark = std::min(w.watermark, s.receiver.watermark());
      w.allIdle = w.allIdle && s.receiver.allIdle();
    }
    return w;
  }

  int64_t decodeErrors() const override { return 0; }

  std::string description() const override {
    std::string list;
    for (const ExchangePartition& s : parts_) {
      list += fmt::format("{}{}", list.empty() ? "" : ",", s.partition);
    }
    return fmt::format("Exchange[{}/{}]", spec_.topic, list);
  }

 private:
  ExchangePartition* find(const std::string& topic, int32_t partition) {
    if (topic != spec_.topic || partition < 0 ||
        static_cast<size_t>(partition) >= byPartition_.size() || byPartition_[partition] < 0) {
      return nullptr;
    }
    return &parts_[byPartition_[partition]];
  }

  // The high watermark of the last fetch response (no broker round trip),
  // -1 when none came yet.
  int64_t cachedHigh(int32_t partition) const {
    int64_t low = -1, high = -1;
    if (rd_kafka_get_watermark_offsets(rk_.get(), spec_.topic.c_str(), partition, &low, &high) ==
            RD_KAFKA_RESP_ERR_NO_ERROR &&
        high >= 0) {
      return high;
    }
    return -1;
  }

  void openConsumer(const std::string& flowName) {
    const std::string clientId = fmt::format("rtsql-{}-exchange-in", flowName);
    // The group is never joined nor committed to; the client needs one to be
    // assigned partitions.
    const std::string group = fmt::format("rtsql-{}-exchange", flowName);
    // Fetching as the Kafka source does (connectors/kafka/source.cpp): the
    // broker answers as soon as a byte is there, and holds a fetch that found
    // nothing for up to 500 ms (the embedded broker too, through its proxy).
    rk_ = newInternalClient(RD_KAFKA_CONSUMER, spec_.bootstrap,
                            {{"client.id", clientId.c_str()},
                             {"fetch.wait.max.ms", "500"},
                             {"fetch.min.bytes", "1"},
                             {"fetch.error.backoff.ms", "10"},
                             {"socket.nagle.disable", "true"},
                             {"queued.max.messages.kbytes", "65536"},
                             {"queued.min.messages", "1000000"},
                             {"session.timeout.ms", "6000"}},
                            {{"group.id", group.c_str()},
                             // A checkpointed offset the broker no longer has (the
                             // back was away longer than the retention): from what
                             // is left, the gap counted in offsetsSkipped.
                             {"auto.offset.reset", "earliest"},
                             {"isolation.level", "read_uncommitted"},
                             {"enable.partition.eof", "true"}});
    rd_kafka_poll_set_consumer(rk_.get());
    queue_ = rd_kafka_queue_get_consumer(rk_.get());
  }

  // Every partition from the first offset the broker keeps, resolved to a
  // number when the broker answers so that progress shows real offsets.
  void assignFromStart() {
    std::vector<int64_t> low(parts_.size(), -1);
    for (size_t i = 0; i < parts_.size(); ++i) {
      int64_t high = -1;
      if (rd_kafka_query_watermark_offsets(rk_.get(), spec_.topic.c_str(), parts_[i].partition,
                                           &low[i], &high,
                                           kMetadataTimeoutMs) != RD_KAFKA_RESP_ERR_NO_ERROR) {
        low[i] = -1;
      }
    }
    {
      std::lock_guard lock(mutex_);
      for (size_t i = 0; i < parts_.size(); ++i) {
        parts_[i].startOffset = parts_[i].endOffset = low[i] >= 0 ? low[i] : -1;
      }
    }
    assign();
  }

  // Assigns every partition at its endOffset (the start when unknown).
  void assign() {
    ListPtr list(rd_kafka_topic_partition_list_new(static_cast<int>(parts_.size())));
    {
      std::lock_guard lock(mutex_);
      // Ends seen before the new assignment say nothing of it.
      for (ExchangePartition& s : parts_) {
        s.eofOffset = -1;
        rd_kafka_topic_partition_list_add(list.get(), spec_.topic.c_str(), s.partition)->offset =
            s.endOffset >= 0 ? s.endOffset : RD_KAFKA_OFFSET_BEGINNING;
      }
    }
    // Messages fetched for an earlier assignment are discarded by the client.
    const rd_kafka_resp_err_t err = rd_kafka_assign(rk_.get(), list.get());
    if (err) {
      throw SqlError(sqlstate::kConnectionFailure,
                     fmt::format("cannot assign the partitions of {}: {}", description(),
                                 rd_kafka_err2str(err)));
    }
  }

  // One message: a new row becomes a record in `out` (returns 1), a repeat is
  // dropped, a marker moves the watermark. Sets `moved` when caughtUp() or
  // ownWatermark() may say something else now. Throws SqlError XX001 for a
  // message that is no exchange message (the topic is rtsqld's own: damage
  // there fails the flow) or of a plan of another shape. Called with mutex_.
  size_t process(rd_kafka_message_t* m, int64_t readMicros, std::vector<SourceRecord>& out,
                 bool& moved) {
    if (m->err) {
      if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
        if (ExchangePartition* s = find(spec_.topic, m->partition)) {
          s->eofOffset = m->offset;
          moved = true;
        }
      } else {
        // The client reconnects by itself; a broker away a while must not
        // end the flow.
        reportConsumerError(m);
      }
      return 0;
    }
    ExchangePartition* s = find(spec_.topic, m->partition);
    if (!s) return 0;  // not ours: cannot happen with assign()
    ExchangeMessage msg = decodeExchange(
        std::string_view(static_cast<const char*>(m->payload), m->payload ? m->len : 0), types_);
    size_t added = 0;
    if (msg.kind == ExchangeMessage::Kind::Row) {
      if (s->receiver.accept(msg.origin)) {
        SourceRecord r;
        r.row = std::move(msg.row);
        r.timestampMicros = msg.sourceTimestampMicros;
        r.readMicros = readMicros;
        r.partition = s->partition;
        r.offset = m->offset;
        r.kind = msg.rowKind;
        out.push_back(std::move(r));
        added = 1;
      }
    } else {
      const int64_t before = s->receiver.watermark();
      const bool wasIdle = s->receiver.allIdle();
      s->receiver.marker(msg);
      moved = moved || s->receiver.watermark() != before || s->receiver.allIdle() != wasIdle;
    }
    if (s->endOffset >= 0 && m->offset > s->endOffset) countSkipped(*s, m->offset);
    s->endOffset = m->offset + 1;
    if (s->eofOffset >= 0) moved = true;  // no longer caught up
    s->eofOffset = -1;
    return added;
  }

  // Messages between the last one read and `next` are gone: the broker's
  // retention removed them before the back read them, so rows were lost.
  void countSkipped(ExchangePartition& s, int64_t next) {
    s.skipped += next - s.endOffset;
    if (s.skipLogged) return;
    s.skipLogged = true;
    fmt::print(stderr,
               "rtsql: {}: partition {} went on at offset {} after offset {}: {} messages were "
               "never read (removed by the broker's retention); the progress counts them in "
               "offsetsSkipped\n",
               description(), s.partition, next, s.endOffset - 1, next - s.endOffset);
  }

  // Partition p is copy p's: with its own rows in process, its receiver
  // leaves that copy's fronts out.
  ExchangeReceiver receiverFor(int32_t partition) const {
    return ExchangeReceiver(producers_, spec_.local ? partition : -1, spec_.partitions);
  }

  void reportConsumerError(const rd_kafka_message_t* m) {
    if (!errorLog_.due()) return;
    fmt::print(stderr, "rtsql: {}: {}; still polling\n", description(), rd_kafka_message_errstr(m));
  }

  ExchangeSpec spec_;
  uint32_t producers_;
  std::vector<DataTypePtr> types_;
  HandlePtr rk_;
  rd_kafka_queue_t* queue_ = nullptr;
  // wake() for a task without partitions, which waits on no queue.
  IdleWait idleWait_;

  mutable std::mutex mutex_;  // guards parts_ against progress() readers
  std::vector<ExchangePartition> parts_;
  std::vector<int> byPartition_;  // exchange partition -> index in parts_, -1: not read

  std::vector<MessagePtr> held_;
  ErrorLogPace errorLog_;
};

}  // namespace

std::unique_ptr<ExchangeOut> makeExchangeWriter(const ExchangeSpec& spec,
                                                const std::string& flowName, int task) {
  checkSpec(spec);
  return std::make_unique<KafkaExchangeWriter>(spec, flowName, task);
}

std::unique_ptr<SourceTask> makeExchangeSource(const ScanSpec& scan, const std::string& flowName) {
  return std::make_unique<KafkaExchangeSource>(scan, flowName);
}

}  // namespace rtsql::kafka
