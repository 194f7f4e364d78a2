// Live taps (connectors/kafka/tap.h): one consumer per source, fanned out to
// the live queries' source tasks, on the embedded broker and a bare mock
// cluster.
#include <doctest/doctest.h>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "common/error.h"
#include "common/schema.h"
#include "common/thread_priority.h"
#include "connectors/embedded/broker.h"
#include "connectors/kafka/tap.h"
#include "tests/unit/connectors/kafka_test_util.h"
#include "tests/unit/proc_threads.h"

using namespace rtsql;
using rtsql::testing::threadNices;
using rtsql::testing::threadsNamed;
using rtsql::testing::threadsNamedSettled;

namespace {

using Clock = std::chrono::steady_clock;

// A live query's view of `topic`: an id column, and the record's offset when
// `withOffset` (subscribers of one tap may declare different columns).
ScanSpec liveScan(const std::string& bootstrap, const std::string& topic, bool withOffset = false,
                  std::vector<std::pair<std::string, std::string>> extra = {}) {
  ScanSpec scan;
  scan.name = "live_src";
  scan.connector = "kafka";
  scan.format = "json";
  scan.schema.columns.push_back({"id", DataType::of(TypeId::BigInt), false});
  if (withOffset) scan.schema.columns.push_back({kMetaOffset, DataType::of(TypeId::BigInt), true});
  // The mock broker answers a held fetch only when the wait ends: keep it short.
  std::vector<std::pair<std::string, std::string>> kv = {{"kafka.bootstrap.servers", bootstrap},
                                                         {"subscribe", topic},
                                                         {"kafka.fetch.wait.max.ms", "10"}};
  kv.insert(kv.end(), extra.begin(), extra.end());
  scan.options = testkafka::makeOptions(kv);
  return scan;
}

void produceIds(const std::string& bootstrap, const std::string& topic, int32_t partition,
                int64_t from, int64_t to, const std::string& padding = "") {
  std::vector<testkafka::Message> batch;
  for (int64_t id = from; id < to; ++id) {
    testkafka::Message m;
    m.topic = topic;
    m.partition = partition;
    m.value = R"({"id": )" + std::to_string(id) + R"(, "pad": ")" + padding + R"("})";
    batch.push_back(std::move(m));
  }
  testkafka::produce(bootstrap, batch);
}

// The ids a task hands over until it has `want` of them, or `ms` passed.
std::vector<int64_t> takeIds(SourceTask& task, size_t want, int ms = 10000) {
  std::vector<SourceRecord> recs;
  const auto deadline = Clock::now() + std::chrono::milliseconds(ms);
  while (recs.size() < want && Clock::now() < deadline) task.poll(recs, want - recs.size(), 50);
  std::vector<int64_t> ids;
  for (const SourceRecord& r : recs) ids.push_back(r.row[0].asInt());
  return ids;
}

// Polls until the task raises its error (within `ms`), counting the records
// it hands over before.
SqlError failureOf(SourceTask& task, std::vector<int64_t>& before, int ms = 15000) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(ms);
  while (Clock::now() < deadline) {
    std::vector<SourceRecord> recs;
    try {
      task.poll(recs, 100, 50);
    } catch (const SqlError& e) {
      return e;
    }
    for (const SourceRecord& r : recs) before.push_back(r.row[0].asInt());
  }
  FAIL("the task raised no error in time");
  return SqlError("", "");
}

}  // namespace

