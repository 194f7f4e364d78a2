#include <doctest/doctest.h>
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <set>
#include <thread>

#include <unistd.h>

#include "common/clock.h"
#include "common/error.h"
#include "connector_test_util.h"
#include "connectors/embedded/broker.h"
#include "connectors/kafka/client.h"
#include "connectors/kafka/sink.h"
#include "connectors/kafka/source.h"
#include "connectors/provider.h"
#include "tests/unit/connectors/kafka_test_util.h"
#include "tests/unit/proc_threads.h"

using namespace rtsql;
using testkafka::makeOptions;
using testkafka::pollFor;

namespace {

Schema clickSchema() {
  Schema s;
  s.columns.push_back({"id", DataType::of(TypeId::BigInt), false});
  s.columns.push_back({"name", DataType::of(TypeId::String), false});
  s.columns.push_back({kMetaKey, DataType::of(TypeId::Binary), true});
  s.columns.push_back({kMetaTimestamp, DataType::of(TypeId::Timestamp), true});
  s.columns.push_back({kMetaPartition, DataType::of(TypeId::Int), true});
  s.columns.push_back({kMetaOffset, DataType::of(TypeId::BigInt), true});
  return s;
}

ScanSpec jsonScan(const std::string& bootstrap, const std::string& topics,
                  std::vector<std::pair<std::string, std::string>> extra = {}) {
  ScanSpec scan;
  scan.name = "clicks";
  scan.connector = "kafka";
  scan.format = "json";
  std::vector<std::pair<std::string, std::string>> kv = {
      {"connector", "kafka"}, {"kafka.bootstrap.servers", bootstrap}, {"subscribe", topics}};
  kv.insert(kv.end(), extra.begin(), extra.end());
  scan.options = makeOptions(kv);
  scan.schema = clickSchema();
  return scan;
}

testkafka::Message jsonMessage(const std::string& topic, int32_t partition, int64_t id,
                               int64_t tsMs) {
  testkafka::Message m;
  m.topic = topic;
  m.partition = partition;
  m.hasKey = true;
  m.key = "k" + std::to_string(id);
  m.value = R"({"id": )" + std::to_string(id) + R"(, "name": "n)" + std::to_string(id) + R"("})";
  m.timestampMs = tsMs;
  return m;
}

const PartitionProgress* findPartition(const std::vector<PartitionProgress>& ps, int32_t p) {
  for (const auto& x : ps) {
    if (x.partition == p) return &x;
  }
  return nullptr;
}

using testing::sqlErrorOf;

}  // namespace

TEST_CASE("kafka source reads, decodes and tracks offsets of its partitions") {
  EmbeddedKafka broker;
  broker.createTopic("clicks", 2);
  const int64_t ts = 1700000000000;
  testkafka::produce(broker.bootstrap(),
                     {jsonMessage("clicks", 0, 1, ts), jsonMessage("clicks", 0, 2, ts + 1),
                      jsonMessage("clicks", 0, 3, ts + 2), jsonMessage("clicks", 1, 10, ts + 3),
                      jsonMessage("clicks", 1, 11, ts + 4)});
  ScanSpec scan = jsonScan(broker.bootstrap(), "clicks", {{"startingOffsets", "earliest"}});
  CHECK(kafkaSourcePartitions(scan, broker.bootstrap()) == 2);

  auto task = makeKafkaSource(scan, broker.bootstrap(), "f1", 0, 1);
  CHECK(task->description() == "KafkaV2[Subscribe[clicks]]");
  int64_t before = nowMicros();
  auto recs = pollFor(*task, 5);
  REQUIRE(recs.size() == 5);
  std::sort(recs.begin(), recs.end(), [](const SourceRecord& a, const SourceRecord& b) {
    return a.row[0].asInt() < b.row[0].asInt();
  });
  CHECK(recs[0].row[0].asInt() == 1);
  CHECK(recs[0].row[1].asString() == "n1");
  CHECK(recs[0].row[2].asString() == "k1");               // _key
  CHECK(recs[0].row[3].asInt() == ts * 1000);             // _timestamp
  CHECK(recs[0].partition == 0);
  CHECK(recs[0].offset == 0);
  CHECK(recs[0].timestampMicros == ts * 1000);
  CHECK(recs[0].readMicros >= before);
  CHECK(recs[0].readMicros <= nowMicros());
  CHECK(recs[2].offset == 2);
  CHECK(recs[3].row[0].asInt() == 10);
  CHECK(recs[3].partition == 1);
  CHECK(recs[3].row[4].asInt() == 1);  // _partition
  CHECK(recs[4].offset == 1);
  CHECK(recs[4].row[5].asInt() == 1);  // _offset
  CHECK(recs[4].timestampMicros == (ts + 4) * 1000);

  auto progress = task->progress();
  REQUIRE(progress.size() == 2);
  CHECK(findPartition(progress, 0)->startOffset == 0);
  CHECK(findPartition(progress, 0)->endOffset == 3);
  CHECK(findPartition(progress, 1)->endOffset == 2);
  CHECK(findPartition(progress, 0)->latestOffset == 3);
  CHECK(findPartition(progress, 1)->latestOffset == 2);

  task->commit();
  progress = task->progress();
  CHECK(findPartition(progress, 0)->startOffset == 3);
  CHECK(findPartition(progress, 1)->startOffset == 2);
  task.reset();

  // Reopened, the flow resumes after the committed offsets, whatever
  // startingOffsets says.
  testkafka::produce(broker.bootstrap(),
                     {jsonMessage("clicks", 0, 4, ts + 5), jsonMessage("clicks", 1, 12, ts + 6)});
  task = makeKafkaSource(scan, broker.bootstrap(), "f1", 0, 1);
  progress = task->progress();
  CHECK(findPartition(progress, 0)->startOffset == 3);
  recs = pollFor(*task, 2);
  task->poll(recs, 10, 100);
  REQUIRE(recs.size() == 2);
  std::set<int64_t> ids;
  for (const auto& r : recs) ids.insert(r.row[0].asInt());
  CHECK(ids == std::set<int64_t>{4, 12});

  // Another flow without committed offsets starts at the end with 'latest'.
  ScanSpec latest = jsonScan(broker.bootstrap(), "clicks");
  auto other = makeKafkaSource(latest, broker.bootstrap(), "f2", 0, 1);
  CHECK(findPartition(other->progress(), 0)->startOffset == 4);
  std::vector<SourceRecord> none;
  other->poll(none, 10, 200);
  CHECK(none.empty());
  testkafka::produce(broker.bootstrap(), {jsonMessage("clicks", 1, 13, ts + 7)});
  recs = pollFor(*other, 1);
  REQUIRE(recs.size() == 1);
  CHECK(recs[0].row[0].asInt() == 13);
  CHECK(recs[0].offset == 3);
}

