#include "connectors/kafka/sink.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/error.h"
#include "connectors/embedded/broker.h"
#include "connectors/format/codec.h"
#include "connectors/format/encoding_sink_writer.h"
#include "connectors/kafka/client.h"
#include "connectors/kafka/fetch_rate.h"
#include "connectors/kafka/sink_topic.h"
#include "connectors/registry.h"

namespace rtsql {

namespace {

// How long write() lets the client drain a full queue before trying again. Each
// wait is short so that delivery reports keep being served meanwhile.
constexpr int kQueueFullWaitMs = 5;

// How long the transaction calls may wait for the broker.
constexpr int kTransactionTimeoutMs = 30000;

void setProducerSafety(rd_kafka_conf_t* conf, bool transactional) {
  // Latency: rows wait at most half a millisecond for others to share their
  // request, and Nagle never holds small packets. Sending every row at once
  // (linger.ms 0) saves about a millisecond at a few hundred rows per second,
  // but costs a wakeup of the client's thread and a broker request per row:
  // at 10,000 rows/s on a machine shared with the broker, that load made
  // every latency hundreds of times worse (docs/benchmarks.md, "Sink
  // batching"). 'kafka.linger.ms' = '0' on a sink chooses it anyway.
  // Safety: every replica acknowledges, and retries never duplicate a row
  // nor change the rows' order (the idempotent producer).
  kafka::setProperty(conf, "linger.ms", "0.5", SqlError::npos);
  kafka::setProperty(conf, "socket.nagle.disable", "true", SqlError::npos);
  kafka::setProperty(conf, "acks", "all", SqlError::npos);
  kafka::setProperty(conf, "enable.idempotence", "true", SqlError::npos);
  kafka::setProperty(conf, "batch.num.messages", "1000", SqlError::npos);
  if (transactional) return;
  // Two requests in flight per broker, not librdkafka's five. Its idempotent
  // producer lets a partition have a new request only while fewer than five
  // *rows* of it are in flight (its limit of five requests, counted in
  // messages), and while every partition with rows waiting is at that limit
  // and no request is built and waiting to go, the client's I/O thread polls
  // without sleeping until the broker answers: at 10,000 rows/s of 2.4 KB over
  // 4 partitions (a GROUP BY keyed by a 1.2 KB group) that was about ten polls
  // per row and half of rtsqld's CPU (docs/benchmarks.md, "The sink's producer
  // without its busy loop"). With two in flight, a third partition's request
  // waits built, so the thread sleeps, and the rows that come meanwhile join
  // the requests after it; the broker, which reads one request of a
  // connection at a time, always has the next one at hand. With one in flight
  // the broker idles between a response and the next request, and each
  // request carries at most batch.size (about 400 such rows): under load one
  // run fell seconds behind. A topic of one or two partitions has no other
  // partition's request to wait behind, so its producer still polls while
  // its rows wait.
  kafka::setProperty(conf, "max.in.flight.requests.per.connection", "2", SqlError::npos);
}

// Producers open now, for kafkaSinkProducers().
std::atomic<int> openProducers{0};

// Batches of rows sent through a producer's prompt client (linger 0), for
// kafkaSinkPromptBatches().
std::atomic<int64_t> promptBatches{0};

// The producer's linger follows the rate: librdkafka reads linger.ms only when
// the client is made, so a producer whose sink did not choose its own linger
// keeps two clients and its tasks move between them. While the flow's rows
// come sparsely, a client without a linger (linger.ms 0) sends each batch of
// rows as it comes: the linger would hold a row that nothing follows for half
// a millisecond (the client's timers tick in milliseconds: about a
// millisecond at P50 at 1,000 rows/s), and the thread that used to flush
// the lingering client at once for such a row cost two wakeups per row of
// its own. Once they come at kSinkBatchingRate rows a second or more, the
// lingering client (setProducerSafety) batches them into fewer requests:
// sending every row at once at 10,000 rows/s made the broker's load every
// latency's. The rate is measured over windows of 100 ms, with hysteresis
// (connectors/kafka/fetch_rate.h), so that a rate near the threshold does
// not move the tasks back and forth.
constexpr int64_t kSinkBatchingRate = 5000;

kafka::FetchRateDetector::Settings sinkRateSettings() {
  kafka::FetchRateDetector::Settings s;
  s.rate = kSinkBatchingRate;
  s.windowMicros = 100'000;
  s.upWindows = 3;     // 0.3 s at the rate or more
  s.downWindows = 10;  // 1 s below half of it
  return s;
}

// How long a sink task waits for its rows on one client to be acknowledged
// before it moves to the other (so that its rows keep their order: a few ms
// on a live broker); past it, the task stays, and tries again after its
// batches of the next second.
constexpr int64_t kMoveDrainMicros = 100'000;
constexpr int64_t kMoveRetryMicros = 1'000'000;

// What one sink task has handed to a shared producer and what became of it.
// Delivery reports find it through the message's opaque, so it lives as long
// as the producer: a report that arrives after its task is gone still lands
// somewhere valid.
struct DeliveryTally {
  std::atomic<int64_t> outstanding{0};  // produced, not yet acknowledged or failed
  std::atomic<int64_t> errors{0};
  std::atomic<int64_t> failedSinceFlush{0};
  std::mutex mutex;
  std::string lastError;

