#include "connectors/kafka/sink.h"

#include <fmt/format.h>

#include <atomic>
#include <mutex>
#include <unordered_map>

#include "common/error.h"
#include "connectors/embedded/broker.h"
#include "connectors/format/codec.h"
#include "connectors/kafka/client.h"

namespace rtsql {

namespace {

// How long write() lets the client drain a full queue before trying again. Each
// wait is short so that delivery reports keep being served meanwhile.
constexpr int kQueueFullWaitMs = 5;

class KafkaSinkWriter final : public SinkWriter {
 public:
  KafkaSinkWriter(const SinkSpec& sink, const std::string& bootstrap, const std::string& flowName,
                  int task)
      : topic_(sink.options.getString("topic")),
        bootstrap_(bootstrap),
        keyed_(sink.keyColumn >= 0 || !sink.keyColumns.empty()) {
    if (topic_.empty() && sink.topicColumn < 0) {
      throw SqlError(sqlstate::kInvalidParameterValue,
                     "option 'topic' of sink '" + sink.name + "' is required");
    }
    embedded_ = EmbeddedKafka::find(bootstrap_);
    if (embedded_ && !topic_.empty()) embedded_->ensureTopic(topic_);
    encoder_ = makeEncoder(sink);

    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    try {
      kafka::installLogging(conf);
      rd_kafka_conf_set_dr_msg_cb(conf, &KafkaSinkWriter::onDelivery);
      rd_kafka_conf_set_opaque(conf, this);
      // Latency: send each record at once, without Nagle holding small packets.
      // Safety: every replica acknowledges, and retries never duplicate.
      kafka::setProperty(conf, "linger.ms", "0", SqlError::npos);
      kafka::setProperty(conf, "socket.nagle.disable", "true", SqlError::npos);
      kafka::setProperty(conf, "acks", "all", SqlError::npos);
      kafka::setProperty(conf, "enable.idempotence", "true", SqlError::npos);
      kafka::setProperty(conf, "batch.num.messages", "1000", SqlError::npos);
      kafka::setProperty(conf, "client.id", fmt::format("rtsql-{}-sink-{}", flowName, task),
                         SqlError::npos);
      kafka::applyUserProperties(conf, sink.options, false);
      kafka::setProperty(conf, "bootstrap.servers", bootstrap_, SqlError::npos);
    } catch (...) {
      rd_kafka_conf_destroy(conf);
      throw;
    }
    rk_ = kafka::newHandle(RD_KAFKA_PRODUCER, conf);
    if (!topic_.empty()) defaultTopic_ = topicHandle(topic_);
  }