// The task's thread waits in poll() for as long as it is told: a record, or a
// wake() from another thread, ends the wait, never a timer. The 60 s bounds
// only keep a broken build from hanging the test run.
TEST_CASE("kafka source poll waits for a record or a wake") {
  constexpr int kForever = 120'000;  // longer than any bound below
  EmbeddedKafka broker;
  broker.createTopic("quiet", 1);
  ScanSpec scan = jsonScan(broker.bootstrap(), "quiet", {{"startingOffsets", "earliest"}});
  auto task = makeKafkaSource(scan, broker.bootstrap(), "f1", 0, 1);
  auto spare = makeKafkaSource(scan, broker.bootstrap(), "f1", 1, 2);  // no partition
  CHECK(task->wakes());
  CHECK(spare->wakes());
  // Polls in another thread until a record came (`untilRecord`) or once.
  auto pollAsync = [&](SourceTask& t, bool untilRecord) {
    return std::async(std::launch::async, [&t, untilRecord] {
      std::vector<SourceRecord> got;
      do {
        t.poll(got, 10, kForever);
      } while (untilRecord && got.empty());
      return got;
    });
  };
  auto returns = [](std::future<std::vector<SourceRecord>>& f, SourceTask& t, bool wake) {
    for (int i = 0; i < 600; ++i) {
      if (wake) t.wake();
      if (f.wait_for(std::chrono::milliseconds(100)) == std::future_status::ready) return true;
    }
    return false;
  };

  // A wake before the poll is kept for it; one during the poll ends it.
  for (SourceTask* t : {task.get(), spare.get()}) {
    t->wake();
    auto before = pollAsync(*t, false);
    CHECK(returns(before, *t, false));
    auto during = pollAsync(*t, false);
    CHECK(returns(during, *t, true));
  }

  // A record ends the wait.
  auto polled = pollAsync(*task, true);
  testkafka::produce(broker.bootstrap(), {jsonMessage("quiet", 0, 7, 1700000000000)});
  REQUIRE(returns(polled, *task, false));
  std::vector<SourceRecord> got = polled.get();
  REQUIRE(got.size() == 1);
  CHECK(got[0].row[0].asInt() == 7);
}

namespace {

// The librdkafka clients alive in this process: each runs one "rdk:main" thread.
int kafkaClients() {
  int n = 0;
  std::error_code ec;
  for (const auto& t : std::filesystem::directory_iterator("/proc/self/task", ec)) {
    std::ifstream comm(t.path() / "comm");
    std::string name;
    std::getline(comm, name);
    n += name == "rdk:main";
  }
  return n;
}

}  // namespace

// Caught up (what lets the watermark leave a quiet partition out) comes from
// the client's position and the high watermark of its latest fetch, with no
// end-of-partition event: records fetched but not yet taken, or the records
// after an offset a restore went back to, keep the partition from it.
TEST_CASE("kafka source is caught up once it has taken every record up to the high watermark") {
  EmbeddedKafka broker;
  broker.createTopic("ends", 1);
  ScanSpec scan = jsonScan(broker.bootstrap(), "ends", {{"startingOffsets", "earliest"}});
  auto task = makeKafkaSource(scan, broker.bootstrap(), "fends", 0, 1);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  auto before = [&] { return std::chrono::steady_clock::now() < deadline; };

  // Empty: caught up once a fetch has said where the log ends.
  std::vector<SourceRecord> recs;
  while (!task->caughtUp(0) && before()) task->poll(recs, 10, 50);
  CHECK(task->caughtUp(0));
  CHECK(recs.empty());

  const int64_t ts = 1700000000000;
  testkafka::produce(broker.bootstrap(), {jsonMessage("ends", 0, 1, ts),
                                          jsonMessage("ends", 0, 2, ts),
                                          jsonMessage("ends", 0, 3, ts)});
  // One record taken, and a fetch has shown all three: not caught up.
  while (recs.empty() && before()) task->poll(recs, 1, 100);
  REQUIRE(recs.size() == 1);
  while (task->progress().at(0).latestOffset < 3 && before()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  REQUIRE(task->progress().at(0).latestOffset == 3);
  CHECK_FALSE(task->caughtUp(0));
  // All taken: caught up at once, with nothing more from the client.
  while (recs.size() < 3 && before()) task->poll(recs, 10, 100);
  REQUIRE(recs.size() == 3);
  CHECK(task->caughtUp(0));

  // A restore back to offset 1: records 1 and 2 are to be read again.
  PartitionProgress at;
  at.topic = "ends";
  at.partition = 0;
  at.endOffset = 1;
  task->seek({at});
  CHECK_FALSE(task->caughtUp(0));
  recs.clear();
  while (recs.size() < 2 && before()) task->poll(recs, 10, 100);
  REQUIRE(recs.size() == 2);
  CHECK(recs[0].offset == 1);
  CHECK(task->caughtUp(0));
}

TEST_CASE("kafka source tasks of one flow share one client and each reads only its partitions") {
  EmbeddedKafka broker;
  broker.createTopic("shared_in", 4);
  const int64_t ts = 1700000000000;
  std::vector<testkafka::Message> msgs;
  for (int p = 0; p < 4; ++p) {
    for (int i = 0; i < 3; ++i) msgs.push_back(jsonMessage("shared_in", p, p * 100 + i, ts + i));
  }
  testkafka::produce(broker.bootstrap(), msgs);
  ScanSpec scan = jsonScan(broker.bootstrap(), "shared_in", {{"startingOffsets", "earliest"}});

  const int before = kafkaClients();
  std::vector<std::unique_ptr<SourceTask>> tasks;
  for (int t = 0; t < 4; ++t) tasks.push_back(makeKafkaSource(scan, broker.bootstrap(), "fshared", t, 4));
  // One consumer for the source, not one per task.
  CHECK(kafkaClients() - before == 1);

  std::set<int32_t> seen;
  for (int t = 0; t < 4; ++t) {
    auto recs = pollFor(*tasks[t], 3);
    REQUIRE(recs.size() == 3);
    for (const SourceRecord& r : recs) CHECK(r.partition == recs[0].partition);
    CHECK(tasks[t]->progress().size() == 1);
    seen.insert(recs[0].partition);
  }
  CHECK(seen.size() == 4);

  // A restore moves one task's partition only: the others read on.
  PartitionProgress back = tasks[1]->progress().at(0);
  back.endOffset = 1;
  tasks[1]->seek({back});
  auto again = pollFor(*tasks[1], 2);
  REQUIRE(again.size() == 2);
  CHECK(again[0].offset == 1);
  std::vector<SourceRecord> none;
  tasks[0]->poll(none, 10, 200);
  CHECK(none.empty());

  // A flow started again while the old tasks close reads its partitions too.
  auto second = makeKafkaSource(scan, broker.bootstrap(), "fshared", 2, 4);
  CHECK(pollFor(*second, 3).size() == 3);
  second.reset();
  tasks.clear();
  CHECK(kafkaClients() == before);
}

TEST_CASE("kafka source counts the offsets it never read: records the broker's retention removed") {
  EmbeddedKafka broker;
  broker.createTopic("kept", 1);
  const int64_t ts = 1700000000000;
  testkafka::produce(broker.bootstrap(), {jsonMessage("kept", 0, 1, ts),
                                          jsonMessage("kept", 0, 2, ts),
                                          jsonMessage("kept", 0, 3, ts)});
  ScanSpec scan = jsonScan(broker.bootstrap(), "kept", {{"startingOffsets", "earliest"}});
  auto task = makeKafkaSource(scan, broker.bootstrap(), "fkept", 0, 1);
  REQUIRE(pollFor(*task, 3).size() == 3);
  task->commit();
  CHECK(task->progress().at(0).endOffset == 3);
  CHECK(task->progress().at(0).offsetsSkipped == 0);
  task.reset();

  // While the flow is away, more arrives than the embedded broker keeps per
  // partition (5 MB): the oldest records, from offset 3 on, are gone.
  const std::string filler(100 * 1024, 'x');
  for (int batch = 0; batch < 8; ++batch) {
    std::vector<testkafka::Message> big;
    for (int i = 0; i < 10; ++i) {
      testkafka::Message m = jsonMessage("kept", 0, 100 + batch * 10 + i, ts);
      m.value = R"({"id": )" + std::to_string(100 + batch * 10 + i) + R"(, "name": ")" + filler +
                R"("})";
      big.push_back(std::move(m));
    }
    testkafka::produce(broker.bootstrap(), big);
  }

  // Reopened at its committed offset 3, which the log no longer holds, the
  // task fails before it hands over any record (failOnDataLoss is true by
  // default) ...
  task = makeKafkaSource(scan, broker.bootstrap(), "fkept", 0, 1);
  std::vector<SourceRecord> none;
  SqlError lost = sqlErrorOf([&] { task->poll(none, 10, 100); });
  CHECK(lost.sqlstate() == sqlstate::kDataCorrupted);
  CHECK(std::string(lost.what()).find("offset 3 of topic \"kept\" partition 0") !=
        std::string::npos);
  CHECK(none.empty());
  // START FLOW ... RESET STATE reads from startingOffsets instead: no failure.
  task->startFromStartingOffsets();
  CHECK_FALSE(pollFor(*task, 1).empty());
  task.reset();

  // ... and with 'failOnDataLoss' = 'false' it goes on at the oldest record
  // the broker still has, and counts what it passed over.
  scan = jsonScan(broker.bootstrap(), "kept",
                  {{"startingOffsets", "earliest"}, {"failOnDataLoss", "false"}});
  task = makeKafkaSource(scan, broker.bootstrap(), "fkept", 0, 1);
  auto recs = pollFor(*task, 1);
  REQUIRE(recs.size() == 1);
  CHECK(recs[0].offset > 3);
  CHECK(task->progress().at(0).offsetsSkipped == recs[0].offset - 3);
  // Reading on without gaps adds nothing.
  task->poll(recs, 5, 100);
  CHECK(task->progress().at(0).offsetsSkipped == recs[0].offset - 3);
}