  void fail(std::string reason) {
    errors.fetch_add(1);
    failedSinceFlush.fetch_add(1);
    std::lock_guard lock(mutex);
    lastError = std::move(reason);
  }
};

// One producer for every sink task of a flow. Each producer has its own
// threads and its own requests to the broker: eight GROUP BY sink tasks with
// eight producers sent eight small requests where one would do, and at 10,000
// rows/s their threads' wakeups and the broker's request handling took the
// CPU the flow needed (docs/benchmarks.md, "Sink batching"). Shared, the
// tasks' rows for a partition go out together.
class KafkaProducer {
 public:
  // The producer of `flowName`'s sink: rtsql's settings, then the sink's
  // `kafka.<name>` options, then `fixed` (the transactional ones).
  KafkaProducer(const SinkSpec& sink, const std::string& bootstrap, const std::string& flowName,
                const std::vector<std::pair<std::string, std::string>>& fixed = {}) {
    const bool transactional = !fixed.empty();  // only an exactly-once producer has them
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    try {
      kafka::installLogging(conf);
      rd_kafka_conf_set_dr_msg_cb(conf, &KafkaProducer::onDelivery);
      setProducerSafety(conf, transactional);
      kafka::setProperty(conf, "client.id", "rtsql-" + flowName + "-sink", SqlError::npos);
      kafka::applyUserProperties(conf, sink.options, false);
      for (const auto& [name, value] : fixed) kafka::setProperty(conf, name, value, SqlError::npos);
      kafka::setProperty(conf, "bootstrap.servers", bootstrap, SqlError::npos);
    } catch (...) {
      rd_kafka_conf_destroy(conf);
      throw;
    }
    // A sink that chose its own linger (under either of librdkafka's names)
    // keeps it; an exactly-once producer keeps the linger too, as its
    // flushes belong to the epoch's commit. The others get a prompt client
    // too, a copy of the configuration without the linger.
    if (!transactional && !sink.options.has("kafka.linger.ms") &&
        !sink.options.has("kafka.queue.buffering.max.ms")) {
      rd_kafka_conf_t* prompt = rd_kafka_conf_dup(conf);
      try {
        try {
          kafka::setProperty(prompt, "linger.ms", "0", SqlError::npos);
        } catch (...) {
          rd_kafka_conf_destroy(prompt);
          throw;
        }
        prompt_ = kafka::newHandle(RD_KAFKA_PRODUCER, prompt);  // takes `prompt`
      } catch (...) {
        rd_kafka_conf_destroy(conf);
        throw;
      }
    }
    rk_ = kafka::newHandle(RD_KAFKA_PRODUCER, conf);
    // Once per flow run, as the tasks share this producer; before it counts as
    // open, since a refusal here means no destructor runs.
    const SinkOptions parsed = sinkOptionsOf(sink);
    const int partitions = parsed.topicPartitions;
    const std::string& topic = parsed.topic;
    if (partitions > 0 && !topic.empty()) {
      kafka::ensureSinkTopic(rk_.get(), bootstrap, topic, partitions);
    }
    openProducers.fetch_add(1);
  }

