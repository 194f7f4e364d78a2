// The Kafka source: one SourceTask per group of partitions. A task assigns itself
// a fixed set of partitions (never a consumer-group subscription, so a rebalance
// can never move them) and commits its offsets for the group "rtsql-<flow>" only
// when the executor ends an epoch. It is tuned for latency: the broker answers a
// fetch as soon as one byte is there, and records are handed over as they come.
#pragma once

#include <memory>
#include <string>

#include "connectors/kafka/flow_ids.h"
#include "executor/connector_provider.h"

namespace rtsql {

// Partitions of all the topics of the source's `subscribe` list, summed. On the
// embedded broker missing topics are created first. `bootstrap` is resolved
// (never 'embedded').
int kafkaSourcePartitions(const ScanSpec& scan, const std::string& bootstrap);

// Task `task` of `tasks` reads the partitions whose index, counted over the
// topics of `subscribe` in order, is `task` modulo `tasks`.
// Positions are committed to the consumer group ids.group(), and a partition
// that has none there starts from what ids.legacy holds, if anything
// (connectors/kafka/flow_ids.h).
std::unique_ptr<SourceTask> makeKafkaSource(const ScanSpec& scan, const std::string& bootstrap,
                                            const std::string& flowName,
                                            const kafka::FlowKafkaIds& ids, int task, int tasks);
// A flow of a server of its own (no cluster).
inline std::unique_ptr<SourceTask> makeKafkaSource(const ScanSpec& scan,
                                                   const std::string& bootstrap,
                                                   const std::string& flowName, int task,
                                                   int tasks) {
  return makeKafkaSource(scan, bootstrap, flowName, kafka::flowKafkaIds("", flowName), task,
                         tasks);
}

}  // namespace rtsql
