// A block of the cluster's catalog topic (server/cluster/catalog.h): the
// records one catalog write changes together (a transaction block's COMMIT,
// or any statement that changes more than one object), announced by a
// record of their own so that every node applies them all at once.
//
// A write of more than one record starts with a block record, key `block/`,
// whose value is a catalog file (server/catalog_file.h) holding one record
// of kind "block" per key the write changes, in the order they follow. All
// of them are one Kafka transaction, so a node reading with read_committed
// sees either none of them or, in time, all; the block record lets it wait
// for the last before it applies the first. Its key is one for the whole
// topic: compaction keeps only the newest, which a replay from the start
// does not need (it applies the whole catalog at once anyway). A topic
// written before blocks existed has none, and reads as before; a node of an
// earlier rtsqld reads a block record as an object of an unknown kind, logs
// it and goes on.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "server/cluster/catalog.h"

namespace rtsql {

inline constexpr const char* kCatalogBlockKey = "block/";

// Whether a record's key is a block record's.
bool isCatalogBlockKey(const std::string& key);
// The block record's value for writes of these keys, and back. Throws
// SqlError 58030 when the value is not one.
std::string formatCatalogBlock(const std::vector<std::string>& keys);
std::vector<std::string> parseCatalogBlock(const std::string& value);

// Groups what a node reads from the topic into what it applies at once: a
// block's entries together, once the last of them has been read; any other
// entry on its own. Entries the node has already (its own writes) still
// count towards the block's end, but are not handed over.
class CatalogBlockReader {
 public:
  // A block record: the keys that follow it. Returns what an earlier block
  // cut short had read (see catalog_block.cpp).
  std::vector<std::vector<ClusterEntry>> startBlock(std::vector<std::string> keys);
  // An entry read; `skip` when the node has it already. Returns what is
  // ready to apply (none while a block waits for more of its entries).
  std::vector<std::vector<ClusterEntry>> add(ClusterEntry entry, bool skip);
  // Whether a block has been read in part.
  bool waiting() const { return open_.has_value(); }

 private:
  struct Open {
    std::multiset<std::string> expected;
    std::vector<ClusterEntry> entries;
  };
  std::optional<Open> open_;
};

}  // namespace rtsql