TEST_CASE("kafka source restored beyond the end of its log fails, or goes on from its start") {
  // The embedded broker started again empty: the checkpoint's offset 40 is
  // beyond the end of a log that holds two records.
  EmbeddedKafka broker;
  broker.createTopic("renewed", 1);
  const int64_t ts = 1700000000000;
  testkafka::produce(broker.bootstrap(),
                     {jsonMessage("renewed", 0, 1, ts), jsonMessage("renewed", 0, 2, ts)});
  PartitionProgress at;
  at.topic = "renewed";
  at.partition = 0;
  at.endOffset = 40;

  ScanSpec scan = jsonScan(broker.bootstrap(), "renewed", {{"startingOffsets", "earliest"}});
  auto task = makeKafkaSource(scan, broker.bootstrap(), "frenewed", 0, 1);
  SqlError lost = sqlErrorOf([&] { task->seek({at}); });
  CHECK(lost.sqlstate() == sqlstate::kDataCorrupted);
  CHECK(std::string(lost.what()).find("offset 40 of topic \"renewed\" partition 0") !=
        std::string::npos);
  CHECK(std::string(lost.what()).find("[0, 2)") != std::string::npos);

  scan = jsonScan(broker.bootstrap(), "renewed",
                  {{"startingOffsets", "earliest"}, {"failOnDataLoss", "false"}});
  task = makeKafkaSource(scan, broker.bootstrap(), "frenewed", 0, 1);
  task->seek({at});
  auto recs = pollFor(*task, 2);
  REQUIRE(recs.size() == 2);
  CHECK(recs[0].offset == 0);
  CHECK(task->progress().at(0).offsetsSkipped == 40 - 2);
}

TEST_CASE("kafka source checkpoints its cluster's id, and a restore on another cluster is lost") {
  EmbeddedKafka broker;
  broker.createTopic("moved_away", 1);
  const int64_t ts = 1700000000000;
  testkafka::produce(broker.bootstrap(), {jsonMessage("moved_away", 0, 1, ts),
                                          jsonMessage("moved_away", 0, 2, ts)});
  ScanSpec scan = jsonScan(broker.bootstrap(), "moved_away", {{"startingOffsets", "earliest"}});
  auto task = makeKafkaSource(scan, broker.bootstrap(), "fmoved", 0, 1);
  PartitionProgress p = task->progress().at(0);
  REQUIRE(p.position.starts_with("kafka-cluster:"));

  // Same cluster: the offset is taken as it is.
  p.endOffset = 1;
  task->seek({p});
  auto recs = pollFor(*task, 1);
  REQUIRE(recs.size() == 1);
  CHECK(recs[0].offset == 1);

  // An offset in range, but checkpointed on another cluster.
  p.position = "kafka-cluster:someOtherCluster";
  task = makeKafkaSource(scan, broker.bootstrap(), "fmoved", 0, 1);
  SqlError lost = sqlErrorOf([&] { task->seek({p}); });
  CHECK(lost.sqlstate() == sqlstate::kDataCorrupted);
  CHECK(std::string(lost.what()).find("another Kafka cluster") != std::string::npos);
  CHECK(std::string(lost.what()).find("someOtherCluster") != std::string::npos);
}

TEST_CASE("a cluster's kafka source goes on from what its flow committed before its group named the cluster") {
  EmbeddedKafka broker;
  broker.createTopic("moved", 1);
  const int64_t ts = 1700000000000;
  testkafka::produce(broker.bootstrap(), {jsonMessage("moved", 0, 1, ts),
                                          jsonMessage("moved", 0, 2, ts),
                                          jsonMessage("moved", 0, 3, ts)});
  ScanSpec scan = jsonScan(broker.bootstrap(), "moved", {{"startingOffsets", "earliest"}});
  // The flow as it ran before: its positions in the unscoped group rtsql-fmove.
  auto before = makeKafkaSource(scan, broker.bootstrap(), "fmove", 0, 1);
  REQUIRE(pollFor(*before, 3).size() == 3);
  before->commit();
  before.reset();
  testkafka::produce(broker.bootstrap(), {jsonMessage("moved", 0, 4, ts)});

  // Under the cluster's group, which holds nothing yet: from offset 3, not
  // from the earliest.
  const kafka::FlowKafkaIds ids = kafka::flowKafkaIds("c1", "fmove");
  CHECK(ids.group() == "rtsql-c1-fmove");
  auto scoped = makeKafkaSource(scan, broker.bootstrap(), "fmove", ids, 0, 1);
  auto recs = pollFor(*scoped, 1);
  REQUIRE(recs.size() == 1);
  CHECK(recs[0].offset == 3);
  scoped->commit();
  scoped.reset();

  // Its own group holds a position now, which wins over the old group's.
  testkafka::produce(broker.bootstrap(), {jsonMessage("moved", 0, 5, ts)});
  scoped = makeKafkaSource(scan, broker.bootstrap(), "fmove", ids, 0, 1);
  recs = pollFor(*scoped, 1);
  REQUIRE(recs.size() == 1);
  CHECK(recs[0].offset == 4);
  scoped.reset();

  // A group of the user's ('kafka.group.id') never takes the old group's.
  ScanSpec own = jsonScan(broker.bootstrap(), "moved",
                          {{"startingOffsets", "earliest"}, {"kafka.group.id", "mine"}});
  auto mine = makeKafkaSource(own, broker.bootstrap(), "fmove", ids, 0, 1);
  recs = pollFor(*mine, 1);
  REQUIRE(recs.size() == 1);
  CHECK(recs[0].offset == 0);
}

