// The placement of a server of its own: every flow runs here, whole, and
// nowhere else; nothing is copied for another node.
#pragma once

#include "common/error.h"
#include "server/flows/placement.h"

namespace rtsql {

class LocalPlacement : public Placement {
 public:
  using Placement::spreads;
  bool spreads(const PhysicalPlan&) const override { return false; }
  bool runsHere(const std::string&, const FlowRuntime*) const override { return true; }
  std::set<std::string> otherRunners(const std::string&, const FlowRuntime*) const override {
    return {};
  }
  std::string releaseReason(const std::string&, const FlowRuntime&) const override { return {}; }
  std::pair<FlowState, std::string> remoteStatus(const std::string&, const FlowRuntime*,
                                                 bool) const override {
    return {FlowState::Stopped, {}};  // never asked: every flow runs here
  }
  std::string runningReason(const std::string&, const FlowRuntime&) const override { return {}; }
  std::string explain(const std::string&, const FlowRuntime&) const override { return {}; }
  bool reportsNodes() const override { return false; }
  NodeProgress nodeProgress(const std::string&, const FlowRuntime&) const override { return {}; }
  std::vector<NodeProgress> othersProgress(const std::string&, const FlowRuntime*) const override {
    return {};
  }
  std::string nodesJson(const std::vector<NodeProgress>&) const override { return {}; }
  void checkShards(const PhysicalPlan& plan, size_t pos) const override {
    if (plan.shards <= 1) return;
    const OptionEntry* shards = plan.flowOptions.find("shards");
    throw SqlError(sqlstate::kFeatureNotSupported,
                   "'shards' divides a flow over the nodes of a cluster, and this server runs "
                   "alone",
                   shards ? shards->valuePos : pos)
        .withHint("start rtsqld with --cluster, or remove 'shards'");
  }
  std::vector<int> chooseSlots(const std::string&, const PhysicalPlan&) const override {
    return {};
  }
  void setFlowSlots(const std::string&, const std::vector<int>&) override {}
  std::optional<ExchangeTarget> exchange() const override { return std::nullopt; }
  bool rebuildsStateWithoutCheckpoint() const override { return false; }
  std::shared_ptr<StateCopy> stateCopy(const std::string&) const override { return nullptr; }
  StateCopyKeeper::Warm warmCopy(const std::string&) const override { return nullptr; }
};

}  // namespace rtsql
