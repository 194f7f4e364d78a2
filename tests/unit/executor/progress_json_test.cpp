// The progress JSON written from plain data: field names and shape (which
// SHOW PROGRESS users, the HTTP endpoint and the SQL tests read), the per
// operator rows, the live epoch with the last one nested, and the per-epoch
// operator rows that TaskMetricsSlot derives from the operators' counters.
#include "executor/metrics/progress_json.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "executor/metrics/task_metrics.h"

using namespace rtsql;

namespace {

class Named : public Operator {
 public:
  explicit Named(std::string name) : name_(std::move(name)) {}
  void push(Row&, const RecordContext&) override {}
  std::string name() const override { return name_; }

 private:
  std::string name_;
};

struct Fixture {
  Fixture() {
    plan.flowName = "f";
    ScanSpec scan;
    scan.name = "clicks";
    plan.scans = {scan};
    plan.sink.name = "out";
  }
  ProgressContext context() const {
    return ProgressContext{flowId,   runId, plan, {"Kafka[clicks]"}, "",   lastCheckpoint,
                           restored, 0,     0,    skipped,           false};
  }

  std::string flowId = "id-1";
  std::string runId = "run-1";
  PhysicalPlan plan;
  std::optional<CheckpointInfo> lastCheckpoint;
  std::optional<CheckpointInfo> restored;
  std::vector<CheckpointSearch::Skipped> skipped;
};

bool has(const std::string& json, const std::string& part) {
  return json.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("a finished epoch's progress: counts, sources by topic, operators, no checkpoint yet") {
  Fixture fx;
  EpochSummary e;
  e.id = 3;
  e.startMicros = 1'000'000;
  e.endMicros = 3'000'000;
  e.metrics.inputRows = 8;
  e.metrics.outputRows = 4;
  e.partitions = {PartitionProgress{"clicks", 1, 5, 9, 12},
                  PartitionProgress{"clicks", 0, 0, 4, 4}};
  e.inputRowsByScan[0] = 8;
  Named filter("Filter"), project("Project");
  e.addOperatorRows(0, {{2, &filter}, {3, &project}}, {{8, 4}, {4, 4}});
  const std::string json = progressJson(fx.context(), e, false, nullptr);
  CHECK(has(json, R"({"id":"id-1","runId":"run-1","name":"f",)"));
  CHECK(has(json, R"("batchId":3,"live":false,"numInputRows":8,"inputRowsPerSecond":4,)"));
  CHECK(has(json, R"("durationMs":{"triggerExecution":2000,"commitOffsets":0})"));
  CHECK(has(json, R"("eventTime":{},"stateOperators":[],)"));
  CHECK(has(
      json,
      R"("operators":[{"stage":0,"operatorId":2,"operatorName":"Filter","rowsIn":8,"rowsOut":4},)"
      R"({"stage":0,"operatorId":3,"operatorName":"Project","rowsIn":4,"rowsOut":4}],)"));
  CHECK(has(json,
            R"("sources":[{"description":"Kafka[clicks]","startOffset":{"clicks":{"0":0,"1":5}},)"
            R"("endOffset":{"clicks":{"0":4,"1":9}},)"));
  CHECK(has(
      json,
      R"("numInputRows":8,"inputRowsPerSecond":4,"processedRowsPerSecond":4,"numDecodeErrors":0}])"));
  // Without a sink task the sink is described by its name.
  CHECK(has(json, R"("sink":{"description":"out","numOutputRows":4})"));
  CHECK(has(json, R"("checkpoint":null,"recovery":null})"));
  CHECK_FALSE(has(json, "lastEpoch"));
}

TEST_CASE(
    "the live epoch nests the last finished one, without the flow's checkpoint and recovery") {
  Fixture fx;
  CheckpointInfo cp;
  cp.epoch = 4;
  fx.lastCheckpoint = cp;
  fx.restored = cp;
  fx.skipped = {{5, "damaged"}};
  EpochSummary live, last;
  live.id = 6;
  live.startMicros = 1;
  last.id = 5;
  last.startMicros = 1;
  last.endMicros = 2;
  const std::string json = progressJson(fx.context(), live, true, &last);
  CHECK(has(json, R"("batchId":6,"live":true)"));
  CHECK(has(json, R"("checkpoint":{"epoch":4,)"));
  CHECK(has(json, R"("recovery":{"fromEpoch":4,"restoreMs":0,"recoveries":0,)"
                  R"("skipped":[{"epoch":5,"reason":"damaged"}],"reset":false})"));
  const size_t nested = json.find(R"("lastEpoch":{)");
  REQUIRE(nested != std::string::npos);
  const std::string inner = json.substr(nested);
  CHECK(has(inner, R"("batchId":5,"live":false)"));
  CHECK_FALSE(has(inner, "checkpoint"));
  CHECK_FALSE(has(inner, "recovery"));
  CHECK(json.back() == '}');
}

TEST_CASE("tasks' reports add up: figures summed, offsets appended, the longest epoch-end work") {
  Named agg("Aggregate");
  EpochSummary a, b, all;
  a.metrics.inputRows = 3;
  a.commitMicros = 50;
  a.inputRowsByScan[0] = 3;
  a.positions.push_back({0, "t", 0, 3});
  a.addOperatorRows(1, {{7, &agg}}, {{3, 2}});
  b.metrics.inputRows = 4;
  b.commitMicros = 20;
  b.inputRowsByScan[0] = 4;
  b.positions.push_back({0, "t", 1, 4});
  b.addOperatorRows(1, {{7, &agg}}, {{4, 1}});
  all.add(a);
  all.add(b);
  CHECK(all.metrics.inputRows.load() == 7);
  CHECK(all.commitMicros == 50);
  CHECK(all.inputRowsByScan[0] == 7);
  CHECK(all.positions.size() == 2);
  REQUIRE(all.operatorRows.size() == 1);
  const OperatorRows& r = all.operatorRows.begin()->second;
  CHECK(r.operatorId == 7);
  CHECK(r.name == "Aggregate");
  CHECK(r.rowsIn == 7);
  CHECK(r.rowsOut == 3);
}

TEST_CASE("an epoch's operator rows are the counters at its end minus those at its start") {
  TaskMetricsSlot slot;
  std::vector<RowCounts> rows{{10, 4}, {4, 4}};
  slot.rotate(rows);  // the first epoch: from zero
  CHECK(rows[0].in == 10);
  CHECK(rows[0].out == 4);
  rows = {{25, 9}, {9, 9}};
  slot.rotate(rows);
  CHECK(rows[0].in == 15);
  CHECK(rows[0].out == 5);
  CHECK(rows[1].in == 5);
  slot.withCurrent([](const EpochMetrics&, const std::vector<RowCounts>& atStart) {
    REQUIRE(atStart.size() == 2);
    CHECK(atStart[0].in == 25);  // where the live epoch began
  });
}

TEST_CASE("numDeadLetters: on a source with on.error = 'dead-letter' only, per source") {
  Fixture fx;
  ScanSpec lettered;
  lettered.name = "orders";
  lettered.options.set("subscribe", "orders");
  lettered.options.set("on.error", "Dead-Letter");
  // As the connector reads the options.
  lettered.parsed = std::make_shared<const SourceOptions>(
      SourceOptions{.onError = RowErrorPolicy::DeadLetter, .topics = {"orders"}});
  fx.plan.scans[0].options.set("subscribe", "clicks");
  fx.plan.scans[0].parsed =
      std::make_shared<const SourceOptions>(SourceOptions{.topics = {"clicks"}});
  fx.plan.scans.push_back(lettered);
  EpochSummary e;
  e.id = 1;
  e.startMicros = 1'000'000;
  e.endMicros = 2'000'000;
  e.decodeErrors = 5;
  e.deadLettersByScan[1] = 3;
  ProgressContext c = fx.context();
  c.sourceDescriptions = {"Kafka[clicks]", "Kafka[orders]"};
  const std::string json = progressJson(c, e, false, nullptr);
  CHECK(has(json, R"("processedRowsPerSecond":0},{"description":"Kafka[orders]")"));
  CHECK(has(json, R"("processedRowsPerSecond":0,"numDeadLetters":3}],"numDecodeErrors":5,)"));
  // Summed over a source's tasks as the epoch's reports come in.
  EpochSummary task;
  task.deadLettersByScan[1] = 2;
  e.add(task);
  CHECK(e.deadLettersByScan[1] == 5);
}

TEST_CASE("a source's fetch mode: said when the source has one, absent otherwise") {
  Fixture fx;
  EpochSummary e;
  e.id = 1;
  e.startMicros = 1'000'000;
  e.endMicros = 2'000'000;
  ProgressContext c = fx.context();
  CHECK_FALSE(has(progressJson(c, e, false, nullptr), "fetchMode"));
  c.sourceFetchModes = {""};
  CHECK_FALSE(has(progressJson(c, e, false, nullptr), "fetchMode"));
  c.sourceFetchModes = {"batching"};
  CHECK(has(progressJson(c, e, false, nullptr),
            R"("sources":[{"description":"Kafka[clicks]","fetchMode":"batching","startOffset":)"));
}

TEST_CASE("recentMetrics: the flow's last complete interval, at the top level only") {
  Fixture fx;
  EpochSummary live, last;
  live.id = 2;
  live.startMicros = 1;
  last.id = 1;
  last.startMicros = 1;
  last.endMicros = 2;
  // No interval given (a flow that is not running): no recentMetrics.
  CHECK_FALSE(has(progressJson(fx.context(), live, true, &last), "recentMetrics"));

  IntervalLatency recent;
  recent.reset(3);  // 15 s to 20 s after the epoch of Unix time
  recent.processing.record(2000);
  recent.sourceQueuing.record(1000);
  recent.e2e.record(4000);
  recent.e2e.record(4000);
  ProgressContext c = fx.context();
  c.recent = &recent;
  const std::string json = progressJson(c, live, true, &last);
  CHECK(has(json,
            R"("recentMetrics":{"intervalStart":"1970-01-01T00:00:15.000Z","intervalMs":5000,)"
            R"("numOutputRows":2,"processingLatencyMs":{"P0":2,)"));
  CHECK(has(json, R"("sourceQueuingLatencyMs":{"P0":1,)"));
  CHECK(has(json, R"("e2eLatencyMs":{"P0":4,)"));
  // Once: the nested last epoch does not repeat it.
  CHECK(json.find("recentMetrics") == json.rfind("recentMetrics"));
}

TEST_CASE(
    "numLateRowsDeadLettered: per stateful operator, in flows with 'late.rows' = 'dead-letter' "
    "only") {
  Fixture fx;
  EpochSummary e;
  e.id = 1;
  e.startMicros = 1'000'000;
  e.endMicros = 2'000'000;
  StateOpSnapshot& op = e.stateOps[4];
  op.name = "WindowAggregate";
  op.numRowsDroppedByWatermark = 0;
  op.numLateRowsDeadLettered = 2;
  // 'drop' (the default): the document is as it always was.
  std::string json = progressJson(fx.context(), e, false, nullptr);
  CHECK(has(json, R"("numRowsDroppedByWatermark":0,"memoryUsedBytes":0})"));
  CHECK_FALSE(has(json, "numLateRowsDeadLettered"));

  fx.plan.flowOptions.set("late.rows", "dead-letter");
  fx.plan.lateRowsDeadLettered = true;  // as planFlow reads it
  json = progressJson(fx.context(), e, false, nullptr);
  CHECK(has(json,
            R"("numRowsDroppedByWatermark":0,"numLateRowsDeadLettered":2,"memoryUsedBytes":0})"));

  // Summed over the operator's tasks, from their counters.
  StateOpSnapshot sum;
  OperatorStats stats;
  stats.numLateRowsDeadLettered.store(3);
  stats.numRowsDroppedByWatermark.store(1);
  sum.add(stats);
  sum.add(op);
  CHECK(sum.numLateRowsDeadLettered == 5);
  CHECK(sum.numRowsDroppedByWatermark == 1);
}

TEST_CASE("numRowErrorsSkipped, numRowErrorsDeadLettered: with the flow's 'on.error' only") {
  Fixture fx;
  EpochSummary e;
  e.id = 1;
  e.startMicros = 1'000'000;
  e.endMicros = 2'000'000;
  e.rowErrorsSkipped = 3;
  e.rowErrorsDeadLettered = 4;
  // 'fail' (the default): neither count.
  std::string json = progressJson(fx.context(), e, false, nullptr);
  CHECK_FALSE(has(json, "numRowErrors"));

  fx.plan.flowOptions.set("on.error", "skip");
  fx.plan.onError = RowErrorPolicy::Skip;  // as planFlow reads it
  json = progressJson(fx.context(), e, false, nullptr);
  CHECK(has(json, R"("numRowErrorsSkipped":3,"sink":)"));
  CHECK_FALSE(has(json, "numRowErrorsDeadLettered"));

  fx.plan.flowOptions.set("on.error", "dead-letter");
  fx.plan.onError = RowErrorPolicy::DeadLetter;
  json = progressJson(fx.context(), e, false, nullptr);
  CHECK(has(json, R"("numRowErrorsDeadLettered":4,"sink":)"));
  CHECK_FALSE(has(json, "numRowErrorsSkipped"));

  // Summed over the tasks as the epoch's reports come in.
  EpochSummary task;
  task.rowErrorsSkipped = 2;
  task.rowErrorsDeadLettered = 1;
  e.add(task);
  CHECK(e.rowErrorsSkipped == 5);
  CHECK(e.rowErrorsDeadLettered == 5);
}

TEST_CASE("a sharded copy's input is what its sources gave, not the rows it exchanged") {
  Fixture fx;
  // The copy's front reads clicks; its back reads the exchange topic.
  ScanSpec back;
  back.name = "clicks";
  back.exchange.topic = "_rtsql-c-exchange-f-1-0";
  fx.plan.scans.push_back(back);
  EpochSummary e;
  e.id = 1;
  e.startMicros = 1'000'000;
  e.endMicros = 2'000'000;
  e.metrics.inputRows = 12;  // 8 records read, 4 exchanged rows taken
  e.inputRowsByScan[0] = 8;
  e.inputRowsByScan[1] = 4;
  const std::string json = progressJson(fx.context(), e, false, nullptr);
  CHECK(has(json, R"("live":false,"numInputRows":8,"inputRowsPerSecond":8,)"));
  // The back's own figure stays with its source entry.
  CHECK(has(json, R"("numInputRows":4,"inputRowsPerSecond":4,)"));
}
