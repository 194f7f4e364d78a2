// FlowRuntime against in-memory connectors: every record goes through the
// fused operators into the sink, epochs commit offsets after the sink flushed,
// stop commits what was read, and progress counts match.
#include "executor/flow_runtime.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <regex>
#include <thread>

#include "common/clock.h"
#include "common/expr.h"
#include "common/thread_priority.h"
#include "executor/exchange.h"
#include "executor/shuffle.h"
#include "tests/unit/executor/fake_connector_provider.h"
#include "tests/unit/executor/state_test_util.h"
#include "tests/unit/proc_threads.h"
#include "tests/unit/sql_error_of.h"

using namespace rtsql;

namespace {

struct Shared {
  std::mutex mu;
  std::vector<int64_t> input;         // values to serve, by offset
  std::vector<Row> written;           // rows the sink got
  size_t flushedRows = 0;             // rows written before the last flush
  std::vector<int64_t> commits;       // committed end offsets, in order
  bool failOnFlush = false;
  // seek() finds the restored position gone from the log, as a Kafka source
  // does (connectors/restore_position.h).
  bool positionLost = false;
};

class MemorySource : public SourceTask {
 public:
  explicit MemorySource(Shared& s) : s_(s) {}
  void poll(std::vector<SourceRecord>& out, size_t max, int timeoutMs) override {
    std::unique_lock lock(s_.mu);
    size_t n = 0;
    while (next_ < static_cast<int64_t>(s_.input.size()) && n < max) {
      SourceRecord r;
      r.row = {Value::bigint(s_.input[next_])};
      r.timestampMicros = nowMicros() - 100;
      r.readMicros = nowMicros();
      r.partition = 0;
      r.offset = next_++;
      out.push_back(std::move(r));
      ++n;
    }
    lock.unlock();
    if (n == 0) std::this_thread::sleep_for(std::chrono::milliseconds(std::min(timeoutMs, 5)));
  }
  void commit() override {
    std::lock_guard lock(s_.mu);
    s_.commits.push_back(next_);
    start_ = next_;
  }
  std::vector<PartitionProgress> progress() const override {
    std::lock_guard lock(s_.mu);
    return {PartitionProgress{"mem", 0, start_, next_, static_cast<int64_t>(s_.input.size())}};
  }
  void seek(const std::vector<PartitionProgress>& positions) override {
    std::lock_guard lock(s_.mu);
    if (s_.positionLost) throw SqlError(sqlstate::kDataCorrupted, "offset gone from the log");
    for (const PartitionProgress& p : positions) start_ = next_ = p.endOffset;
  }
  int64_t decodeErrors() const override { return 0; }
  std::string description() const override { return "Memory[mem]"; }

 private:
  Shared& s_;
  int64_t next_ = 0;
  int64_t start_ = 0;
};

class MemorySink : public SinkWriter {
 public:
  explicit MemorySink(Shared& s) : s_(s) {}
  void write(const Row& row, int64_t) override {
    std::lock_guard lock(s_.mu);
    s_.written.push_back(row);
  }
  void flush(int) override {
    std::lock_guard lock(s_.mu);
    if (s_.failOnFlush) throw SqlError(sqlstate::kConnectionFailure, "broker gone");
    s_.flushedRows = s_.written.size();
  }
  int64_t deliveryErrors() const override { return 0; }
  std::string description() const override { return "Memory[out]"; }

