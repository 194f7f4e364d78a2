// The topic a Kafka sink writes into, created with a chosen partition count:
// `'topic.partitions' = 'N'` on CREATE SINK. On the embedded broker, which no
// external admin client can create topics on, and on Apache Kafka alike, the
// flow creates the topic when it starts if it is missing, and refuses to start
// when the topic exists with another partition count (a keyed sink's rows would
// otherwise land in other partitions than its readers expect).
#pragma once

#include <librdkafka/rdkafka.h>

#include <string>
#include <utility>
#include <vector>

#include "common/options.h"

namespace rtsql::kafka {

// The option's name, its bounds and its value (-1 when the sink does not set it).
inline constexpr const char* kTopicPartitionsOption = "topic.partitions";
inline constexpr int kMaxTopicPartitions = 10000;
int sinkTopicPartitions(const Options& options);

// Makes sure `topic` exists with `partitions` partitions, through the client
// `rk` (any handle type). Throws 55000 when it exists with another count, and
// 08006 when the broker cannot be reached or refuses the creation within
// kMetadataTimeoutMs.
void ensureSinkTopic(rd_kafka_t* rk, const std::string& bootstrap, const std::string& topic,
                     int partitions);

// Creates `topic` with `partitions` partitions and the topic-level `configs`
// (cleanup.policy=compact, say) when the broker does not have it; returns
// whether it did. On the embedded broker the configs are not kept (it keeps
// every record). Throws 08006 as ensureSinkTopic does.
using TopicConfigs = std::vector<std::pair<std::string, std::string>>;
bool ensureTopicExists(rd_kafka_t* rk, const std::string& bootstrap, const std::string& topic,
                       int partitions, const TopicConfigs& configs);

// An internal topic of rtsqld (a cluster's catalog or slots), ready to use:
// created as ensureTopicExists does, then looked up until the broker's
// metadata knows it (a topic just created, here or by another node starting
// at the same moment, may be unknown for a while), for up to `waitMs`. A
// broker that takes no admin requests (another rtsqld's embedded one) creates
// the topic on demand with its own partition count and no configs: then
// `notCreated` says why ours failed, for the caller to log. Throws 08006 when
// the topic cannot be had, with `hint`.
struct InternalTopic {
  int partitions = 0;
  std::string notCreated;
};
InternalTopic ensureInternalTopic(rd_kafka_t* rk, const std::string& bootstrap,
                                  const std::string& topic, int partitions,
                                  const TopicConfigs& configs, int waitMs, const std::string& hint);
// Deletes internal topic `topic` (a dropped flow's state copy or exchange
// topic), and asks again until the broker no longer lists it (logged), for
// up to `waitMs`. Returns false when the broker takes no admin requests (an
// embedded one: the topic stays) or did not have the topic. Throws 08006
// when the topic is still there at the end.
inline constexpr int kDeleteTopicWaitMs = 30000;
bool deleteInternalTopic(rd_kafka_t* rk, const std::string& bootstrap, const std::string& topic,
                         int waitMs = kDeleteTopicWaitMs);

}  // namespace rtsql::kafka