  ~KafkaProducer() {
    openProducers.fetch_sub(1);
    // Tasks flush before they close; whatever is still queued here belongs
    // to a failed or cancelled flow and is replayed from the last checkpoint.
    for (rd_kafka_t* rk : {rk_.get(), prompt_.get()}) {
      if (!rk) continue;
      rd_kafka_flush(rk, 1000);
      rd_kafka_purge(rk, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
      rd_kafka_poll(rk, 0);
    }
  }

  KafkaProducer(const KafkaProducer&) = delete;
  KafkaProducer& operator=(const KafkaProducer&) = delete;

  // The lingering client: the only one of an exactly-once producer or of a
  // sink that chose its linger.
  rd_kafka_t* handle() const { return rk_.get(); }
  rd_kafka_t* promptHandle() const { return prompt_.get(); }

  // The client for rows coming at the rate the producer's tasks hand it now:
  // the prompt one while they come sparsely. `rows` were handed over since
  // the caller last said.
  rd_kafka_t* clientFor(int64_t rows) {
    if (!prompt_) return rk_.get();
    return rate_.add(rows, monotonicMicros()) == kafka::FetchMode::Prompt ? prompt_.get()
                                                                          : rk_.get();
  }

  // A new sink task's tally.
  DeliveryTally* newTally() {
    std::lock_guard lock(mutex_);
    tallies_.push_back(std::make_unique<DeliveryTally>());
    return tallies_.back().get();
  }

 private:
  static void onDelivery(rd_kafka_t*, const rd_kafka_message_t* m, void*) {
    auto* tally = static_cast<DeliveryTally*>(m->_private);
    if (!tally) return;
    if (m->err) {
      tally->fail(fmt::format("topic '{}': {}", rd_kafka_topic_name(m->rkt), rd_kafka_err2str(m->err)));
    }
    tally->outstanding.fetch_sub(1, std::memory_order_release);
  }

  std::mutex mutex_;
  std::vector<std::unique_ptr<DeliveryTally>> tallies_;  // declared first: outlives rk_
  kafka::HandlePtr prompt_;  // linger 0; null: the linger alone decides
  kafka::HandlePtr rk_;
  kafka::FetchRateDetector rate_{sinkRateSettings()};
};

// The producer of a flow's sink, shared by its tasks while any of them is
// open. Keyed by everything its configuration comes from. Making one may wait
// on the broker for seconds ('topic.partitions': the topic's metadata and its
// creation), so the process-wide lock guards only the map: the wait holds up
// the other tasks of the same sink, which need this producer anyway, and never
// another flow's sink.
std::shared_ptr<KafkaProducer> sharedProducer(const SinkSpec& sink, const std::string& bootstrap,
                                              const std::string& flowName) {
  struct Slot {
    std::mutex mutex;  // held while the producer is made
    std::weak_ptr<KafkaProducer> producer;
  };
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<Slot>> slots;
  std::string key = fmt::format("{}\x1f{}\x1f{}\x1f{}", flowName, bootstrap, sink.name,
                                sink.options.toString());
  std::shared_ptr<Slot> slot;
  {
    std::lock_guard lock(mutex);
    // A slot no task is opening through (the map holds its only reference,
    // and no new one is taken without this lock) whose producer is gone.
    std::erase_if(slots, [](const auto& entry) {
      if (entry.second.use_count() != 1) return false;
      std::lock_guard slotLock(entry.second->mutex);
      return entry.second->producer.expired();
    });
    std::shared_ptr<Slot>& s = slots[key];
    if (!s) s = std::make_shared<Slot>();
    slot = s;
  }
  std::lock_guard lock(slot->mutex);
  if (auto existing = slot->producer.lock()) return existing;
  auto producer = std::make_shared<KafkaProducer>(sink, bootstrap, flowName);
  slot->producer = producer;
  return producer;
}

// The transactional producer of an exactly-once flow run, shared by its sink
// tasks. The transactional id is the flow's (connectors/kafka/flow_ids.h), so
// a new run (or a new server after a crash) fences the old one. Each commit
// also commits an "offset" of epoch + 1 for the sink topic's partition 0 in
// the flow's epoch group (rtsql-[<cluster>-]<flow>-epochs): Kafka makes it
// visible exactly when the rows are, so recover() learns which epoch's output
// is the last one written.
class KafkaSinkTransaction final : public SinkTransaction {
 public:
  KafkaSinkTransaction(const SinkSpec& sink, const std::string& bootstrap,
                       const std::string& flowName, const kafka::FlowKafkaIds& ids,
                       int64_t timeoutMs)
      : topic_(sinkOptionsOf(sink).topic),
        bootstrap_(bootstrap),
        flowName_(flowName),
        sink_(sink),
        ids_(ids),
        markerGroup_(ids.epochGroup()) {
    EmbeddedKafka* embedded = EmbeddedKafka::find(bootstrap_);
    if (embedded) embedded->createTopic(topic_, sinkOptionsOf(sink).topicPartitions);
    producer_ = std::make_shared<KafkaProducer>(
        sink, bootstrap_, flowName,
        std::vector<std::pair<std::string, std::string>>{{"transactional.id", ids.transactionalId()},
                                                         {"transaction.timeout.ms", std::to_string(timeoutMs)}});
    rk_ = producer_->handle();
  }

