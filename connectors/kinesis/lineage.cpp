// When a shard may be read (see lineage.h).
#include "connectors/kinesis/lineage.h"

#include <unordered_set>

namespace rtsql::kinesis {

std::vector<const Shard*> readableShards(const std::vector<Shard>& shards,
                                         const std::function<bool(const std::string&)>& drained) {
  std::unordered_set<std::string> listed;
  for (const Shard& s : shards) listed.insert(s.id);
  auto done = [&](const std::string& parent) {
    return parent.empty() || !listed.count(parent) || drained(parent);
  };
  std::vector<const Shard*> out;
  for (const Shard& s : shards) {
    if (drained(s.id)) continue;
    if (done(s.parent) && done(s.adjacentParent)) out.push_back(&s);
  }
  return out;
}

}  // namespace rtsql::kinesis