TEST_CASE("kafka source tasks split the partitions of all subscribed topics") {
  EmbeddedKafka broker;
  broker.createTopic("a", 1);
  broker.createTopic("b", 2);
  ScanSpec scan = jsonScan(broker.bootstrap(), "a, b", {{"startingOffsets", "earliest"}});
  CHECK(kafkaSourcePartitions(scan, broker.bootstrap()) == 3);
  // Global partition order: a/0, b/0, b/1. Task 0 of 2 owns a/0 and b/1.
  auto t0 = makeKafkaSource(scan, broker.bootstrap(), "split", 0, 2);
  auto t1 = makeKafkaSource(scan, broker.bootstrap(), "split", 1, 2);
  CHECK(t0->progress().size() == 2);
  REQUIRE(t1->progress().size() == 1);
  CHECK(t1->progress()[0].partition == 0);
  CHECK(t0->description() == "KafkaV2[Subscribe[a,b]]");
  testkafka::produce(broker.bootstrap(), {jsonMessage("a", 0, 1, 0), jsonMessage("b", 0, 2, 0),
                                          jsonMessage("b", 1, 3, 0)});
  auto r0 = pollFor(*t0, 2);
  auto r1 = pollFor(*t1, 1);
  REQUIRE(r0.size() == 2);
  REQUIRE(r1.size() == 1);
  std::set<int64_t> ids0{r0[0].row[0].asInt(), r0[1].row[0].asInt()};
  CHECK(ids0 == std::set<int64_t>{1, 3});
  CHECK(r1[0].row[0].asInt() == 2);
  // A task beyond the partition count owns nothing and waits quietly.
  auto idle = makeKafkaSource(scan, broker.bootstrap(), "split", 3, 4);
  CHECK(idle->progress().empty());
  std::vector<SourceRecord> none;
  auto start = std::chrono::steady_clock::now();
  idle->poll(none, 10, 50);
  CHECK(none.empty());
  CHECK(std::chrono::steady_clock::now() - start >= std::chrono::milliseconds(40));
}

TEST_CASE("kafka source on.error: fail names the record, skip counts it") {
  EmbeddedKafka broker;
  broker.createTopic("bad", 1);
  testkafka::Message broken = jsonMessage("bad", 0, 1, 0);
  broken.value = "{not json";
  testkafka::produce(broker.bootstrap(), {broken, jsonMessage("bad", 0, 2, 0)});

  auto failing = makeKafkaSource(jsonScan(broker.bootstrap(), "bad", {{"startingOffsets", "earliest"}}),
                                 broker.bootstrap(), "fail", 0, 1);
  SqlError e = sqlErrorOf([&] { pollFor(*failing, 2); });
  CHECK(e.sqlstate() == sqlstate::kInvalidTextRepresentation);
  CHECK(e.message().find("topic 'bad' partition 0 offset 0") != std::string::npos);
  CHECK(failing->decodeErrors() == 1);

  auto skipping = makeKafkaSource(
      jsonScan(broker.bootstrap(), "bad", {{"startingOffsets", "earliest"}, {"on.error", "skip"}}),
      broker.bootstrap(), "skip", 0, 1);
  auto recs = pollFor(*skipping, 1);
  REQUIRE(recs.size() == 1);
  CHECK(recs[0].row[0].asInt() == 2);
  CHECK(skipping->decodeErrors() == 1);
  CHECK(skipping->progress()[0].endOffset == 2);
}

TEST_CASE("kafka source survives its broker going away") {
  auto broker = std::make_unique<EmbeddedKafka>();
  broker->createTopic("gone", 1);
  std::string bootstrap = broker->bootstrap();
  testkafka::produce(bootstrap, {jsonMessage("gone", 0, 1, 0)});
  auto task = makeKafkaSource(jsonScan(bootstrap, "gone", {{"startingOffsets", "earliest"}}),
                              bootstrap, "gone", 0, 1);
  REQUIRE(pollFor(*task, 1).size() == 1);
  broker.reset();
  // Polling goes on, empty-handed, for as long as the broker is away.
  std::vector<SourceRecord> none;
  for (int i = 0; i < 5; ++i) CHECK_NOTHROW(task->poll(none, 10, 100));
  CHECK(none.empty());
  CHECK(task->progress()[0].endOffset == 1);
  auto start = std::chrono::steady_clock::now();
  SqlError e = sqlErrorOf([&] { task->commit(); });
  CHECK(e.sqlstate() == sqlstate::kConnectionFailure);
  MESSAGE(e.message());
  // Offsets stay uncommitted: the next epoch still starts where this one did.
  CHECK(task->progress()[0].startOffset == 0);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(12));
  start = std::chrono::steady_clock::now();
  task.reset();
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
}

TEST_CASE("kafka source passes kafka.<name> options to the client") {
  EmbeddedKafka broker;
  broker.createTopic("t", 1);
  ScanSpec scan = jsonScan(broker.bootstrap(), "t", {{"kafka.no.such.property", "1"}});
  SqlError e = sqlErrorOf([&] { makeKafkaSource(scan, broker.bootstrap(), "f", 0, 1); });
  CHECK(e.sqlstate() == sqlstate::kInvalidParameterValue);
  CHECK(e.message().find("no.such.property") != std::string::npos);
  // A valid one is accepted.
  ScanSpec ok = jsonScan(broker.bootstrap(), "t", {{"kafka.fetch.max.bytes", "1048576"}});
  CHECK_NOTHROW(makeKafkaSource(ok, broker.bootstrap(), "f", 0, 1));
}

TEST_CASE("kafka sink writes json rows with keys and flushes") {
  EmbeddedKafka broker;
  SinkSpec sink;
  sink.name = "alerts";
  sink.connector = "kafka";
  sink.format = "json";
  sink.options = makeOptions({{"connector", "kafka"},
                              {"kafka.bootstrap.servers", broker.bootstrap()},
                              {"topic", "alerts"}});
  sink.input.columns.push_back({"user", DataType::of(TypeId::String), false});
  sink.input.columns.push_back({"total", DataType::of(TypeId::BigInt), false});
  sink.keyColumn = 0;
  auto writer = makeKafkaSink(sink, broker.bootstrap(), "f", 0);
  CHECK(writer->description() == "KafkaSink[alerts]");
  for (int i = 0; i < 100; ++i) {
    writer->write({Value::string("u" + std::to_string(i % 3)), Value::bigint(i)}, nowMicros());
  }
  writer->flush(10000);
  CHECK(writer->deliveryErrors() == 0);
  // The topic was created with the embedded broker's default: one partition,
  // so the order of the writes is the order of the log.
  auto got = testkafka::consume(broker.bootstrap(), "alerts", 0, 100);
  REQUIRE(got.size() == 100);
  CHECK(got[0].value == R"({"user":"u0","total":0})");
  CHECK(got[0].key == "u0");
  CHECK(got[99].value == R"({"user":"u0","total":99})");
  CHECK(got[5].key == "u2");
}

