// The catalog of a cluster (`rtsqld --cluster NAME --kafka BOOTSTRAP`): one
// compacted Kafka topic, `_rtsql-<NAME>-catalog`, that every node of the
// cluster reads from its start and writes its DDL into.
//
// Topic layout (one partition, cleanup.policy=compact): one record per catalog
// object, keyed by its kind and lower-cased name, whose value is a catalog
// file (server/catalog_file.h) holding the object's records:
//   function/<name>   the CREATE FUNCTION
//   processor/<name>  the CREATE PROCESSOR
//   source/<name>     the CREATE SOURCE
//   sink/<name>       the CREATE SINK
//   table/<name>      the CREATE TABLE, then each INSERT into it in order
//   flow/<name>       the CREATE FLOW (with whether it should run and its
//                     session settings); which node runs it is the cluster's
//                     group's choice (server/cluster/membership.h)
//   block/            before the records of a write that changes more than
//                     one object: their keys (server/cluster/catalog_block.h)
// A DROP writes a tombstone (no value) under the object's key. A statement's
// records are written in one Kafka transaction; compaction keeps each key's
// last record at its offset, so replaying the topic in offset order creates
// each object after those it depends on, as the catalog file's order does.
//
// A damaged record (a value that is not a catalog file) stands for its key
// until a later record or tombstone of that key replaces it: replaying the
// topic, such a record is remembered and the replay goes on, and only one
// that is still its key's last record when the replay ends stops the node,
// with an error naming the topic, partition, offset and key. `rtsqld
// --cluster-repair` (ClusterCatalog::repair) writes a tombstone for each such
// key, which drops that object from the catalog (docs/operations.md). A
// damaged record another node writes while this one runs is logged and
// skipped.
//
// One order for the whole cluster. Every write goes through a transactional
// producer whose transactional.id is the cluster's own, so a node that starts
// a write fences any other node's write in progress (Kafka aborts it). After
// the fence the writer makes sure it has read every committed record, and that
// none of them changes an object it has not applied yet: otherwise another
// node changed the catalog at the same moment, and the statement fails with
// 40001 (run it again) and changes nothing. So every node sees the same
// statements in the same order, and a statement is checked against the catalog
// as the whole cluster has it.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "server/catalog_file.h"
#include "server/cluster/options.h"

namespace rtsql {

// One object of the catalog topic: its key and its records (none: dropped).
struct ClusterEntry {
  std::string key;
  std::optional<std::vector<CatalogRecord>> records;
};

// The topic's entries for a catalog file's records (in its order): one per
// object, a table's INSERTs in the table's entry.
std::vector<ClusterEntry> clusterEntries(const std::vector<CatalogRecord>& records);
// The records of entries, in order, as a catalog file holds them.
std::vector<CatalogRecord> clusterRecords(const std::vector<ClusterEntry>& entries);
// The key of an object ("source/orders"), and the kind and lower-cased name of a key.
std::string clusterKey(const std::string& kind, const std::string& name);
std::pair<std::string, std::string> splitClusterKey(const std::string& key);
// The name a cluster must have: what may stand in a Kafka topic name, at most
// 200 characters. Throws SqlError 22023 naming the rule.
void checkClusterName(const std::string& name);
std::string clusterCatalogTopic(const std::string& cluster);
// The topic of the state copy of the flow whose stable id is `flowId`
// (connectors/kafka/state_copy_topic.h).
std::string clusterStateTopic(const std::string& cluster, const std::string& flowId);

// A record of the catalog topic that is not a catalog entry.
struct DamagedCatalogRecord {
  int64_t offset = 0;
  std::string key;
  std::string why;  // what parseCatalogFile said
};

// The replay of the catalog topic from its start: each key's last record
// wins, as compaction would keep it, and a damaged record counts as its key's
// last until a later record or tombstone of the key comes (see above).
class CatalogReplay {
 public:
  explicit CatalogReplay(std::string topic) : topic_(std::move(topic)) {}
  // The record at `offset` of the topic's partition 0, in offset order;
  // `value` is null for a tombstone.
  void add(int64_t offset, const std::string& key, const std::string* value);
  // The keys' last records, in the order they were written; damaged ones
  // and tombstoned keys left out.
  const std::vector<ClusterEntry>& entries() const { return entries_; }
  // The value of each key in entries().
  const std::map<std::string, std::string>& values() const { return values_; }
  // The damaged records that are still their key's last, by offset.
  std::vector<DamagedCatalogRecord> damaged() const;
  // Throws SqlError 58030 naming the topic, partition, offset and key of the
  // first of damaged(), with a hint at --cluster-repair.
  void requireIntact() const;

 private:
  std::string topic_;
  std::vector<ClusterEntry> entries_;
  std::map<std::string, std::string> values_;
  std::map<std::string, DamagedCatalogRecord> damaged_;
};

// A record key as a message shows it: JSON-quoted, cut at 200 bytes.
std::string shownCatalogKey(const std::string& key);

class ClusterCatalog {
 public:
  // Creates the catalog topic when it is missing and reads it to its end.
  // Throws SqlError 08006 when the Kafka cannot be reached, 58030 when a
  // record is not a catalog entry.
  explicit ClusterCatalog(ClusterOptions options);
  ~ClusterCatalog();
  ClusterCatalog(const ClusterCatalog&) = delete;
  ClusterCatalog& operator=(const ClusterCatalog&) = delete;

  const ClusterOptions& options() const { return options_; }

  // rtsqld --cluster-repair: reads the catalog topic of the cluster `options`
  // names to its end and writes, in one transaction of the cluster's writer
  // (which fences any node's write in progress, after which the topic is read
  // to its end again), a tombstone for every key whose last record is
  // damaged. Returns those records (none: nothing to repair). Throws SqlError
  // 08006 when the Kafka cannot be reached; then nothing is written.
  static std::vector<DamagedCatalogRecord> repair(const ClusterOptions& options);

  // The catalog as the topic held it when this node started, in offset order.
  std::vector<ClusterEntry> initial() const;

  // Calls `apply` on a thread of its own for every entry another node writes
  // from now on (entries equal to what this node already has are skipped), in
  // the topic's order: a block's entries (catalog_block.h) in one call, once
  // all of them have been read, any other entry on its own. `apply` may
  // throw; the error is logged and the entries count as applied.
  void follow(std::function<void(const std::vector<ClusterEntry>&)> apply);

  // Writes the entries that differ between what the cluster has and `next`
  // (the whole catalog as it is to be), as one transaction. Throws 40001 when
  // another node wrote to the catalog since this node last read it, 08006
  // when the Kafka cannot be reached; then nothing is written.
  void publish(const std::vector<ClusterEntry>& next);

  void stop();

 private:
  struct Impl;
  ClusterOptions options_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace rtsql
