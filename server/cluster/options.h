// Who this node is in which cluster: the one set of options that every part
// of the cluster (server/cluster/) is made with, from rtsqld's --cluster,
// --kafka, --node-name and --node-timeout.
#pragma once

#include <string>

namespace rtsql {

struct ClusterOptions {
  std::string name;       // the cluster's name (--cluster)
  std::string bootstrap;  // its Kafka (--kafka), resolved
  std::string node;       // this node's name (--node-name)
  int nodeTimeoutMs = 10000;  // --node-timeout: silence after which a node's flows move
};

}  // namespace rtsql