TEST_CASE("kafka sink raw format writes value, key, headers and per-row topics") {
  EmbeddedKafka broker;
  SinkSpec sink;
  sink.name = "raw";
  sink.connector = "kafka";
  sink.format = "raw";
  sink.options = makeOptions({{"connector", "kafka"},
                              {"kafka.bootstrap.servers", broker.bootstrap()},
                              {"topic", "raw-default"}});
  auto header = DataType::structOf({{"key", DataType::of(TypeId::String)},
                                    {"value", DataType::of(TypeId::Binary)}});
  sink.input.columns.push_back({"value", DataType::of(TypeId::Binary), false});
  sink.input.columns.push_back({"key", DataType::of(TypeId::Binary), false});
  sink.input.columns.push_back({"headers", DataType::arrayOf(header), false});
  sink.input.columns.push_back({"topic", DataType::of(TypeId::String), false});
  sink.valueColumn = 0;
  sink.headersColumn = 2;
  sink.topicColumn = 3;
  auto writer = makeKafkaSink(sink, broker.bootstrap(), "f", 0);
  Value headers = Value::array({Value::structure({Value::string("trace"), Value::binary("abc")})});
  writer->write({Value::binary(std::string("v\0x", 3)), Value::binary("key1"), headers, Value()},
                0);
  writer->write({Value::binary("routed"), Value(), Value(), Value::string("raw-other")}, 0);
  writer->flush(10000);
  auto got = testkafka::consume(broker.bootstrap(), "raw-default", 0, 1);
  REQUIRE(got.size() == 1);
  CHECK(got[0].value == std::string("v\0x", 3));
  CHECK(got[0].key == "key1");
  REQUIRE(got[0].headers.size() == 1);
  CHECK(got[0].headers[0].first == "trace");
  CHECK(got[0].headers[0].second == "abc");
  auto routed = testkafka::consume(broker.bootstrap(), "raw-other", 0, 1);
  REQUIRE(routed.size() == 1);
  CHECK(routed[0].value == "routed");
  CHECK_FALSE(routed[0].hasKey);
}

TEST_CASE("kafka sink flush reports records the broker never acknowledged") {
  SinkSpec sink;
  sink.name = "nowhere";
  sink.connector = "kafka";
  sink.format = "json";
  sink.options = makeOptions({{"connector", "kafka"},
                              {"kafka.bootstrap.servers", "127.0.0.1:1"},
                              {"topic", "t"},
                              {"kafka.message.timeout.ms", "300"}});
  sink.input.columns.push_back({"x", DataType::of(TypeId::BigInt), false});
  auto writer = makeKafkaSink(sink, "127.0.0.1:1", "f", 0);
  writer->write({Value::bigint(1)}, 0);
  SqlError e = sqlErrorOf([&] { writer->flush(5000); });
  CHECK(e.message().find("could not be delivered") != std::string::npos);
  CHECK(writer->deliveryErrors() == 1);
  // The failure is reported once; the next flush has nothing new.
  CHECK_NOTHROW(writer->flush(1000));
}

