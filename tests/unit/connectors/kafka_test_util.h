// Helpers shared by the Kafka connector tests: plain librdkafka clients that
// produce and read records on a test broker, independent of the code under test,
// and the polling of a source task until its records came.
#pragma once

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/options.h"
#include "executor/connector_provider.h"

namespace rtsql::testkafka {

struct Message {
  std::string topic;
  int32_t partition = -1;
  int64_t offset = -1;
  bool hasKey = false;
  std::string key;
  std::string value;
  int64_t timestampMs = -1;
  std::vector<std::pair<std::string, std::string>> headers;
};

inline rd_kafka_t* client(rd_kafka_type_t type, const std::string& bootstrap,
                          std::vector<std::pair<std::string, std::string>> extra = {}) {
  char errstr[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  extra.insert(extra.begin(), {{"bootstrap.servers", bootstrap}, {"log_level", "0"}});
  for (const auto& [k, v] : extra) {
    if (rd_kafka_conf_set(conf, k.c_str(), v.c_str(), errstr, sizeof errstr) != RD_KAFKA_CONF_OK) {
      throw std::runtime_error(errstr);
    }
  }
  rd_kafka_t* rk = rd_kafka_new(type, conf, errstr, sizeof errstr);
  if (!rk) throw std::runtime_error(errstr);
  return rk;
}

// Produces `messages` (topic, partition, key, value, timestamp, headers) and
// waits until the broker acknowledged all of them.
inline void produce(const std::string& bootstrap, const std::vector<Message>& messages) {
  rd_kafka_t* rk = client(RD_KAFKA_PRODUCER, bootstrap, {{"linger.ms", "0"}});
  for (const Message& m : messages) {
    rd_kafka_headers_t* hdrs = rd_kafka_headers_new(m.headers.size());
    for (const auto& [k, v] : m.headers) rd_kafka_header_add(hdrs, k.data(), -1, v.data(), v.size());
    rd_kafka_resp_err_t err = rd_kafka_producev(
        rk, RD_KAFKA_V_TOPIC(m.topic.c_str()), RD_KAFKA_V_PARTITION(m.partition),
        RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
        RD_KAFKA_V_VALUE(const_cast<char*>(m.value.data()), m.value.size()),
        RD_KAFKA_V_KEY(m.hasKey ? m.key.data() : nullptr, m.hasKey ? m.key.size() : 0),
        RD_KAFKA_V_TIMESTAMP(m.timestampMs > 0 ? m.timestampMs : 0), RD_KAFKA_V_HEADERS(hdrs),
        RD_KAFKA_V_END);
    if (err) {
      rd_kafka_headers_destroy(hdrs);
      rd_kafka_destroy(rk);
      throw std::runtime_error(rd_kafka_err2str(err));
    }
  }
  rd_kafka_resp_err_t err = rd_kafka_flush(rk, 10000);
  rd_kafka_destroy(rk);
  if (err) throw std::runtime_error("produce: flush timed out");
}

// Reads partition `partition` of `topic` from the beginning until `count`
// records came or `timeoutMs` passed.
inline std::vector<Message> consume(const std::string& bootstrap, const std::string& topic,
                                    int32_t partition, size_t count, int timeoutMs = 10000) {
  rd_kafka_t* rk = client(RD_KAFKA_CONSUMER, bootstrap, {{"group.id", "test-reader"}});
  rd_kafka_poll_set_consumer(rk);
  rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(list, topic.c_str(), partition)->offset =
      RD_KAFKA_OFFSET_BEGINNING;
  rd_kafka_assign(rk, list);
  rd_kafka_topic_partition_list_destroy(list);
  std::vector<Message> out;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeoutMs);
  while (out.size() < count && std::chrono::steady_clock::now() < deadline) {
    rd_kafka_message_t* m = rd_kafka_consumer_poll(rk, 100);
    if (!m) continue;
    if (!m->err) {
      Message msg;
      msg.topic = rd_kafka_topic_name(m->rkt);
      msg.partition = m->partition;
      msg.offset = m->offset;
      msg.hasKey = m->key != nullptr;
      if (m->key) msg.key.assign(static_cast<const char*>(m->key), m->key_len);
      if (m->payload) msg.value.assign(static_cast<const char*>(m->payload), m->len);
      msg.timestampMs = rd_kafka_message_timestamp(m, nullptr);
      rd_kafka_headers_t* hdrs = nullptr;
      if (rd_kafka_message_headers(m, &hdrs) == RD_KAFKA_RESP_ERR_NO_ERROR) {
        const char* name;
        const void* val;
        size_t size;
        for (size_t i = 0; rd_kafka_header_get_all(hdrs, i, &name, &val, &size) == 0; ++i) {
          msg.headers.emplace_back(name, std::string(static_cast<const char*>(val), size));
        }
      }
      out.push_back(std::move(msg));
    }
    rd_kafka_message_destroy(m);
  }
  rd_kafka_consumer_close(rk);
  rd_kafka_destroy(rk);
  return out;
}

// The end offset (high watermark) of partition `partition` of `topic`: the
// exact count of records ever written to it, which a read that stops after a
// while cannot give.
inline int64_t endOffset(const std::string& bootstrap, const std::string& topic,
                         int32_t partition) {
  rd_kafka_t* rk = client(RD_KAFKA_CONSUMER, bootstrap, {{"group.id", "test-reader"}});
  int64_t low = -1;
  int64_t high = -1;
  rd_kafka_resp_err_t err =
      rd_kafka_query_watermark_offsets(rk, topic.c_str(), partition, &low, &high, 10000);
  rd_kafka_destroy(rk);
  if (err) throw std::runtime_error(std::string("endOffset: ") + rd_kafka_err2str(err));
  return high;
}

// Polls a source task until `want` records came or 10 s passed.
inline std::vector<SourceRecord> pollFor(SourceTask& task, size_t want) {
  std::vector<SourceRecord> out;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (out.size() < want && std::chrono::steady_clock::now() < deadline) {
    task.poll(out, want - out.size(), 100);
  }
  return out;
}

// A bare librdkafka mock cluster of one broker: a broker rtsql does not own
// (unlike EmbeddedKafka), on which a test may make topics fail.
class MockCluster {
 public:
  MockCluster() {
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    char errstr[256];
    rd_kafka_conf_set(conf, "log_level", "0", errstr, sizeof errstr);
    rk_ = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof errstr);
    if (!rk_) throw std::runtime_error(errstr);
    mc_ = rd_kafka_mock_cluster_new(rk_, 1);
    bootstrap_ = rd_kafka_mock_cluster_bootstraps(mc_);
  }
  ~MockCluster() {
    rd_kafka_mock_cluster_destroy(mc_);
    rd_kafka_destroy(rk_);
  }
  MockCluster(const MockCluster&) = delete;
  MockCluster& operator=(const MockCluster&) = delete;

  const std::string& bootstrap() const { return bootstrap_; }
  rd_kafka_mock_cluster_t* get() const { return mc_; }

 private:
  rd_kafka_t* rk_ = nullptr;
  rd_kafka_mock_cluster_t* mc_ = nullptr;
  std::string bootstrap_;
};

// Options with made-up statement positions: key i at 100*i, its value at 100*i+50.
inline Options makeOptions(const std::vector<std::pair<std::string, std::string>>& kv) {
  std::vector<OptionEntry> entries;
  size_t pos = 100;
  for (const auto& [k, v] : kv) {
    entries.push_back(OptionEntry{k, v, pos, pos + 50});
    pos += 100;
  }
  return Options(std::move(entries));
}

}  // namespace rtsql::testkafka
