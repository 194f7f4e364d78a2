// Blocks of a cluster's catalog topic (server/cluster/catalog_block.h): the
// records one write changes together reach a following node as one group,
// only once all of them are read; a replay from the topic's start ignores the
// block record; a topic without blocks reads as before.
#include "server/cluster/catalog_block.h"

#include <doctest/doctest.h>

#include "common/error.h"

using namespace rtsql;

namespace {

ClusterEntry entry(const std::string& key, const std::string& sql) {
  CatalogRecord r;
  r.kind = splitClusterKey(key).first;
  r.name = splitClusterKey(key).second;
  r.sql = sql;
  return ClusterEntry{key, std::vector<CatalogRecord>{r}};
}

ClusterEntry tombstone(const std::string& key) { return ClusterEntry{key, std::nullopt}; }

}  // namespace

TEST_CASE("a block record names its keys, and back; anything else is refused") {
  const std::vector<std::string> keys = {"source/s", "flow/f", "sink/old"};
  const std::string value = formatCatalogBlock(keys);
  CHECK(parseCatalogBlock(value) == keys);
  CHECK(isCatalogBlockKey(kCatalogBlockKey));
  CHECK_FALSE(isCatalogBlockKey("flow/block"));
  CHECK_THROWS_AS(parseCatalogBlock("not a catalog file"), SqlError);
  CatalogRecord flow;
  flow.kind = "flow";
  flow.name = "f";
  CHECK_THROWS_AS(parseCatalogBlock(formatCatalogFile({flow})), SqlError);
}

TEST_CASE("a block's entries are handed over together, only after the last of them") {
  CatalogBlockReader reader;
  CHECK(reader.startBlock({"source/s", "flow/f", "sink/old"}).empty());
  CHECK(reader.waiting());
  // Two of three read: nothing is applied yet, however long the rest takes.
  CHECK(reader.add(entry("source/s", "CREATE SOURCE s"), false).empty());
  CHECK(reader.add(entry("flow/f", "CREATE FLOW f"), false).empty());
  CHECK(reader.waiting());
  auto ready = reader.add(tombstone("sink/old"), false);
  REQUIRE(ready.size() == 1);
  REQUIRE(ready[0].size() == 3);
  CHECK(ready[0][0].key == "source/s");
  CHECK(ready[0][1].key == "flow/f");
  CHECK(ready[0][2].key == "sink/old");
  CHECK_FALSE(ready[0][2].records);
  CHECK_FALSE(reader.waiting());
}

TEST_CASE("entries outside a block, and a topic without blocks, are handed over one by one") {
  CatalogBlockReader reader;
  auto one = reader.add(entry("source/s", "CREATE SOURCE s"), false);
  REQUIRE(one.size() == 1);
  CHECK(one[0].size() == 1);
  CHECK(reader.add(entry("flow/f", "CREATE FLOW f"), true).empty());  // this node's own
}

TEST_CASE("a node's own block counts to its end but hands nothing over") {
  CatalogBlockReader reader;
  reader.startBlock({"source/s", "flow/f"});
  CHECK(reader.add(entry("source/s", "CREATE SOURCE s"), true).empty());
  CHECK(reader.add(entry("flow/f", "CREATE FLOW f"), true).empty());
  CHECK_FALSE(reader.waiting());
  auto next = reader.add(entry("sink/k", "CREATE SINK k"), false);
  REQUIRE(next.size() == 1);
  CHECK(next[0][0].key == "sink/k");
}

TEST_CASE("a block cut short (compaction took part of it) is applied as far as it was read") {
  CatalogBlockReader reader;
  reader.startBlock({"source/s", "flow/f"});
  CHECK(reader.add(entry("source/s", "CREATE SOURCE s"), false).empty());
  // The next record is not the block's: what was read goes, then the record.
  auto ready = reader.add(entry("sink/k", "CREATE SINK k"), false);
  REQUIRE(ready.size() == 2);
  CHECK(ready[0].size() == 1);
  CHECK(ready[0][0].key == "source/s");
  CHECK(ready[1][0].key == "sink/k");
  // Likewise when the next block starts.
  reader.startBlock({"source/a", "flow/b"});
  CHECK(reader.add(entry("source/a", "CREATE SOURCE a"), false).empty());
  auto cut = reader.startBlock({"source/c", "flow/d"});
  REQUIRE(cut.size() == 1);
  CHECK(cut[0][0].key == "source/a");
  CHECK(reader.waiting());
}

TEST_CASE("a replay from the topic's start skips the block record") {
  CatalogReplay replay("_rtsql-c-catalog");
  const std::string block = formatCatalogBlock({"source/s", "flow/f"});
  const std::string source = formatCatalogFile(*entry("source/s", "CREATE SOURCE s").records);
  const std::string flow = formatCatalogFile(*entry("flow/f", "CREATE FLOW f").records);
  replay.add(0, kCatalogBlockKey, &block);
  replay.add(1, "source/s", &source);
  replay.add(2, "flow/f", &flow);
  REQUIRE(replay.entries().size() == 2);
  CHECK(replay.entries()[0].key == "source/s");
  CHECK(replay.entries()[1].key == "flow/f");
  CHECK(replay.damaged().empty());
  CHECK(clusterRecords(replay.entries()).size() == 2);
}