TEST_CASE("live tap: subscribers share one consumer and each gets every later record") {
  EmbeddedKafka broker;
  broker.createTopic("fan", 2);
  const std::string bs = broker.bootstrap();
  produceIds(bs, "fan", 0, 0, 3);  // before anyone subscribed: nobody gets these
  KafkaTaps taps(bs);
  const int threadsBefore = threadsNamed("live-tap");

  // 'embedded' is the server's broker; the two queries declare different columns.
  auto a = taps.subscribe(liveScan("embedded", "fan"), "q1", 0, 1);
  auto b = taps.subscribe(liveScan(bs, "fan", true), "q2", 0, 1);
  // A third query with two tasks: task 1 owns partition 1 only.
  auto c1 = taps.subscribe(liveScan(bs, "fan"), "q3", 1, 2);
  std::vector<KafkaTapInfo> open = taps.list();
  REQUIRE(open.size() == 1);
  CHECK(open[0].bootstrap == bs);
  CHECK(open[0].topics == "fan");
  CHECK(open[0].liveQueries == 3);
  CHECK(open[0].tasks == 3);
  CHECK(threadsNamedSettled("live-tap", threadsBefore + 1) == threadsBefore + 1);
  // The tap and its client's threads run below flows' priority.
  const int nicer = std::min(19, currentThreadNice() + kLiveQueryNice);
  CHECK(threadNices("live-tap") == std::vector<int>{nicer});
  int niceClientThreads = 0;
  for (int n : threadNices("rdk:")) niceClientThreads += n == nicer;
  CHECK(niceClientThreads >= 2);  // its main thread and a broker thread at least
  CHECK(a->progress().size() == 2);
  CHECK(a->progress()[0].startOffset == 3);  // partition 0 starts at its end
  REQUIRE(c1->progress().size() == 1);
  CHECK(c1->progress()[0].partition == 1);

  produceIds(bs, "fan", 0, 10, 14);
  produceIds(bs, "fan", 1, 20, 22);
  std::vector<int64_t> ga = takeIds(*a, 6), gb = takeIds(*b, 6), gc = takeIds(*c1, 2);
  const std::set<int64_t> all = {10, 11, 12, 13, 20, 21};
  CHECK(std::set<int64_t>(ga.begin(), ga.end()) == all);
  CHECK(std::set<int64_t>(gb.begin(), gb.end()) == all);
  CHECK(std::set<int64_t>(gc.begin(), gc.end()) == std::set<int64_t>{20, 21});
  CHECK(ga.size() == 6);
  // Nothing else comes: the records from before the subscriptions stay unread.
  CHECK(takeIds(*a, 1, 300).empty());
  CHECK(a->progress()[0].endOffset == 7);
  CHECK(a->progress()[0].latestOffset == 7);
  CHECK(taps.list()[0].records == 6);
  CHECK(a->decodeErrors() == 0);
  CHECK(a->description() == "KafkaV2[Subscribe[fan]] via live tap");

  // A query with other client options gets a tap (and a consumer) of its own.
  auto other = taps.subscribe(liveScan(bs, "fan", false, {{"kafka.fetch.min.bytes", "1000"}}),
                              "q4", 0, 1);
  CHECK(taps.list().size() == 2);
  CHECK(threadsNamedSettled("live-tap", threadsBefore + 2) == threadsBefore + 2);
  other.reset();
  CHECK(taps.list().size() == 1);
}

TEST_CASE("live tap: a subscriber that leaves gets nothing more; the last one closes the tap") {
  EmbeddedKafka broker;
  broker.createTopic("leave", 1);
  const std::string bs = broker.bootstrap();
  KafkaTaps taps(bs);
  const int threadsBefore = threadsNamed("live-tap");
  auto a = taps.subscribe(liveScan(bs, "leave"), "q1", 0, 1);
  auto b = taps.subscribe(liveScan(bs, "leave"), "q2", 0, 1);
  produceIds(bs, "leave", 0, 0, 2);
  CHECK(takeIds(*a, 2).size() == 2);
  CHECK(takeIds(*b, 2).size() == 2);

  a.reset();
  REQUIRE(taps.list().size() == 1);
  CHECK(taps.list()[0].liveQueries == 1);
  produceIds(bs, "leave", 0, 2, 4);
  CHECK(takeIds(*b, 2) == std::vector<int64_t>{2, 3});

  // The last subscriber's leaving joins the tap's thread and closes its consumer.
  b.reset();
  CHECK(taps.list().empty());
  CHECK(threadsNamedSettled("live-tap", threadsBefore) == threadsBefore);

  // Records produced while no tap was open are nobody's; a new query opens a
  // new tap at the end.
  produceIds(bs, "leave", 0, 4, 6);
  auto c = taps.subscribe(liveScan(bs, "leave"), "q3", 0, 1);
  CHECK(c->progress()[0].startOffset == 6);
  produceIds(bs, "leave", 0, 6, 7);
  CHECK(takeIds(*c, 2, 1000) == std::vector<int64_t>{6});
}

TEST_CASE("live tap: a subscriber that falls behind fails with 53400; the others go on") {
  EmbeddedKafka broker;
  broker.createTopic("slow", 1);
  const std::string bs = broker.bootstrap();
  KafkaTapOptions options;
  options.queueBytes = 4000;  // about 20 of the records below
  KafkaTaps taps(bs, options);
  auto slow = taps.subscribe(liveScan(bs, "slow"), "slow", 0, 1);
  auto fast = taps.subscribe(liveScan(bs, "slow"), "fast", 0, 1);

  // Rounds of 10 records; the fast query takes each round, the slow one none.
  std::vector<int64_t> fastIds;
  for (int64_t round = 0; round < 6; ++round) {
    produceIds(bs, "slow", 0, round * 10, round * 10 + 10, std::string(60, 'x'));
    std::vector<int64_t> got = takeIds(*fast, 10);
    fastIds.insert(fastIds.end(), got.begin(), got.end());
  }
  CHECK(fastIds.size() == 60);
  REQUIRE(taps.list().size() == 1);
  CHECK(taps.list()[0].liveQueries == 1);  // the slow one was dropped from the tap

  // The slow query gets what was queued for it, in order and without a gap,
  // then the error.
  std::vector<int64_t> before;
  SqlError e = failureOf(*slow, before);
  CHECK(e.sqlstate() == sqlstate::kConfigurationLimitExceeded);
  CHECK(e.message().find("reads too slowly") != std::string::npos);
  CHECK(e.message().find("4000 bytes") != std::string::npos);
  REQUIRE(!before.empty());
  CHECK(before.size() < 60);
  for (size_t i = 0; i < before.size(); ++i) CHECK(before[i] == static_cast<int64_t>(i));
  // And it stays failed.
  std::vector<SourceRecord> none;
  CHECK_THROWS_AS(slow->poll(none, 10, 10), SqlError);

  produceIds(bs, "slow", 0, 60, 61);
  CHECK(takeIds(*fast, 1) == std::vector<int64_t>{60});
}

