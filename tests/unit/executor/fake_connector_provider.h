// The one ConnectorProvider of the executor's tests: a test says how its
// connectors are made (each as a function over the test's own in-memory
// sources and sinks), and the provider opens them when the runtime asks. What
// a test leaves unset is refused as ConnectorProvider itself refuses it, so a
// test that does not expect a transaction or an exchange fails the way a
// server without Kafka would.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "common/error.h"
#include "executor/connector_provider.h"

namespace rtsql::testing {

class FakeConnectorProvider final : public ConnectorProvider {
 public:
  // sourcePartitions() of every scan.
  int partitions = 1;
  // Source task `task` of a scan, and the sink of a task.
  std::function<std::unique_ptr<SourceTask>(int task)> source;
  std::function<std::unique_ptr<SinkWriter>()> sink;
  // Exactly-once: the flow's transaction, and a task's sink writing in it.
  std::function<std::unique_ptr<SinkTransaction>()> transaction;
  std::function<std::unique_ptr<SinkWriter>()> transactionalSink;
  // A sharded flow's exchange: a front task's writer, and the back's source.
  std::function<std::unique_ptr<ExchangeOut>()> exchangeWriter;
  std::function<std::unique_ptr<SourceTask>()> exchangeSource;

  int sourcePartitions(const ScanSpec&) override { return partitions; }
  std::unique_ptr<SourceTask> openSource(const ScanSpec& scan, const std::string&, int task,
                                         int) override {
    if (!source) throw InternalError("the test gave no source for " + scan.name);
    return source(task);
  }
  std::unique_ptr<SinkWriter> openSink(const SinkSpec& spec, const std::string&, int) override {
    if (!sink) throw InternalError("the test gave no sink for " + spec.name);
    return sink();
  }
  std::unique_ptr<SinkTransaction> openSinkTransaction(const SinkSpec& spec,
                                                       const std::string& flowName,
                                                       int64_t timeoutMs) override {
    if (!transaction) return ConnectorProvider::openSinkTransaction(spec, flowName, timeoutMs);
    return transaction();
  }
  std::unique_ptr<SinkWriter> openTransactionalSink(const SinkSpec& spec,
                                                    const std::string& flowName, int task,
                                                    SinkTransaction& txn) override {
    if (!transactionalSink) {
      return ConnectorProvider::openTransactionalSink(spec, flowName, task, txn);
    }
    return transactionalSink();
  }
  std::unique_ptr<ExchangeOut> openExchangeWriter(const ExchangeSpec& spec,
                                                  const std::string& flowName,
                                                  int task) override {
    if (!exchangeWriter) return ConnectorProvider::openExchangeWriter(spec, flowName, task);
    return exchangeWriter();
  }
  std::unique_ptr<SourceTask> openExchangeSource(const ScanSpec& scan,
                                                 const std::string& flowName) override {
    if (!exchangeSource) return ConnectorProvider::openExchangeSource(scan, flowName);
    return exchangeSource();
  }
};

}  // namespace rtsql::testing