 private:
  Shared& s_;
};

// The flow's source and sink over `s`.
rtsql::testing::FakeConnectorProvider memoryProvider(Shared& s) {
  rtsql::testing::FakeConnectorProvider p;
  p.source = [&s](int) { return std::make_unique<MemorySource>(s); };
  p.sink = [&s] { return std::make_unique<MemorySink>(s); };
  return p;
}

// x > 10 -> (x, x * 2)
PhysicalPlan doublingPlan(int64_t checkpointMicros) {
  PhysicalPlan plan;
  plan.flowName = "f";
  ScanSpec& scan = plan.scans.emplace_back();
  scan.name = "mem";
  scan.schema.columns = {{"x", DataType::of(TypeId::BigInt)}};
  plan.sink.name = "out";
  plan.checkpointIntervalMicros = checkpointMicros;
  StageSpec stage;
  stage.tasks = 1;
  stage.scan = 0;
  auto x = makeColumnRef(0, DataType::of(TypeId::BigInt), "x");
  FilterSpec filter;
  filter.predicate = makeCall(">", {x, makeLiteral(Value::bigint(10), DataType::of(TypeId::BigInt))}, 0);
  ProjectSpec project;
  project.exprs = {x, makeCall("*", {x, makeLiteral(Value::bigint(2), DataType::of(TypeId::BigInt))}, 0)};
  stage.operators = {filter, project};
  plan.stages = {stage};
  return plan;
}

template <typename F>
bool waitFor(F pred, int ms = 5000) {
  for (int i = 0; i < ms / 5; ++i) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return pred();
}

// A source whose poll() returns only for a record or a wake(), however long
// its timeout: a flow over it must still end epochs, commit and stop.
struct WakeShared {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<int64_t> input;
  bool woken = false;
  int wakes = 0;
  int timedOut = 0;  // polls that ended by the safety bound, not by a wake or a record
  std::vector<int64_t> commits;
  std::vector<Row> written;
};

class WakeableSource : public SourceTask {
 public:
  explicit WakeableSource(WakeShared& s) : s_(s) {}
  void poll(std::vector<SourceRecord>& out, size_t, int) override {
    std::unique_lock lock(s_.mu);
    if (!s_.cv.wait_for(lock, std::chrono::seconds(120), [&] {
          return s_.woken || next_ < static_cast<int64_t>(s_.input.size());
        })) {
      ++s_.timedOut;
    }
    s_.woken = false;
    while (next_ < static_cast<int64_t>(s_.input.size())) {
      SourceRecord r;
      r.row = {Value::bigint(s_.input[next_])};
      r.timestampMicros = r.readMicros = nowMicros();
      r.partition = 0;
      r.offset = next_++;
      out.push_back(std::move(r));
    }
  }
  void wake() override {
    std::lock_guard lock(s_.mu);
    s_.woken = true;
    ++s_.wakes;
    s_.cv.notify_all();
  }
  bool wakes() const override { return true; }
  void commit() override {
    std::lock_guard lock(s_.mu);
    s_.commits.push_back(next_);
  }
  std::vector<PartitionProgress> progress() const override {
    std::lock_guard lock(s_.mu);
    return {PartitionProgress{"mem", 0, 0, next_, static_cast<int64_t>(s_.input.size())}};
  }
  int64_t decodeErrors() const override { return 0; }
  std::string description() const override { return "Wakeable[mem]"; }

 private:
  WakeShared& s_;
  int64_t next_ = 0;
};

class WakeableSink : public SinkWriter {
 public:
  explicit WakeableSink(WakeShared& s) : s_(s) {}
  void write(const Row& row, int64_t) override {
    std::lock_guard lock(s_.mu);
    s_.written.push_back(row);
  }
  void flush(int) override {}
  int64_t deliveryErrors() const override { return 0; }
  std::string description() const override { return "Memory[out]"; }

 private:
  WakeShared& s_;
};

rtsql::testing::FakeConnectorProvider wakeableProvider(WakeShared& s) {
  rtsql::testing::FakeConnectorProvider p;
  p.source = [&s](int) { return std::make_unique<WakeableSource>(s); };
  p.sink = [&s] { return std::make_unique<WakeableSink>(s); };
  return p;
}

}  // namespace

TEST_CASE("a stateless flow filters, projects and writes every record") {
  Shared s;
  for (int i = 0; i < 100; ++i) s.input.push_back(i);
  auto provider = memoryProvider(s);
  SlotPool slots(4);
  FlowRuntime rt(doublingPlan(60'000'000), provider, slots, "id-1");
  rt.start();
  CHECK(rt.state() == FlowState::Running);
  CHECK(slots.used() == 1);
  REQUIRE(waitFor([&] {
    std::lock_guard lock(s.mu);
    return s.written.size() == 89;
  }));
  {
    std::lock_guard lock(s.mu);
    for (size_t i = 0; i < s.written.size(); ++i) {
      CHECK(s.written[i][0].asInt() == static_cast<int64_t>(i) + 11);
      CHECK(s.written[i][1].asInt() == 2 * (static_cast<int64_t>(i) + 11));
    }
  }
  std::string live = rt.progressJson();
  CHECK(live.find("\"numInputRows\":100") != std::string::npos);
  CHECK(live.find("\"numOutputRows\":89") != std::string::npos);
  CHECK(live.find("\"processingLatencyMs\":{\"P0\":") != std::string::npos);
  CHECK(live.find("\"live\":true") != std::string::npos);
  // Each operator's rows: the filter passes 89 of 100, the projection all it gets.
  const std::string operators =
      R"("operators":[{"stage":0,"operatorId":0,"operatorName":"Filter","rowsIn":100,"rowsOut":89},)"
      R"({"stage":0,"operatorId":0,"operatorName":"Project","rowsIn":89,"rowsOut":89}])";
  CHECK(live.find(operators) != std::string::npos);

  rt.stop();
  CHECK(rt.state() == FlowState::Stopped);
  CHECK(slots.used() == 0);
  CHECK(rt.progressJson().find(operators) != std::string::npos);  // the final epoch's
  std::lock_guard lock(s.mu);
  // Stopping ends the epoch: the sink was flushed and then the offsets committed.
  REQUIRE(!s.commits.empty());
  CHECK(s.commits.back() == 100);
  CHECK(s.flushedRows == 89);
}

