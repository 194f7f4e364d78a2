// Who this node is in which cluster: the one set of options that every part
// of the cluster (server/cluster/) is made with, from rtsqld's --cluster,
// --kafka, --node-name, --node-timeout, --advertise-address and
// --cluster-secret-file.
#pragma once

#include <memory>
#include <string>

#include "server/cluster/node_record.h"

namespace rtsql {

struct ClusterOptions {
  std::string name;       // the cluster's name (--cluster)
  std::string bootstrap;  // its Kafka (--kafka), resolved
  std::string node;       // this node's name (--node-name)
  int nodeTimeoutMs = 10000;  // --node-timeout: silence after which a node's flows move
  // Where this node's PostgreSQL listener is reached (--advertise-address),
  // told to the others in its membership record; null or empty: not told.
  std::shared_ptr<AdvertisedAddress> advertised{};
  // --cluster-secret-file's secret: what a node proves to another when it
  // sends it a read of a view (server/views/view_forward.h); empty: none.
  std::string secret{};
};

}  // namespace rtsql
