// The rate detector that chooses a Kafka source's fetch mode
// (connectors/kafka/fetch_rate.h): batching only after the rate stayed high
// for some windows, prompt again only after it stayed below half of it, and
// an idle source's polls without records close its windows. And the source
// task's move of its partitions between its clients of each mode: every
// record is handed over once, in order.
#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "connector_test_util.h"
#include "connectors/embedded/broker.h"
#include "connectors/kafka/fetch_rate.h"
#include "connectors/kafka/source.h"
#include "tests/unit/connectors/kafka_test_util.h"
#include "tests/unit/stderr_capture.h"

using namespace rtsql;
using namespace rtsql::kafka;
using testkafka::makeOptions;

namespace {

constexpr int64_t kSecond = 1'000'000;

FetchRateDetector::Settings settingsAt(int64_t rate) {
  FetchRateDetector::Settings s;
  s.rate = rate;
  return s;
}

// Feeds `perSecond` records a second for `seconds` seconds from `start`, in
// polls of 10 ms; returns the mode after the last and moves `start` on.
FetchMode feed(FetchRateDetector& d, int64_t& start, int64_t perSecond, int seconds) {
  FetchMode mode = d.mode();
  for (int i = 0; i < seconds * 100; ++i) {
    mode = d.add(perSecond / 100, start);
    start += kSecond / 100;
  }
  return mode;
}

}  // namespace

TEST_CASE("fetch rate: batching after three fast windows in a row, not before") {
  FetchRateDetector d(settingsAt(5000));
  int64_t now = 0;
  CHECK(feed(d, now, 10000, 3) == FetchMode::Prompt);  // the third window is not closed yet
  CHECK(d.add(0, now) == FetchMode::Batching);
}

TEST_CASE("fetch rate: a slow window breaks the streak") {
  FetchRateDetector d(settingsAt(5000));
  int64_t now = 0;
  feed(d, now, 10000, 2);
  feed(d, now, 1000, 1);
  CHECK(feed(d, now, 10000, 2) == FetchMode::Prompt);
  CHECK(feed(d, now, 10000, 2) == FetchMode::Batching);
}

TEST_CASE("fetch rate: below the threshold but above half of it keeps batching") {
  FetchRateDetector d(settingsAt(5000));
  int64_t now = 0;
  feed(d, now, 8000, 4);
  REQUIRE(d.mode() == FetchMode::Batching);
  // 3,000 a second: no longer fast, not yet slow.
  CHECK(feed(d, now, 3000, 10) == FetchMode::Batching);
  CHECK(feed(d, now, 2000, 3) == FetchMode::Prompt);
}

TEST_CASE("fetch rate: an idle source goes back to prompt fetches by its empty polls") {
  FetchRateDetector d(settingsAt(5000));
  int64_t now = 0;
  feed(d, now, 20000, 4);
  REQUIRE(d.mode() == FetchMode::Batching);
  // Polls that find nothing return about once a second: the first closes
  // the window of the last records, the next two are slow ones.
  CHECK(d.add(0, now += kSecond) == FetchMode::Batching);
  CHECK(d.add(0, now += kSecond) == FetchMode::Batching);
  CHECK(d.add(0, now += kSecond) == FetchMode::Prompt);
}

TEST_CASE("fetch rate: a long gap counts as that many windows") {
  FetchRateDetector d(settingsAt(5000));
  int64_t now = 0;
  feed(d, now, 20000, 4);
  REQUIRE(d.mode() == FetchMode::Batching);
  d.add(0, now);
  CHECK(d.add(0, now + 5 * kSecond) == FetchMode::Prompt);
}

TEST_CASE("fetch rate: a burst shorter than the windows never switches") {
  FetchRateDetector d(settingsAt(5000));
  int64_t now = 0;
  // A backlog of 100,000 records read in 0.2 s, then a trickle.
  for (int i = 0; i < 20; ++i) d.add(5000, now += kSecond / 100);
  CHECK(feed(d, now, 100, 5) == FetchMode::Prompt);
}