  const std::shared_ptr<KafkaProducer>& producer() const { return producer_; }

  int64_t recover() override {
    // The embedded broker (librdkafka's mock cluster, in this process or
    // another) accepts transactions but shows aborted rows to read_committed
    // consumers and keeps no transactional offsets: exactly-once would be a
    // promise it cannot keep.
    if (kafka::isEmbeddedBroker(rk_, kTransactionTimeoutMs)) {
      throw SqlError(sqlstate::kFeatureNotSupported,
                     fmt::format("'delivery' = 'exactly-once' needs Apache Kafka; {} is rtsql's "
                                 "embedded broker, which has no transactions",
                                 bootstrap_),
                     SqlError::npos, "use 'at-least-once' on the embedded broker");
    }
    check(rd_kafka_init_transactions(rk_, kTransactionTimeoutMs), "initialize the transactions");
    int64_t offset = committedEpoch(markerGroup_);
    if (offset < 0 && !ids_.legacy.empty()) {
      // Nothing committed under the flow's ids yet: it may have run under
      // the legacy ones (connectors/kafka/flow_ids.h). Their open
      // transaction, if any, is aborted first, so that what they committed
      // is settled; the flow goes on from it.
      fenceLegacy();
      offset = committedEpoch(ids_.legacyEpochGroup());
    }
    return offset >= 1 ? offset - 1 : -1;
  }

  // The "offset" group `group` committed for the sink topic's partition 0
  // (-1: none).
  int64_t committedEpoch(const std::string& group) {
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    try {
      kafka::installLogging(conf);
      kafka::setProperty(conf, "group.id", group, SqlError::npos);
      kafka::setProperty(conf, "enable.auto.commit", "false", SqlError::npos);
      kafka::setProperty(conf, "isolation.level", "read_committed", SqlError::npos);
      kafka::setProperty(conf, "bootstrap.servers", bootstrap_, SqlError::npos);
    } catch (...) {
      rd_kafka_conf_destroy(conf);
      throw;
    }
    kafka::HandlePtr consumer = kafka::newHandle(RD_KAFKA_CONSUMER, conf);
    rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(list, topic_.c_str(), 0);
    rd_kafka_resp_err_t err = rd_kafka_committed(consumer.get(), list, kTransactionTimeoutMs);
    int64_t offset = err ? -1 : list->elems[0].offset;
    rd_kafka_resp_err_t partErr = err ? err : list->elems[0].err;
    rd_kafka_topic_partition_list_destroy(list);
    rd_kafka_destroy_flags(consumer.release(), RD_KAFKA_DESTROY_F_NO_CONSUMER_CLOSE);
    if (partErr) {
      throw SqlError(sqlstate::kConnectionFailure,
                     fmt::format("cannot read the last committed epoch of flow \"{}\" from {}: {}",
                                 flowName_, bootstrap_, rd_kafka_err2str(partErr)));
    }
    return offset;
  }

