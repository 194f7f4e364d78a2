// The connectors flows run with, plus one: a scan of a materialized view's
// changelog (planner/view_input.h) opens a reader of the view's checkpoints
// (executor/state/view_changelog.h) in the view's flow directory. Every other
// call goes to the server's own provider.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "executor/connector_provider.h"
#include "executor/state/view_changelog.h"
#include "planner/catalog.h"
#include "server/catalog_file.h"

namespace rtsql {

class ViewInputProvider final : public ConnectorProvider {
 public:
  // `checkpointRoot(view)`: the directory of the view's flow's checkpoints.
  ViewInputProvider(ConnectorProvider& base,
                    std::function<std::string(const std::string&)> checkpointRoot)
      : base_(base), checkpointRoot_(std::move(checkpointRoot)) {}

  int sourcePartitions(const ScanSpec& scan) override;
  std::unique_ptr<SourceTask> openSource(const ScanSpec& scan, const std::string& flowName,
                                         int task, int tasks) override;
  std::unique_ptr<SinkWriter> openSink(const SinkSpec& sink, const std::string& flowName,
                                       int task) override {
    return base_.openSink(sink, flowName, task);
  }
  std::unique_ptr<SinkTransaction> openSinkTransaction(const SinkSpec& sink,
                                                       const std::string& flowName,
                                                       int64_t timeoutMs) override {
    return base_.openSinkTransaction(sink, flowName, timeoutMs);
  }
  std::unique_ptr<SinkWriter> openTransactionalSink(const SinkSpec& sink,
                                                    const std::string& flowName, int task,
                                                    SinkTransaction& transaction) override {
    return base_.openTransactionalSink(sink, flowName, task, transaction);
  }
  std::unique_ptr<FlowDeadLetterWriter> openFlowDeadLetters(const PhysicalPlan& plan,
                                                            FlowDeadLetters which,
                                                            int task) override {
    return base_.openFlowDeadLetters(plan, which, task);
  }
  std::unique_ptr<ExchangeOut> openExchangeWriter(const ExchangeSpec& spec,
                                                  const std::string& flowName, int task) override {
    return base_.openExchangeWriter(spec, flowName, task);
  }
  std::unique_ptr<SourceTask> openExchangeSource(const ScanSpec& scan,
                                                 const std::string& flowName) override {
    return base_.openExchangeSource(scan, flowName);
  }
  void checkCreate(const std::string& connector, const Options& options) const override {
    base_.checkCreate(connector, options);
  }

 private:
  ConnectorProvider& base_;
  std::function<std::string(const std::string&)> checkpointRoot_;
};

// The bound of view changelogs' expiry (executor/state/view_changelog.h):
// for view v, the smallest position among the newest checkpoints of the
// flows of `catalog` that read it, capped by the counters of v's newest
// checkpoint; nullopt (keep everything) when a reader has no checkpoint yet,
// or when `statements` is held (tried, never waited for: the caller is a
// flow's task). `flowDir` gives a flow's directory.
ViewChangelogBound makeViewChangelogBound(const Catalog& catalog,
                                          std::function<std::string(const std::string&)> flowDir,
                                          std::mutex& statements);

// Restart: reorders the flow records among the places flow records hold in
// `records`, so that a materialized view comes before the flows and views
// that name it (they are planned against it). A record names a view when
// the view's name is one of its SQL's words; with a cycle the order stays.
void orderViewsBeforeReaders(std::vector<CatalogRecord>& records);

}  // namespace rtsql