TEST_CASE("kafka sink serves delivery reports at the end of a batch of rows, not per row") {
  SinkSpec sink;
  sink.name = "nowhere";
  sink.connector = "kafka";
  sink.format = "json";
  sink.options = makeOptions({{"connector", "kafka"},
                              {"kafka.bootstrap.servers", "127.0.0.1:1"},
                              {"topic", "t"},
                              {"kafka.message.timeout.ms", "200"}});
  sink.input.columns.push_back({"x", DataType::of(TypeId::BigInt), false});
  auto writer = makeKafkaSink(sink, "127.0.0.1:1", "f", 0);
  writer->write({Value::bigint(1)}, 0);
  // No flush and no further row: the end of the batch alone serves the
  // report of the row that timed out.
  bool reported = false;
  for (int i = 0; i < 1000 && !reported; ++i) {
    writer->endOfChanges();
    reported = writer->deliveryErrors() == 1;
    if (!reported) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  CHECK(reported);
}

TEST_CASE("kafka sink sends sparse rows through its prompt client; a linger the sink chose stays") {
  EmbeddedKafka broker;
  auto sinkWith = [&](std::vector<std::pair<std::string, std::string>> extra) {
    SinkSpec sink;
    sink.name = "sparse";
    sink.connector = "kafka";
    sink.format = "json";
    std::vector<std::pair<std::string, std::string>> options = {
        {"connector", "kafka"}, {"kafka.bootstrap.servers", broker.bootstrap()}, {"topic", "sparse"}};
    options.insert(options.end(), extra.begin(), extra.end());
    sink.options = makeOptions(options);
    sink.input.columns.push_back({"x", DataType::of(TypeId::BigInt), false});
    return sink;
  };
  // A producer's first rows come sparsely: the prompt client sends them.
  const int64_t before = kafkaSinkPromptBatches();
  {
    auto writer = makeKafkaSink(sinkWith({}), broker.bootstrap(), "sparse_flow", 0);
    writer->write({Value::bigint(1)}, 0);
    writer->endOfChanges();
    CHECK(kafkaSinkPromptBatches() == before + 1);
    writer->flush(10000);
    CHECK(writer->deliveryErrors() == 0);
  }
  // 'kafka.linger.ms' on the sink: the client's linger alone decides.
  const int64_t chosen = kafkaSinkPromptBatches();
  {
    auto writer = makeKafkaSink(sinkWith({{"kafka.linger.ms", "0.5"}}), broker.bootstrap(),
                                "linger_flow", 0);
    writer->write({Value::bigint(2)}, 0);
    writer->endOfChanges();
    writer->flush(10000);
  }
  CHECK(kafkaSinkPromptBatches() == chosen);
  auto got = testkafka::consume(broker.bootstrap(), "sparse", 0, 2);
  CHECK(got.size() == 2);
}

TEST_CASE("kafka sink moves to the lingering client while rows come fast and back, in order") {
  EmbeddedKafka broker;
  broker.createTopic("moves", 1);
  SinkSpec sink;
  sink.name = "moves";
  sink.connector = "kafka";
  sink.format = "json";
  sink.options = makeOptions({{"connector", "kafka"},
                              {"kafka.bootstrap.servers", broker.bootstrap()},
                              {"topic", "moves"}});
  sink.input.columns.push_back({"x", DataType::of(TypeId::BigInt), false});
  auto writer = makeKafkaSink(sink, broker.bootstrap(), "moves_flow", 0);
  int64_t next = 0;
  auto batch = [&](int rows) {
    for (int i = 0; i < rows; ++i) writer->write({Value::bigint(next++)}, 0);
    writer->endOfChanges();
  };
  // Batches a millisecond apart of at least 100 rows, and of 50 rows for
  // every millisecond since the last one, so that the rate stays about
  // 50,000 rows a second or more however slowly a loaded machine runs the
  // loop (far above 5,000; few enough for the embedded broker to keep them
  // all): once ten batches in a row went without the prompt client, the rows
  // go through the lingering one.
  bool lingering = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  auto last = std::chrono::steady_clock::now();
  for (int quiet = 0; !lingering && std::chrono::steady_clock::now() < deadline;) {
    const int64_t prompt = kafkaSinkPromptBatches();
    const auto now = std::chrono::steady_clock::now();
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now - last).count();
    last = now;
    batch(static_cast<int>(std::clamp<int64_t>(ms * 50, 100, 20000)));
    quiet = kafkaSinkPromptBatches() == prompt ? quiet + 1 : 0;
    lingering = quiet >= 10;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  CHECK(lingering);
  writer->flush(30000);
  // One row every 20 ms (50 a second): the rows go through the prompt client
  // again.
  bool prompt = false;
  for (int i = 0; i < 3000 && !prompt; ++i) {
    const int64_t before = kafkaSinkPromptBatches();
    batch(1);
    prompt = kafkaSinkPromptBatches() > before;
    if (!prompt) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  CHECK(prompt);
  writer->flush(30000);
  CHECK(writer->deliveryErrors() == 0);
  // Every row once, in the order written, across both moves.
  auto got = testkafka::consume(broker.bootstrap(), "moves", 0, size_t(next), 60000);
  REQUIRE(got.size() == size_t(next));
  for (int64_t i = 0; i < next; ++i) {
    if (got[size_t(i)].value != R"({"x":)" + std::to_string(i) + "}") {
      FAIL("row " << i << " is " << got[size_t(i)].value);
    }
  }
}

namespace {

SinkSpec oneColumnSink(const std::string& bootstrap, const std::string& topic) {
  SinkSpec sink;
  sink.name = topic;
  sink.connector = "kafka";
  sink.format = "json";
  sink.options = makeOptions(
      {{"connector", "kafka"}, {"kafka.bootstrap.servers", bootstrap}, {"topic", topic}});
  sink.input.columns.push_back({"x", DataType::of(TypeId::BigInt), false});
  return sink;
}

// Reads `count` rows of partition 0 of `topic` and checks they are x = 0 ..
// count - 1 in that order, each once.
void checkRowsInOrder(const std::string& bootstrap, const std::string& topic, int64_t count) {
  auto got = testkafka::consume(bootstrap, topic, 0, size_t(count), 60000);
  REQUIRE(got.size() == size_t(count));
  for (int64_t i = 0; i < count; ++i) {
    if (got[size_t(i)].value != R"({"x":)" + std::to_string(i) + "}") {
      FAIL("row " << i << " is " << got[size_t(i)].value);
    }
  }
  CHECK(testkafka::endOffset(bootstrap, topic, 0) == count);
}

}  // namespace

TEST_CASE("kafka sink's producer sleeps while its requests wait for the broker") {
  // librdkafka's idempotent producer polled without sleeping while every
  // partition with rows waiting had five rows or more in flight: with a
  // broker that answers after 200 ms, every round of requests cost 200 ms of
  // a core. With two requests in flight, a third partition's waits built,
  // and the client's thread sleeps.
  testkafka::MockCluster cluster;
  rd_kafka_mock_topic_create(cluster.get(), "slow", 4, 1);
  SinkSpec sink = oneColumnSink(cluster.bootstrap(), "slow");
  sink.keyColumn = 0;  // rows spread over the partitions by x
  auto writer = makeKafkaSink(sink, cluster.bootstrap(), "slow_flow", 0);
  int64_t next = 0;
  writer->write({Value::bigint(next++)}, 0);
  writer->flush(30000);  // connected
  rd_kafka_mock_broker_set_rtt(cluster.get(), -1, 200);
  // Ten rows every 10 ms for 3 s (1,000 rows a second), so rows of every
  // partition wait behind its requests.
  const int64_t ticksBefore = testing::threadCpuTicks("rdk:broker");
  const auto start = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - start < std::chrono::seconds(3)) {
    for (int i = 0; i < 10; ++i) writer->write({Value::bigint(next++)}, 0);
    writer->endOfChanges();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const double cpu = double(testing::threadCpuTicks("rdk:broker") - ticksBefore) /
                     double(sysconf(_SC_CLK_TCK));
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // Sleeping, the client's threads use well under 1% of the time here.
  CHECK_MESSAGE(cpu < 0.05 * wall, "librdkafka's threads used " << cpu << " s of CPU in "
                                                                << wall << " s");
  rd_kafka_mock_broker_set_rtt(cluster.get(), -1, 0);
  writer->flush(30000);
  CHECK(writer->deliveryErrors() == 0);
  // Every row once, and each partition's in the order written.
  std::set<int64_t> seen;
  int64_t total = 0;
  for (int32_t p = 0; p < 4; ++p) {
    const int64_t count = testkafka::endOffset(cluster.bootstrap(), "slow", p);
    total += count;
    auto got = testkafka::consume(cluster.bootstrap(), "slow", p, size_t(count), 60000);
    REQUIRE(got.size() == size_t(count));
    int64_t last = -1;
    for (const auto& m : got) {
      const int64_t x = std::stoll(m.key);
      CHECK(x > last);
      last = x;
      seen.insert(x);
    }
  }
  CHECK(total == next);
  CHECK(seen.size() == size_t(next));
}

TEST_CASE("kafka sink keeps its rows in order, each once, through the broker's retriable errors") {
  // The idempotent producer keeps the order with two requests in flight:
  // without it, a request built after a refused one reached the broker
  // before the retry and put its rows ahead.
  testkafka::MockCluster cluster;
  rd_kafka_mock_topic_create(cluster.get(), "retried", 1, 1);
  auto writer = makeKafkaSink(oneColumnSink(cluster.bootstrap(), "retried"),
                              cluster.bootstrap(), "retried_flow", 0);
  int64_t next = 0;
  writer->write({Value::bigint(next++)}, 0);
  writer->flush(30000);  // connected
  // The next three produce requests are refused with an error the client
  // retries, each answer 20 ms late, while rows keep coming.
  constexpr int16_t kProduceApiKey = 0;  // Kafka protocol's ApiKey of Produce
  rd_kafka_mock_broker_set_rtt(cluster.get(), -1, 20);
  rd_kafka_mock_push_request_errors(cluster.get(), kProduceApiKey, 3,
                                    RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS,
                                    RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS,
                                    RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS);
  for (int batch = 0; batch < 100; ++batch) {
    for (int i = 0; i < 5; ++i) writer->write({Value::bigint(next++)}, 0);
    writer->endOfChanges();
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  writer->flush(30000);
  CHECK(writer->deliveryErrors() == 0);
  checkRowsInOrder(cluster.bootstrap(), "retried", next);
}

TEST_CASE("kafka sink tasks of a flow share one producer; each flush is the task's own") {
  EmbeddedKafka broker;
  auto sinkOn = [](const std::string& bootstrap, const std::string& topic) {
    SinkSpec sink;
    sink.name = "out";
    sink.connector = "kafka";
    sink.format = "json";
    sink.options = makeOptions({{"connector", "kafka"},
                                {"kafka.bootstrap.servers", bootstrap},
                                {"topic", topic},
                                {"kafka.message.timeout.ms", "300"}});
    sink.input.columns.push_back({"x", DataType::of(TypeId::BigInt), false});
    return sink;
  };
  const int before = kafkaSinkProducers();
  {
    SinkSpec sink = sinkOn(broker.bootstrap(), "shared");
    auto a = makeKafkaSink(sink, broker.bootstrap(), "f", 0);
    auto b = makeKafkaSink(sink, broker.bootstrap(), "f", 1);
    CHECK(kafkaSinkProducers() == before + 1);
    auto other = makeKafkaSink(sink, broker.bootstrap(), "g", 0);
    CHECK(kafkaSinkProducers() == before + 2);
    for (int i = 0; i < 50; ++i) {
      a->write({Value::bigint(i)}, 0);
      b->write({Value::bigint(100 + i)}, 0);
    }
    a->flush(10000);
    b->flush(10000);
    auto got = testkafka::consume(broker.bootstrap(), "shared", 0, 100);
    CHECK(got.size() == 100);
    b.reset();
    CHECK(kafkaSinkProducers() == before + 2);  // a still writes through it
  }
  CHECK(kafkaSinkProducers() == before);

  // A task's flush waits for its own rows only: with a row of its neighbour
  // still unanswered (no broker, 3 s until the client gives up on it), the
  // idle task's flush returns at once, clean. Delivery failures are the
  // failing task's.
  SinkSpec dead = sinkOn("127.0.0.1:1", "t");
  dead.options = makeOptions({{"connector", "kafka"},
                              {"kafka.bootstrap.servers", "127.0.0.1:1"},
                              {"topic", "t"},
                              {"kafka.message.timeout.ms", "3000"}});
  auto failing = makeKafkaSink(dead, "127.0.0.1:1", "h", 0);
  auto idle = makeKafkaSink(dead, "127.0.0.1:1", "h", 1);
  CHECK(kafkaSinkProducers() == before + 1);
  failing->write({Value::bigint(1)}, 0);
  const auto t0 = std::chrono::steady_clock::now();
  CHECK_NOTHROW(idle->flush(1000));
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(500));
  SqlError e = sqlErrorOf([&] { failing->flush(10000); });
  CHECK(e.message().find("1 records could not be delivered") != std::string::npos);
  CHECK(failing->deliveryErrors() == 1);
  CHECK_NOTHROW(idle->flush(1000));
  CHECK(idle->deliveryErrors() == 0);
}

TEST_CASE("kafka bootstrap 'embedded' needs the server's embedded broker") {
  DefaultConnectorProvider noBroker("");
  ScanSpec scan = jsonScan("embedded", "t");
  SqlError e = sqlErrorOf([&] { noBroker.sourcePartitions(scan); });
  CHECK(e.sqlstate() == sqlstate::kObjectNotInPrerequisiteState);
  CHECK(e.hint().find("--embedded-kafka") != std::string::npos);
  e = sqlErrorOf([&] { noBroker.checkCreate("kafka", scan.options); });
  CHECK(e.sqlstate() == sqlstate::kObjectNotInPrerequisiteState);
  CHECK(e.position() == 250);  // the value of 'kafka.bootstrap.servers'
  CHECK_NOTHROW(noBroker.checkCreate("kafka", jsonScan("127.0.0.1:9092", "t").options));
  CHECK_NOTHROW(noBroker.checkCreate("datagen", scan.options));

  EmbeddedKafka broker;
  DefaultConnectorProvider withBroker(broker.bootstrap());
  CHECK_NOTHROW(withBroker.checkCreate("kafka", scan.options));
  // Missing topics on the embedded broker are created with one partition.
  CHECK(withBroker.sourcePartitions(jsonScan("EMBEDDED", "auto-made")) == 1);
  auto task = withBroker.openSource(jsonScan("embedded", "auto-made"), "f", 0, 1);
  CHECK(task->progress().size() == 1);
}

TEST_CASE("kafka source on an unreachable broker fails within the bounded time") {
  DefaultConnectorProvider provider("");
  auto start = std::chrono::steady_clock::now();
  SqlError e = sqlErrorOf([&] { provider.sourcePartitions(jsonScan("127.0.0.1:1", "t")); });
  auto took = std::chrono::steady_clock::now() - start;
  CHECK(e.sqlstate() == sqlstate::kConnectionFailure);
  CHECK(e.message().find("127.0.0.1:1") != std::string::npos);
  CHECK(took < std::chrono::seconds(8));
}

TEST_CASE("kafka source on another broker: a missing topic is 42704") {
  testkafka::MockCluster cluster;
  const std::string& bootstrap = cluster.bootstrap();
  rd_kafka_mock_topic_set_error(cluster.get(), "ghost", RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART);
  DefaultConnectorProvider provider("");
  SqlError e = sqlErrorOf([&] { provider.sourcePartitions(jsonScan(bootstrap, "ghost")); });
  CHECK(e.sqlstate() == sqlstate::kUndefinedObject);
  CHECK(e.message() == "topic 'ghost' does not exist on " + bootstrap);
  CHECK_FALSE(e.hint().empty());
}

TEST_CASE("source and sink option validation") {
  auto base = [](std::vector<std::pair<std::string, std::string>> extra) {
    std::vector<std::pair<std::string, std::string>> kv = {
        {"connector", "kafka"}, {"kafka.bootstrap.servers", "embedded"}, {"subscribe", "c"}};
    kv.insert(kv.end(), extra.begin(), extra.end());
    return makeOptions(kv);
  };
  CHECK_NOTHROW(validateSourceOptions("kafka", base({{"startingOffsets", "earliest"},
                                                     {"maxPartitions", "4"},
                                                     {"format", "csv"},
                                                     {"on.error", "skip"},
                                                     {"kafka.fetch.wait.max.ms", "5"}}),
                                      0));

  // Option i (from 1) has its key at 100*i and its value at 100*i+50.
  SqlError e = sqlErrorOf([&] { validateSourceOptions("kafka", base({{"startingOffsets", "first"}}), 7); });
  CHECK(e.sqlstate() == sqlstate::kInvalidParameterValue);
  CHECK(e.position() == 450);

  e = sqlErrorOf([&] { validateSourceOptions("kafka", base({{"maxPartitions", "0"}}), 7); });
  CHECK(e.position() == 450);
  e = sqlErrorOf([&] { validateSourceOptions("kafka", base({{"format", "thrift"}}), 7); });
  CHECK(e.position() == 450);
  // Protobuf needs its descriptor file and message: missing, the statement is
  // at fault.
  e = sqlErrorOf([&] { validateSourceOptions("kafka", base({{"format", "protobuf"}}), 7); });
  CHECK(e.position() == 7);
  CHECK(e.message().find("protobuf.descriptor") != std::string::npos);
  // Avro needs the writer's schema: missing, the statement is at fault; given
  // to another format, the option is.
  e = sqlErrorOf([&] { validateSourceOptions("kafka", base({{"format", "avro"}}), 7); });
  CHECK(e.position() == 7);
  CHECK(e.message().find("avro.schema") != std::string::npos);
  e = sqlErrorOf([&] {
    validateSourceOptions("kafka", base({{"format", "json"}, {"avro.framing", "confluent"}}), 7);
  });
  CHECK(e.position() == 500);
  e = sqlErrorOf([&] {
    validateSourceOptions("kafka",
                          base({{"format", "avro"}, {"avro.schema", "{}"}, {"avro.framing", "x"}}), 7);
  });
  CHECK(e.position() == 650);
  e = sqlErrorOf([&] { validateSourceOptions("kafka", base({{"on.error", "dead-letter"}}), 7); });
  CHECK(e.position() == 450);

  e = sqlErrorOf([&] { validateSourceOptions("kafka", base({{"subscibe", "x"}}), 7); });
  CHECK(e.position() == 400);
  CHECK(e.hint().find("subscribe") != std::string::npos);

  e = sqlErrorOf([&] {
    validateSourceOptions("kafka", base({{"kafka.fetch.wait.max.ms", "soon"}}), 7);
  });
  CHECK(e.sqlstate() == sqlstate::kInvalidParameterValue);
  CHECK(e.position() == 450);
  CHECK(e.message().find("fetch.wait.max.ms") != std::string::npos);
  e = sqlErrorOf([&] { validateSourceOptions("kafka", base({{"kafka.bogus.thing", "1"}}), 7); });
  CHECK(e.position() == 450);

  // The client takes any SASL mechanism name and would fail only when a flow
  // starts; CREATE names the valid ones.
  e = sqlErrorOf([&] {
    validateSourceOptions("kafka", base({{"kafka.security.protocol", "sasl_plaintext"},
                                         {"kafka.sasl.mechanism", "BOGUS"}}),
                          7);
  });
  CHECK(e.sqlstate() == sqlstate::kInvalidParameterValue);
  CHECK(e.position() == 550);
  CHECK(e.message() == "invalid value 'BOGUS' for option 'kafka.sasl.mechanism'");
  CHECK(e.hint() == "valid values: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, GSSAPI, OAUTHBEARER");
  e = sqlErrorOf([&] {
    validateSourceOptions("kafka", base({{"kafka.sasl.mechanism", "BOGUS"}}), 7);
  });
  CHECK(e.position() == 450);
  e = sqlErrorOf([&] {
    validateSourceOptions("kafka", base({{"kafka.security.protocol", "tls"}}), 7);
  });
  CHECK(e.sqlstate() == sqlstate::kInvalidParameterValue);
  CHECK(e.position() == 450);
  CHECK(e.hint().find("sasl_ssl") != std::string::npos);
  CHECK_NOTHROW(validateSourceOptions("kafka",
                                      base({{"kafka.security.protocol", "SASL_PLAINTEXT"},
                                            {"kafka.sasl.mechanism", "SCRAM-SHA-256"},
                                            {"kafka.sasl.username", "u"},
                                            {"kafka.sasl.password", "p"}}),
                                      7));
  // The whole configuration is checked as a client would be made from it.
  e = sqlErrorOf([&] {
    validateSourceOptions("kafka", base({{"kafka.security.protocol", "ssl"},
                                         {"kafka.ssl.ca.location", "/nonexistent/ca.pem"}}),
                          7);
  });
  CHECK(e.sqlstate() == sqlstate::kInvalidParameterValue);
  CHECK(e.message().find("refuses") != std::string::npos);
  e = sqlErrorOf([&] {
    validateSinkOptions("kafka", makeOptions({{"connector", "kafka"},
                                              {"kafka.bootstrap.servers", "h:1"},
                                              {"topic", "t"},
                                              {"kafka.sasl.mechanisms", "scram-sha-256"}}),
                        3);
  });
  CHECK(e.position() == 450);

  e = sqlErrorOf([&] {
    validateSourceOptions("kafka", makeOptions({{"connector", "kafka"}, {"subscribe", "c"}}), 7);
  });
  CHECK(e.position() == 7);
  CHECK(e.message().find("kafka.bootstrap.servers") != std::string::npos);

  e = sqlErrorOf([&] {
    validateSourceOptions("pulsar", makeOptions({{"connector", "pulsar"}}), 7);
  });
  CHECK(e.sqlstate() == sqlstate::kInvalidParameterValue);
  CHECK(e.position() == 150);
  CHECK(e.hint().find("kafka") != std::string::npos);
  CHECK(e.hint().find("datagen") != std::string::npos);

  auto sinkOpts = [](std::vector<std::pair<std::string, std::string>> extra) {
    std::vector<std::pair<std::string, std::string>> kv = {
        {"connector", "kafka"}, {"kafka.bootstrap.servers", "127.0.0.1:9092"}, {"topic", "t"}};
    kv.insert(kv.end(), extra.begin(), extra.end());
    return makeOptions(kv);
  };
  CHECK_NOTHROW(validateSinkOptions("kafka", sinkOpts({{"format", "raw"}}), 0));
  CHECK_NOTHROW(
      validateSinkOptions("kafka", sinkOpts({{"format", "csv"}, {"csv.delimiter", ";"}}), 0));
  CHECK_NOTHROW(validateSinkOptions("kafka", sinkOpts({{"format", "avro"}}), 0));
  e = sqlErrorOf([&] { validateSinkOptions("kafka", sinkOpts({{"format", "thrift"}}), 3); });
  CHECK(e.position() == 450);
  e = sqlErrorOf([&] { validateSinkOptions("kafka", sinkOpts({{"format", "protobuf"}}), 3); });
  CHECK(e.position() == 3);
  e = sqlErrorOf([&] {
    validateSinkOptions("kafka", sinkOpts({{"format", "csv"}, {"csv.delimiter", "ab"}}), 3);
  });
  CHECK(e.sqlstate() == sqlstate::kInvalidParameterValue);
  CHECK(e.position() == 550);
  e = sqlErrorOf([&] {
    validateSinkOptions("kafka", sinkOpts({{"format", "csv"}, {"csv.header", "true"}}), 3);
  });
  CHECK(e.sqlstate() == sqlstate::kFeatureNotSupported);
  CHECK(e.position() == 500);
  e = sqlErrorOf([&] { validateSinkOptions("kafka", sinkOpts({{"subscribe", "x"}}), 3); });
  CHECK(e.position() == 400);
  e = sqlErrorOf([&] {
    validateSinkOptions("kafka",
                        makeOptions({{"connector", "kafka"}, {"kafka.bootstrap.servers", "h:1"}}), 3);
  });
  CHECK(e.position() == 3);
  CHECK(e.message().find("topic") != std::string::npos);
  e = sqlErrorOf([&] { validateSinkOptions("s3", makeOptions({{"connector", "s3"}}), 3); });
  CHECK(e.hint().find("file") != std::string::npos);
}

TEST_CASE("kafka authentication errors are 28P01 naming the broker and the credential options") {
  auto client = [](const char* mechanism) {
    return kafka::newClient(RD_KAFKA_PRODUCER, "127.0.0.1:1",
                            makeOptions({{"kafka.security.protocol", "sasl_plaintext"},
                                         {"kafka.sasl.mechanism", mechanism},
                                         {"kafka.sasl.username", "u"},
                                         {"kafka.sasl.password", "p"}}),
                            {}, {});
  };
  kafka::HandlePtr plain = client("PLAIN");
  // No broker has refused this client anything.
  CHECK_FALSE(kafka::authenticationFailure(plain.get()).has_value());
  SqlError e = kafka::authenticationError(plain.get(), "h:9093", "Invalid username or password");
  CHECK(e.sqlstate() == std::string(sqlstate::kInvalidPassword));
  CHECK(e.message() == "Kafka authentication failed at h:9093: Invalid username or password");
  CHECK(e.hint().find("'kafka.sasl.password'") != std::string::npos);
  CHECK(e.hint().find("'kafka.ssl.certificate.location'") != std::string::npos);
  CHECK(e.hint().find("2.6.1") == std::string::npos);
  // SCRAM from a librdkafka older than 2.6.1 never passes Apache Kafka 4's
  // nonce check: the hint says so, whatever the password.
  kafka::HandlePtr scram = client("SCRAM-SHA-512");
  e = kafka::authenticationError(scram.get(), "h:9093", "invalid credentials");
  CHECK(e.sqlstate() == std::string(sqlstate::kInvalidPassword));
  bool oldClient = rd_kafka_version() < 0x020601ff;
  CHECK((e.hint().find("2.6.1") != std::string::npos) == oldClient);
  // The broker's TLS alert about the client certificate is 28000.
  e = kafka::authenticationError(
      plain.get(), "h:9094",
      "ssl://h:9094/bootstrap: Receive failed: error:0A000412:SSL routines::sslv3 alert bad "
      "certificate: SSL alert number 42");
  CHECK(e.sqlstate() == std::string(sqlstate::kInvalidAuthorization));
  CHECK(
      e.message().starts_with("Kafka authentication failed at h:9094: the broker refused the "
                              "client certificate: "));
  CHECK(e.hint().find("'kafka.ssl.certificate.location'") != std::string::npos);
}

TEST_CASE("a kafka client option librdkafka refuses names its valid values when it has some") {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  SqlError e = sqlErrorOf([&] { kafka::setProperty(conf, "security.protocol", "tls", 40); });
  CHECK(e.sqlstate() == std::string(sqlstate::kInvalidParameterValue));
  CHECK(e.position() == 40);
  CHECK(e.message().find("'kafka.security.protocol'") != std::string::npos);
  CHECK(e.hint() == "valid values: plaintext, ssl, sasl_plaintext, sasl_ssl");
  e = sqlErrorOf([&] { kafka::setProperty(conf, "fetch.wait.max.ms", "-5", 0); });
  CHECK(e.hint().starts_with("valid range: 0 .. "));
  // A string property has no list; neither has a name librdkafka lacks.
  e = sqlErrorOf([&] { kafka::setProperty(conf, "no.such.property", "1", 0); });
  CHECK(e.hint().find("CONFIGURATION.md") != std::string::npos);
  rd_kafka_conf_destroy(conf);
}
