// The embedded Kafka broker behind `rtsqld --embedded-kafka` and
// `'kafka.bootstrap.servers' = 'embedded'`. It wraps librdkafka's mock cluster:
// a real Kafka-protocol TCP listener on 127.0.0.1 (a random free port), so any
// Kafka client in any process (kcat, confluent_kafka, a JVM client) can produce
// to it and consume from it. Data lives in memory and is lost at shutdown.
//
// The mock creates a topic on its own when a client asks for the metadata of a
// topic it does not know, always with 4 partitions. rtsql creates the topics it
// touches first (the topics of a source or sink on this broker) with
// `defaultPartitions` through ensureTopic(), before any of its clients asks.
#pragma once

#include <memory>
#include <string>

namespace rtsql {

struct EmbeddedKafkaOptions {
  int brokers = 1;
  int defaultPartitions = 1;  // partitions of the topics rtsql creates on demand
};

class EmbeddedKafka {
 public:
  explicit EmbeddedKafka(EmbeddedKafkaOptions options = {});
  ~EmbeddedKafka();
  EmbeddedKafka(const EmbeddedKafka&) = delete;
  EmbeddedKafka& operator=(const EmbeddedKafka&) = delete;

  // "127.0.0.1:PORT" (a comma list with several brokers).
  const std::string& bootstrap() const { return bootstrap_; }
  int defaultPartitions() const { return options_.defaultPartitions; }

  // Creates `name` with `partitions` partitions (defaultPartitions when <= 0).
  // Returns false when the topic already exists (its partitions are unchanged).
  bool createTopic(const std::string& name, int partitions = -1);
  // createTopic() with the default partition count, ignoring an existing topic.
  void ensureTopic(const std::string& name) { createTopic(name, -1); }

  // How many held fetches its proxy answered with a batch just written
  // (connectors/embedded/long_poll_proxy.h).
  uint64_t fetchesAnsweredFromProduce() const;

  // The running embedded broker whose bootstrap string is `bootstrap`, or null.
  // Connectors use it to create topics before their clients look them up.
  static EmbeddedKafka* find(const std::string& bootstrap);

 private:
  struct Impl;
  EmbeddedKafkaOptions options_;
  std::unique_ptr<Impl> impl_;
  std::string bootstrap_;
};

}  // namespace rtsql
