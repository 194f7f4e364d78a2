// Number literals with a point in flows (planner/planner.h,
// kDecimalLiteralsSetting): a flow records that it reads 1.5 as a DECIMAL,
// and one recorded before that (no such setting) goes on reading it as a
// DOUBLE after a restart, so its output types and state stay what they were.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "server/catalog_file.h"
#include "server/engine.h"
#include "server_test_util.h"

using namespace rtsql;
using rtsql::testing::RestoredEngine;
using rtsql::testing::ResultCapture;

namespace {

using Fixture = rtsql::testing::EngineFixture<>;

// The type DESCRIBE gives the flow's output column `column`.
std::string columnType(RestoredEngine& e, const std::string& flow, const std::string& column) {
  ResultCapture r = e.run("DESCRIBE " + flow);
  rtsql::testing::requireOk(r, "DESCRIBE " + flow);
  for (const auto& row : r.rows) {
    if (row.size() >= 2 && row[0] == column) return row[1].value_or("NULL");
  }
  return "no such column";
}

}  // namespace

TEST_CASE_FIXTURE(Fixture, "a flow recorded before decimal literals reads 1.5 as a DOUBLE after a restart") {
  const std::string sink = "CREATE SINK out WITH (connector = 'file', path = '" +
                           (tmp.path / "out.jsonl").string() + "')";
  {
    RestoredEngine first(options, connectors);
    first.runAll({"CREATE SOURCE gen (a BIGINT) WITH (connector = 'datagen', rowsPerSecond = '1')",
                  sink,
                  "CREATE FLOW old INTO out AS SELECT a, a / 3.0 AS third FROM gen",
                  "CREATE FLOW fresh INTO out AS SELECT a, a / 3.0 AS third FROM gen",
                  "STOP FLOW old", "STOP FLOW fresh"});
    CHECK(columnType(first, "fresh", "third") == "DECIMAL(27,6)");
    first.engine.shutdown();
  }
  // Both recorded the setting; "old" is made to look as an rtsqld before it
  // wrote it.
  const std::string path = (dataDir() / "catalog").string();
  std::vector<CatalogRecord> records = readCatalogFile(path);
  int recorded = 0;
  for (CatalogRecord& r : records) {
    if (r.kind != "flow") continue;
    for (const auto& [k, v] : r.settings) recorded += k == "rtsql.decimal_literals" && v == "on";
    if (r.name == "old")
      std::erase_if(r.settings, [](const auto& kv) { return kv.first == "rtsql.decimal_literals"; });
  }
  CHECK(recorded == 2);
  writeCatalogFile(path, records);

  RestoredEngine restarted(options, connectors);
  CHECK(columnType(restarted, "old", "third") == "DOUBLE");
  CHECK(columnType(restarted, "fresh", "third") == "DECIMAL(27,6)");
  // A new session's statements read it as a DECIMAL.
  ResultCapture r = restarted.run("SELECT typeof(1.5)");
  rtsql::testing::requireOk(r, "SELECT typeof(1.5)");
  REQUIRE(r.rows.size() == 1);
  CHECK(r.rows[0][0] == "decimal(2,1)");
  restarted.engine.shutdown();
}
