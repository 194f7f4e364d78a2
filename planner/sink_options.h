// A sink's WITH options as its connector read them once, at CREATE SINK
// (Connector::parseSink): the settings the planner and the code that writes
// the sink act on, typed. The catalog keeps the text for SHOW and durability.
#pragma once

#include <memory>
#include <string>

#include "planner/connector_options.h"

namespace rtsql {

struct SinkOptions {
  // A Kafka sink's 'topic': the topic it writes. Empty for a sink that
  // writes no topic.
  std::string topic = {};
  // The connector's own settings (planner/connector_options.h), or null when
  // it has none to carry.
  std::shared_ptr<const ConnectorOptions> own = nullptr;
};

}  // namespace rtsql
