// Standby replicas of a cluster's stateful flows: with 'standby.replicas' =
// 'N', the N nodes that follow the flow's runner in name order
// (standbyNodes() in server/cluster/membership.h) each keep a warm copy of
// its state (executor/state_standby.h), kept in step with the flow's state
// copy in Kafka while the flow runs elsewhere. When one of them takes the
// flow over (its runner died or left), the flow starts from that copy, read
// on to the copy's newest checkpoint, instead of reading the whole copy
// (StateCopyKeeper's warm copy).
//
// Which flows this node keeps a standby of is asked again every second (the
// placement moves with the group), on a thread of this class, which also
// reads what each copy committed since. The stores live under the data
// directory's `standby` directory, which is emptied at start: a node builds
// its standbys again from the copies after a restart.
//
// Kafka's group assigns a dead node's slots with no regard to standbys, so a
// standby is used only when the group gives the flow to a node that keeps
// one: always when every other node does (N = nodes - 1).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "executor/checkpoint.h"
#include "executor/state_copy.h"
#include "executor/state_standby.h"

namespace rtsql {

// A flow this node should keep a standby of now.
struct StandbyWanted {
  std::string flow;  // lower-cased name
  std::shared_ptr<StateCopy> copy;
  // False: keep the standby when there is one, but make none (the flow was
  // just placed here, and its start takes the standby over).
  bool create = true;
};

class ClusterStandbys {
 public:
  // `dir`: where the standbys' stores live (emptied here).
  explicit ClusterStandbys(std::string dir);
  ~ClusterStandbys();
  ClusterStandbys(const ClusterStandbys&) = delete;
  ClusterStandbys& operator=(const ClusterStandbys&) = delete;

  // Starts keeping the standbys `wanted` names (called on the class's thread
  // every second).
  void start(std::function<std::vector<StandbyWanted>()> wanted);
  void stop();

  // For a run of flow `flow` that takes it over: the standby's state as
  // checkpoint `target` in `checkpoints` (StateStandby::takeOver), or nullopt
  // when this node keeps no standby of it or it cannot reach the target. The
  // standby is gone afterwards: the flow runs here.
  std::optional<CheckpointInfo> takeOver(const std::string& flow, CheckpointDir& checkpoints,
                                         const CheckpointInfo& target);
  // The checkpoint the standby of flow `flow` kept here holds (nullopt: none
  // kept, or none read yet).
  std::optional<CheckpointInfo> kept(const std::string& flow) const;
  // What a read of the standby of flow `flow` kept here reads: its state as
  // of the end of the thread's last read of the copy (at most a round
  // behind the standby itself); nullopt when none is kept here. Never waits
  // for the standby's reading of the copy.
  std::optional<StandbyRead> read(const std::string& flow) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace rtsql
