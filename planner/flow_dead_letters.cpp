// A flow's dead-letter topics (see flow_dead_letters.h).
#include "planner/flow_dead_letters.h"

#include <fmt/format.h>

#include <vector>

#include "common/error.h"
#include "common/kafka_topic_name.h"
#include "planner/catalog.h"

namespace rtsql {

namespace {

bool blank(const std::string& s) {
  return s.find_first_not_of(" \t") == std::string::npos;
}

}  // namespace

void checkFlowDeadLetters(const FlowDeadLetterOptions& which, bool deadLetters, const SinkDef& sink,
                          const Options& flowOptions) {
  const OptionEntry* mode = flowOptions.find(which.mode);
  const OptionEntry* topic = flowOptions.find(which.topic);
  const OptionEntry* bootstrap = flowOptions.find(which.bootstrap);
  if (!deadLetters) {
    for (const OptionEntry* e : {topic, bootstrap}) {
      if (!e) continue;
      throw SqlError(sqlstate::kInvalidParameterValue,
                     fmt::format("'{}' applies only with {}", e->key, which.value), e->keyPos,
                     fmt::format("add {}, or drop '{}'", which.value, e->key));
    }
    return;
  }
  if (!topic) {
    throw SqlError(sqlstate::kInvalidParameterValue,
                   fmt::format("{} needs the option '{}'", which.value, which.topic),
                   mode->valuePos,
                   fmt::format("add '{}' = '<topic>': the Kafka topic that receives {}",
                               which.topic, which.rows));
  }
  if (blank(topic->value)) {
    throw SqlError(sqlstate::kInvalidParameterValue,
                   fmt::format("option '{}' is empty", which.topic), topic->valuePos,
                   fmt::format("name the Kafka topic that receives {}", which.rows));
  }
  if (!validKafkaTopicName(topic->value)) {
    throw SqlError(sqlstate::kInvalidParameterValue,
                   fmt::format("'{}' is not a valid Kafka topic name", topic->value),
                   topic->valuePos, kKafkaTopicNameHint);
  }
  const bool kafkaSink = sink.traits.kafkaCluster;
  if (kafkaSink && bootstrap) {
    throw SqlError(sqlstate::kInvalidParameterValue,
                   fmt::format("{} go to the cluster of the Kafka sink \"{}\"; '{}' applies "
                               "only to a flow whose sink is not Kafka",
                               which.shortRows, sink.name, which.bootstrap),
                   bootstrap->keyPos,
                   fmt::format("drop '{}': '{}' is written on the sink's cluster, "
                               "with the sink's kafka.* settings",
                               which.bootstrap, which.topic));
  }
  if (!kafkaSink && (!bootstrap || blank(bootstrap->value))) {
    throw SqlError(sqlstate::kInvalidParameterValue,
                   fmt::format("the flow's sink \"{}\" is '{}', not Kafka: {} needs '{}'",
                               sink.name, sink.connector, which.value, which.bootstrap),
                   bootstrap ? bootstrap->valuePos : mode->valuePos,
                   fmt::format("add '{}' = 'host:port': the Kafka cluster of '{}'", which.bootstrap,
                               which.topic));
  }
}

FlowDeadLetterTopic readFlowDeadLetterTopic(const FlowDeadLetterOptions& which, bool deadLetters,
                                            const Options& flowOptions) {
  if (!deadLetters) return {};
  return {flowOptions.getString(which.topic), flowOptions.getString(which.bootstrap)};
}

Options flowDeadLetterKafkaOptions(const PhysicalPlan& plan, const FlowDeadLetterTopic& target) {
  std::vector<OptionEntry> entries;
  if (plan.sink.traits.kafkaCluster) {
    for (const OptionEntry& e : plan.sink.options.entries()) {
      if (e.key.size() > 6 && iequals(std::string_view(e.key).substr(0, 6), "kafka.")) {
        entries.push_back(e);
      }
    }
  } else {
    entries.push_back({"kafka.bootstrap.servers", target.bootstrap});
  }
  return Options(std::move(entries));
}

}  // namespace rtsql
