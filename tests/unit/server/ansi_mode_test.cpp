// ANSI mode in flows (common/ansi_mode.h): a flow follows the mode it
// recorded when it was created, whatever its session SETs later, and a flow
// recorded before ANSI mode existed (no mode among its settings) keeps the
// legacy semantics after a restart instead of starting to fail rows.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "server/catalog_file.h"
#include "server/engine.h"
#include "server_test_util.h"

using namespace rtsql;
using rtsql::testing::RestoredEngine;
using rtsql::testing::ResultCapture;

namespace {

using Fixture = rtsql::testing::EngineFixture<>;

std::pair<FlowState, std::string> stateOf(Engine& engine, const std::string& name) {
  for (const auto& info : engine.flowInfos(false)) {
    if (info.name == name) return {info.state, info.failure};
  }
  return {FlowState::Stopped, "no such flow"};
}

std::string readAll(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool failedDividingByZero(Engine& engine, const std::string& name) {
  auto [state, why] = stateOf(engine, name);
  return state == FlowState::Failed && why.find("DIVIDE_BY_ZERO") != std::string::npos;
}

}  // namespace

TEST_CASE_FIXTURE(Fixture, "a flow keeps the ANSI mode it was created with; one recorded without a mode keeps the legacy one") {
  const auto legacyOut = tmp.path / "legacy.jsonl";
  const auto ansiOut = tmp.path / "ansi.jsonl";
  {
    RestoredEngine first(options, connectors);
    // Every row divides by zero: NULL in the legacy mode, 22012 in ANSI mode.
    first.runAll({"CREATE SOURCE gen (a BIGINT) WITH (connector = 'datagen', rowsPerSecond = '20')",
                  "CREATE SINK legacy_out WITH (connector = 'file', path = '" +
                      legacyOut.string() + "')",
                  "CREATE SINK ansi_out WITH (connector = 'file', path = '" + ansiOut.string() +
                      "')",
                  "CREATE FLOW old INTO legacy_out AS SELECT a, 1 / (a - a) AS z FROM gen",
                  "STOP FLOW old",
                  "CREATE FLOW fresh INTO ansi_out AS SELECT a, 1 / (a - a) AS z FROM gen",
                  // A later SET changes nothing of a flow that exists.
                  "SET ansi_mode = off"});
    CHECK(rtsql::testing::eventually([&] { return failedDividingByZero(first.engine, "fresh"); },
                                     std::chrono::milliseconds(20000)));
    first.engine.shutdown();
  }
  // The flows recorded the mode they were created under, and "old" is made
  // to look as an rtsqld before ANSI mode wrote it: no mode, and running.
  const std::string path = (dataDir() / "catalog").string();
  std::vector<CatalogRecord> records = readCatalogFile(path);
  int recorded = 0;
  for (CatalogRecord& r : records) {
    if (r.kind != "flow") continue;
    for (const auto& [k, v] : r.settings) recorded += k == "ansi_mode" && v == "on";
    r.running = true;
    if (r.name == "old")
      std::erase_if(r.settings, [](const auto& kv) { return kv.first == "ansi_mode"; });
  }
  CHECK(recorded == 2);
  writeCatalogFile(path, records);

  RestoredEngine restarted(options, connectors);
  // The legacy flow runs on and writes NULLs; the new one fails again.
  CHECK(rtsql::testing::eventually(
      [&] { return readAll(legacyOut).find("\"z\":null") != std::string::npos; },
      std::chrono::milliseconds(20000)));
  CHECK(stateOf(restarted.engine, "old").first == FlowState::Running);
  CHECK(rtsql::testing::eventually(
      [&] { return failedDividingByZero(restarted.engine, "fresh"); },
      std::chrono::milliseconds(20000)));
  restarted.engine.shutdown();
}

TEST_CASE_FIXTURE(Fixture, "SET ansi_mode takes on/off and Spark's spelling, and SHOW answers on or off") {
  RestoredEngine e(options, connectors);
  auto show = [&](const std::string& sql) {
    ResultCapture c = e.run(sql);
    REQUIRE_MESSAGE(!c.err, sql);
    REQUIRE(c.rows.size() == 1);
    return c.rows[0][0];
  };
  CHECK(show("SHOW ansi_mode") == "on");
  e.runAll({"SET spark.sql.ansi.enabled = false"});
  CHECK(show("SHOW ansi_mode") == "off");
  CHECK(show("SHOW spark.sql.ansi.enabled") == "off");
  CHECK(show("SELECT coalesce(CAST('x' AS INT), -1)") == "-1");
  e.runAll({"SET ansi_mode = ON"});
  CHECK(show("SHOW ansi_mode") == "on");
  ResultCapture bad = e.run("SELECT CAST('x' AS INT)");
  REQUIRE(bad.err);
  CHECK(bad.err->sqlstate() == "22018");
  ResultCapture wrong = e.run("SET ansi_mode = maybe");
  REQUIRE(wrong.err);
  CHECK(wrong.err->sqlstate() == "22023");
}
