// Where a flow runs in a cluster: the answers of Placement
// (server/flows/placement.h) from Kafka's group of the nodes
// (server/cluster/membership.h). It owns what a node keeps of the others'
// flows: the membership, the progress the nodes publish
// (server/cluster/progress.h) and the standby copies kept here
// (server/cluster/standbys.h).
#pragma once

#include <memory>
#include <string>

#include "server/cluster/catalog.h"
#include "server/cluster/dropped_copies.h"
#include "server/cluster/membership.h"
#include "server/cluster/progress.h"
#include "server/cluster/standbys.h"
#include "server/flows/placement.h"

namespace rtsql {

class ClusterPlacement : public Placement {
 public:
  using Placement::spreads;
  // `dataDir`: where standby copies live ("" : none kept, and no state copies).
  ClusterPlacement(ClusterOptions options, std::string dataDir);
  ~ClusterPlacement() override;

  void open() override;
  void start(PlacementHooks hooks) override;
  void stop() override;

  bool spreads(const PhysicalPlan& plan) const override { return plan.spreadsPartitions(); }
  bool runsHere(const std::string& name, const FlowRuntime* rt) const override;
  std::set<std::string> otherRunners(const std::string& name, const FlowRuntime* rt) const override;
  std::string releaseReason(const std::string& name, const FlowRuntime& rt) const override;
  void prepareStart(const std::string& name, FlowRuntime& rt) const override;
  std::pair<FlowState, std::string> remoteStatus(const std::string& name, const FlowRuntime* rt,
                                                 bool wanted) const override;
  std::string runningReason(const std::string& name, const FlowRuntime& rt) const override;
  std::string explain(const std::string& name, const FlowRuntime& rt) const override;
  bool reportsNodes() const override { return progress_ != nullptr; }
  NodeProgress nodeProgress(const std::string& name, const FlowRuntime& rt) const override;
  std::vector<NodeProgress> othersProgress(const std::string& name,
                                           const FlowRuntime* rt) const override;
  std::string nodesJson(const std::vector<NodeProgress>& nodes) const override;
  void checkShards(const PhysicalPlan& plan, size_t pos) const override;
  std::vector<int> chooseSlots(const std::string& name, const PhysicalPlan& plan) const override;
  void setFlowSlots(const std::string& flow, const std::vector<int>& slots) override;
  std::optional<ExchangeTarget> exchange() const override;
  bool rebuildsStateWithoutCheckpoint() const override { return true; }
  std::shared_ptr<StateCopy> stateCopy(const std::string& flowId) const override;
  StateCopyKeeper::Warm warmCopy(const std::string& flow) const override;
  void dropCopyLater(const std::string& name, std::shared_ptr<StateCopy> copy) override;
  void keepCopy(const std::string& name) override { dropped_.forget(name); }
  void deleteDroppedCopies() override;
  std::optional<ForwardRoute> forwardRoute(const std::string& node) const override;
  std::optional<StandbyRead> standbyRead(const std::string& flow) const override;

 private:
  ClusterOptions options_;
  std::string dataDir_;
  // Made by open(), before any thread but restore's own reads them.
  std::unique_ptr<ClusterMembership> membership_;
  std::unique_ptr<ClusterProgress> progress_;
  std::unique_ptr<ClusterStandbys> standbys_;
  DroppedCopies dropped_;
};

}  // namespace rtsql
