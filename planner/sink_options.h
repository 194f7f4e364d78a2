// A sink's WITH options as its connector read them once, at CREATE SINK
// (Connector::parseSink): the settings the planner and the code that writes
// the sink act on, typed. The catalog keeps the text for SHOW and durability,
// and a restored catalog's sinks are read again from it the same way.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "planner/connector_options.h"

namespace rtsql {

// A sink's 'mode' (planner/sink_changelog.h): how it writes a stream that is
// not append-only.
enum class SinkMode { Update, Append, Upsert };

struct SinkOptions {
  // 'mode', SinkMode::Update when not set.
  SinkMode mode = SinkMode::Update;
  // A Kafka sink's 'topic': the topic it writes. Empty for a sink that
  // writes no topic.
  std::string topic = {};
  // A Kafka sink's 'topic.partitions': the partitions it creates its topic
  // with when the topic is missing; -1 when not set.
  int topicPartitions = -1;
  // 'csv.delimiter', for a csv sink.
  char csvDelimiter = ',';
  // 'key': the column of the query's output that keys each record; unset
  // when the flow's key (or none) does.
  std::optional<std::string> key = std::nullopt;
  // 'protobuf.framing' = 'confluent': each protobuf record opens with the
  // schema registry's framing.
  bool protobufConfluent = false;
  // The connector's own settings (planner/connector_options.h), or null when
  // it has none to carry.
  std::shared_ptr<const ConnectorOptions> own = nullptr;
};

}  // namespace rtsql
