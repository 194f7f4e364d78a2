// The engine's durability: the catalog file brings every definition back in a
// new Engine on the same data directory, and a flow whose source cannot be
// reached at that moment is restored anyway, reported as recovering with the
// cause, and started by the supervisor once the source answers.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include "common/error.h"
#include "server/catalog_file.h"
#include "server/engine.h"
#include "server_test_util.h"

using namespace rtsql;
using rtsql::testing::RestoredEngine;
using rtsql::testing::ResultCapture;
using rtsql::testing::requireOk;
namespace fs = std::filesystem;

namespace {

// Sources that read nothing and sinks that drop rows; sourcePartitions()
// fails like an unreachable broker while `down` is set.
class FlakyProvider final : public ConnectorProvider {
 public:
  std::atomic<bool> down{false};

  int sourcePartitions(const ScanSpec&) override {
    if (down) throw SqlError(sqlstate::kConnectionFailure, "broker 127.0.0.1:1 is unreachable");
    return 1;
  }
  std::unique_ptr<SourceTask> openSource(const ScanSpec&, const std::string&, int, int) override {
    if (down) throw SqlError(sqlstate::kConnectionFailure, "broker 127.0.0.1:1 is unreachable");
    return std::make_unique<NullSource>();
  }
  std::unique_ptr<SinkWriter> openSink(const SinkSpec&, const std::string&, int) override {
    return std::make_unique<NullSink>();
  }

 private:
  class NullSource final : public SourceTask {
   public:
    void poll(std::vector<SourceRecord>&, size_t, int timeoutMs) override {
      std::this_thread::sleep_for(std::chrono::milliseconds(timeoutMs));
    }
    void commit() override {}
    std::vector<PartitionProgress> progress() const override { return {}; }
    int64_t decodeErrors() const override { return 0; }
    std::string description() const override { return "Null"; }
  };
  class NullSink final : public SinkWriter {
   public:
    void write(const Row&, int64_t) override {}
    void flush(int) override {}
    int64_t deliveryErrors() const override { return 0; }
    std::string description() const override { return "Null"; }
  };
};

// An engine's data directory, with connectors that can be made unreachable.
using Fixture = rtsql::testing::EngineFixture<FlakyProvider>;

}  // namespace

TEST_CASE_FIXTURE(Fixture, "a restarted engine restores the catalog, and a flow whose source is away recovers later") {
  const std::string out = (tmp.path / "out.jsonl").string();
  {
    RestoredEngine first(options, connectors);
    first.runAll({"CREATE SOURCE gen (a BIGINT) WITH (connector = 'datagen', rowsPerSecond = '1')",
                  "CREATE SINK out WITH (connector = 'file', path = '" + out + "')",
                  "CREATE TABLE codes (code STRING, label STRING)",
                  "INSERT INTO codes VALUES ('A', 'alpha'), ('B', 'beta')",
                  "CREATE FLOW f INTO out CHECKPOINT INTERVAL '7 seconds' "
                  "WITH ('shuffle.partitions' = '3') AS SELECT a FROM gen",
                  "CREATE FLOW g INTO out AS SELECT a + 1 AS b FROM gen", "STOP FLOW g"});
    first.engine.shutdown();
  }
  // The file is intact and lists what was created, in an order that replays.
  auto records = readCatalogFile((dataDir() / "catalog").string());
  REQUIRE(records.size() == 6);
  CHECK(records[0].kind == "source");
  CHECK(records[3].kind == "insert");
  CHECK(records[4].kind == "flow");
  CHECK(records[5].running == false);

  connectors.down = true;
  RestoredEngine restarted(options, connectors);
  Engine& engine = restarted.engine;
  ResultCapture tables = restarted.run("SHOW TABLES");
  REQUIRE(tables.rows.size() == 1);
  CHECK(tables.rows[0][2] == "2");  // the inserted rows came back

  auto stateOf = [&](const std::string& name) {
    for (const auto& info : engine.flowInfos(false)) {
      if (info.name == name) return std::make_pair(info.state, info.failure);
    }
    return std::make_pair(FlowState::Failed, std::string("no such flow"));
  };
  // The source is away: f is restored, recovering, with the cause and a retry.
  CHECK(rtsql::testing::eventually([&] {
    auto [state, why] = stateOf("f");
    return state == FlowState::Recovering && why.find("unreachable") != std::string::npos &&
           why.find("attempt") != std::string::npos;
  }));
  CHECK(stateOf("g").first == FlowState::Stopped);
  auto progress = engine.progress("f");
  REQUIRE(progress);
  CHECK(progress->find("\"state\":\"recovering\"") != std::string::npos);

  // Once the source answers, the supervisor plans and starts it.
  connectors.down = false;
  CHECK(rtsql::testing::eventually([&] { return stateOf("f").first == FlowState::Running; },
                                   std::chrono::milliseconds(10000)));
  CHECK(stateOf("g").first == FlowState::Stopped);
  // The definition learned what only the plan knows: its WITH options.
  ResultCapture describe = restarted.run("DESCRIBE f");
  bool sawOption = false;
  for (const auto& r : describe.rows) {
    sawOption = sawOption || (r[0] == "shuffle.partitions" && r[1] == "3");
  }
  CHECK(sawOption);
  engine.shutdown();
}

