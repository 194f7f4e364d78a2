#include "server/cluster/progress.h"

#include <fmt/format.h>
#include <librdkafka/rdkafka.h>
#include <pthread.h>

#include <atomic>
#include <map>
#include <mutex>
#include <thread>
#include <utility>

#include "common/clock.h"
#include "common/error.h"
#include "common/log.h"
#include "common/options.h"
#include "common/schema.h"
#include "connectors/kafka/client.h"
#include "connectors/kafka/sink_topic.h"
#include "executor/metrics/recent_latency.h"

namespace rtsql {

namespace {

constexpr int kProgressPollMs = 200;
constexpr int kProgressTopicWaitMs = 15000;
// A topic that could not be had is tried again after this long.
constexpr int64_t kRetryMicros = 30'000'000;
// Where a node starts following: the last records, enough for every node's
// flows of the last intervals.
constexpr int64_t kTailRecords = 5000;
// A node publishes this long after an interval ends, when every task has
// turned its interval over.
constexpr int64_t kPublishDelayMicros = 1'000'000;

}  // namespace

std::string clusterProgressTopic(const std::string& cluster) {
  return "_rtsql-" + cluster + "-progress";
}

struct ClusterProgress::Impl {
  ClusterOptions options;
  std::string topic;
  std::function<std::vector<NodeProgress>()> gather;
  std::thread thread;
  std::atomic<bool> stopping{false};

  mutable std::mutex mu;
  // The newest record of each (node, lower-cased flow), other nodes only.
  std::map<std::pair<std::string, std::string>, NodeProgress> newest;

  kafka::HandlePtr producer;
  kafka::HandlePtr consumer;
  bool complained = false;

  // Makes the clients and the topic; false (logged once) when the broker
  // cannot be had now.
  bool open() {
    try {
      producer = kafka::newInternalClient(
          RD_KAFKA_PRODUCER, options.bootstrap,
          {{"client.id", "rtsqld-progress"}, {"linger.ms", "20"}, {"compression.type", "lz4"}},
          {{"message.timeout.ms", "10000"}});
      kafka::InternalTopic t = kafka::ensureInternalTopic(
          producer.get(), options.bootstrap, topic, 1,
          {{"cleanup.policy", "delete"}, {"retention.ms", "60000"}, {"segment.ms", "60000"}},
          kProgressTopicWaitMs, "create the topic with one partition, or check the broker's ACLs");
      (void)t;
      const std::string group = "_rtsql-" + options.name + "-progress-reader";
      consumer = kafka::newInternalClient(RD_KAFKA_CONSUMER, options.bootstrap,
                                          {{"client.id", "rtsqld-progress"}},
                                          {{"group.id", group.c_str()},
                                           {"fetch.wait.max.ms", "500"}});
      rd_kafka_topic_partition_list_t* parts = rd_kafka_topic_partition_list_new(1);
      rd_kafka_topic_partition_list_add(parts, topic.c_str(), 0)->offset =
          RD_KAFKA_OFFSET_TAIL(kTailRecords);
      rd_kafka_resp_err_t err = rd_kafka_assign(consumer.get(), parts);
      rd_kafka_topic_partition_list_destroy(parts);
      if (err) throw SqlError(sqlstate::kConnectionFailure, rd_kafka_err2str(err));
      if (complained)
        logLine(fmt::format("cluster: progress of other nodes is read from {}", topic));
      return true;
    } catch (const std::exception& e) {
      producer.reset();
      consumer.reset();
      if (!complained) {
        const auto* sqlError = dynamic_cast<const SqlError*>(&e);
        logLine(fmt::format(
            "cluster: cannot share progress through {} ({}); SHOW PROGRESS covers this node "
            "only until it can",
            topic, sqlError ? sqlError->message() : e.what()));
        complained = true;
      }
      return false;
    }
  }

  void follow(const rd_kafka_message_t* m) {
    if (m->err || !m->payload) return;
    std::optional<NodeProgress> p =
        decodeNodeProgress(std::string_view(static_cast<const char*>(m->payload), m->len));
    if (!p || p->node == options.node) return;
    std::lock_guard lock(mu);
    NodeProgress& slot = newest[{p->node, p->flow}];
    if (p->reportedMicros >= slot.reportedMicros) slot = std::move(*p);
  }

  void publish() {
    {
      // What nodes published of flows they no longer run (or before they
      // died) goes after a while; the map holds what is fresh, and a little.
      const int64_t old = nowMicros() - 4 * kFreshMicros;
      std::lock_guard lock(mu);
      std::erase_if(newest, [&](const auto& e) { return e.second.reportedMicros < old; });
    }
    std::vector<NodeProgress> mine;
    try {
      mine = gather();
    } catch (const std::exception& e) {
      logLine(fmt::format("cluster: cannot gather progress: {}", e.what()));
      return;
    }
    for (const NodeProgress& p : mine) {
      const std::string value = encodeNodeProgress(p);
      const std::string key = options.node + "/" + p.flow;
      // A full queue (the broker away) drops the record: the next interval's
      // replaces it.
      (void)kafka::produceRecord(producer.get(), topic, 0, key, &value, 0);
    }
  }

  void run() {
    int64_t retryAt = 0;
    int64_t publishAt = 0;
    while (!stopping.load()) {
      if (!consumer) {
        if (monotonicMicros() < retryAt) {
          std::this_thread::sleep_for(std::chrono::milliseconds(kProgressPollMs));
          continue;
        }
        if (!open()) {
          retryAt = monotonicMicros() + kRetryMicros;
          continue;
        }
      }
      rd_kafka_message_t* m = rd_kafka_consumer_poll(consumer.get(), kProgressPollMs);
      if (m) {
        follow(m);
        rd_kafka_message_destroy(m);
      }
      rd_kafka_poll(producer.get(), 0);
      const int64_t now = nowMicros();
      if (now >= publishAt) {
        if (publishAt != 0) publish();
        publishAt = (now / RecentLatency::kIntervalMicros + 1) * RecentLatency::kIntervalMicros +
                    kPublishDelayMicros;
      }
    }
    if (producer) rd_kafka_flush(producer.get(), 2000);
    if (consumer) rd_kafka_consumer_close(consumer.get());
  }
};

ClusterProgress::ClusterProgress(ClusterOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->topic = clusterProgressTopic(options.name);
  impl_->options = std::move(options);
}

ClusterProgress::~ClusterProgress() {
  stop();
}

void ClusterProgress::start(std::function<std::vector<NodeProgress>()> gather) {
  impl_->gather = std::move(gather);
  impl_->thread = std::thread([this] { impl_->run(); });
  pthread_setname_np(impl_->thread.native_handle(), "cluster-progress");
}

void ClusterProgress::stop() {
  if (impl_->stopping.exchange(true)) return;
  if (impl_->thread.joinable()) impl_->thread.join();
  impl_->gather = nullptr;
}

std::vector<NodeProgress> ClusterProgress::of(const std::string& flow,
                                              const std::set<std::string>& nodes) const {
  const std::string name = toLower(flow);
  const int64_t now = nowMicros();
  std::vector<NodeProgress> out;
  std::lock_guard lock(impl_->mu);
  for (const std::string& node : nodes) {
    if (node == impl_->options.node) continue;
    auto it = impl_->newest.find({node, name});
    if (it == impl_->newest.end() || now - it->second.reportedMicros > kFreshMicros) continue;
    out.push_back(it->second);
  }
  return out;
}

}  // namespace rtsql
