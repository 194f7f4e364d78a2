// The Kafka ids of a flow's clients, named in one place: the consumer group
// its source tasks commit their positions to, the transactional id of its
// exactly-once output, and the group that records which epoch's output
// committed last (connectors/kafka/sink.cpp).
//
// On a server of its own they are `rtsql-<flow>` (and `rtsql-<flow>-epochs`).
// In a cluster they carry the cluster's name, `rtsql-<cluster>-<flow>`, so
// that two clusters, or a cluster and a server of its own, on one Kafka
// never share a flow's positions or fence each other's transactions. A
// cluster's flows used the unscoped ids before: `legacy` names them, and a
// flow whose scoped ids hold nothing yet goes on from what the legacy ones
// hold (its committed positions, its last committed epoch), once.
#pragma once

#include <string>

namespace rtsql::kafka {

struct FlowKafkaIds {
  std::string base;    // the group and the transactional id
  std::string legacy;  // the ids used before (empty: none, outside a cluster)

  const std::string& group() const { return base; }
  const std::string& transactionalId() const { return base; }
  std::string epochGroup() const { return base + "-epochs"; }
  std::string legacyEpochGroup() const { return legacy.empty() ? legacy : legacy + "-epochs"; }
};

// The ids of flow `flow` on a server of cluster `cluster` (empty: none).
inline FlowKafkaIds flowKafkaIds(const std::string& cluster, const std::string& flow) {
  if (cluster.empty()) return {"rtsql-" + flow, {}};
  return {"rtsql-" + cluster + "-" + flow, "rtsql-" + flow};
}

}  // namespace rtsql::kafka
