// A flow split into shards ('shards' = 'N', in a cluster): N copies of the
// flow, each run on its own (on the node that holds its slot, with its own
// epochs, checkpoints, state copy, standbys and Kafka ids), each keeping only
// the keys of its shard. Every copy reads all of the flow's input and runs
// the stages before the flow's shuffle in full; the shuffle then passes on
// the rows whose key falls in the copy's shard (ShuffleWriter, by a hash of
// the shuffle key: executor/shuffle.h) and drops the others. So each key's
// rows reach exactly one copy, which sees them in the order and with the
// watermark one whole flow would (its watermark comes from every source
// partition, as the whole flow's does); the copies' outputs together are
// the whole flow's output. The state, and the work of the stateful stage,
// are divided by N; reading and decoding the input are not.
//
// Copy 0 carries the flow's own name; copy i > 0 is named `<flow>#i` (a name
// CREATE FLOW refuses, so that no flow of the catalog can take it), which is
// what its checkpoints, its state copy and its Kafka ids are named after.
#pragma once

#include <optional>
#include <string>
#include <utility>

#include "common/options.h"
#include "planner/physical_plan.h"

namespace rtsql {

inline constexpr int kMaxFlowShards = 64;

// The name of copy `shard` of flow `flow`.
std::string shardFlowName(const std::string& flow, int shard);
// The flow and shard of a copy's name `<flow>#i` (i >= 1); nullopt for any
// other name.
std::optional<std::pair<std::string, int>> splitShardFlowName(const std::string& name);

// Checks 'shards' against the plan and returns it (1: not split). Throws
// SqlError 22023 for a count out of range or a flow that keeps no state, and
// 0A000 for a flow whose shape cannot be split (at the option's value).
int checkFlowShards(const Options& flowOptions, const PhysicalPlan& plan);

// The plan of copy `shard` of `plan` (plan.shards > 1): its name, and the
// shard its shuffle keeps.
PhysicalPlan planForShard(const PhysicalPlan& plan, int shard);

}  // namespace rtsql
