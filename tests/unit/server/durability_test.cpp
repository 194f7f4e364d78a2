// The engine's durability: the catalog file brings every definition back in a
// new Engine on the same data directory, and a flow whose source cannot be
// reached at that moment is restored anyway, reported as recovering with the
// cause, and started by the supervisor once the source answers.
#include <doctest/doctest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "common/error.h"
#include "server/catalog_file.h"
#include "server/engine.h"
#include "server_test_util.h"

using namespace rtsql;
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

// Collects what a statement answers.
class Capture final : public ResultWriter {
 public:
  std::vector<std::vector<std::optional<std::string>>> rows;
  std::optional<SqlError> err;
  void columns(const std::vector<ResultColumn>&) override {}
  void row(const std::vector<std::optional<std::string>>& values) override { rows.push_back(values); }
  void complete(const std::string&) override {}
  void error(const SqlError& e) override { err = e; }
  void notice(const std::string&) override {}
};

Capture run(Engine& engine, Session& session, const std::string& sql) {
  Capture c;
  engine.execute(session, sql, c);
  return c;
}

struct TempDir {
  fs::path path = fs::path("/tmp") / ("rtsql_durability_test_" + std::to_string(::getpid()));
  TempDir() { fs::remove_all(path); }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

}  // namespace

TEST_CASE("a restarted engine restores the catalog, and a flow whose source is away recovers later") {
  TempDir tmp;
  FlakyProvider provider;
  EngineOptions options;
  options.dataDir = (tmp.path / "data").string();
  options.slots = 16;
  fs::create_directories(options.dataDir);
  const std::string out = (tmp.path / "out.jsonl").string();
  {
    Engine engine(options, provider);
    engine.restore();
    auto session = engine.openSession("rtsql", "rtsql");
    for (const std::string& sql :
         {std::string("CREATE SOURCE gen (a BIGINT) WITH (connector = 'datagen', rowsPerSecond = '1')"),
          "CREATE SINK out WITH (connector = 'file', path = '" + out + "')",
          std::string("CREATE TABLE codes (code STRING, label STRING)"),
          std::string("INSERT INTO codes VALUES ('A', 'alpha'), ('B', 'beta')"),
          std::string("CREATE FLOW f INTO out CHECKPOINT INTERVAL '7 seconds' "
                      "WITH ('shuffle.partitions' = '3') AS SELECT a FROM gen"),
          std::string("CREATE FLOW g INTO out AS SELECT a + 1 AS b FROM gen"),
          std::string("STOP FLOW g")}) {
      Capture c = run(engine, *session, sql);
      REQUIRE_MESSAGE(!c.err, sql, ": ", c.err ? c.err->message() : "");
    }
    engine.shutdown();
  }
  // The file is intact and lists what was created, in an order that replays.
  auto records = readCatalogFile((fs::path(options.dataDir) / "catalog").string());
  REQUIRE(records.size() == 6);
  CHECK(records[0].kind == "source");
  CHECK(records[3].kind == "insert");
  CHECK(records[4].kind == "flow");
  CHECK(records[5].running == false);

  provider.down = true;
  Engine engine(options, provider);
  engine.restore();
  auto session = engine.openSession("rtsql", "rtsql");
  Capture tables = run(engine, *session, "SHOW TABLES");
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
  provider.down = false;
  CHECK(rtsql::testing::eventually([&] { return stateOf("f").first == FlowState::Running; },
                                   std::chrono::milliseconds(10000)));
  CHECK(stateOf("g").first == FlowState::Stopped);
  // The definition learned what only the plan knows: its WITH options.
  Capture describe = run(engine, *session, "DESCRIBE f");
  bool sawOption = false;
  for (const auto& r : describe.rows) {
    sawOption = sawOption || (r[0] == "shuffle.partitions" && r[1] == "3");
  }
  CHECK(sawOption);
  engine.shutdown();
}

TEST_CASE("a damaged catalog file stops the engine from starting") {
  TempDir tmp;
  FlakyProvider provider;
  EngineOptions options;
  options.dataDir = (tmp.path / "data").string();
  fs::create_directories(options.dataDir);
  {
    Engine engine(options, provider);
    engine.restore();
    auto session = engine.openSession("rtsql", "rtsql");
    REQUIRE(!run(engine, *session, "CREATE TABLE t (a INT)").err);
    engine.shutdown();
  }
  fs::path file = fs::path(options.dataDir) / "catalog";
  std::string text;
  {
    std::ifstream in(file, std::ios::binary);
    text.assign((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }
  {
    std::ofstream o(file, std::ios::binary | std::ios::trunc);
    o << text.substr(0, text.size() - 3);
  }
  Engine engine(options, provider);
  try {
    engine.restore();
    FAIL("restore() accepted a torn catalog file");
  } catch (const SqlError& e) {
    CHECK(e.sqlstate() == "58030");
    CHECK(e.message().find("damaged") != std::string::npos);
  }
  engine.shutdown();
}

TEST_CASE("a catalog path that is a directory stops the engine with an error naming it") {
  TempDir tmp;
  FlakyProvider provider;
  EngineOptions options;
  options.dataDir = (tmp.path / "data").string();
  const fs::path catalog = fs::path(options.dataDir) / "catalog";
  fs::create_directories(catalog);
  Engine engine(options, provider);
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
