// The connector provider the server hands to the executor: the executor's view
// of connectors (executor/connector_provider.h), which opens source tasks and sink
// writers for a ScanSpec or SinkSpec. It holds what the running server adds
// (its embedded broker's address) and passes each call to the connector the
// spec names, found in the ConnectorRegistry (connectors/registry.h).
#pragma once

#include <memory>
#include <string>

#include "common/options.h"
#include "connectors/registry.h"
#include "executor/connector_provider.h"

namespace rtsql {

class DefaultConnectorProvider : public ConnectorProvider {
 public:
  // `embeddedBootstrap` is the address of the server's embedded broker, what
  // 'kafka.bootstrap.servers' = 'embedded' means; empty when there is none.
  // `cluster` is the server's cluster (--cluster; empty outside one), which
  // scopes the Kafka ids of its flows (connectors/kafka/flow_ids.h).
  explicit DefaultConnectorProvider(std::string embeddedBootstrap = {}, std::string cluster = {})
      : env_{std::move(embeddedBootstrap), std::move(cluster)} {}

  int sourcePartitions(const ScanSpec& scan) override;
  std::unique_ptr<SourceTask> openSource(const ScanSpec& scan, const std::string& flowName,
                                         int task, int tasks) override;
  std::unique_ptr<SinkWriter> openSink(const SinkSpec& sink, const std::string& flowName,
                                       int task) override;
  std::unique_ptr<SinkTransaction> openSinkTransaction(const SinkSpec& sink,
                                                       const std::string& flowName,
                                                       int64_t timeoutMs) override;
  std::unique_ptr<SinkWriter> openTransactionalSink(const SinkSpec& sink,
                                                    const std::string& flowName, int task,
                                                    SinkTransaction& transaction) override;
  // Late rows go to Kafka (connectors/kafka/dead_letter.h).
  std::unique_ptr<FlowDeadLetterWriter> openFlowDeadLetters(const PhysicalPlan& plan,
                                                            FlowDeadLetters which,
                                                            int task) override;
  // A sharded flow's exchange goes through the cluster's Kafka
  // (connectors/kafka/exchange_topic.h), whose address the spec holds.
  std::unique_ptr<ExchangeOut> openExchangeWriter(const ExchangeSpec& spec,
                                                  const std::string& flowName, int task) override;
  std::unique_ptr<SourceTask> openExchangeSource(const ScanSpec& scan,
                                                 const std::string& flowName) override;

  const std::string& embeddedBootstrap() const { return env_.embeddedBootstrap; }
  // Connector::checkCreate of the named connector (Kafka: 'embedded' on a
  // server without the embedded broker is SqlError 55000 at the option's
  // value). Unknown connectors pass: validation reports them.
  void checkCreate(const std::string& connector, const Options& options) const override;

 private:
  const Connector& source(const ScanSpec& scan) const;
  const Connector& sink(const SinkSpec& sink) const;

  ConnectorEnv env_;
  // The server's one registry: CREATE-time validation (registry.h) asks the
  // same one.
  const ConnectorRegistry& registry_ = ConnectorRegistry::builtin();
};

}  // namespace rtsql
