// ClusterPlacement: where a flow runs, as the cluster's group decides
// (server/cluster/placement.h).
#include "server/cluster/placement.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "common/clock.h"
#include "common/error.h"
#include "common/schema.h"
#include "connectors/kafka/state_copy_topic.h"
#include "executor/metrics/recent_latency.h"
#include "planner/shard_plan.h"
#include "planner/view_input.h"

namespace rtsql {

namespace {

// "1, 4" of the partitions `share` reads among the first `partitions`.
std::string partitionList(const PartitionShare& share, int partitions) {
  std::string out;
  for (int i = 0; i < partitions; ++i) {
    if (share.reads(i)) out += fmt::format("{}{}", out.empty() ? "" : ", ", i);
  }
  return out;
}

std::string nodeList(const std::set<std::string>& nodes) {
  std::string out = nodes.size() == 1 ? "node " : "nodes ";
  bool first = true;
  for (const std::string& n : nodes) {
    out += (first ? "" : ", ") + n;
    first = false;
  }
  return out;
}

}  // namespace

ClusterPlacement::ClusterPlacement(ClusterOptions options, std::string dataDir)
    : options_(std::move(options)), dataDir_(std::move(dataDir)) {}

ClusterPlacement::~ClusterPlacement() { stop(); }

void ClusterPlacement::open() {
  // Made before the flows are restored (it joins nothing yet): each restored
  // flow tells it the slots CREATE FLOW chose for its copies or partitions.
  if (!membership_) membership_ = std::make_unique<ClusterMembership>(options_);
}

void ClusterPlacement::start(PlacementHooks hooks) {
  open();
  // Slots taken: the supervisor is woken to start their flows; slots given
  // up: their flows stop before another node may start them.
  membership_->start(hooks.release, hooks.changed);
  if (!dataDir_.empty()) {
    // The stateful flows this node keeps a standby copy of: those whose
    // 'standby.replicas' names it, while another node runs them.
    standbys_ = std::make_unique<ClusterStandbys>(
        (std::filesystem::path(dataDir_) / "standby").string());
    standbys_->start([this, hooks] {
      std::vector<StandbyWanted> wanted;
      hooks.forEachFlow([&](const std::string& name, const FlowRuntime* rt) {
        if (!rt || rt->plan().standbyReplicas <= 0 || !rt->plan().keepsState() || spreads(rt))
          return;
        if (membership_->holds(name)) {
          // Taken here and not started yet: a standby kept here is what
          // its start takes over.
          if (rt->state() != FlowState::Running)
            wanted.push_back({name, hooks.stateCopy(name), false});
          return;
        }
        std::vector<std::string> nodes = membership_->standbysOf(name, rt->plan().standbyReplicas);
        if (std::find(nodes.begin(), nodes.end(), options_.node) == nodes.end()) return;
        if (auto copy = hooks.stateCopy(name)) wanted.push_back({name, copy});
      });
      return wanted;
    });
  }
  progress_ = std::make_unique<ClusterProgress>(options_);
  progress_->start([this, hooks] {
    std::vector<NodeProgress> mine;
    hooks.forEachFlow([&](const std::string& name, const FlowRuntime* rt) {
      if (rt && rt->state() == FlowState::Running && runsHere(name, rt))
        mine.push_back(nodeProgress(name, *rt));
    });
    return mine;
  });
}

void ClusterPlacement::stop() {
  // A slot taken or lost stops no flow any more (the node keeps its slots
  // for the group's session timeout: a restart within it takes them back),
  // and no progress is published of flows being stopped.
  if (membership_) membership_->stop();
  if (progress_) progress_->stop();
  if (standbys_) standbys_->stop();
}

bool ClusterPlacement::runsHere(const std::string& name, const FlowRuntime* rt) const {
  if (!membership_) return false;
  if (spreads(rt)) {
    return !membership_->share(name, rt->plan().scans.front().partitions).held.empty();
  }
  return membership_->holds(name);
}

std::set<std::string> ClusterPlacement::otherRunners(const std::string& name,
                                                     const FlowRuntime* rt) const {
  if (!membership_) return {};
  if (spreads(rt)) return membership_->otherReaders(name, rt->plan().scans.front().partitions);
  std::optional<std::string> node = membership_->holderOf(name);
  if (!node) return {};
  return {*node};
}

std::string ClusterPlacement::releaseReason(const std::string& name, const FlowRuntime& rt) const {
  if (!runsHere(name, &rt)) return "its slot went to another node of the cluster";
  if (spreads(&rt) && rt.plan().scans.front().share !=
                          membership_->share(name, rt.plan().scans.front().partitions)) {
    // The supervisor starts it again at once, on the new share.
    return "its share of the source's partitions changed";
  }
  return {};
}

void ClusterPlacement::prepareStart(const std::string& name, FlowRuntime& rt) const {
  // A spread flow reads this node's share of its partitions.
  if (spreads(&rt)) {
    rt.setPartitionShare(membership_->share(name, rt.plan().scans.front().partitions));
  }
}

std::pair<FlowState, std::string> ClusterPlacement::remoteStatus(const std::string& name,
                                                                 const FlowRuntime* rt,
                                                                 bool wanted) const {
  const char* verb = wanted ? "runs" : "stopped";
  if (spreads(rt) && membership_) {
    std::set<std::string> readers =
        membership_->otherReaders(name, rt->plan().scans.front().partitions);
    if (!readers.empty())
      return {FlowState::Remote, fmt::format("{} on {}", verb, nodeList(readers))};
  }
  const std::optional<std::string> node = membership_ ? membership_->holderOf(name) : std::nullopt;
  if (node) return {FlowState::Remote, fmt::format("{} on node {}", verb, *node)};
  return {FlowState::Remote,
          fmt::format("{} on the node that takes slot {} of the cluster (none has it yet)", verb,
                      membership_ ? membership_->slotOf(name) : 0)};
}

std::string ClusterPlacement::runningReason(const std::string& name, const FlowRuntime& rt) const {
  if (!spreads(&rt)) return {};
  // A spread flow runs here on its share of the partitions.
  const int partitions = rt.plan().scans.front().partitions;
  std::set<std::string> others = membership_->otherReaders(name, partitions);
  return fmt::format("reads partitions {} of {} here{}",
                     partitionList(rt.plan().scans.front().share, partitions), partitions,
                     others.empty() ? "" : "; the others on " + nodeList(others));
}

NodeProgress ClusterPlacement::nodeProgress(const std::string& name, const FlowRuntime& rt) const {
  NodeProgress p;
  p.node = options_.node;
  p.flow = toLower(name);
  p.reportedMicros = nowMicros();
  p.progressJson = rt.progressJson();
  IntervalLatency recent;
  rt.recentLatency(recent);
  p.recentIndex = recent.index;
  p.recentE2e = recent.e2e.toText();
  p.recentProcessing = recent.processing.toText();
  return p;
}

std::vector<NodeProgress> ClusterPlacement::othersProgress(const std::string& name,
                                                           const FlowRuntime* rt) const {
  if (!progress_) return {};
  return progress_->of(name, otherRunners(name, rt));
}

std::string ClusterPlacement::nodesJson(const std::vector<NodeProgress>& nodes) const {
  return clusterProgressJson(nodes, options_.node, nowMicros());
}

std::string ClusterPlacement::explain(const std::string& name, const FlowRuntime& rt) const {
  if (!membership_) return {};
  const std::string& here = options_.node;
  const int slots = membership_->slots();
  const int first = membership_->slotOf(name);
  auto holder = [&](int slot) -> std::string {
    std::optional<std::string> node = membership_->holderOfSlot(slot);
    if (!node) return "no node yet";
    return *node == here ? fmt::format("node {} (here)", *node) : "node " + *node;
  };
  std::string out =
      fmt::format("Placement: cluster {}, seen from node {}\n", options_.name, here);
  if (!spreads(&rt)) {
    out += fmt::format("  slot {} of {}: runs on {}\n", first, slots, holder(first));
    if (const int shards = rt.plan().shards; shards > 1) {
      // Each copy on the slot CREATE FLOW chose for it (ClusterMembership::slotOf).
      const auto shard = splitShardFlowName(toLower(name));
      const std::string flow = shard ? shard->first : toLower(name);
      for (int i = 0; i < shards; ++i) {
        const std::string copy = shardFlowName(flow, i);
        const int slot = membership_->slotOf(copy);
        out += fmt::format("  copy {} of {} ({}): slot {}, on {}\n", i, shards, copy, slot,
                           holder(slot));
      }
    }
    if (const int replicas = rt.plan().standbyReplicas; replicas > 0 && rt.plan().keepsState()) {
      std::vector<std::string> standbys = membership_->standbysOf(name, replicas);
      for (std::string& node : standbys) {
        if (node == here) {
          std::optional<CheckpointInfo> kept =
              standbys_ ? standbys_->kept(toLower(name)) : std::nullopt;
          node = kept ? fmt::format("{} (here, at epoch {})", node, kept->epoch)
                      : fmt::format("{} (here, reading the copy)", node);
        }
      }
      const std::string kept = standbys.empty()
                                   ? std::string("none, no other node")
                                   : "nodes " + fmt::format("{}", fmt::join(standbys, ", "));
      out += fmt::format("  standby copies ({} asked): {}\n", replicas, kept);
    }
    return out;
  }
  const ScanSpec& scan = rt.plan().scans.front();
  // Each partition on the slot CREATE FLOW chose for it (ClusterMembership::share).
  const PartitionShare share = membership_->share(name, scan.partitions);
  std::map<std::string, std::vector<int>> byHolder;
  for (int i = 0; i < scan.partitions; ++i) byHolder[holder(share.slotOf(i))].push_back(i);
  if (share.order.empty()) {
    out += fmt::format("  spread: partition i of source {} ({} partitions) on slot ({} + i) % {}\n",
                       scan.name, scan.partitions, first, slots);
  } else {
    std::vector<int> order;
    for (int i = 0; i < std::min<int>(scan.partitions, static_cast<int>(share.order.size())); ++i)
      order.push_back(share.slotOf(i));
    out += fmt::format("  spread: the partitions of source {} ({}) on slots {}{}\n", scan.name,
                       scan.partitions, fmt::join(order, ", "),
                       scan.partitions > static_cast<int>(order.size()) ? ", coming round" : "");
  }
  for (const auto& [node, parts] : byHolder) {
    out += fmt::format("  {}: partitions {}\n", node, fmt::join(parts, ", "));
  }
  return out;
}

void ClusterPlacement::checkShards(const PhysicalPlan& plan, size_t pos) const {
  // A flow over a materialized view reads the view's checkpoints on its own
  // node (server/views/view_inputs.h); placed on another node than the view's
  // it would read nothing, so a cluster refuses it until reads follow the view.
  for (const ScanSpec& scan : plan.scans) {
    if (scan.connector != kViewChangelogConnector) continue;
    throw SqlError(sqlstate::kFeatureNotSupported,
                   fmt::format("in a cluster, a flow cannot read materialized view \"{}\" yet",
                               scan.name),
                   pos)
        .withHint("read the view with a SELECT, or run this flow on a server of its own");
  }
}

std::vector<int> ClusterPlacement::chooseSlots(const std::string& name,
                                               const PhysicalPlan& plan) const {
  // The slots of a sharded flow's copies, or of a spread flow's partitions,
  // chosen now from who holds which slot, so that they go to as many nodes
  // as there are (server/cluster/membership.h).
  if (!membership_ || (plan.shards <= 1 && !plan.spreadsPartitions())) return {};
  const int slots = membership_->slots();
  const int pieces = plan.shards > 1 ? plan.shards : std::min(plan.scans.front().partitions, slots);
  return placeFlowSlots(flowSlot(name, slots), pieces, slots, membership_->holdersNow());
}

void ClusterPlacement::setFlowSlots(const std::string& flow, const std::vector<int>& slots) {
  if (membership_) membership_->setFlowSlots(flow, slots);
}

std::optional<ExchangeTarget> ClusterPlacement::exchange() const {
  // The copies exchange rows through topics of the cluster's Kafka, named
  // after the cluster.
  return ExchangeTarget{fmt::format("_rtsql-{}-exchange-", options_.name), options_.bootstrap};
}

std::shared_ptr<StateCopy> ClusterPlacement::stateCopy(const std::string& flowId) const {
  // Without a data directory there are no checkpoints to copy.
  if (dataDir_.empty()) return nullptr;
  return std::make_shared<kafka::KafkaStateCopy>(options_.bootstrap,
                                                 clusterStateTopic(options_.name, flowId));
}

StateCopyKeeper::Warm ClusterPlacement::warmCopy(const std::string& flow) const {
  // A node that keeps a standby copy of the flow starts from it when it takes
  // the flow over.
  return [this, name = toLower(flow)](CheckpointDir& checkpoints, const CheckpointInfo& target) {
    return standbys_ ? standbys_->takeOver(name, checkpoints, target) : std::nullopt;
  };
}

void ClusterPlacement::dropCopyLater(const std::string& name, std::shared_ptr<StateCopy> copy) {
  dropped_.add(name, std::move(copy), monotonicMicros());
}

void ClusterPlacement::deleteDroppedCopies() {
  if (!membership_ || dropped_.size() == 0) return;
  dropped_.deleteHeld([this](const std::string& name) { return membership_->holds(name); },
                     monotonicMicros());
}

std::optional<ForwardRoute> ClusterPlacement::forwardRoute(const std::string& node) const {
  if (!membership_ || node == options_.node) return std::nullopt;
  std::optional<std::string> address = membership_->addressOf(node);
  if (!address) return std::nullopt;
  return ForwardRoute{*address, options_.secret, options_.node};
}

std::optional<StandbyRead> ClusterPlacement::standbyRead(const std::string& flow) const {
  // Kept only while another node runs the flow (start() says which).
  return standbys_ ? standbys_->read(toLower(flow)) : std::nullopt;
}

}  // namespace rtsql
