// The defaults of the Connector interface: a role's method a connector does
// not override is only reached when the registry's role check was bypassed,
// which is a bug in the server, not a user's error.
#include "connectors/connector.h"

#include <fmt/format.h>

#include "common/error.h"
#include "connectors/format/decoders.h"
#include "connectors/kafka/dead_letter.h"
#include "connectors/restore_position.h"
#include "planner/sink_changelog.h"

namespace rtsql {

namespace {

[[noreturn]] void notServed(const Connector& c, const char* what) {
  throw InternalError(fmt::format("connector '{}' has no {}", c.name(), what));
}

}  // namespace

void Connector::validateSource(const Options&, size_t) const { notServed(*this, "sources"); }

void Connector::validateSink(const Options&, size_t) const { notServed(*this, "sinks"); }

void Connector::validateTable(const Options&, size_t) const { notServed(*this, "tables"); }

SourceOptions parseCommonSourceOptions(const Options& options) {
  SourceOptions parsed;
  parsed.onError = parseRowErrorPolicy(options);
  parsed.failOnDataLoss = failOnDataLoss(options);
  if (options.has("maxPartitions")) {
    parsed.maxPartitions = static_cast<int>(options.getInt("maxPartitions", 1, 1, 1 << 20));
  }
  // The connectors that decode records default to json (Connector::
  // sourceFormat).
  parsed.decode = decodeOptions(options.getString("format", "json"), options);
  if (parsed.onError == RowErrorPolicy::DeadLetter) {
    parsed.deadLetterTopic = options.getString(kafka::kDeadLetterTopicOption);
    parsed.deadLetterBootstrap = options.getString(kafka::kDeadLetterBootstrapOption);
  }
  return parsed;
}

SourceOptions Connector::parseSource(const Options& options) const {
  return parseCommonSourceOptions(options);
}

SinkOptions parseCommonSinkOptions(const Options& options) {
  SinkOptions parsed;
  parsed.mode = sinkMode(options);
  parsed.csvDelimiter = format::csvDelimiter(options);
  return parsed;
}

SinkOptions Connector::parseSink(const Options& options) const {
  return parseCommonSinkOptions(options);
}

Schema Connector::bindSourceSchema(const ast::CreateSource&, const Options&) const {
  notServed(*this, "sources");
}

int Connector::sourcePartitions(const ScanSpec&, const ConnectorEnv&) const {
  notServed(*this, "sources");
}

std::unique_ptr<SourceTask> Connector::openSource(const ScanSpec&, const ConnectorEnv&,
                                                  const std::string&, int, int) const {
  notServed(*this, "sources");
}

std::unique_ptr<SinkWriter> Connector::openSink(const SinkSpec&, const ConnectorEnv&,
                                                const std::string&, int) const {
  notServed(*this, "sinks");
}

std::unique_ptr<SinkTransaction> Connector::openSinkTransaction(const SinkSpec&, const ConnectorEnv&,
                                                                const std::string&, int64_t) const {
  notServed(*this, "sink transactions");
}

std::unique_ptr<SinkWriter> Connector::openTransactionalSink(const SinkSpec&, const ConnectorEnv&,
                                                             const std::string&, int,
                                                             SinkTransaction&) const {
  notServed(*this, "sink transactions");
}

std::vector<Row> Connector::loadTable(const Schema&, const Options&, size_t) const {
  notServed(*this, "tables");
}

}  // namespace rtsql
