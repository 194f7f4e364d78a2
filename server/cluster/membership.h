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
// few seconds). The metadata is the node's record
// (server/cluster/node_record.h): its name, and the address its PostgreSQL
// listener is reached at. Claims stay out of the nodes group, so that one
// made during a rebalance cannot fail the node's place in it.
//
// A flow whose source partitions can be spread (a stateless flow of one
// stage over a Kafka source of several partitions) is not placed whole: each
// of its partitions belongs to a slot of its own (share() below), and each
// node reads the partitions of the slots it holds. The copies of a sharded
// flow (planner/shard_plan.h) each belong to a slot of their own too.
// Which slots a flow's copies or partitions take is chosen once, by CREATE
// FLOW on the node that runs the statement, from who held which slot then
// (placeFlowSlots below), and recorded with the flow, so that every node
// reads the same choice from the catalog. The group's assignor gives a node
// runs of consecutive slots, so consecutive slots would often put every
// copy on one node; the choice puts them on as many nodes as there were.
// After that, a copy follows its slot as a flow does.
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
#include "server/cluster/options.h"

namespace rtsql {

std::string clusterSlotsTopic(const std::string& cluster);
// The slot of flow `name` among `slots` (lower-cased before hashing); copy i
// of a sharded flow (planner/shard_plan.h) the slot i after its flow's.
int flowSlot(const std::string& name, int slots);

// The slots of a flow's `pieces` (its copies, or the partitions of a flow
// spread by them), for CREATE FLOW to record (PhysicalPlan::clusterSlots),
// from `holders` (slot -> the node that holds it): piece 0 on `first` (the
// flow's own slot), then each piece on a slot of the node that has the
// fewest of the flow's pieces yet (the first such node in name order coming
// round from piece 0's), the first of that node's slots from `first` on that
// no other piece has. A slot of no known holder counts as a node of its own,
// after the known ones. Once every slot has a piece, the pieces after take
// the same slots again, in the same order. With no holder known at all, the
// pieces are spaced evenly over the slots.
std::vector<int> placeFlowSlots(int first, int pieces, int slots,
                                const std::map<int, std::string>& holders);

// The `replicas` nodes that keep a standby copy of a flow that `owner` runs
// (server/cluster/standbys.h): the nodes that follow the owner among `nodes`
// in name order, coming round after the last (fewer when there are not so
// many others). Every node computes the same from the same view.
std::vector<std::string> standbyNodes(const std::string& owner, const std::set<std::string>& nodes,
                                      int replicas);

class ClusterMembership {
 public:
  // Creates the slots topic when it is missing and learns its partition
  // count. Throws SqlError 08006 when the Kafka cannot be reached. Joins
  // nothing yet.
  explicit ClusterMembership(ClusterOptions options);
  ~ClusterMembership();
  ClusterMembership(const ClusterMembership&) = delete;
  ClusterMembership& operator=(const ClusterMembership&) = delete;

  // Joins the group, on a thread of its own. `released` is called on that
  // thread after this node gave up or lost slots, before the group can give
  // them to another node: it must stop their flows before it returns. Slots
  // taken are announced by `changed` (called after any change of the slots
  // held, on that thread), which must return at once: whatever starts their
  // flows must not hold up the group's callback.
  void start(std::function<void()> released, std::function<void()> changed = {});
  void stop();

  int slots() const { return slotCount_; }
  // The slots of flow `flow`'s copies or partitions as CREATE FLOW recorded
  // them (PhysicalPlan::clusterSlots; empty: consecutive from the flow's
  // own, flowSlot). Every runtime made for the flow sets them.
  void setFlowSlots(const std::string& flow, std::vector<int> slots);
  // The slot of flow or copy `name`: its recorded one, else flowSlot.
  int slotOf(const std::string& name) const;
  // Every slot whose holder is known now (this node's included), with it.
  std::map<int, std::string> holdersNow() const;
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
  // `partitions` source partitions: partition i belongs to the slot recorded
  // for it (setFlowSlots), else to slot (flowSlot(name) + i) % slots. The
  // share this node reads now
  // (`held` only has slots of the flow's partitions: it changes only when
  // they move), and the nodes that read the others.
  PartitionShare share(const std::string& name, int partitions) const;
  std::set<std::string> otherReaders(const std::string& name, int partitions) const;
  // The nodes that hold a slot now (as the group's offsets say; a node gone
  // stays until its slots are taken again), this one included once joined.
  std::set<std::string> nodes() const;
  // The PostgreSQL address node `node` advertised in its records
  // (server/cluster/node_record.h); nullopt when it advertised none.
  std::optional<std::string> addressOf(const std::string& node) const;
  // The nodes that keep a standby copy of flow `name` with `replicas`
  // (standbyNodes below, of its holder); empty while its holder is unknown.
  std::vector<std::string> standbysOf(const std::string& name, int replicas) const;

 private:
  struct Impl;
  ClusterOptions options_;
  int slotCount_ = 0;
  std::unique_ptr<Impl> impl_;
};

}  // namespace rtsql
