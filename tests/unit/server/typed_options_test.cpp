// A source's, a sink's and a flow's WITH options are read once, at CREATE, into
// the typed settings the plan carries to the connectors that open them
// (planner/source_options.h, planner/sink_options.h, the flow's dead-letter
// topics in planner/physical_plan.h); a restarted server reads its catalog's
// text again the same way. A wrong value is refused by the CREATE statement.
#include <doctest/doctest.h>

#include <memory>
#include <mutex>
#include <optional>

#include "common/error.h"
#include "connectors/file/file_sink.h"
#include "connectors/provider.h"
#include "server/engine.h"
#include "server_test_util.h"

using namespace rtsql;
using rtsql::testing::RestoredEngine;
using rtsql::testing::ResultCapture;

namespace {

// The server's own connectors, with what the runtime hands them kept: the
// source's and the sink's specs and the flow's dead-letter topic.
class RecordingProvider final : public ConnectorProvider {
 public:
  struct Seen {
    std::optional<ScanSpec> scan;
    std::optional<SinkSpec> sink;
    std::optional<FlowDeadLetterTopic> rowErrors;
  };

  Seen seen() {
    std::lock_guard lock(mutex_);
    return seen_;
  }
  void forget() {
    std::lock_guard lock(mutex_);
    seen_ = {};
  }

  int sourcePartitions(const ScanSpec& scan) override { return inner_.sourcePartitions(scan); }
  std::unique_ptr<SourceTask> openSource(const ScanSpec& scan, const std::string& flowName,
                                         int task, int tasks) override {
    {
      std::lock_guard lock(mutex_);
      seen_.scan = scan;
    }
    return inner_.openSource(scan, flowName, task, tasks);
  }
  std::unique_ptr<SinkWriter> openSink(const SinkSpec& sink, const std::string& flowName,
                                       int task) override {
    {
      std::lock_guard lock(mutex_);
      seen_.sink = sink;
    }
    return inner_.openSink(sink, flowName, task);
  }
  // Kept, not written: no broker stands behind the topic.
  std::unique_ptr<FlowDeadLetterWriter> openFlowDeadLetters(const PhysicalPlan& plan,
                                                            FlowDeadLetters which,
                                                            int) override {
    std::lock_guard lock(mutex_);
    if (which == FlowDeadLetters::RowErrors) seen_.rowErrors = plan.rowErrorsTopic;
    return std::make_unique<Dropped>();
  }

 private:
  class Dropped final : public FlowDeadLetterWriter {
   public:
    void writeLate(const Row&, const Schema&, const LateRowOrigin&) override {}
    void writeError(const Row&, const Schema&, const RowErrorOrigin&) override {}
    void flush(int) override {}
  };

  DefaultConnectorProvider inner_;
  std::mutex mutex_;
  Seen seen_;
};

using Fixture = rtsql::testing::EngineFixture<RecordingProvider>;

// What the connectors were handed, once the flow's tasks opened.
RecordingProvider::Seen openedBy(RecordingProvider& connectors) {
  REQUIRE(rtsql::testing::eventually(
      [&] {
        RecordingProvider::Seen s = connectors.seen();
        return s.scan && s.sink && s.rowErrors;
      },
      std::chrono::milliseconds(30000)));
  return connectors.seen();
}

// The settings CREATE read from the statements below.
void checkCarried(const RecordingProvider::Seen& seen, const std::string& out) {
  REQUIRE(seen.scan->parsed);
  CHECK(seen.scan->parsed->maxPartitions == 2);
  CHECK(seen.scan->parsed->own);  // the generator's own settings
  REQUIRE(seen.sink->parsed);
  const SinkOptions& sink = *seen.sink->parsed;
  CHECK(sink.csvDelimiter == ';');
  CHECK(sink.mode == SinkMode::Append);
  const auto* file = dynamic_cast<const FileSinkOptions*>(sink.own.get());
  REQUIRE(file);
  CHECK(file->path == out);
  CHECK(file->csvHeader);
  CHECK(file->fsync);
  CHECK(file->bufferBytes == 64);
  CHECK(seen.rowErrors->topic == "bad-rows");
  CHECK(seen.rowErrors->bootstrap == "127.0.0.1:1");
}

}  // namespace

TEST_CASE_FIXTURE(Fixture, "options read at CREATE reach the connectors, and again after a restart") {
  const std::string out = (tmp.path / "out.csv").string();
  {
    RestoredEngine first(options, connectors);
    first.runAll({"CREATE SOURCE gen (a BIGINT) WITH (connector = 'datagen', "
                  "'rows-per-second' = '10', maxPartitions = '2')",
                  "CREATE SINK out WITH (connector = 'file', path = '" + out +
                      "', format = 'csv', 'csv.delimiter' = ';', 'csv.header' = 'true', "
                      "fsync = 'true', 'buffer.bytes' = '64', mode = 'append')",
                  "CREATE FLOW f INTO out WITH ('on.error' = 'dead-letter', "
                  "'dead-letter.topic' = 'bad-rows', "
                  "'dead-letter.kafka.bootstrap.servers' = '127.0.0.1:1') AS SELECT a FROM gen"});
    checkCarried(openedBy(connectors), out);
  }
  // A new server on the same data directory reads the catalog's text.
  connectors.forget();
  RestoredEngine restarted(options, connectors);
  checkCarried(openedBy(connectors), out);
}

TEST_CASE_FIXTURE(Fixture, "a wrong option value is refused by its CREATE statement") {
  RestoredEngine engine(options, connectors);
  const std::string out = (tmp.path / "out.jsonl").string();
  auto refused = [&](const std::string& sql, const std::string& option) {
    ResultCapture c = engine.run(sql);
    REQUIRE_MESSAGE(c.err, sql);
    CHECK(c.err->sqlstate() == "22023");
    CHECK_MESSAGE(c.err->message().find(option) != std::string::npos, c.err->message());
  };
  refused("CREATE SINK s WITH (connector = 'file', path = '" + out + "', 'buffer.bytes' = '-1')",
          "buffer.bytes");
  refused("CREATE SINK s WITH (connector = 'file', path = '" + out + "', fsync = 'often')",
          "fsync");
  refused("CREATE SINK s WITH (connector = 'kafka', 'kafka.bootstrap.servers' = '127.0.0.1:1', "
          "topic = 't', 'topic.partitions' = '0')",
          "topic.partitions");
  refused("CREATE SOURCE k (a BIGINT) WITH (connector = 'kinesis', 'kinesis.stream' = 's', "
          "'kinesis.region' = 'r', 'kinesis.maxRecordsPerFetch' = '0')",
          "kinesis.maxRecordsPerFetch");
  refused("CREATE SOURCE g (a BIGINT) WITH (connector = 'datagen', 'rows-per-second' = '0')",
          "rows-per-second");
  engine.runAll({"CREATE SOURCE gen (a BIGINT) WITH (connector = 'datagen')",
                 "CREATE SINK out WITH (connector = 'file', path = '" + out + "')"});
  refused("CREATE FLOW f INTO out WITH ('on.error' = 'dead-letter', 'dead-letter.topic' = '', "
          "'dead-letter.kafka.bootstrap.servers' = '127.0.0.1:1') AS SELECT a FROM gen",
          "dead-letter.topic");
}