  ~KafkaSinkWriter() override {
    // The executor flushes before closing; whatever is still queued here belongs
    // to a failed or cancelled flow and is replayed from the last checkpoint.
    rd_kafka_flush(rk_.get(), 1000);
    rd_kafka_purge(rk_.get(), RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
    rd_kafka_poll(rk_.get(), 0);
    for (auto& [name, rkt] : topics_) rd_kafka_topic_destroy(rkt);
  }

  void write(const Row& row, int64_t sourceTimestampMicros) override {
    encoder_->encode(row, rec_);
    rd_kafka_topic_t* rkt = rec_.topic.empty() ? defaultTopic_ : topicHandle(rec_.topic);
    if (!rkt) {
      // A raw sink without a 'topic' option and a row without a topic.
      failDelivery("a row has no topic and the sink has no 'topic' option");
      return;
    }
    rd_kafka_headers_t* headers = nullptr;
    if (!rec_.headers.empty()) {
      headers = rd_kafka_headers_new(rec_.headers.size());
      for (const auto& [k, v] : rec_.headers) {
        rd_kafka_header_add(headers, k.data(), static_cast<ssize_t>(k.size()), v.data(), v.size());
      }
    }
    rd_kafka_vu_t vus[6];
    size_t n = 0;
    vus[n].vtype = RD_KAFKA_VTYPE_RKT;
    vus[n++].u.rkt = rkt;
    vus[n].vtype = RD_KAFKA_VTYPE_MSGFLAGS;
    vus[n++].u.i = RD_KAFKA_MSG_F_COPY;
    vus[n].vtype = RD_KAFKA_VTYPE_VALUE;
    vus[n].u.mem.ptr = rec_.hasValue ? const_cast<char*>(rec_.value.data()) : nullptr;
    vus[n++].u.mem.size = rec_.hasValue ? rec_.value.size() : 0;
    if (rec_.hasKey) {
      vus[n].vtype = RD_KAFKA_VTYPE_KEY;
      vus[n].u.mem.ptr = const_cast<char*>(rec_.key.data());
      vus[n++].u.mem.size = rec_.key.size();
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
    for (;;) {
      rd_kafka_error_t* error = rd_kafka_produceva(rk_.get(), vus, n);
      if (!error) break;  // the headers now belong to the message
      rd_kafka_resp_err_t code = rd_kafka_error_code(error);
      std::string reason = rd_kafka_error_string(error);
      rd_kafka_error_destroy(error);
      if (code == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
        // Backpressure: wait for acknowledgements to make room, never drop.
        rd_kafka_poll(rk_.get(), kQueueFullWaitMs);
        continue;
      }
      if (headers) rd_kafka_headers_destroy(headers);
      failDelivery(reason);
      break;
    }
    // Serves delivery reports without waiting.
    rd_kafka_poll(rk_.get(), 0);
  }

  void flush(int timeoutMs) override {
    rd_kafka_resp_err_t err = rd_kafka_flush(rk_.get(), timeoutMs);
    if (err == RD_KAFKA_RESP_ERR__TIMED_OUT) {
      throw SqlError(sqlstate::kConnectionFailure,
                     fmt::format("{}: {} records not acknowledged by {} within {} ms",
                                 description(), rd_kafka_outq_len(rk_.get()), bootstrap_,
                                 timeoutMs),
                     SqlError::npos, "check that the Kafka broker is running and reachable");
    }
    int64_t failed = failedSinceFlush_.exchange(0);
    if (failed > 0) {
      std::string reason;
      {
        std::lock_guard lock(errorMutex_);
        reason = lastError_;
      }
      throw SqlError(sqlstate::kIoError,
                     fmt::format("{}: {} records could not be delivered: {}", description(), failed,
                                 reason));
    }
  }

  int64_t deliveryErrors() const override { return deliveryErrors_.load(); }

  std::string description() const override {
    return "KafkaSink[" + (topic_.empty() ? std::string("<topic column>") : topic_) + "]";
  }

 private:
  static void onDelivery(rd_kafka_t*, const rd_kafka_message_t* m, void* opaque) {
    if (!m->err) return;
    auto* self = static_cast<KafkaSinkWriter*>(opaque);
    self->failDelivery(fmt::format("topic '{}': {}", rd_kafka_topic_name(m->rkt),
                                   rd_kafka_err2str(m->err)));
  }

  void failDelivery(std::string reason) {
    deliveryErrors_.fetch_add(1);
    failedSinceFlush_.fetch_add(1);
    std::lock_guard lock(errorMutex_);
    lastError_ = std::move(reason);
  }

  rd_kafka_topic_t* topicHandle(const std::string& name) {
    auto it = topics_.find(name);
    if (it != topics_.end()) return it->second;
    // Rows may name their own topic (raw format); on the embedded broker each
    // new one gets the default partition count rather than the mock's own.
    if (embedded_) embedded_->ensureTopic(name);
    rd_kafka_topic_t* rkt = rd_kafka_topic_new(rk_.get(), name.c_str(), nullptr);
    if (!rkt) {
      throw SqlError(sqlstate::kInvalidParameterValue,
                     fmt::format("invalid topic name '{}': {}", name,
                                 rd_kafka_err2str(rd_kafka_last_error())));
    }
    topics_.emplace(name, rkt);
    return rkt;
  }

  std::string topic_;
  std::string bootstrap_;
  bool keyed_ = false;  // output keyed by group: keyless updates keep one partition
  EmbeddedKafka* embedded_ = nullptr;
  std::unique_ptr<RecordEncoder> encoder_;
  kafka::HandlePtr rk_;
  rd_kafka_topic_t* defaultTopic_ = nullptr;
  std::unordered_map<std::string, rd_kafka_topic_t*> topics_;
  EncodedRecord rec_;

  std::atomic<int64_t> deliveryErrors_{0};
  std::atomic<int64_t> failedSinceFlush_{0};
  std::mutex errorMutex_;  // delivery reports may be served inside rd_kafka_flush
  std::string lastError_;
};

}  // namespace

std::unique_ptr<SinkWriter> makeKafkaSink(const SinkSpec& sink, const std::string& bootstrap,
                                          const std::string& flowName, int task) {
  return std::make_unique<KafkaSinkWriter>(sink, bootstrap, flowName, task);
}

}  // namespace rtsql
