// What makes a server a node of a cluster, chosen once at start: where its
// flows run (ClusterPlacement, server/cluster/placement.h) and where its
// catalog lives (the cluster's catalog topic, server/cluster/catalog.h);
// without a cluster, a server of its own's (LocalPlacement, the data
// directory's catalog file).
#pragma once

#include <memory>
#include <string>

#include "server/catalog_store.h"
#include "server/cluster/catalog.h"
#include "server/flows/placement.h"

namespace rtsql {

// `cluster`: rtsqld --cluster's catalog, null for a server of its own.
std::unique_ptr<Placement> makePlacement(const std::shared_ptr<ClusterCatalog>& cluster,
                                         const std::string& dataDir);
// Null when nothing is kept (no cluster and no data directory).
std::unique_ptr<CatalogStore> makeCatalogStore(const std::shared_ptr<ClusterCatalog>& cluster,
                                               const std::string& dataDir);

}  // namespace rtsql