  // Fences the flow's legacy transactional id: Kafka aborts the transaction
  // a run under it left open.
  void fenceLegacy() {
    std::shared_ptr<KafkaProducer> legacy = std::make_shared<KafkaProducer>(
        sink_, bootstrap_, flowName_,
        std::vector<std::pair<std::string, std::string>>{
            {"transactional.id", ids_.legacy},
            {"transaction.timeout.ms", std::to_string(kTransactionTimeoutMs)}});
    check(rd_kafka_init_transactions(legacy->handle(), kTransactionTimeoutMs),
          "fence the flow's earlier transactional id");
  }

  void begin() override {
    check(rd_kafka_begin_transaction(rk_), "begin a transaction");
  }

  void commit(uint64_t epoch) override {
    rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(list, topic_.c_str(), 0)->offset = static_cast<int64_t>(epoch) + 1;
    rd_kafka_consumer_group_metadata_t* group = rd_kafka_consumer_group_metadata_new(markerGroup_.c_str());
    rd_kafka_error_t* error =
        rd_kafka_send_offsets_to_transaction(rk_, list, group, kTransactionTimeoutMs);
    rd_kafka_consumer_group_metadata_destroy(group);
    rd_kafka_topic_partition_list_destroy(list);
    check(error, "record the epoch in the transaction");
    check(rd_kafka_commit_transaction(rk_, kTransactionTimeoutMs), "commit the transaction");
  }

  std::string kafkaClusterId() override { return kafka::clusterId(rk_, kTransactionTimeoutMs); }

  void add(const std::string& topic, int partition, std::string_view key,
           const std::string* value) override {
    rd_kafka_resp_err_t err =
        kafka::produceRecord(rk_, topic, partition, key, value, kTransactionTimeoutMs);
    if (err) {
      throw SqlError(sqlstate::kConnectionFailure,
                     fmt::format("flow \"{}\": cannot add a record for {} to the transaction on {}: {}",
                                 flowName_, topic, bootstrap_, rd_kafka_err2str(err)));
    }
  }

 private:
  // Turns a transaction error into a SqlError, aborting the transaction first
  // when it can still be aborted (the rows are then never visible).
  void check(rd_kafka_error_t* error, const char* what) {
    if (!error) return;
    std::string message = rd_kafka_error_string(error);
    bool abortable = rd_kafka_error_txn_requires_abort(error);
    rd_kafka_error_destroy(error);
    if (abortable) {
      if (rd_kafka_error_t* e = rd_kafka_abort_transaction(rk_, kTransactionTimeoutMs)) {
        rd_kafka_error_destroy(e);
      }
    }
    throw SqlError(sqlstate::kConnectionFailure,
                   fmt::format("sink {} of flow \"{}\": cannot {} on {}: {}", topic_, flowName_, what,
                               bootstrap_, message),
                   SqlError::npos, "the flow restarts from its last committed checkpoint");
  }

