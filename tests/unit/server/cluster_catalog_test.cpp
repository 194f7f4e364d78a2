// The layout of a cluster's catalog topic (server/cluster/catalog.h): one entry
// per object, keyed by kind and lower-cased name; a table's INSERTs inside
// the table's entry; and back to the records a restart replays, in the same
// order. Which node runs a flow is not in the catalog (the cluster's group
// decides it): the slot rule is tested here too.
#include "server/cluster/catalog.h"
#include "server/cluster/membership.h"

#include <doctest/doctest.h>

#include <set>

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

  std::vector<ClusterEntry> entries = clusterEntries(records);
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
  // A flow's entry is its CREATE FLOW alone.
  CHECK(entries[4].records->size() == 1);

  // And back: the records as the file holds them.
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
  // A dropped object's entry holds no records and gives none back.
  CHECK(clusterRecords({ClusterEntry{"source/orders", std::nullopt}}).empty());
}

TEST_CASE("an entry's value is a catalog file, so a damaged one is detected") {
  std::vector<ClusterEntry> entries =
      clusterEntries({record("sink", "out", "CREATE SINK out ...")});
  std::string value = formatCatalogFile(*entries[0].records);
  CHECK(parseCatalogFile(value).front().sql == "CREATE SINK out ...");
  value[value.size() - 3] ^= 0x20;
  CHECK_THROWS_AS(parseCatalogFile(value), SqlError);
}

TEST_CASE("an entry keeps its owner, and an entry of an earlier rtsqld has none") {
  CatalogRecord f = record("function", "f", "CREATE FUNCTION f(a INT) RETURNS INT AS a");
  f.owner = "alice";
  CatalogRecord flow = record("flow", "g", "CREATE FLOW g ...");
  flow.owner = "bob";
  flow.settings = {{"shuffle.partitions", "3"}};
  const std::vector<CatalogRecord> back = parseCatalogFile(formatCatalogFile({f, flow}));
  REQUIRE(back.size() == 2);
  CHECK(back[0].owner == "alice");
  CHECK(back[0].settings.empty());
  CHECK(back[1].owner == "bob");
  // The owner is not a session setting the flow is planned with.
  CHECK(back[1].settings == flow.settings);

  // A file written before owners were recorded loads with none.
  CatalogRecord old = record("flow", "g", "CREATE FLOW g ...");
  old.settings = {{"shuffle.partitions", "3"}};
  const std::vector<CatalogRecord> oldBack = parseCatalogFile(formatCatalogFile({old}));
  REQUIRE(oldBack.size() == 1);
  CHECK(oldBack[0].owner.empty());
  CHECK(oldBack[0].settings == old.settings);
}

namespace {

std::string entryValue(const std::string& kind, const std::string& name) {
  return formatCatalogFile({record(kind, name, "CREATE " + kind + " " + name + " ...")});
}

}  // namespace

TEST_CASE("replaying the catalog topic: a later record or tombstone settles a damaged one") {
  CatalogReplay replay("_rtsql-prod-catalog");
  const std::string source = entryValue("source", "s");
  const std::string sink = entryValue("sink", "out");
  const std::string garbage = "not a catalog entry";
  replay.add(0, "source/s", &source);
  replay.add(1, "source/s", &garbage);  // damaged: it stands for source/s for now
  replay.add(2, "sink/out", &garbage);
  replay.add(3, "source/s", nullptr);  // a tombstone wins over it
  replay.add(4, "sink/out", &sink);    // and so does a record
  CHECK(replay.damaged().empty());
  CHECK_NOTHROW(replay.requireIntact());
  REQUIRE(replay.entries().size() == 1);
  CHECK(replay.entries()[0].key == "sink/out");
  CHECK(replay.values().count("source/s") == 0);
  CHECK(replay.values().at("sink/out") == sink);
}

TEST_CASE("replaying the catalog topic: a damaged last record is an error naming where it is") {
  CatalogReplay replay("_rtsql-prod-catalog");
  const std::string source = entryValue("source", "s");
  const std::string garbage = "not a catalog entry";
  replay.add(0, "source/s", &source);
  replay.add(1, "function/f", &source);
  replay.add(7, "source/s", &garbage);  // replaces the good one, as compaction would
  replay.add(8, "flow/\x01odd", &garbage);
  REQUIRE(replay.damaged().size() == 2);
  CHECK(replay.damaged()[0].offset == 7);
  CHECK(replay.damaged()[0].key == "source/s");
  REQUIRE(replay.entries().size() == 1);
  CHECK(replay.entries()[0].key == "function/f");
  try {
    replay.requireIntact();
    FAIL("a damaged catalog was taken");
  } catch (const SqlError& e) {
    CHECK(e.sqlstate() == std::string("58030"));
    const std::string m = e.message();
    CHECK_MESSAGE(m.find("offset 7") != std::string::npos, m);
    CHECK_MESSAGE(m.find("topic _rtsql-prod-catalog partition 0") != std::string::npos, m);
    CHECK_MESSAGE(m.find("key \"source/s\"") != std::string::npos, m);
    CHECK_MESSAGE(m.find("(2 damaged keys in all)") != std::string::npos, m);
    CHECK_MESSAGE(e.hint().find("--cluster-repair") != std::string::npos, e.hint());
  }
  // A key that is not text is shown escaped, and a long one cut.
  CHECK(shownCatalogKey("flow/\x01odd") == "\"flow/\\u0001odd\"");
  CHECK(shownCatalogKey(std::string(300, 'k')).find("first 200 of 300 bytes") != std::string::npos);
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

TEST_CASE("a catalog of an earlier rtsqld, with a node after each flow, replays without it") {
  ClusterEntry flow{"flow/f", std::vector<CatalogRecord>{record("flow", "f", "CREATE FLOW f ..."),
                                                         record("node", "node-a", "")}};
  std::vector<CatalogRecord> back = clusterRecords({flow});
  REQUIRE(back.size() == 1);
  CHECK(back[0].kind == "flow");
}

TEST_CASE("a flow's slot is the same on every node, whatever case its name is written in") {
  CHECK(clusterSlotsTopic("prod") == "_rtsql-prod-slots");
  CHECK(flowSlot("Orders_Per_Minute", 16) == flowSlot("orders_per_minute", 16));
  // Every slot is used by some name: the hash spreads flows over them.
  std::set<int> used;
  for (int i = 0; i < 400; ++i) {
    int slot = flowSlot("flow_" + std::to_string(i), 16);
    CHECK(slot >= 0);
    CHECK(slot < 16);
    used.insert(slot);
  }
  CHECK(used.size() == 16);
  CHECK(flowSlot("x", 1) == 0);
}