TEST_CASE("fetch rate: a rate of 0 never batches") {
  FetchRateDetector d(settingsAt(0));
  int64_t now = 0;
  CHECK(feed(d, now, 1'000'000, 10) == FetchMode::Prompt);
}

namespace {

constexpr const char* kBatching = "now fetching in batches";
constexpr const char* kPrompt = "now fetching each record at once";

size_t countOf(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Produces ids [from, to) to the two partitions of `topic` in turn.
void produceIds(const std::string& bootstrap, const std::string& topic, int64_t from, int64_t to) {
  std::vector<testkafka::Message> batch;
  for (int64_t id = from; id < to; ++id) {
    testkafka::Message m;
    m.topic = topic;
    m.partition = static_cast<int32_t>(id % 2);
    m.value = R"({"id": )" + std::to_string(id) + "}";
    batch.push_back(std::move(m));
  }
  testkafka::produce(bootstrap, batch);
}

}  // namespace

TEST_CASE("kafka source: partitions moved between its prompt and batching clients lose and "
          "repeat no record") {
  EmbeddedKafka broker;
  broker.createTopic("switch", 2);
  ScanSpec scan;
  scan.name = "s";
  scan.connector = "kafka";
  scan.format = "json";
  // 1 record a second: a steady trickle switches it however loaded the machine.
  scan.options = makeOptions({{"connector", "kafka"},
                              {"kafka.bootstrap.servers", broker.bootstrap()},
                              {"subscribe", "switch"},
                              {"startingOffsets", "earliest"},
                              {"fetchBatchingRate", "1"}});
  scan.schema.columns.push_back({"id", DataType::of(TypeId::BigInt), false});

  const auto logPath = std::filesystem::temp_directory_path() /
                       ("rtsql_fetch_switch_" + std::to_string(::getpid()) + ".log");
  testing::StderrCapture capture(logPath);
  auto task = makeKafkaSource(scan, broker.bootstrap(), "fswitch", 0, 1);

  std::map<int32_t, std::vector<int64_t>> seen;  // ids by partition, in order read
  int64_t produced = 0;
  std::vector<SourceRecord> out;
  auto take = [&] {
    for (const SourceRecord& r : out) seen[r.partition].push_back(r.row[0].asInt());
    out.clear();
  };
  // Records keep coming until the source fetches in batches (bounded: about
  // a minute), ...
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (int i = 0; i < 100'000 && countOf(capture.sofar(), kBatching) == 0 &&
                  std::chrono::steady_clock::now() < deadline;
       ++i) {
    produceIds(broker.bootstrap(), "switch", produced, produced + 10);
    produced += 10;
    task->poll(out, 1000, 100);
    take();
  }
  REQUIRE(countOf(capture.sofar(), kBatching) == 1);
  // ... then stop: empty polls (each a second at most) bring it back to
  // prompt fetches, ...
  for (int i = 0; i < 60 && countOf(capture.sofar(), kPrompt) == 0; ++i) {
    task->poll(out, 1000, 1000);
    take();
  }
  REQUIRE(countOf(capture.sofar(), kPrompt) == 1);
  // ... and what comes next is read there.
  produceIds(broker.bootstrap(), "switch", produced, produced + 20);
  produced += 20;
  for (int i = 0; i < 100 && seen[0].size() + seen[1].size() < size_t(produced); ++i) {
    task->poll(out, 1000, 100);
    take();
  }
  capture.text();
  std::filesystem::remove(logPath);

  // Every id once, each partition's in the order produced.
  for (int32_t p : {0, 1}) {
    std::vector<int64_t> want;
    for (int64_t id = p; id < produced; id += 2) want.push_back(id);
    CHECK(seen[p] == want);
  }
  const std::vector<PartitionProgress> progress = task->progress();
  REQUIRE(progress.size() == 2);
  for (const PartitionProgress& p : progress) CHECK(p.endOffset == produced / 2);
}