  std::string topic_;
  std::string bootstrap_;
  std::string flowName_;
  SinkSpec sink_;
  kafka::FlowKafkaIds ids_;
  std::string markerGroup_;
  std::shared_ptr<KafkaProducer> producer_;
  rd_kafka_t* rk_ = nullptr;
};

// Each record is one Kafka message: its key, value (none for a tombstone),
// headers and topic as the encoder made them.
class KafkaSinkWriter final : public EncodingSinkWriter {
 public:
  KafkaSinkWriter(const SinkSpec& sink, const std::string& bootstrap, const std::string& flowName,
                  int task, KafkaSinkTransaction* transaction = nullptr)
      : EncodingSinkWriter(sink, &makeEncoder),
        topic_(sinkOptionsOf(sink).topic),
        bootstrap_(bootstrap),
        keyed_(sink.keyColumn >= 0 || !sink.keyColumns.empty()),
        transaction_(transaction) {
    // Changes without a key (upsert, debezium-json) keep their order only
    // within one partition.
    if (writesChanges()) keyed_ = true;
    if (topic_.empty() && sink.topicColumn < 0) {
      throw SqlError(sqlstate::kInvalidParameterValue,
                     "option 'topic' of sink '" + sink.name + "' is required");
    }
    embedded_ = EmbeddedKafka::find(bootstrap_);
    if (embedded_ && !topic_.empty()) {
      embedded_->createTopic(topic_, sinkOptionsOf(sink).topicPartitions);
    }
    // Exactly-once: the flow run's transactional producer; otherwise the
    // flow's shared one.
    producer_ = transaction_ ? transaction_->producer() : sharedProducer(sink, bootstrap_, flowName);
    tally_ = producer_->newTally();
    useClient(producer_->clientFor(0));
  }

  ~KafkaSinkWriter() override {
    // Topic handles are reference counted by the producer; the producer itself
    // closes when its last task does.
    for (auto& [rk, topics] : topics_) {
      for (auto& [name, rkt] : topics.byName) rd_kafka_topic_destroy(rkt);
    }
  }

  void pause() override { paused_ = true; }

  void resume() override {
    paused_ = false;
    std::vector<HeldRow> held;
    held.swap(held_);
    for (const HeldRow& h : held) writeChange(h.row, h.ts, h.kind);
  }

  void write(const Row& row, int64_t sourceTimestampMicros) override {
    if (paused_) {
      held_.push_back({row, sourceTimestampMicros, RowKind::Insert});
      return;
    }
    EncodingSinkWriter::write(row, sourceTimestampMicros);
  }

  void writeChange(const Row& row, int64_t sourceTimestampMicros, RowKind kind) override {
    if (paused_) {
      held_.push_back({row, sourceTimestampMicros, kind});
      return;
    }
    EncodingSinkWriter::writeChange(row, sourceTimestampMicros, kind);
  }

  // Nothing is produced while paused: the epoch's transaction is committing.
  void endOfChanges() override {
    if (paused_) return;
    EncodingSinkWriter::endOfChanges();
    if (rowsInBatch_ > 0 && rk_ == producer_->promptHandle()) {
      promptBatches.fetch_add(1, std::memory_order_relaxed);
    }
    serveDeliveryReports();
    rd_kafka_t* wanted = producer_->clientFor(std::exchange(rowsInBatch_, 0));
    if (wanted != rk_) moveTo(wanted);
  }

  int64_t deliveryErrors() const override { return tally_->errors.load(); }

  std::string description() const override {
    return "KafkaSink[" + (topic_.empty() ? std::string("<topic column>") : topic_) + "]";
  }

