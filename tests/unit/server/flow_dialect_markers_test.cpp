// Avro and protobuf floats in flows (planner/format_floats.h), and TIMESTAMP
// literals (planner/timestamp_literals.h): a flow records that it reads them
// as FLOAT and in its zone, and one recorded before that (no such setting) is
// restored reading them as DOUBLE and in UTC, which it then keeps recording.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "planner/format_floats.h"
#include "planner/timestamp_literals.h"
#include "server/catalog_file.h"
#include "server/engine.h"
#include "server_test_util.h"

using namespace rtsql;
using rtsql::testing::RestoredEngine;

namespace {

using Fixture = rtsql::testing::EngineFixture<>;

// The value flow `name` recorded for `setting`, or "none".
std::string recorded(const std::vector<CatalogRecord>& records, const std::string& name,
                     const std::string& setting = kFormatFloatsSetting) {
  for (const CatalogRecord& r : records) {
    if (r.kind != "flow" || r.name != name) continue;
    for (const auto& [k, v] : r.settings)
      if (k == setting) return v;
  }
  return "none";
}

}  // namespace

TEST_CASE_FIXTURE(Fixture, "a flow recorded before floats were FLOATs keeps reading DOUBLEs") {
  const std::string sink = "CREATE SINK out WITH (connector = 'file', path = '" +
                           (tmp.path / "out.jsonl").string() + "')";
  const std::string path = (dataDir() / "catalog").string();
  {
    RestoredEngine first(options, connectors);
    first.runAll({"CREATE SOURCE gen (a BIGINT) WITH (connector = 'datagen', rowsPerSecond = '1')",
                  sink, "CREATE FLOW old INTO out AS SELECT a FROM gen",
                  "CREATE FLOW fresh INTO out AS SELECT a FROM gen", "STOP FLOW old",
                  "STOP FLOW fresh"});
    first.engine.shutdown();
  }
  std::vector<CatalogRecord> records = readCatalogFile(path);
  CHECK(recorded(records, "old") == "on");
  CHECK(recorded(records, "fresh") == "on");
  CHECK(recorded(records, "fresh", kTimestampLiteralsSetting) == "on");
  // "old" is made to look as an rtsqld before it wrote the settings.
  for (CatalogRecord& r : records) {
    if (r.name == "old") {
      std::erase_if(r.settings, [](const auto& kv) {
        return kv.first == kFormatFloatsSetting || kv.first == kTimestampLiteralsSetting;
      });
    }
  }
  writeCatalogFile(path, records);
  {
    RestoredEngine restarted(options, connectors);
    // Any change writes the catalog again, with each flow's settings.
    restarted.runAll({"START FLOW fresh", "STOP FLOW fresh"});
    restarted.engine.shutdown();
  }
  records = readCatalogFile(path);
  CHECK(recorded(records, "old") == "off");
  CHECK(recorded(records, "fresh") == "on");
  CHECK(recorded(records, "old", kTimestampLiteralsSetting) == "off");
  CHECK(recorded(records, "fresh", kTimestampLiteralsSetting) == "on");
}
