// Where a flow runs. The flow registry (server/flows/flow_registry.h) asks a
// Placement every question whose answer differs between a server of its own
// and a node of a cluster: whether a flow runs here, which other nodes run
// it, when it must stop here, what its status and EXPLAIN FLOW say of where
// it runs, and the cluster resources a flow's runtime is made with (its
// state copy, its exchange topics, its warm standby). LocalPlacement
// (server/flows/local_placement.h) answers for a server of its own: every
// flow runs here and nowhere else. ClusterPlacement
// (server/cluster/placement.h) answers from Kafka's group of the nodes.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "executor/flow_runtime.h"
#include "executor/metrics/cluster_progress_json.h"
#include "executor/state_copy.h"
#include "executor/state_standby.h"
#include "planner/physical_plan.h"

namespace rtsql {

// What a placement may ask of the flows it places, once started.
struct PlacementHooks {
  // Stops the runtimes of the flows this node no longer runs (releaseFlows);
  // called on the placement's thread before it gives their slots away.
  std::function<void()> release;
  // Calls `visit` with each flow's lower-cased name and runtime (null: not
  // planned), under the flows lock: keep it short.
  using Visit = std::function<void(const std::string&, const FlowRuntime*)>;
  std::function<void(const Visit&)> forEachFlow;
  // The copy of a flow's state in the cluster's Kafka (null: none).
  std::function<std::shared_ptr<StateCopy>(const std::string&)> stateCopy;
  // The flows this node runs may have changed (slots taken or given up):
  // the supervisor looks at them again. Returns at once.
  std::function<void()> changed;
};

// Where a sharded flow's copies exchange their rows.
// Where a read of a materialized view another node holds is sent
// (server/views/view_forward.h): the address that node advertised, the
// cluster's secret this node proves itself with, and this node's name.
struct ForwardRoute {
  std::string address;  // host:port
  std::string secret;   // empty: none configured
  std::string self;
};

struct ExchangeTarget {
  std::string topicPrefix;  // the exchange topics' names start with it
  std::string bootstrap;
};

class Placement {
 public:
  virtual ~Placement() = default;

  // Made ready before the catalog is restored (restored flows tell it their
  // slots), started after, stopped first at shutdown.
  virtual void open() {}
  virtual void start(PlacementHooks hooks) { (void)hooks; }
  virtual void stop() {}

  // Whether a plan is spread over the nodes (each reads a share of the
  // source's partitions; PhysicalPlan::spreadsPartitions).
  virtual bool spreads(const PhysicalPlan& plan) const = 0;
  bool spreads(const FlowRuntime* rt) const { return rt && spreads(rt->plan()); }
  // Whether this server runs flow `name`, whose runtime is `rt` (null: not
  // planned yet), or a part of it.
  virtual bool runsHere(const std::string& name, const FlowRuntime* rt) const = 0;
  // The other nodes that run flow `name` (or a part of it).
  virtual std::set<std::string> otherRunners(const std::string& name,
                                             const FlowRuntime* rt) const = 0;
  // Why flow `name`, running here, must stop here now ("" : it stays).
  virtual std::string releaseReason(const std::string& name, const FlowRuntime& rt) const = 0;
  // Readies `rt` to start here (a spread flow's share of the partitions).
  virtual void prepareStart(const std::string& name, FlowRuntime& rt) const {
    (void)name;
    (void)rt;
  }
  // The status and reason SHOW FLOWS reports of flow `name` that runs
  // elsewhere (runsHere false); `wanted`: whether it should run.
  virtual std::pair<FlowState, std::string> remoteStatus(const std::string& name,
                                                         const FlowRuntime* rt,
                                                         bool wanted) const = 0;
  // The reason SHOW FLOWS gives beside Running for flow `name` running here.
  virtual std::string runningReason(const std::string& name, const FlowRuntime& rt) const = 0;
  // EXPLAIN FLOW's last lines: where flow `name` runs ("" : here, alone).
  virtual std::string explain(const std::string& name, const FlowRuntime& rt) const = 0;

  // SHOW PROGRESS of flow `name` beyond this node's runtime: the progress
  // of every node that runs a part of `parts` (this node's first), and the
  // "cluster" member of the JSON; nullopt without other nodes.
  virtual bool reportsNodes() const = 0;
  virtual NodeProgress nodeProgress(const std::string& name, const FlowRuntime& rt) const = 0;
  virtual std::vector<NodeProgress> othersProgress(const std::string& name,
                                                   const FlowRuntime* rt) const = 0;
  virtual std::string nodesJson(const std::vector<NodeProgress>& nodes) const = 0;

  // CREATE FLOW: refuses what cannot be placed ('shards' outside a cluster),
  // and chooses the slots of a sharded flow's copies or a spread flow's
  // partitions (empty: none to choose).
  virtual void checkShards(const PhysicalPlan& plan, size_t pos) const = 0;
  virtual std::vector<int> chooseSlots(const std::string& name, const PhysicalPlan& plan) const = 0;
  // Each runtime made for flow `flow` tells the slots CREATE FLOW chose.
  virtual void setFlowSlots(const std::string& flow, const std::vector<int>& slots) = 0;
  // Where a sharded flow's copies exchange rows (nullopt: not here).
  virtual std::optional<ExchangeTarget> exchange() const = 0;
  // Whether a flow whose checkpoints are missing rebuilds its state from its
  // sources (a node taking a flow over) rather than failing.
  virtual bool rebuildsStateWithoutCheckpoint() const = 0;
  // Where flow `flow`'s state is copied for other nodes to take it over
  // (null: nowhere), and a standby kept here to start from.
  virtual std::shared_ptr<StateCopy> stateCopy(const std::string& flowId) const = 0;
  virtual StateCopyKeeper::Warm warmCopy(const std::string& flow) const = 0;
  // The state copy of dropped flow `name`, which this node did not run (no
  // node may have: server/cluster/dropped_copies.h): deleted by whichever
  // node holds the flow's slot next (deleteDroppedCopies). A CREATE FLOW of
  // the name takes it back (keepCopy).
  virtual void dropCopyLater(const std::string& name, std::shared_ptr<StateCopy> copy) {
    (void)name;
    (void)copy;
  }
  virtual void keepCopy(const std::string& name) { (void)name; }
  // Deletes the copies dropCopyLater kept whose flows' slots this node holds
  // now; the supervisor calls it under the statement lock.
  virtual void deleteDroppedCopies() {}
  // What a read of flow `flow`'s standby copy kept here reads
  // (server/cluster/standbys.h); nullopt when this node keeps none.
  virtual std::optional<StandbyRead> standbyRead(const std::string& flow) const {
    (void)flow;
    return std::nullopt;
  }
  // Where a read of a view that node `node` holds is sent (nullopt: it
  // advertised no address, or there is no cluster).
  virtual std::optional<ForwardRoute> forwardRoute(const std::string& node) const {
    (void)node;
    return std::nullopt;
  }
};

}  // namespace rtsql
