// DefaultConnectorProvider (see provider.h): each call goes to the connector
// the spec names.
#include "connectors/provider.h"

#include "common/error.h"
#include "connectors/kafka/dead_letter.h"
#include "connectors/kafka/exchange_topic.h"

namespace rtsql {

// Specs come from the catalog, whose connectors were checked at CREATE; an
// unknown one here (a catalog written by another version) is reported without
// a statement position.
const Connector& DefaultConnectorProvider::source(const ScanSpec& scan) const {
  return registry_.require(scan.connector, ConnectorRole::Source, scan.options, SqlError::npos);
}

const Connector& DefaultConnectorProvider::sink(const SinkSpec& spec) const {
  return registry_.require(spec.connector, ConnectorRole::Sink, spec.options, SqlError::npos);
}

int DefaultConnectorProvider::sourcePartitions(const ScanSpec& scan) {
  return source(scan).sourcePartitions(scan, env_);
}

std::unique_ptr<SourceTask> DefaultConnectorProvider::openSource(const ScanSpec& scan,
                                                                 const std::string& flowName,
                                                                 int task, int tasks) {
  return source(scan).openSource(scan, env_, flowName, task, tasks);
}

std::unique_ptr<SinkWriter> DefaultConnectorProvider::openSink(const SinkSpec& spec,
                                                               const std::string& flowName,
                                                               int task) {
  return sink(spec).openSink(spec, env_, flowName, task);
}

std::unique_ptr<SinkTransaction> DefaultConnectorProvider::openSinkTransaction(
    const SinkSpec& spec, const std::string& flowName, int64_t timeoutMs) {
  const Connector* c = registry_.find(spec.connector);
  if (!c || !c->exactlyOnce()) return ConnectorProvider::openSinkTransaction(spec, flowName, timeoutMs);
  return c->openSinkTransaction(spec, env_, flowName, timeoutMs);
}

std::unique_ptr<SinkWriter> DefaultConnectorProvider::openTransactionalSink(
    const SinkSpec& spec, const std::string& flowName, int task, SinkTransaction& transaction) {
  const Connector* c = registry_.find(spec.connector);
  if (!c || !c->exactlyOnce()) {
    return ConnectorProvider::openTransactionalSink(spec, flowName, task, transaction);
  }
  return c->openTransactionalSink(spec, env_, flowName, task, transaction);
}

std::unique_ptr<FlowDeadLetterWriter> DefaultConnectorProvider::openFlowDeadLetters(
    const PhysicalPlan& plan, FlowDeadLetters which, int task) {
  return kafka::openFlowDeadLetterWriter(plan, which, env_.embeddedBootstrap, task);
}

std::unique_ptr<ExchangeOut> DefaultConnectorProvider::openExchangeWriter(
    const ExchangeSpec& spec, const std::string& flowName, int task) {
  return kafka::makeExchangeWriter(spec, flowName, task);
}

std::unique_ptr<SourceTask> DefaultConnectorProvider::openExchangeSource(
    const ScanSpec& scan, const std::string& flowName) {
  return kafka::makeExchangeSource(scan, flowName);
}

void DefaultConnectorProvider::checkCreate(const std::string& connector, const Options& options) const {
  if (const Connector* c = registry_.find(connector)) c->checkCreate(options, env_);
}

}  // namespace rtsql
