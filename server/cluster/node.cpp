// A server's placement and catalog store, a cluster's or its own
// (server/cluster/node.h).
#include "server/cluster/node.h"

#include <fmt/format.h>

#include "server/cluster/placement.h"
#include "server/flows/local_placement.h"

namespace rtsql {

namespace {

// The cluster's catalog topic as a CatalogStore: one entry per object, each
// change another node writes handed over as it is read.
class ClusterCatalogStore : public CatalogStore {
 public:
  explicit ClusterCatalogStore(std::shared_ptr<ClusterCatalog> cluster)
      : cluster_(std::move(cluster)) {}
  std::vector<CatalogRecord> load() override { return clusterRecords(cluster_->initial()); }
  void save(const std::vector<CatalogRecord>& records) override {
    cluster_->publish(clusterEntries(records));
  }
  std::string where() const override { return clusterCatalogTopic(cluster_->options().name); }
  void follow(std::function<void(const std::vector<StoredChange>&)> apply) override {
    cluster_->follow([apply = std::move(apply)](const std::vector<ClusterEntry>& entries) {
      std::vector<StoredChange> changes;
      for (const ClusterEntry& entry : entries) {
        const auto [kind, name] = splitClusterKey(entry.key);
        StoredChange change{kind, name, {}};
        if (entry.records && !entry.records->empty()) change.records = clusterRecords({entry});
        changes.push_back(std::move(change));
      }
      apply(changes);
    });
  }
  void stop() override { cluster_->stop(); }

 private:
  std::shared_ptr<ClusterCatalog> cluster_;
};

}  // namespace

std::unique_ptr<Placement> makePlacement(const std::shared_ptr<ClusterCatalog>& cluster,
                                         const std::string& dataDir) {
  if (!cluster) return std::make_unique<LocalPlacement>();
  return std::make_unique<ClusterPlacement>(cluster->options(), dataDir);
}

std::unique_ptr<CatalogStore> makeCatalogStore(const std::shared_ptr<ClusterCatalog>& cluster,
                                               const std::string& dataDir) {
  if (cluster) return std::make_unique<ClusterCatalogStore>(cluster);
  if (dataDir.empty()) return nullptr;
  return std::make_unique<FileCatalogStore>(dataDir);
}

}  // namespace rtsql