 private:
  void deliver(const EncodedRecord& rec) override {
    rd_kafka_topic_t* rkt = rec.topic.empty() ? current_->defaultTopic : topicHandle(rec.topic);
    if (!rkt) {
      // A raw sink without a 'topic' option and a row without a topic.
      tally_->fail("a row has no topic and the sink has no 'topic' option");
      return;
    }
    rd_kafka_headers_t* headers = nullptr;
    if (!rec.headers.empty()) {
      headers = rd_kafka_headers_new(rec.headers.size());
      for (const auto& [k, v] : rec.headers) {
        rd_kafka_header_add(headers, k.data(), static_cast<ssize_t>(k.size()), v.data(), v.size());
      }
    }
    rd_kafka_vu_t vus[7];
    size_t n = 0;
    vus[n].vtype = RD_KAFKA_VTYPE_RKT;
    vus[n++].u.rkt = rkt;
    vus[n].vtype = RD_KAFKA_VTYPE_MSGFLAGS;
    vus[n++].u.i = RD_KAFKA_MSG_F_COPY;
    vus[n].vtype = RD_KAFKA_VTYPE_OPAQUE;
    vus[n++].u.ptr = tally_;
    vus[n].vtype = RD_KAFKA_VTYPE_VALUE;
    vus[n].u.mem.ptr = rec.hasValue ? const_cast<char*>(rec.value.data()) : nullptr;
    vus[n++].u.mem.size = rec.hasValue ? rec.value.size() : 0;
    if (rec.hasKey) {
      vus[n].vtype = RD_KAFKA_VTYPE_KEY;
      vus[n].u.mem.ptr = const_cast<char*>(rec.key.data());
      vus[n++].u.mem.size = rec.key.size();
    } else if (keyed_) {
      // Update-mode output keyed by group: the updates of a NULL group have no
      // key, and Kafka would scatter keyless records over the partitions, so
      // their order would be lost. They all go to partition 0 instead.
      vus[n].vtype = RD_KAFKA_VTYPE_PARTITION;
      vus[n++].u.i32 = 0;
    }
    if (headers) {
      vus[n].vtype = RD_KAFKA_VTYPE_HEADERS;
      vus[n++].u.headers = headers;
    }
    tally_->outstanding.fetch_add(1, std::memory_order_relaxed);
    for (;;) {
      rd_kafka_error_t* error = rd_kafka_produceva(rk_, vus, n);
      if (!error) {
        ++rowsInBatch_;
        break;  // the headers now belong to the message
      }
      rd_kafka_resp_err_t code = rd_kafka_error_code(error);
      std::string reason = rd_kafka_error_string(error);
      rd_kafka_error_destroy(error);
      if (code == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
        // Backpressure: wait for acknowledgements to make room, never drop.
        rd_kafka_poll(rk_, kQueueFullWaitMs);
        continue;
      }
      if (headers) rd_kafka_headers_destroy(headers);
      tally_->outstanding.fetch_sub(1, std::memory_order_relaxed);
      tally_->fail(std::move(reason));
      break;
    }
  }

  // Serves the delivery reports that arrived meanwhile, without waiting, once
  // per batch of rows rather than once per row: each look takes the
  // producer's queue lock, which every sink task of the flow shares.
  void serveDeliveryReports() {
    rd_kafka_poll(rk_, 0);
    if (std::optional<std::string> refused = kafka::authenticationFailure(rk_)) {
      throw kafka::authenticationError(rk_, bootstrap_, *refused);
    }
  }

  // Moves the task's rows to the producer's other client (the linger follows
  // the rate: KafkaProducer::clientFor), once every row it handed the current
  // one is acknowledged, so that its rows keep their order. When they are not
  // within kMoveDrainMicros (a broker down or slow), it stays, and tries
  // again a second later.
  void moveTo(rd_kafka_t* next) {
    const int64_t now = monotonicMicros();
    if (now < nextMove_) return;
    const int64_t deadline = now + kMoveDrainMicros;
    while (tally_->outstanding.load(std::memory_order_acquire) > 0) {
      if (monotonicMicros() >= deadline || kafka::authenticationFailure(rk_)) {
        nextMove_ = monotonicMicros() + kMoveRetryMicros;
        return;
      }
      rd_kafka_poll(rk_, 1);
    }
    useClient(next);
  }

  // Makes `rk` the client the task's rows go to, with its topic handles.
  void useClient(rd_kafka_t* rk) {
    rk_ = rk;
    current_ = &topics_[rk];
    if (!topic_.empty() && !current_->defaultTopic) current_->defaultTopic = topicHandle(topic_);
  }

  void flushRecords(int timeoutMs) override {
    // Waits for this task's rows only: the other tasks keep writing through
    // the shared producer meanwhile, so its queue as a whole may never be empty.
    // Polling serves the delivery reports, whichever task's they are.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeoutMs);
    while (tally_->outstanding.load(std::memory_order_acquire) > 0) {
      // The producer retries a refused login until its records time out:
      // the refusal itself is the answer.
      if (std::optional<std::string> refused = kafka::authenticationFailure(rk_)) {
        throw kafka::authenticationError(rk_, bootstrap_, *refused);
      }
      if (std::chrono::steady_clock::now() >= deadline) {
        throw SqlError(sqlstate::kConnectionFailure,
                       fmt::format("{}: {} records not acknowledged by {} within {} ms",
                                   description(), tally_->outstanding.load(), bootstrap_, timeoutMs),
                       SqlError::npos, "check that the Kafka broker is running and reachable");
      }
      rd_kafka_poll(rk_, 1);
    }
    int64_t failed = tally_->failedSinceFlush.exchange(0);
    if (failed > 0) {
      std::string reason;
      {
        std::lock_guard lock(tally_->mutex);
        reason = tally_->lastError;
      }
      throw SqlError(sqlstate::kIoError,
                     fmt::format("{}: {} records could not be delivered: {}", description(), failed,
                                 reason));
    }
  }