TEST_CASE("a restored position gone from the log fails the flow for good, not for a retry") {
  Shared s;
  for (int i = 0; i < 20; ++i) s.input.push_back(i);
  rtsql::testing::TempDir dir("flow_runtime_lost");
  auto provider = memoryProvider(s);
  SlotPool slots(4);
  {
    FlowRuntime rt(doublingPlan(60'000'000), provider, slots, "id-lost", {}, dir.sub("checkpoints"));
    rt.start();
    REQUIRE(waitFor([&] {
      std::lock_guard lock(s.mu);
      return s.written.size() == 9;
    }));
    rt.stop();  // the final epoch's checkpoint holds offset 20
  }
  s.positionLost = true;
  FlowRuntime rt(doublingPlan(60'000'000), provider, slots, "id-lost", {}, dir.sub("checkpoints"));
  SqlError e = rtsql::testing::sqlErrorOf([&] { rt.start(); });
  CHECK(e.sqlstate() == sqlstate::kDataCorrupted);
  // Failed with the source's reason and code, so the server does not start
  // it again and again; nothing holds its slots.
  CHECK(rt.state() == FlowState::Failed);
  CHECK(rt.failureCode() == sqlstate::kDataCorrupted);
  CHECK(rt.failureReason().find("offset gone from the log") != std::string::npos);
  CHECK(slots.used() == 0);
}

TEST_CASE("a flow's threads run at the nice value it was given") {
  Shared s;
  for (int i = 0; i < 100; ++i) s.input.push_back(i);
  auto provider = memoryProvider(s);
  SlotPool slots(4);
  FlowRuntime rt(doublingPlan(60'000'000), provider, slots, "id-nice");
  rt.setThreadNice(kLiveQueryNice);
  rt.start();
  // Once rows come out, the task has set its priority.
  REQUIRE(waitFor([&] {
    std::lock_guard lock(s.mu);
    return s.written.size() == 89;
  }));
  // The task thread is named after the flow ("f/0.0").
  std::vector<int> nices = rtsql::testing::threadNices("f/");
  REQUIRE(!nices.empty());
  const int base = currentThreadNice();
  for (int n : nices) CHECK(n == std::min(19, base + kLiveQueryNice));
  rt.stop();

  // A flow's own default leaves its threads where the process is. (Named
  // apart: a thread that a niced task thread started, say a library's pool,
  // carries that thread's name and nice value, and may outlive the flow.)
  PhysicalPlan plainPlan = doublingPlan(60'000'000);
  plainPlan.flowName = "plain";
  FlowRuntime plain(std::move(plainPlan), provider, slots, "id-plain");
  plain.start();
  nices = rtsql::testing::threadNices("plain/");
  REQUIRE(!nices.empty());
  for (int n : nices) CHECK(n == base);
  plain.stop();
}

