// The layout of a cluster's catalog topic (server/cluster_catalog.h): one entry
// per object, keyed by kind and lower-cased name; a table's INSERTs and a
// flow's node inside the object's entry; and back to the records a restart
// replays, in the same order.
#include "server/cluster_catalog.h"

#include <doctest/doctest.h>

#include "common/error.h"

using namespace rtsql;

namespace {

CatalogRecord record(std::string kind, std::string name, std::string sql, bool running = true) {
  CatalogRecord r;
  r.kind = std::move(kind);
  r.name = std::move(name);
  r.sql = std::move(sql);
  r.running = running;
  return r;
}

}  // namespace

TEST_CASE("catalog records become one entry per object, keyed by kind and name") {
  std::vector<CatalogRecord> records = {
      record("function", "Twice", "CREATE FUNCTION Twice(x INT) RETURNS INT AS x * 2"),
      record("source", "Orders", "CREATE SOURCE Orders ..."),
      record("table", "names", "CREATE TABLE names (k STRING)"),
      record("insert", "names", "INSERT INTO names VALUES ('a')"),
      record("insert", "names", "INSERT INTO names VALUES ('b')"),
      record("sink", "out", "CREATE SINK out ..."),
      record("flow", "F1", "CREATE FLOW F1 ...", false),
      record("flow", "f2", "CREATE FLOW f2 ..."),
  };
  records[6].settings = {{"rtsql.dry_run", "off"}};
  records[7].node = "node-b";

  std::vector<ClusterEntry> entries = clusterEntries(records, "node-a");
  REQUIRE(entries.size() == 6);
  CHECK(entries[0].key == "function/twice");
  CHECK(entries[1].key == "source/orders");
  CHECK(entries[2].key == "table/names");
  CHECK(entries[3].key == "sink/out");
  CHECK(entries[4].key == "flow/f1");
  CHECK(entries[5].key == "flow/f2");
  // The table's INSERTs ride in its entry, in order.
  REQUIRE(entries[2].records->size() == 3);
  CHECK((*entries[2].records)[2].sql == "INSERT INTO names VALUES ('b')");
  // A flow's entry names its node: its own, or the writer's.
  REQUIRE(entries[4].records->size() == 2);
  CHECK((*entries[4].records)[1].kind == "node");
  CHECK((*entries[4].records)[1].name == "node-a");
  CHECK((*entries[5].records)[1].name == "node-b");

  // And back: the records as the file holds them, each flow with its node.
  std::vector<CatalogRecord> back = clusterRecords(entries);
  REQUIRE(back.size() == records.size());
  for (size_t i = 0; i < back.size(); ++i) {
    CAPTURE(i);
    CHECK(back[i].kind == records[i].kind);
    CHECK(back[i].name == records[i].name);
    CHECK(back[i].sql == records[i].sql);
    CHECK(back[i].running == records[i].running);
    CHECK(back[i].settings == records[i].settings);
  }
  CHECK(back[6].node == "node-a");
  CHECK(back[7].node == "node-b");
  // A dropped object's entry holds no records and gives none back.
  CHECK(clusterRecords({ClusterEntry{"source/orders", std::nullopt}}).empty());
}

TEST_CASE("an entry's value is a catalog file, so a damaged one is detected") {
  std::vector<ClusterEntry> entries =
      clusterEntries({record("sink", "out", "CREATE SINK out ...")}, "n");
  std::string value = formatCatalogFile(*entries[0].records);
  CHECK(parseCatalogFile(value).front().sql == "CREATE SINK out ...");
  value[value.size() - 3] ^= 0x20;
  CHECK_THROWS_AS(parseCatalogFile(value), SqlError);
}

TEST_CASE("cluster keys split into kind and name") {
  CHECK(clusterKey("source", "Orders") == "source/orders");
  CHECK(splitClusterKey("flow/a/b") == std::pair<std::string, std::string>{"flow", "a/b"});
  CHECK(splitClusterKey("odd") == std::pair<std::string, std::string>{"odd", ""});
}

TEST_CASE("a cluster's name must fit a Kafka topic name") {
  CHECK_NOTHROW(checkClusterName("prod-eu_1.a"));
  CHECK(clusterCatalogTopic("prod") == "_rtsql-prod-catalog");
  for (const char* bad : {"", "a/b", "a b", "caf\xc3\xa9"}) {
    CAPTURE(bad);
    try {
      checkClusterName(bad);
      FAIL("accepted");
    } catch (const SqlError& e) {
      CHECK(e.sqlstate() == std::string("22023"));
    }
  }
  CHECK_THROWS_AS(checkClusterName(std::string(201, 'a')), SqlError);
}
