// A flow split into shards ('shards' = 'N', in a cluster): N copies of the
// flow, each run on its own (on the node that holds its slot, with its own
// epochs, checkpoints, state copy, standbys and Kafka ids), each keeping only
// the keys of its shard. Copy s reads the source partitions i with
// i % N == s and runs the stages before the flow's shuffle on them (its
// front); their rows cross to the copy that keeps their key (by a hash of
// the shuffle key) through the flow's exchange topic, of one partition per
// copy, and copy s's back reads partition s and runs the stateful stage on
// it (executor/exchange.h); the rows of copy s's own keys go from its front
// to its stateful stage in process. So each key's rows reach exactly one copy, in
// the order each source partition gave them, with a watermark that is the
// minimum over every front task's (as a shuffle task's is over its
// producers); the copies' outputs together are the whole flow's output.
// Reading, decoding, the state and the stateful work are all divided by N.
//
// Copy 0 carries the flow's own name; copy i > 0 is named `<flow>#i` (a name
// CREATE FLOW refuses, so that no flow of the catalog can take it), which is
// what its checkpoints, its state copy and its Kafka ids are named after.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/options.h"
#include "planner/physical_plan.h"

namespace rtsql {

inline constexpr int kMaxFlowShards = 64;

// The setting, recorded with a sharded flow by CREATE FLOW, that names its
// exchange topics (PhysicalPlan::exchangeId): drawn anew for each flow made,
// so that a flow made again under the same name never reads the rows its
// predecessor exchanged.
inline constexpr const char* kExchangeIdSetting = "rtsql.exchange_id";
// The setting, recorded as "1" with a sharded flow by CREATE FLOW, that
// keeps each copy's own rows in process (PhysicalPlan::exchangeLocal). A
// flow made before it was recorded sends them through its topic, as its
// checkpoints expect.
inline constexpr const char* kExchangeLocalSetting = "rtsql.exchange_local";
// The setting, recorded with a flow by CREATE FLOW in a cluster, that holds
// its PhysicalPlan::clusterSlots, as a list: "3,8,13".
inline constexpr const char* kClusterSlotsSetting = "rtsql.cluster_slots";
std::string formatClusterSlots(const std::vector<int>& slots);
// The slots of such a list; empty for anything else (then the flow's pieces
// take consecutive slots, as the flows made before it was recorded do).
std::vector<int> parseClusterSlots(std::string_view text);

// The name of copy `shard` of flow `flow`.
std::string shardFlowName(const std::string& flow, int shard);
// The flow and shard of a copy's name `<flow>#i` (i >= 1); nullopt for any
// other name.
std::optional<std::pair<std::string, int>> splitShardFlowName(const std::string& name);

// Checks 'shards' against the plan and returns it (1: not split). Throws
// SqlError 22023 for a count out of range or a flow that keeps no state, and
// 0A000 for a flow whose shape cannot be split (at the option's value).
int checkFlowShards(const Options& flowOptions, const PhysicalPlan& plan);

// Makes the stages that shuffle into the stateful stage the copies' fronts:
// each writes to an exchange topic, `<topicPrefix>-<input>` on `bootstrap`,
// and a new source stage (the back) reads the copy's partition of it and
// shuffles on. With plan.exchangeLocal, each front still shuffles the rows
// of its own copy's shard into the stateful stage, in process. Does nothing
// to a plan of one copy or one that has them.
void addExchange(PhysicalPlan& plan, const std::string& topicPrefix, const std::string& bootstrap);

// The plan of copy `shard` of `plan` (plan.shards > 1; `plan` may be any
// copy's): its name, and the share of the source and exchange partitions it
// reads.
PhysicalPlan planForShard(const PhysicalPlan& plan, int shard);

}  // namespace rtsql