TEST_CASE("epochs end at the checkpoint interval and publish their progress") {
  Shared s;
  for (int i = 0; i < 50; ++i) s.input.push_back(100 + i);
  auto provider = memoryProvider(s);
  SlotPool slots(4);
  FlowRuntime rt(doublingPlan(200'000), provider, slots, "id-2");  // 200 ms epochs
  rt.start();
  REQUIRE(waitFor([&] {
    std::lock_guard lock(s.mu);
    return s.commits.size() >= 2;
  }));
  std::string json = rt.progressJson();
  CHECK(json.find("\"lastEpoch\":{") != std::string::npos);
  // The live epoch's batchId is one past the finished epoch reported under lastEpoch.
  std::smatch m;
  REQUIRE(std::regex_search(json, m, std::regex(R"("batchId":(\d+).*"lastEpoch":\{.*"batchId":(\d+))")));
  CHECK(std::stoi(m[1]) >= 2);
  CHECK(std::stoi(m[2]) == std::stoi(m[1]) - 1);
  rt.stop();
  std::lock_guard lock(s.mu);
  CHECK(s.commits.back() == 50);
  CHECK(s.written.size() == 50);
}

TEST_CASE("a flow that does not fit in the free slots is refused and holds nothing") {
  Shared s;
  auto provider = memoryProvider(s);
  SlotPool slots(1);
  auto plan = doublingPlan(60'000'000);
  plan.stages[0].tasks = 2;
  FlowRuntime rt(plan, provider, slots, "id-3");
  try {
    rt.start();
    FAIL("start should have thrown");
  } catch (const SqlError& e) {
    CHECK(e.sqlstate() == "53000");
    CHECK(e.message().find("needs 2 task slots but only 1 of 1 are free") != std::string::npos);
  }
  CHECK(slots.used() == 0);
  CHECK(rt.state() == FlowState::Stopped);
}

TEST_CASE("a sink failure fails the flow with its reason and commits nothing after it") {
  Shared s;
  for (int i = 0; i < 20; ++i) s.input.push_back(50);
  s.failOnFlush = true;
  auto provider = memoryProvider(s);
  SlotPool slots(2);
  FlowRuntime rt(doublingPlan(100'000), provider, slots, "id-4");
  rt.start();
  REQUIRE(waitFor([&] { return rt.state() == FlowState::Failed; }));
  CHECK(rt.failureReason() == "broker gone");
  rt.stop();
  std::lock_guard lock(s.mu);
  CHECK(s.commits.empty());
  CHECK(slots.used() == 0);
}

namespace {

// Two source tasks under one shuffle stage. Task 0 reads partition 0, which
// delivers a record (event time: its sequence number in seconds) every 2 ms;
// task 1 reads partition 1, which never delivers, or no partition at all.
struct TwoTasks {
  std::atomic<bool> secondHasPartition{true};
  std::atomic<bool> secondCaughtUp{false};
  std::atomic<int64_t> delivered{0};
  Shared sink;
};

class PacedSource : public SourceTask {
 public:
  PacedSource(TwoTasks& s, int task) : s_(s), task_(task) {}
  void poll(std::vector<SourceRecord>& out, size_t, int timeoutMs) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(task_ == 0 ? 2 : std::min(timeoutMs, 5)));
    if (task_ != 0) return;
    SourceRecord r;
    int64_t n = s_.delivered.load();
    r.row = {Value::timestamp(n * 1'000'000)};
    r.timestampMicros = r.readMicros = nowMicros();
    r.partition = 0;
    r.offset = n;
    out.push_back(std::move(r));
    s_.delivered.fetch_add(1);
  }
  void commit() override {}
  std::vector<PartitionProgress> progress() const override {
    if (task_ == 0) return {PartitionProgress{"t", 0, 0, s_.delivered.load(), -1}};
    if (!s_.secondHasPartition) return {};
    return {PartitionProgress{"t", 1, 0, 0, -1}};
  }
  bool caughtUp(int32_t) const override { return task_ == 0 || s_.secondCaughtUp; }
  int64_t decodeErrors() const override { return 0; }
  std::string description() const override { return "Paced[t]"; }

 private:
  TwoTasks& s_;
  int task_;
};

// Two source tasks of `Source` over the test's `State`, whose `sink` the
// flow writes.
template <typename Source, typename State>
rtsql::testing::FakeConnectorProvider twoTaskProvider(State& s) {
  rtsql::testing::FakeConnectorProvider p;
  p.partitions = 2;
  p.source = [&s](int task) { return std::make_unique<Source>(s, task); };
  p.sink = [&s] { return std::make_unique<MemorySink>(s.sink); };
  return p;
}

// Source (2 tasks, watermark on ts, no delay, 100 ms idle timeout) -> shuffle -> sink.
PhysicalPlan shuffledPlan() {
  PhysicalPlan plan;
  plan.flowName = "wm";
  ScanSpec& scan = plan.scans.emplace_back();
  scan.name = "paced";
  scan.schema.columns = {{"ts", DataType::of(TypeId::Timestamp)}};
  scan.eventTimeColumn = 0;
  scan.idleTimeoutMicros = 100'000;
  plan.sink.name = "out";
  plan.checkpointIntervalMicros = 600'000'000;
  StageSpec source;
  source.id = 0;
  source.tasks = 2;
  source.scan = 0;
  source.output.kind = StageOutput::Kind::Shuffle;
  source.output.targetStage = 1;
  source.output.keys = {makeColumnRef(0, DataType::of(TypeId::Timestamp), "ts")};
  source.outputSchema = scan.schema;
  StageSpec below;
  below.id = 1;
  below.tasks = 1;
  below.inputs = 1;
  below.outputSchema = scan.schema;
  plan.stages = {source, below};
  return plan;
}

bool hasWatermark(const FlowRuntime& rt) {
  return rt.progressJson().find("\"watermark\":") != std::string::npos;
}

}  // namespace

TEST_CASE("a source task without partitions does not hold back the stage below") {
  TwoTasks s;
  s.secondHasPartition = false;
  auto provider = twoTaskProvider<PacedSource>(s);
  SlotPool slots(4);
  FlowRuntime rt(shuffledPlan(), provider, slots, "id-wm-1");
  rt.start();
  CHECK(waitFor([&] { return hasWatermark(rt); }, 20'000));
  rt.stop();
}

TEST_CASE("a partition with records left to read holds the watermark while the others deliver") {
  TwoTasks s;
  auto provider = twoTaskProvider<PacedSource>(s);
  SlotPool slots(4);
  FlowRuntime rt(shuffledPlan(), provider, slots, "id-wm-2");
  rt.start();
  // Partition 1 has delivered nothing and is not caught up: slow, not idle,
  // through many idle timeouts of partition 0 delivering.
  REQUIRE(waitFor([&] { return s.delivered.load() >= 500; }, 60'000));
  CHECK_FALSE(hasWatermark(rt));
  // Caught up, it is idle once partition 0 has delivered for 100 ms more.
  s.secondCaughtUp = true;
  CHECK(waitFor([&] { return hasWatermark(rt); }, 20'000));
  rt.stop();
}

namespace {

// Two source tasks, each reading its own partition at its own pace, into one
// shuffle task (so it aligns two producers) that writes the sink. Every offset
// commit is checked against what the sink had flushed: alignment must make a
// committed offset never pass a record whose row was not flushed.
struct Aligned {
  Shared sink;  // rows (partition, offset)
  std::atomic<int> commits{0};
  std::atomic<int> violations{0};
  std::atomic<int64_t> read[2] = {0, 0};
};

class AlignedSource : public SourceTask {
 public:
  AlignedSource(Aligned& s, int task) : s_(s), task_(task) {}
  void poll(std::vector<SourceRecord>& out, size_t, int) override {
    // Task 1 is the slow producer: its barriers come later than task 0's.
    std::this_thread::sleep_for(std::chrono::milliseconds(task_ == 0 ? 1 : 3));
    for (int i = 0; i < 4 && next_ < kRecords; ++i, ++next_) {
      SourceRecord r;
      r.row = {Value::bigint(task_), Value::bigint(next_)};
      r.timestampMicros = r.readMicros = nowMicros();
      r.partition = task_;
      r.offset = next_;
      out.push_back(std::move(r));
    }
    s_.read[task_] = next_;
  }
  void commit() override {}
  void commit(const std::vector<PartitionProgress>& upTo) override {
    std::lock_guard lock(s_.sink.mu);
    for (const PartitionProgress& p : upTo) {
      std::vector<bool> seen(static_cast<size_t>(p.endOffset), false);
      for (size_t i = 0; i < s_.sink.flushedRows; ++i) {
        const Row& row = s_.sink.written[i];
        const int64_t offset = row[1].asInt();
        if (row[0].asInt() == p.partition && offset < p.endOffset) seen[static_cast<size_t>(offset)] = true;
      }
      if (std::find(seen.begin(), seen.end(), false) != seen.end()) ++s_.violations;
    }
    ++s_.commits;
  }
  std::vector<PartitionProgress> progress() const override {
    return {PartitionProgress{"t", task_, 0, next_, kRecords}};
  }
  int64_t decodeErrors() const override { return 0; }
  std::string description() const override { return "Aligned[t]"; }

  static constexpr int64_t kRecords = 2000;

 private:
  Aligned& s_;
  int task_;
  int64_t next_ = 0;
};

}  // namespace

TEST_CASE("a shuffle task aligns its producers' barriers: no commit passes an unflushed row") {
  Aligned s;
  auto provider = twoTaskProvider<AlignedSource>(s);
  SlotPool slots(4);
  PhysicalPlan plan = shuffledPlan();
  plan.scans[0].eventTimeColumn = -1;
  plan.scans[0].schema.columns = {{"p", DataType::of(TypeId::BigInt)}, {"n", DataType::of(TypeId::BigInt)}};
  plan.stages[0].output.keys = {makeColumnRef(1, DataType::of(TypeId::BigInt), "n")};
  plan.stages[0].outputSchema = plan.stages[1].outputSchema = plan.scans[0].schema;
  plan.checkpointIntervalMicros = 20'000;  // many epochs while both tasks read
  FlowRuntime rt(plan, provider, slots, "id-align");
  rt.start();
  REQUIRE(waitFor([&] { return s.read[0] == AlignedSource::kRecords && s.read[1] == AlignedSource::kRecords; },
                  60'000));
  rt.stop();
  CHECK(s.commits.load() >= 4);
  CHECK(s.violations.load() == 0);
  std::lock_guard lock(s.sink.mu);
  CHECK(s.sink.written.size() == 2 * AlignedSource::kRecords);
  CHECK(s.sink.flushedRows == s.sink.written.size());
}

namespace {

// Copy 1 of a flow sharded in 2 (planner/shard_plan.h), its own rows kept in
// process (executor/exchange.h): its front reads source partition 1 and
// writes the topic in memory; its back reads "partition 1 of the topic",
// the rows the other copy's front sent it (keys of shard 1, from partition
// 0). Rows are (k, origin partition, offset); the sink takes them all.
struct Copy {
  Shared sink;
  std::mutex mu;
  std::vector<std::vector<std::pair<ExchangeMessage::Kind, Row>>> topic{2};  // by partition
  std::atomic<int64_t> frontRead{0};
  std::atomic<int64_t> backRead{0};
  std::atomic<int> commits{0};
  std::atomic<int> violations{0};
  std::vector<int64_t> backKeys;  // keys of shard 1, as the other copy sent them

  static constexpr int64_t kRecords = 1500;
};

std::vector<ExprPtr> copyKeys() {
  return {makeColumnRef(0, DataType::of(TypeId::BigInt), "k")};
}

int shardOf(int64_t k) {
  return shardOfKeyHash(shuffleKeyHash(copyKeys(), Row{Value::bigint(k)}), 2);
}

Row copyRow(int64_t k, int64_t partition, int64_t offset) {
  return {Value::bigint(k), Value::bigint(partition), Value::bigint(offset)};
}

class CopyFront : public SourceTask {
 public:
  explicit CopyFront(Copy& s) : s_(s) {}
  void poll(std::vector<SourceRecord>& out, size_t, int) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    for (int i = 0; i < 8 && next_ < Copy::kRecords; ++i, ++next_) {
      SourceRecord r;
      r.row = copyRow(next_ % 97, 1, next_);
      r.timestampMicros = r.readMicros = nowMicros();
      r.partition = 1;
      r.offset = next_;
      out.push_back(std::move(r));
    }
    s_.frontRead = next_;
  }
  void commit() override {}
  // A committed position never passes an own row the sink has not flushed:
  // the stateful stage aligned the front's barrier with the back's.
  void commit(const std::vector<PartitionProgress>& upTo) override {
    std::lock_guard lock(s_.sink.mu);
    for (const PartitionProgress& p : upTo) {
      std::vector<bool> seen(static_cast<size_t>(p.endOffset), false);
      for (size_t i = 0; i < s_.sink.flushedRows; ++i) {
        const Row& row = s_.sink.written[i];
        if (row[1].asInt() == 1 && row[2].asInt() < p.endOffset) {
          seen[static_cast<size_t>(row[2].asInt())] = true;
        }
      }
      for (int64_t o = 0; o < p.endOffset; ++o) {
        if (shardOf(o % 97) == 1 && !seen[static_cast<size_t>(o)]) ++s_.violations;
      }
    }
    ++s_.commits;
  }
  std::vector<PartitionProgress> progress() const override {
    return {PartitionProgress{"src", 1, 0, next_, Copy::kRecords}};
  }
  int64_t decodeErrors() const override { return 0; }
  std::string description() const override { return "CopyFront"; }

 private:
  Copy& s_;
  int64_t next_ = 0;
};

class CopyBack : public SourceTask {
 public:
  explicit CopyBack(Copy& s) : s_(s) {}
  void poll(std::vector<SourceRecord>& out, size_t, int) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    for (int i = 0; i < 8 && next_ < static_cast<int64_t>(s_.backKeys.size()); ++i, ++next_) {
      SourceRecord r;
      r.row = copyRow(s_.backKeys[static_cast<size_t>(next_)], 0, next_);
      r.timestampMicros = r.readMicros = nowMicros();
      r.partition = 1;
      r.offset = next_;
      out.push_back(std::move(r));
    }
    s_.backRead = next_;
  }
  void commit() override {}
  std::vector<PartitionProgress> progress() const override {
    return {PartitionProgress{"x", 1, 0, next_, -1}};
  }
  int64_t decodeErrors() const override { return 0; }
  std::string description() const override { return "CopyBack"; }

 private:
  Copy& s_;
  int64_t next_ = 0;
};

class CopyTopic : public ExchangeOut {
 public:
  explicit CopyTopic(Copy& s) : s_(s) {}
  void send(int partition, std::string_view bytes, int64_t) override {
    const std::vector<DataTypePtr> types(3, DataType::of(TypeId::BigInt));
    ExchangeMessage m = decodeExchange(bytes, types);
    std::lock_guard lock(s_.mu);
    s_.topic.at(static_cast<size_t>(partition)).emplace_back(m.kind, m.row);
  }
  void flush(int) override {}
  std::string description() const override { return "CopyTopic"; }

 private:
  Copy& s_;
};

// memoryProvider()'s sink, with the copy's front, topic and back.
rtsql::testing::FakeConnectorProvider copyProvider(Copy& s) {
  rtsql::testing::FakeConnectorProvider p;
  p.partitions = 2;
  p.source = [&s](int) { return std::make_unique<CopyFront>(s); };
  p.sink = [&s] { return std::make_unique<MemorySink>(s.sink); };
  p.exchangeWriter = [&s] { return std::make_unique<CopyTopic>(s); };
  p.exchangeSource = [&s] { return std::make_unique<CopyBack>(s); };
  return p;
}

// Stage 0: the front (source partition 1), exchange by k; stage 1: two
// tasks writing the sink; stage 2: the back, shuffling by k into stage 1.
PhysicalPlan copyPlan() {
  PhysicalPlan plan;
  plan.flowName = "cnt#1";
  plan.shards = 2;
  plan.shard = 1;
  plan.exchangeLocal = true;
  plan.checkpointIntervalMicros = 20'000;  // many epochs while both read
  Schema schema;
  schema.columns = {{"k", DataType::of(TypeId::BigInt)},
                    {"p", DataType::of(TypeId::BigInt)},
                    {"o", DataType::of(TypeId::BigInt)}};
  ExchangeSpec exchange;
  exchange.topic = "x";
  exchange.bootstrap = "memory";
  exchange.partitions = 2;
  exchange.producers = 2;
  exchange.local = true;
  ScanSpec& source = plan.scans.emplace_back();
  source.name = "src";
  source.schema = schema;
  source.share = PartitionShare{0, 2, {1}, {}};
  ScanSpec& back = plan.scans.emplace_back();
  back.name = "src";
  back.connector = "exchange";
  back.schema = schema;
  back.partitions = 2;
  back.exchange = exchange;
  back.share = PartitionShare{0, 2, {1}, {}};
  plan.sink.name = "out";
  StageSpec front;
  front.id = 0;
  front.scan = 0;
  front.output.kind = StageOutput::Kind::Exchange;
  front.output.targetStage = 1;
  front.output.keys = copyKeys();
  front.output.exchange = exchange;
  front.outputSchema = schema;
  StageSpec writer;
  writer.id = 1;
  writer.tasks = 2;
  writer.inputs = 1;
  writer.outputSchema = schema;
  StageSpec backStage;
  backStage.id = 2;
  backStage.scan = 1;
  backStage.output.kind = StageOutput::Kind::Shuffle;
  backStage.output.targetStage = 1;
  backStage.output.keys = copyKeys();
  backStage.outputSchema = schema;
  plan.stages = {front, writer, backStage};
  return plan;
}

}  // namespace

TEST_CASE("a sharded copy's own rows go in process, aligned with what its back reads") {
  Copy s;
  for (int64_t k = 0; s.backKeys.size() < 400; ++k) {
    if (shardOf(k) == 1) s.backKeys.push_back(k);
  }
  auto provider = copyProvider(s);
  SlotPool slots(4);
  FlowRuntime rt(copyPlan(), provider, slots, "id-copy");
  rt.start();
  REQUIRE(waitFor(
      [&] {
        return s.frontRead == Copy::kRecords &&
               s.backRead == static_cast<int64_t>(s.backKeys.size()) && s.commits.load() >= 4;
      },
      60'000));
  rt.stop();
  CHECK(s.violations.load() == 0);

  // The topic got the front's rows of the other shard, and only them: none
  // for this copy's own partition, not even a marker.
  std::map<int64_t, int64_t> sentAway;  // key -> rows
  {
    std::lock_guard lock(s.mu);
    CHECK(s.topic[1].empty());
    for (const auto& [kind, row] : s.topic[0]) {
      if (kind != ExchangeMessage::Kind::Row) continue;
      CHECK(shardOf(row[0].asInt()) == 0);
      ++sentAway[row[0].asInt()];
    }
  }
  // The sink got the front's own rows (shard 1, each once) and the back's.
  std::lock_guard lock(s.sink.mu);
  int64_t own = 0, fromBack = 0, ownWanted = 0, awayWanted = 0;
  std::vector<int> seen(Copy::kRecords, 0);
  for (const Row& row : s.sink.written) {
    CHECK(shardOf(row[0].asInt()) == 1);
    if (row[1].asInt() == 1) {
      ++own;
      ++seen[static_cast<size_t>(row[2].asInt())];
    } else {
      ++fromBack;
    }
  }
  for (int64_t o = 0; o < Copy::kRecords; ++o) {
    if (shardOf(o % 97) == 1) {
      ++ownWanted;
      CHECK(seen[static_cast<size_t>(o)] == 1);
    } else {
      ++awayWanted;
    }
  }
  CHECK(own == ownWanted);
  CHECK(fromBack == static_cast<int64_t>(s.backKeys.size()));
  int64_t away = 0;
  for (const auto& [k, n] : sentAway) away += n;
  CHECK(away == awayWanted);
  CHECK(ownWanted > 0);
  CHECK(awayWanted > 0);
}

TEST_CASE(
    "a source task that can be woken waits for records; epoch ends, commits and the stop wake it") {
  WakeShared s;
  auto provider = wakeableProvider(s);
  SlotPool slots(4);
  FlowRuntime rt(doublingPlan(20'000), provider, slots, "id-wake");  // an epoch every 20 ms
  rt.start();
  // Epochs end and commit although the source never returns by itself.
  CHECK(waitFor(
      [&] {
        std::lock_guard lock(s.mu);
        return s.commits.size() >= 3;
      },
      60000));
  // A record is handed over as soon as it is there.
  {
    std::lock_guard lock(s.mu);
    s.input.push_back(21);
    s.cv.notify_all();
  }
  CHECK(waitFor(
      [&] {
        std::lock_guard lock(s.mu);
        return s.written.size() == 1;
      },
      60000));
  rt.stop();
  CHECK(rt.state() == FlowState::Stopped);
  std::lock_guard lock(s.mu);
  CHECK(s.timedOut == 0);
  REQUIRE(s.written.size() == 1);
  CHECK(s.written[0][1].asInt() == 42);
  CHECK(s.commits.back() == 1);  // the final epoch committed the record's offset
}

namespace {

// Exactly-once against memory: a transaction that keeps each committed
// epoch's rows apart, and a sink that holds rows back while paused, as the
// Kafka sink does. The source serves its first records at once; after the
// first epoch's barrier (the sink's first pause) its next poll returns only
// after two wakes, the epoch being durable and the next end asked for, so
// the task meets both in one turn, with rows written after the barrier.
struct TxnShared {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<int64_t> first, second;
  bool afterBarrier = false;  // the first pause came: the second part waits for two wakes
  bool secondServed = false;
  int wakesAfterBarrier = 0;
  bool paused = false;
  std::vector<Row> held, open;
  std::map<uint64_t, std::vector<Row>> committed;  // by epoch
};

class TxnSource : public SourceTask {
 public:
  explicit TxnSource(TxnShared& s) : s_(s) {}
  void poll(std::vector<SourceRecord>& out, size_t, int timeoutMs) override {
    std::unique_lock lock(s_.mu);
    if (next_ < s_.first.size()) {
      while (next_ < s_.first.size()) serve(out, s_.first[next_]);
      return;
    }
    if (s_.afterBarrier && !s_.secondServed) {
      s_.cv.wait_for(lock, std::chrono::seconds(60), [&] { return s_.wakesAfterBarrier >= 2; });
      for (int64_t x : s_.second) serve(out, x);
      s_.secondServed = true;
      return;
    }
    s_.cv.wait_for(lock, std::chrono::milliseconds(std::min(timeoutMs, 20)));
  }
  void wake() override {
    std::lock_guard lock(s_.mu);
    if (s_.afterBarrier) ++s_.wakesAfterBarrier;
    s_.cv.notify_all();
  }
  bool wakes() const override { return true; }
  void commit() override {}
  std::vector<PartitionProgress> progress() const override {
    return {PartitionProgress{"mem", 0, 0, static_cast<int64_t>(offset_), -1}};
  }
  int64_t decodeErrors() const override { return 0; }
  std::string description() const override { return "Txn[mem]"; }

 private:
  void serve(std::vector<SourceRecord>& out, int64_t x) {
    SourceRecord r;
    r.row = {Value::bigint(x)};
    r.timestampMicros = r.readMicros = nowMicros();
    r.partition = 0;
    r.offset = static_cast<int64_t>(offset_++);
    ++next_;
    out.push_back(std::move(r));
  }
  TxnShared& s_;
  size_t next_ = 0;
  size_t offset_ = 0;
};

class HoldingSink : public SinkWriter {
 public:
  explicit HoldingSink(TxnShared& s) : s_(s) {}
  void write(const Row& row, int64_t) override {
    std::lock_guard lock(s_.mu);
    (s_.paused ? s_.held : s_.open).push_back(row);
  }
  void flush(int) override {}
  void pause() override {
    std::lock_guard lock(s_.mu);
    s_.paused = true;
    if (!s_.afterBarrier && !s_.first.empty()) {
      s_.afterBarrier = true;
      s_.wakesAfterBarrier = 0;
    }
  }
  void resume() override {
    std::lock_guard lock(s_.mu);
    s_.paused = false;
    s_.open.insert(s_.open.end(), s_.held.begin(), s_.held.end());
    s_.held.clear();
  }
  int64_t deliveryErrors() const override { return 0; }
  std::string description() const override { return "Holding[out]"; }

 private:
  TxnShared& s_;
};

class MemoryTransaction : public SinkTransaction {
 public:
  explicit MemoryTransaction(TxnShared& s) : s_(s) {}
  int64_t recover() override { return -1; }
  void begin() override {}
  void commit(uint64_t epoch) override {
    std::lock_guard lock(s_.mu);
    s_.committed[epoch] = std::move(s_.open);
    s_.open.clear();
    s_.cv.notify_all();
  }

 private:
  TxnShared& s_;
};

rtsql::testing::FakeConnectorProvider txnProvider(TxnShared& s) {
  rtsql::testing::FakeConnectorProvider p;
  p.source = [&s](int) { return std::make_unique<TxnSource>(s); };
  p.sink = [&s] { return std::make_unique<HoldingSink>(s); };
  p.transaction = [&s] { return std::make_unique<MemoryTransaction>(s); };
  p.transactionalSink = [&s] { return std::make_unique<HoldingSink>(s); };
  return p;
}

}  // namespace

TEST_CASE(
    "exactly-once: rows held back after a barrier go into the next epoch's transaction, also "
    "when that epoch is a stop's final one") {
  TxnShared s;
  s.first = {11, 12, 13};
  s.second = {14, 15};
  rtsql::testing::TempDir dir("flow_runtime_txn");
  auto provider = txnProvider(s);
  SlotPool slots(4);
  PhysicalPlan plan = doublingPlan(2'000'000);
  plan.exactlyOnce = true;
  {
    FlowRuntime rt(plan, provider, slots, "id-txn", {}, dir.sub("checkpoints"));
    rt.start();
    {
      // The first epoch commits its three rows.
      std::unique_lock lock(s.mu);
      REQUIRE(s.cv.wait_for(lock, std::chrono::seconds(60), [&] { return !s.committed.empty(); }));
    }
    // The stop's final epoch is asked for while the task still waits in its
    // poll, which then gives the second part.
    rt.stop();
    CHECK(rt.state() == FlowState::Stopped);
  }
  std::lock_guard lock(s.mu);
  CHECK(s.secondServed);
  std::vector<int64_t> seen;
  for (const auto& [epoch, rows] : s.committed)
    for (const Row& r : rows) seen.push_back(r[0].asInt());
  std::sort(seen.begin(), seen.end());
  CHECK(seen == std::vector<int64_t>{11, 12, 13, 14, 15});
  CHECK(s.held.empty());
}
