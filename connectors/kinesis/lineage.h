// Shard lineage: when a Kinesis shard may be read. Splitting a shard closes
// it and opens two children; merging two closes both and opens one. The
// records of a partition key go to the parent until the reshard and to a
// child after it, so a child is read only once every parent it names has
// been read to its end: the key's records then come out in the order they
// went in. A parent that is no longer listed (its records passed the
// stream's retention) holds nothing to wait for.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "connectors/kinesis/protocol.h"

namespace rtsql::kinesis {

// The shards of `shards` that are not drained and whose parents are each
// drained or not listed, in the order given. `drained(id)` says whether a
// shard was read to its end.
std::vector<const Shard*> readableShards(const std::vector<Shard>& shards,
                                         const std::function<bool(const std::string&)>& drained);

}  // namespace rtsql::kinesis
