#include "server/cluster/catalog_block.h"

#include "common/error.h"

namespace rtsql {

bool isCatalogBlockKey(const std::string& key) {
  return splitClusterKey(key).first == "block";
}

std::string formatCatalogBlock(const std::vector<std::string>& keys) {
  std::vector<CatalogRecord> records;
  records.reserve(keys.size());
  for (const std::string& key : keys) {
    CatalogRecord r;
    r.kind = "block";
    r.name = key;
    records.push_back(std::move(r));
  }
  return formatCatalogFile(records);
}

std::vector<std::string> parseCatalogBlock(const std::string& value) {
  std::vector<std::string> keys;
  for (const CatalogRecord& r : parseCatalogFile(value)) {
    if (r.kind != "block") throw SqlError(sqlstate::kIoError, "not a catalog block record");
    keys.push_back(r.name);
  }
  return keys;
}

std::vector<std::vector<ClusterEntry>> CatalogBlockReader::startBlock(
    std::vector<std::string> keys) {
  // A block whose end never came (compaction took a record of it before this
  // node read it) is applied as far as it was read rather than held forever.
  std::vector<std::vector<ClusterEntry>> ready;
  if (open_ && !open_->entries.empty()) ready.push_back(std::move(open_->entries));
  open_.reset();
  if (keys.empty()) return ready;
  open_.emplace();
  open_->expected.insert(keys.begin(), keys.end());
  return ready;
}

std::vector<std::vector<ClusterEntry>> CatalogBlockReader::add(ClusterEntry entry, bool skip) {
  std::vector<std::vector<ClusterEntry>> ready;
  if (open_) {
    auto it = open_->expected.find(entry.key);
    if (it != open_->expected.end()) {
      open_->expected.erase(it);
      if (!skip) open_->entries.push_back(std::move(entry));
      if (open_->expected.empty()) {
        if (!open_->entries.empty()) ready.push_back(std::move(open_->entries));
        open_.reset();
      }
      return ready;
    }
    // An entry outside the block: the block ended early (see startBlock).
    if (!open_->entries.empty()) ready.push_back(std::move(open_->entries));
    open_.reset();
  }
  if (!skip) ready.push_back({std::move(entry)});
  return ready;
}

}  // namespace rtsql