TEST_CASE("live tap: records that cannot be decoded fail or are skipped per subscriber") {
  EmbeddedKafka broker;
  broker.createTopic("mixed", 1);
  const std::string bs = broker.bootstrap();
  KafkaTaps taps(bs);
  auto failing = taps.subscribe(liveScan(bs, "mixed"), "f", 0, 1);
  auto skipping = taps.subscribe(liveScan(bs, "mixed", false, {{"on.error", "skip"}}), "s", 0, 1);
  CHECK(taps.list().size() == 1);  // decoding is each subscriber's, the consumer is shared
  produceIds(bs, "mixed", 0, 1, 2);
  testkafka::Message broken;
  broken.topic = "mixed";
  broken.partition = 0;
  broken.value = "{not json";
  testkafka::produce(bs, {broken});
  produceIds(bs, "mixed", 0, 3, 4);

  CHECK(takeIds(*skipping, 2) == std::vector<int64_t>{1, 3});
  CHECK(skipping->decodeErrors() == 1);
  CHECK(skipping->progress()[0].endOffset == 3);

  std::vector<int64_t> before;
  SqlError e = failureOf(*failing, before);
  CHECK(before == std::vector<int64_t>{1});
  CHECK(e.sqlstate() == sqlstate::kInvalidTextRepresentation);
  CHECK(e.message().find("topic 'mixed' partition 0 offset 1") != std::string::npos);
  CHECK(failing->decodeErrors() == 1);
  CHECK(failing->progress()[0].endOffset == 1);  // the bad record is not consumed
}

TEST_CASE("live tap: a broker that goes away fails every subscriber with 08006 in bounded time") {
  auto broker = std::make_unique<EmbeddedKafka>();
  broker->createTopic("gone", 1);
  const std::string bs = broker->bootstrap();
  KafkaTapOptions options;
  options.brokerTimeoutMs = 1500;
  options.checkIntervalMs = 300;
  KafkaTaps taps(bs, options);
  auto a = taps.subscribe(liveScan(bs, "gone"), "q1", 0, 1);
  auto b = taps.subscribe(liveScan(bs, "gone"), "q2", 0, 1);
  produceIds(bs, "gone", 0, 0, 1);
  CHECK(takeIds(*a, 1).size() == 1);

  broker.reset();
  const auto start = Clock::now();
  std::vector<int64_t> before;
  SqlError ea = failureOf(*a, before);
  SqlError eb = failureOf(*b, before);
  CHECK(Clock::now() - start < std::chrono::seconds(12));
  CHECK(ea.sqlstate() == sqlstate::kConnectionFailure);
  CHECK(ea.message().find("lost Kafka at " + bs) != std::string::npos);
  CHECK(eb.message() == ea.message());
  CHECK(before == std::vector<int64_t>{0});  // b's one record, then its error
  MESSAGE(ea.message());

  // A new query does not join the failed tap: it tries a new one, which
  // cannot reach the broker either.
  CHECK_THROWS_AS(taps.subscribe(liveScan(bs, "gone"), "q3", 0, 1), SqlError);
  const auto closing = Clock::now();
  a.reset();
  b.reset();
  CHECK(Clock::now() - closing < std::chrono::seconds(5));
  CHECK(taps.list().empty());
}

TEST_CASE("live tap: a topic that disappears fails its subscribers with 42704") {
  // On a broker rtsql does not own, a topic can be made to vanish from the
  // metadata.
  testkafka::MockCluster cluster;
  const std::string& bs = cluster.bootstrap();
  rd_kafka_mock_topic_create(cluster.get(), "doomed", 1, 1);
  KafkaTapOptions options;
  options.checkIntervalMs = 300;
  KafkaTaps taps("", options);
  auto a = taps.subscribe(liveScan(bs, "doomed"), "q1", 0, 1);
  produceIds(bs, "doomed", 0, 0, 1);
  CHECK(takeIds(*a, 1).size() == 1);
  rd_kafka_mock_topic_set_error(cluster.get(), "doomed", RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART);
  std::vector<int64_t> before;
  SqlError e = failureOf(*a, before);
  CHECK(e.sqlstate() == sqlstate::kUndefinedObject);
  CHECK(e.message() == "topic 'doomed' does not exist on " + bs);
  // Its consumer closes at once: a deleted topic does not hold it up.
  const auto closing = Clock::now();
  a.reset();
  CHECK(Clock::now() - closing < std::chrono::seconds(5));
  CHECK(taps.list().empty());
}