  // The handle of topic `name` on the current client.
  rd_kafka_topic_t* topicHandle(const std::string& name) {
    auto it = current_->byName.find(name);
    if (it != current_->byName.end()) return it->second;
    // Rows may name their own topic (raw format); on the embedded broker each
    // new one gets the default partition count rather than the mock's own.
    if (embedded_) embedded_->ensureTopic(name);
    rd_kafka_topic_t* rkt = rd_kafka_topic_new(rk_, name.c_str(), nullptr);
    if (!rkt) {
      throw SqlError(sqlstate::kInvalidParameterValue,
                     fmt::format("invalid topic name '{}': {}", name,
                                 rd_kafka_err2str(rd_kafka_last_error())));
    }
    current_->byName.emplace(name, rkt);
    return rkt;
  }

  std::string topic_;
  std::string bootstrap_;
  bool keyed_ = false;  // output keyed by group: keyless updates keep one partition
  EmbeddedKafka* embedded_ = nullptr;
  KafkaSinkTransaction* transaction_ = nullptr;  // exactly-once runs
  std::shared_ptr<KafkaProducer> producer_;
  rd_kafka_t* rk_ = nullptr;
  DeliveryTally* tally_ = nullptr;  // owned by the producer
  bool paused_ = false;
  int64_t rowsInBatch_ = 0;  // rows handed to the producer since the batch began
  int64_t nextMove_ = 0;     // monotonic micros: no move to the other client before
  struct HeldRow {
    Row row;
    int64_t ts;
    RowKind kind;
  };
  std::vector<HeldRow> held_;  // rows written while paused
  // Topic handles by client: a handle belongs to the client that made it.
  struct ClientTopics {
    rd_kafka_topic_t* defaultTopic = nullptr;  // topic_'s
    std::unordered_map<std::string, rd_kafka_topic_t*> byName;
  };
  std::map<rd_kafka_t*, ClientTopics> topics_;
  ClientTopics* current_ = nullptr;  // rk_'s
};

}  // namespace

int kafkaSinkProducers() { return openProducers.load(); }

int64_t kafkaSinkPromptBatches() { return promptBatches.load(); }

std::unique_ptr<SinkWriter> makeKafkaSink(const SinkSpec& sink, const std::string& bootstrap,
                                          const std::string& flowName, int task) {
  return std::make_unique<KafkaSinkWriter>(sink, bootstrap, flowName, task);
}

std::unique_ptr<SinkTransaction> makeKafkaSinkTransaction(const SinkSpec& sink,
                                                          const std::string& bootstrap,
                                                          const std::string& flowName,
                                                          const kafka::FlowKafkaIds& ids,
                                                          int64_t timeoutMs) {
  return std::make_unique<KafkaSinkTransaction>(sink, bootstrap, flowName, ids, timeoutMs);
}

std::unique_ptr<SinkWriter> makeKafkaTransactionalSink(const SinkSpec& sink,
                                                       const std::string& bootstrap,
                                                       const std::string& flowName, int task,
                                                       SinkTransaction& transaction) {
  auto* kafkaTransaction = dynamic_cast<KafkaSinkTransaction*>(&transaction);
  if (!kafkaTransaction) throw InternalError("a Kafka sink given another sink's transaction");
  return std::make_unique<KafkaSinkWriter>(sink, bootstrap, flowName, task, kafkaTransaction);
}

}  // namespace rtsql