TEST_CASE_FIXTURE(Fixture, "a damaged catalog file stops the engine from starting") {
  {
    RestoredEngine first(options, connectors);
    first.runAll({"CREATE TABLE t (a INT)"});
    first.engine.shutdown();
  }
  fs::path file = dataDir() / "catalog";
  std::string text;
  {
    std::ifstream in(file, std::ios::binary);
    text.assign((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }
  {
    std::ofstream o(file, std::ios::binary | std::ios::trunc);
    o << text.substr(0, text.size() - 3);
  }
  Engine engine(options, connectors);
  try {
    engine.restore();
    FAIL("restore() accepted a torn catalog file");
  } catch (const SqlError& e) {
    CHECK(e.sqlstate() == "58030");
    CHECK(e.message().find("damaged") != std::string::npos);
  }
  engine.shutdown();
}

TEST_CASE_FIXTURE(Fixture, "a catalog path that is a directory stops the engine with an error naming it") {
  const fs::path catalog = dataDir() / "catalog";
  fs::create_directories(catalog);
  Engine engine(options, connectors);
  try {
    engine.restore();
    FAIL("restore() accepted a directory as the catalog file");
  } catch (const SqlError& e) {
    CHECK(e.sqlstate() == "58030");
    CHECK(e.message().find(catalog.string()) != std::string::npos);
    CHECK(e.message().find("not a regular file") != std::string::npos);
  }
  engine.shutdown();
}

namespace {

// The files under `root`, relative to it, with their sizes: what a test
// compares to see that nothing outside a data directory was touched.
std::map<std::string, uintmax_t> filesUnder(const fs::path& root) {
  std::map<std::string, uintmax_t> out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    out[fs::relative(it->path(), root).string()] = it->is_regular_file() ? it->file_size() : 0;
  }
  return out;
}

void writeFile(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

}  // namespace

TEST_CASE_FIXTURE(Fixture, "a flow's name never leads its files out of the data directory") {
  const fs::path data = dataDir();
  // Sentinels where the names would lead if they were paths: the data
  // directory itself (".."), a directory outside it (an absolute name), and
  // the data directory's "b" ("a/../../b" from flows/).
  const fs::path outside = tmp.path / "outside";
  writeFile(outside / "sentinel", "outside");
  writeFile(data / "b" / "sentinel", "b");
  writeFile(data / "keep", "keep");
  const auto before = filesUnder(tmp.path);

  const std::vector<std::string> names = {"..", outside.string(), "a/../../b", ".",
                                          std::string(3000, 'n'), "Quoted Name"};
  RestoredEngine server(options, connectors);
  Engine& engine = server.engine;
  server.runAll({"CREATE SOURCE gen (a BIGINT) WITH (connector = 'datagen', rowsPerSecond = '100')",
                 "CREATE SINK out WITH (connector = 'file', path = '" + (tmp.path / "out.jsonl").string() + "')"});
  auto quoted = [](const std::string& name) {
    std::string q = "\"";
    for (char c : name) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
  };
  for (const std::string& name : names) {
    ResultCapture c = server.run(
        "CREATE FLOW " + quoted(name) +
        " INTO out CHECKPOINT INTERVAL '1 second' WITH ('shuffle.partitions' = '1') AS SELECT a, count(*) AS n FROM gen GROUP BY a");
    REQUIRE_MESSAGE(!c.err, name, ": ", c.err ? c.err->message() : "");
  }
  // Every flow has written a checkpoint: its files exist.
  for (const std::string& name : names) {
    CHECK_MESSAGE(rtsql::testing::eventually(
                      [&] {
                        auto p = engine.progress(name);
                        return p && p->find("\"checkpoint\":{") != std::string::npos;
                      },
                      std::chrono::milliseconds(20000)),
                  name);
  }
  // Nothing outside data/flows changed but the catalog and the sink's file,
  // and each flow's files are in one directory of its own under data/flows.
  auto now = filesUnder(tmp.path);
  for (const auto& entry : before) CHECK_MESSAGE(now.count(entry.first) == 1, entry.first);
  std::set<std::string> flowDirs;
  for (const auto& entry : now) {
    const std::string& path = entry.first;
    if (before.count(path) || path == "data/catalog" || path == "out.jsonl" || path == "data/flows") continue;
    REQUIRE_MESSAGE(path.starts_with("data/flows/"), path);
    std::string rest = path.substr(std::string("data/flows/").size());
    flowDirs.insert(rest.substr(0, rest.find('/')));
  }
  CHECK(flowDirs.size() == names.size());
  for (const std::string& dir : flowDirs) CHECK_MESSAGE(dir.size() <= 255, dir);

  // Each DROP FLOW removes its own directory and nothing else.
  for (size_t i = 0; i < names.size(); ++i) {
    ResultCapture c = server.run("DROP FLOW " + quoted(names[i]));
    REQUIRE_MESSAGE(!c.err, names[i], ": ", c.err ? c.err->message() : "");
    now = filesUnder(tmp.path);
    for (const auto& entry : before) CHECK_MESSAGE(now.count(entry.first) == 1, entry.first);
    std::set<std::string> left;
    for (const auto& [path, size] : now) {
      if (!path.starts_with("data/flows/")) continue;
      std::string rest = path.substr(std::string("data/flows/").size());
      left.insert(rest.substr(0, rest.find('/')));
    }
    CHECK(left.size() == names.size() - i - 1);
  }
  CHECK(!server.run("SHOW TABLES").err);  // the catalog is still there
  CHECK(fs::exists(data / "catalog"));
  engine.shutdown();
}

TEST_CASE_FIXTURE(Fixture, "a statement the catalog file cannot record changes nothing and answers only its error") {
  const fs::path data = dataDir();
  const std::string out = (tmp.path / "out.jsonl").string();
  RestoredEngine server(options, connectors);
  Engine& engine = server.engine;
  server.runAll({"CREATE SOURCE gen (a BIGINT) WITH (connector = 'datagen', rowsPerSecond = '1')",
                 "CREATE SINK out WITH (connector = 'file', path = '" + out + "')",
                 "CREATE TABLE t (code STRING)", "INSERT INTO t VALUES ('A'), ('B')",
                 "CREATE FLOW f INTO out AS SELECT a FROM gen",
                 "CREATE FLOW g INTO out AS SELECT a FROM gen", "STOP FLOW g"});
  auto stateOf = [&](const std::string& name) -> std::optional<FlowState> {
    for (const auto& info : engine.flowInfos(false)) {
      if (info.name == name) return info.state;
    }
    return std::nullopt;
  };
  auto tableRows = [&]() -> std::optional<std::string> {
    ResultCapture c = server.run("SHOW TABLES");
    if (c.rows.empty()) return std::nullopt;
    return c.rows[0][2];
  };
  auto relations = [&](const std::string& what) {
    return server.run("SHOW " + what).rows.size();
  };
  REQUIRE(tableRows() == "2");
  REQUIRE(stateOf("f") == FlowState::Running);

  // A directory where the catalog file goes: every write of it fails.
  const fs::path catalog = data / "catalog";
  fs::rename(catalog, data / "catalog.saved");
  fs::create_directory(catalog);
  for (const std::string& sql :
       {std::string("DROP TABLE t"), std::string("CREATE TABLE u (a INT)"),
        std::string("INSERT INTO t VALUES ('C')"),
        std::string("CREATE SOURCE gen2 (a BIGINT) WITH (connector = 'datagen')"),
        "CREATE SINK out2 WITH (connector = 'file', path = '" + out + "2')",
        std::string("CREATE FLOW h INTO out AS SELECT a FROM gen"), std::string("DROP FLOW f"),
        std::string("STOP FLOW f"), std::string("START FLOW g"), std::string("DROP FLOW g"),
        std::string("DROP SINK out2"), std::string("DROP TABLE IF EXISTS nothing")}) {
    ResultCapture c = server.run(sql);
    if (sql == "DROP SINK out2" || sql == "DROP TABLE IF EXISTS nothing") {
      // Nothing to change: nothing to write. (out2 was never created.)
      CHECK(c.results == 1);
      continue;
    }
    REQUIRE_MESSAGE(c.err, sql);
    CHECK_MESSAGE(c.err->sqlstate() == "58030", sql);
    CHECK_MESSAGE(c.results == 1, sql);
  }
  // Everything is as it was, and queryable.
  CHECK(tableRows() == "2");
  CHECK(relations("TABLES") == 1);
  CHECK(relations("SOURCES") == 1);
  CHECK(relations("SINKS") == 1);
  CHECK(relations("FLOWS") == 2);
  CHECK(stateOf("f") == FlowState::Running);
  CHECK(stateOf("g") == FlowState::Stopped);
  CHECK(!stateOf("h"));
  CHECK(!fs::exists(data / "flows" / "h"));

  // Once the file can be written again, the same statements work, and a
  // restart sees what they did.
  fs::remove(catalog);
  fs::rename(data / "catalog.saved", catalog);
  ResultCapture drop = server.run("DROP TABLE t");
  CHECK(!drop.err);
  CHECK(drop.results == 1);
  CHECK(relations("TABLES") == 0);
  engine.shutdown();
  auto records = readCatalogFile(catalog.string());
  for (const auto& r : records) CHECK(r.name != "t");
}

TEST_CASE_FIXTURE(Fixture, "a flow directory of the earlier layout is moved to the encoded name and restored") {
  const fs::path data = dataDir();
  {
    RestoredEngine first(options, connectors);
    first.runAll({"CREATE SOURCE gen (a BIGINT) WITH (connector = 'datagen', rowsPerSecond = '10')",
                  "CREATE SINK out WITH (connector = 'file', path = '" + (tmp.path / "out.jsonl").string() + "')",
                  "CREATE FLOW \"My.Flow\" INTO out CHECKPOINT INTERVAL '1 second' "
                  "WITH ('shuffle.partitions' = '1') AS SELECT a FROM gen"});
    first.engine.shutdown();  // a final checkpoint
  }
  // The earlier layout: the lower-cased name as it was.
  REQUIRE(fs::is_directory(data / "flows" / "my%2Eflow" / "checkpoints"));
  fs::rename(data / "flows" / "my%2Eflow", data / "flows" / "my.flow");

  Engine engine(options, connectors);
  engine.restore();
  CHECK(fs::is_directory(data / "flows" / "my%2Eflow" / "checkpoints"));
  CHECK(!fs::exists(data / "flows" / "my.flow"));
  CHECK(rtsql::testing::eventually(
      [&] {
        auto p = engine.progress("my.flow");
        return p && p->find("\"recovery\":{\"fromEpoch\":") != std::string::npos &&
               p->find("\"fromEpoch\":null") == std::string::npos;
      },
      std::chrono::milliseconds(20000)));
  engine.shutdown();
}

TEST_CASE_FIXTURE(Fixture, "a dry-run DROP drops from the session's copy only, and answers each kind's tag") {
  RestoredEngine server(options, connectors);
  server.runAll({"CREATE SOURCE gen (a BIGINT) WITH (connector = 'datagen', rowsPerSecond = '1')",
                 "CREATE SINK out WITH (connector = 'file', path = '" + (tmp.path / "out.jsonl").string() + "')",
                 "CREATE TABLE t (a INT)", "CREATE FLOW f INTO out AS SELECT a FROM gen"});
  const std::string catalogBefore = [&] {
    std::ifstream in(dataDir() / "catalog", std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }();
  server.runAll({"SET rtsql.dry_run = on"});
  // The session's copy loses each object; the dry run answers as a real drop.
  for (const auto& step : std::vector<std::pair<std::string, std::string>>{
           {"DROP FLOW f", "DROP FLOW"},
           {"DROP TABLE t", "DROP TABLE"},
           {"DROP SINK out", "DROP SINK"},
           {"DROP SOURCE gen", "DROP SOURCE"},
           {"DROP TABLE IF EXISTS t", "DROP TABLE"}}) {
    // Plain names, not structured bindings: doctest's macros capture them.
    const std::string& sql = step.first;
    const std::string& tag = step.second;
    ResultCapture c = server.run(sql);
    requireOk(c, sql);
    CHECK_MESSAGE(c.tag == tag, sql);
  }
  ResultCapture again = server.run("DROP FLOW f");
  REQUIRE(again.err);
  CHECK(again.err->sqlstate() == "42704");
  // The server's catalog, its file and the flow are as they were.
  CHECK(server.engine.flowInfos(false).size() == 1);
  CHECK(server.engine.progress("f"));
  std::ifstream in(dataDir() / "catalog", std::ios::binary);
  CHECK(std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()) == catalogBefore);
  server.engine.shutdown();
}
