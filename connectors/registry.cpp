// The builtin connector list and the lookups over it (see registry.h).
#include "connectors/registry.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/error.h"
#include "connectors/blackhole/blackhole_connector.h"
#include "connectors/datagen/datagen_connector.h"
#include "connectors/file/file_connector.h"
#include "connectors/http/http_connector.h"
#include "connectors/kafka/kafka_connector.h"
#include "connectors/kinesis/kinesis_connector.h"
#include "connectors/nexmark/nexmark_connector.h"

namespace rtsql {

const ConnectorRegistry& ConnectorRegistry::builtin() {
  static const ConnectorRegistry registry = [] {
    ConnectorRegistry r;
    r.add(std::make_unique<KafkaConnector>());
    r.add(std::make_unique<DatagenConnector>());
    r.add(std::make_unique<FileConnector>());
    r.add(std::make_unique<NexmarkConnector>());
    r.add(std::make_unique<BlackholeConnector>());
    r.add(std::make_unique<HttpConnector>());
    r.add(std::make_unique<KinesisConnector>());
    return r;
  }();
  return registry;
}

void ConnectorRegistry::add(std::unique_ptr<Connector> connector) {
  if (find(connector->name())) {
    throw InternalError(fmt::format("connector '{}' registered twice", connector->name()));
  }
  connectors_.push_back(std::move(connector));
}

const Connector* ConnectorRegistry::find(std::string_view name) const {
  for (const auto& c : connectors_) {
    if (iequals(c->name(), name)) return c.get();
  }
  return nullptr;
}

std::vector<std::string_view> ConnectorRegistry::names(ConnectorRole role) const {
  std::vector<std::string_view> out;
  for (const auto& c : connectors_) {
    if (c->serves(role)) out.push_back(c->name());
  }
  return out;
}

const Connector& ConnectorRegistry::require(std::string_view name, ConnectorRole role,
                                            const Options& options, size_t stmtPos) const {
  const Connector* c = find(name);
  if (c && c->serves(role)) return *c;
  const OptionEntry* e = options.find("connector");
  size_t pos = e && e->valuePos != SqlError::npos ? e->valuePos : stmtPos;
  if (role == ConnectorRole::Table) {
    throw SqlError(sqlstate::kInvalidParameterValue,
                   fmt::format("invalid value '{}' for option 'connector' of a table",
                               e ? std::string_view(e->value) : name),
                   pos,
                   fmt::format("static tables are loaded with connector = '{}', or filled with INSERT",
                               fmt::join(names(role), "' or '")));
  }
  throw SqlError(sqlstate::kInvalidParameterValue,
                 fmt::format("unknown {} connector '{}'",
                             role == ConnectorRole::Source ? "source" : "sink", name),
                 pos, fmt::format("available: {}", fmt::join(names(role), ", ")));
}

void validateSourceOptions(const std::string& connector, const Options& options, size_t stmtPos) {
  ConnectorRegistry::builtin()
      .require(connector, ConnectorRole::Source, options, stmtPos)
      .validateSource(options, stmtPos);
}

void validateSinkOptions(const std::string& connector, const Options& options, size_t stmtPos) {
  ConnectorRegistry::builtin()
      .require(connector, ConnectorRole::Sink, options, stmtPos)
      .validateSink(options, stmtPos);
}

SourceOptions sourceOptionsOf(const ScanSpec& scan) {
  if (scan.parsed) return *scan.parsed;
  const Connector* c = ConnectorRegistry::builtin().find(scan.connector);
  return c ? c->parseSource(scan.options) : parseCommonSourceOptions(scan.options);
}

SinkOptions sinkOptionsOf(const SinkSpec& sink) {
  if (sink.parsed) return *sink.parsed;
  const Connector* c = ConnectorRegistry::builtin().find(sink.connector);
  return c ? c->parseSink(sink.options) : parseCommonSinkOptions(sink.options);
}

ServerSideOptions serverSideOptions(const std::string& connector, const Options& options) {
  const Connector* c = ConnectorRegistry::builtin().find(connector);
  return c ? c->serverSideOptions(options) : ServerSideOptions{};
}

}  // namespace rtsql
