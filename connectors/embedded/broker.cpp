#include "connectors/embedded/broker.h"

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <algorithm>
#include <mutex>
#include <vector>

#include "common/error.h"
#include "connectors/embedded/long_poll_proxy.h"
#include "connectors/kafka/main_thread_timers.h"

namespace rtsql {

namespace {

// Every live broker, so that a connector given only a bootstrap string can
// reach the broker object that owns it.
std::mutex& registryMutex() {
  static std::mutex m;
  return m;
}
std::vector<EmbeddedKafka*>& registry() {
  static std::vector<EmbeddedKafka*> r;
  return r;
}

// The broker logs nothing itself: the server prints its address, and the mock's
// own chatter (connections coming and going) is noise for users.
void silentMockLog(const rd_kafka_t*, int, const char*, const char*) {}

}  // namespace

struct EmbeddedKafka::Impl {
  rd_kafka_t* handle = nullptr;
  rd_kafka_mock_cluster_t* cluster = nullptr;
  std::mutex mutex;  // serializes topic creation from several connector threads
  // Every client reaches the mock through it (connectors/embedded/long_poll_proxy.h).
  std::unique_ptr<LongPollProxy> proxy;
};

namespace {

// The ports of the mock's "127.0.0.1:PORT,..." bootstrap string.
std::vector<int> bootstrapPorts(const std::string& bootstraps) {
  std::vector<int> ports;
  size_t at = 0;
  while (at < bootstraps.size()) {
    size_t end = bootstraps.find(',', at);
    if (end == std::string::npos) end = bootstraps.size();
    const std::string one = bootstraps.substr(at, end - at);
    const size_t colon = one.rfind(':');
    if (colon != std::string::npos) ports.push_back(std::stoi(one.substr(colon + 1)));
    at = end + 1;
  }
  return ports;
}

}  // namespace

EmbeddedKafka::EmbeddedKafka(EmbeddedKafkaOptions options)
    : options_(options), impl_(std::make_unique<Impl>()) {
  options_.brokers = std::max(1, options_.brokers);
  options_.defaultPartitions = std::max(1, options_.defaultPartitions);
  char errstr[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set_log_cb(conf, silentMockLog);
  // The handle only owns the mock cluster; it never talks to a broker.
  rd_kafka_conf_set(conf, "log_level", "0", errstr, sizeof errstr);
  // Its main thread idles like a client's.
  kafka::calmMainThreadTimers(conf);
  impl_->handle = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof errstr);
  if (!impl_->handle) {
    rd_kafka_conf_destroy(conf);
    throw SqlError(sqlstate::kInsufficientResources,
                   std::string("cannot start the embedded Kafka broker: ") + errstr);
  }
  impl_->cluster = rd_kafka_mock_cluster_new(impl_->handle, options_.brokers);
  if (!impl_->cluster) {
    rd_kafka_destroy(impl_->handle);
    throw SqlError(sqlstate::kInsufficientResources,
                   "cannot start the embedded Kafka broker: no loopback listener");
  }
  try {
    impl_->proxy = std::make_unique<LongPollProxy>(
        bootstrapPorts(rd_kafka_mock_cluster_bootstraps(impl_->cluster)));
  } catch (const std::exception& e) {
    rd_kafka_mock_cluster_destroy(impl_->cluster);
    rd_kafka_destroy(impl_->handle);
    throw SqlError(sqlstate::kInsufficientResources,
                   std::string("cannot start the embedded Kafka broker: ") + e.what());
  }
  bootstrap_ = impl_->proxy->bootstrap();
  std::lock_guard lock(registryMutex());
  registry().push_back(this);
}

EmbeddedKafka::~EmbeddedKafka() {
  {
    std::lock_guard lock(registryMutex());
    auto& r = registry();
    r.erase(std::remove(r.begin(), r.end(), this), r.end());
  }
  // The proxy's connections go first, then the cluster, then the handle it
  // was created on.
  impl_->proxy.reset();
  rd_kafka_mock_cluster_destroy(impl_->cluster);
  rd_kafka_destroy(impl_->handle);
}

bool EmbeddedKafka::createTopic(const std::string& name, int partitions) {
  if (partitions <= 0) partitions = options_.defaultPartitions;
  std::lock_guard lock(impl_->mutex);
  rd_kafka_resp_err_t err =
      rd_kafka_mock_topic_create(impl_->cluster, name.c_str(), partitions, 1);
  if (err == RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS) return false;
  if (err) {
    throw SqlError(sqlstate::kInvalidParameterValue,
                   "cannot create topic '" + name + "' on the embedded broker: " +
                       rd_kafka_err2str(err));
  }
  return true;
}

uint64_t EmbeddedKafka::fetchesAnsweredFromProduce() const {
  return impl_->proxy->answeredFromProduce();
}

EmbeddedKafka* EmbeddedKafka::find(const std::string& bootstrap) {
  if (bootstrap.empty()) return nullptr;
  std::lock_guard lock(registryMutex());
  for (EmbeddedKafka* k : registry()) {
    if (k->bootstrap_ == bootstrap) return k;
  }
  return nullptr;
}

}  // namespace rtsql
