// Which node of a cluster runs which flow, decided by Kafka's group protocol.
//
// Every node of cluster NAME is a member of the consumer group
// `_rtsql-<NAME>-nodes`, subscribed to the topic `_rtsql-<NAME>-slots`, whose
// partitions are the cluster's slots. The group assigns the slots over the
// live nodes (cooperative-sticky: a rebalance moves only the slots it must);
// a flow belongs to slot crc32(lower-cased name) % slot count, and the node
// holding that slot runs it. So:
//   - a node that joins takes a share of the slots (and their flows);
//   - a node that stops answering the group for the session timeout
//     (`--node-timeout`, killed or cut off) loses its slots to the others,
//     which start its flows;
//   - the membership is static (group.instance.id = the node's name): a node
//     restarted under its name within the timeout gets its slots back without
//     a rebalance, and a second live node with the same name fences the first
//     (which then holds nothing and says why in its log).
// A node stops the flows of a slot it loses before the group hands the slot
// to another node; a node that was cut off (its slots given away while it
// could not tell) stops them as soon as it hears so.
//
// Who holds a slot is for the others to read in committed offsets of the
// group `_rtsql-<NAME>-holders`, which no node joins: a node commits offset 0
// of each slot it is given there, with its name as the offset's metadata.
// SHOW FLOWS names the node a remote flow runs on from that (refreshed every
// few seconds). Claims stay out of the nodes group, so that one made during a
// rebalance cannot fail the node's place in it.
//
// A flow whose source partitions can be spread (a stateless flow of one
// stage over a Kafka source of several partitions) is not placed whole: each
// of its partitions belongs to a slot of its own (share() below), and each
// node reads the partitions of the slots it holds.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "planner/physical_plan.h"

namespace rtsql {

struct ClusterMembershipOptions {
  std::string cluster;    // the cluster's name
  std::string bootstrap;  // its Kafka
  std::string node;       // this node's name
  int sessionTimeoutMs = 10000;
};

std::string clusterSlotsTopic(const std::string& cluster);
// The slot of flow `name` among `slots` (lower-cased before hashing); copy i
// of a sharded flow (planner/flow_shards.h) the slot i after its flow's.
int flowSlot(const std::string& name, int slots);

// The `replicas` nodes that keep a standby copy of a flow that `owner` runs
// (server/cluster_standbys.h): the nodes that follow the owner among `nodes`
// in name order, coming round after the last (fewer when there are not so
// many others). Every node computes the same from the same view.
std::vector<std::string> standbyNodes(const std::string& owner, const std::set<std::string>& nodes,
                                      int replicas);

class ClusterMembership {
 public:
  // Creates the slots topic when it is missing and learns its partition
  // count. Throws SqlError 08006 when the Kafka cannot be reached. Joins
  // nothing yet.
  explicit ClusterMembership(ClusterMembershipOptions options);
  ~ClusterMembership();
  ClusterMembership(const ClusterMembership&) = delete;
  ClusterMembership& operator=(const ClusterMembership&) = delete;

  // Joins the group, on a thread of its own. `released` is called on that
  // thread after this node gave up or lost slots, before the group can give
  // them to another node: it must stop their flows before it returns. Slots
  // taken are not announced (held() says so at once): whatever starts their
  // flows must not hold up the group's callback.
  void start(std::function<void()> released);
  void stop();

  int slots() const { return slotCount_; }
  // Whether this node holds the slot of flow `name` now.
  bool holds(const std::string& name) const;
  // The node that last took the slot of flow `name`, as the group's offsets
  // say (nullopt: none known, or this node, which no longer holds it).
  std::optional<std::string> holderOf(const std::string& name) const;
  // The slots this node holds.
  std::set<int> held() const;
  // The node that last took slot `slot` (as holderOf; this node when it holds it).
  std::optional<std::string> holderOfSlot(int slot) const;

  // A flow spread over the nodes (PhysicalPlan::spreadsPartitions) with
  // `partitions` source partitions: partition i belongs to slot
  // (flowSlot(name) + i) % slots, so consecutive partitions go to
  // consecutive slots and so over the nodes. The share this node reads now
  // (`held` only has slots of the flow's partitions: it changes only when
  // they move), and the nodes that read the others.
  PartitionShare share(const std::string& name, int partitions) const;
  std::set<std::string> otherReaders(const std::string& name, int partitions) const;
  // The nodes that hold a slot now (as the group's offsets say; a node gone
  // stays until its slots are taken again), this one included once joined.
  std::set<std::string> nodes() const;
  // The nodes that keep a standby copy of flow `name` with `replicas`
  // (standbyNodes below, of its holder); empty while its holder is unknown.
  std::vector<std::string> standbysOf(const std::string& name, int replicas) const;

 private:
  struct Impl;
  ClusterMembershipOptions options_;
  int slotCount_ = 0;
  std::unique_ptr<Impl> impl_;
};

}  // namespace rtsql
