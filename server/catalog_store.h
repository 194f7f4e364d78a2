// Where the catalog outlives the process: the data directory's catalog file
// (server/catalog_file.h) for a server of its own, the cluster's catalog
// topic (server/cluster/catalog.h) for a node of a cluster. The engine
// writes the whole catalog through it before a statement changes anything
// in memory, and replays what it loads at start; a store that others write
// too (the cluster's) also hands over their changes as they come.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "server/catalog_file.h"

namespace rtsql {

// An object another writer of the store changed: its kind ("source", ...,
// "flow"), its lower-cased name and its records (none: dropped).
struct StoredChange {
  std::string kind;
  std::string name;
  std::vector<CatalogRecord> records;
};

class CatalogStore {
 public:
  virtual ~CatalogStore() = default;
  // The records as the store holds them, in replay order.
  virtual std::vector<CatalogRecord> load() = 0;
  // Makes `records` what the store holds. Throws SqlError (58030, and for a
  // cluster 40001 or 08006); then nothing is written.
  virtual void save(const std::vector<CatalogRecord>& records) = 0;
  // Where it is, for the log.
  virtual std::string where() const = 0;
  // Calls `apply` on a thread of the store's for every change another writer
  // makes from now on, in order: the changes one write made together (a
  // transaction block's) in one call; `apply` may throw (logged). Until stop().
  virtual void follow(std::function<void(const std::vector<StoredChange>&)> apply) {
    (void)apply;
  }
  virtual void stop() {}
};

class FileCatalogStore : public CatalogStore {
 public:
  explicit FileCatalogStore(std::string dataDir) : dataDir_(std::move(dataDir)) {}
  std::vector<CatalogRecord> load() override { return readCatalogFile(path()); }
  void save(const std::vector<CatalogRecord>& records) override {
    writeCatalogFile(path(), records);
  }
  std::string where() const override { return dataDir_; }

 private:
  std::string path() const { return (std::filesystem::path(dataDir_) / "catalog").string(); }
  std::string dataDir_;
};

}  // namespace rtsql
