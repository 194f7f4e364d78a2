#include "connectors/embedded/long_poll_proxy.h"

#include <doctest/doctest.h>
#include <librdkafka/rdkafka.h>

#include <chrono>
#include <memory>
#include <thread>

#include "connectors/embedded/broker.h"
#include "tests/unit/connectors/kafka_test_util.h"

using namespace rtsql;

namespace {

// Big-endian writers for hand-built frame bodies.
struct Bytes {
  std::string s;
  Bytes& i8(int v) {
    s.push_back(static_cast<char>(v));
    return *this;
  }
  Bytes& i16(int v) { return i8(v >> 8).i8(v); }
  Bytes& i32(int32_t v) { return i16(v >> 16).i16(v & 0xffff); }
  Bytes& i64(int64_t v) { return i32(static_cast<int32_t>(v >> 32)).i32(static_cast<int32_t>(v)); }
  Bytes& str(const std::string& v) {
    i16(static_cast<int>(v.size()));
    s += v;
    return *this;
  }
};

// A Fetch request v11 for one partition, waiting `wait` ms.
std::string fetchRequest(int32_t wait) {
  Bytes b;
  b.i16(1).i16(11).i32(42).str("client");
  b.i32(-1).i32(wait).i32(1).i32(1 << 20).i8(0).i32(0).i32(-1);
  b.i32(1).str("t").i32(1).i32(0).i32(-1).i64(5).i64(-1).i32(1 << 20);
  b.i32(0).str("");
  return b.s;
}

// A Fetch answer v11 for one partition with `records` bytes of records
// (-1 for null) and error `err`.
std::string fetchAnswer(int records, int err = 0) {
  Bytes b;
  b.i32(42).i32(0).i16(0).i32(0);
  b.i32(1).str("t").i32(1);
  b.i32(0).i16(err).i64(5).i64(5).i64(0).i32(0).i32(-1).i32(records);
  b.s.append(static_cast<size_t>(std::max(records, 0)), 'x');
  return b.s;
}

int32_t readI32(const std::string& s, size_t at) {
  uint32_t v = 0;
  for (size_t i = 0; i < 4; ++i) v = (v << 8) | static_cast<uint8_t>(s[at + i]);
  return static_cast<int32_t>(v);
}

int64_t readI64(const std::string& s, size_t at) {
  return static_cast<int64_t>((static_cast<uint64_t>(static_cast<uint32_t>(readI32(s, at))) << 32) |
                              static_cast<uint32_t>(readI32(s, at + 4)));
}

// A record batch of format 2 holding `records` records (its payload stands
// in for them), with `attributes`.
std::string recordBatch(int records, int attributes = 0) {
  const std::string payload = "payload";
  Bytes b;
  b.i64(0).i32(static_cast<int32_t>(61 - 12 + payload.size())).i32(-1).i8(2).i32(0);
  b.i16(attributes).i32(records - 1).i64(1).i64(1).i64(-1).i16(-1).i32(-1).i32(records);
  b.s += payload;
  return b.s;
}

// A Produce request v7 with acks -1 writing `batches` to partition 0 of "t"
// (one entry per partition, numbered from 0).
std::string produceRequest(const std::vector<std::string>& batches) {
  Bytes b;
  b.i16(0).i16(7).i32(43).str("client");
  b.i16(-1).i16(-1).i32(30000);
  b.i32(1).str("t").i32(static_cast<int32_t>(batches.size()));
  for (size_t i = 0; i < batches.size(); ++i) {
    b.i32(static_cast<int32_t>(i)).i32(static_cast<int32_t>(batches[i].size()));
    b.s += batches[i];
  }
  return b.s;
}

}  // namespace

TEST_CASE("long poll: a fetch's wait is cleared and returned, other requests are left alone") {
  std::string req = fetchRequest(500);
  auto h = longpoll::parseRequestHeader(req);
  REQUIRE(h);
  CHECK(h->apiKey == longpoll::kFetch);
  CHECK(h->correlationId == 42);
  CHECK(longpoll::clearFetchWait(req) == 500);
  CHECK(readI32(req, h->bodyOffset + 4) == 0);

  std::string meta = Bytes().i16(3).i16(2).i32(7).str("c").i32(0).s;
  const std::string before = meta;
  CHECK_FALSE(longpoll::clearFetchWait(meta));
  CHECK(meta == before);
  // Cut short, or a version it does not read: unchanged.
  std::string cut = fetchRequest(500).substr(0, 16);
  CHECK_FALSE(longpoll::clearFetchWait(cut));
  std::string v12 = fetchRequest(500);
  v12[3] = 12;
  CHECK_FALSE(longpoll::clearFetchWait(v12));
  CHECK_FALSE(longpoll::parseRequestHeader(std::string("\x00\x01", 2)));
}

TEST_CASE("long poll: a produce's acks and topics") {
  Bytes v7;
  v7.i16(0).i16(7).i32(1).str("c").i16(-1).i16(-1).i32(30000);
  v7.i32(2).str("clicks").i32(1).i32(0).i32(3).i8(1).i8(2).i8(3);
  v7.str("alerts").i32(1).i32(0).i32(-1);
  auto p = longpoll::parseProduce(v7.s);
  REQUIRE(p);
  CHECK(p->acks == -1);
  CHECK(p->topicsKnown);
  CHECK(p->topics == std::vector<std::string>{"clicks", "alerts"});

  auto tx =
      longpoll::parseProduce(Bytes().i16(0).i16(7).i32(1).str("c").str("tx").i16(0).i32(100).s);
  REQUIRE(tx);
  CHECK(tx->acks == 0);
  CHECK_FALSE(tx->topicsKnown);  // cut short after the timeout

  // A records length beyond the bytes: the topics are not known.
  Bytes bad;
  bad.i16(0).i16(2).i32(1).str("c").i16(1).i32(1000).i32(1).str("t").i32(1).i32(0).i32(99999);
  auto b = longpoll::parseProduce(bad.s);
  REQUIRE(b);
  CHECK(b->acks == 1);
  CHECK_FALSE(b->topicsKnown);
  CHECK_FALSE(longpoll::parseProduce(Bytes().i16(0).i16(7).i32(1).str("c").s));
  CHECK_FALSE(longpoll::parseProduce(fetchRequest(1)));
}

TEST_CASE("long poll: the topics a fetch reads") {
  auto topics = longpoll::fetchTopics(fetchRequest(500));
  REQUIRE(topics);
  CHECK(*topics == std::vector<std::string>{"t"});
  // A partition count far beyond the bytes: not read.
  Bytes huge;
  huge.i16(1).i16(11).i32(42).str("client");
  huge.i32(-1).i32(500).i32(1).i32(1 << 20).i8(0).i32(0).i32(-1);
  huge.i32(1).str("t").i32(0x7fffffff);
  CHECK_FALSE(longpoll::fetchTopics(huge.s));
  CHECK_FALSE(longpoll::fetchTopics(Bytes().i16(3).i16(2).i32(7).str("c").i32(0).s));
}

TEST_CASE("long poll: only an answer with no records and no error is held") {
  CHECK(longpoll::isEmptyFetchAnswer(fetchAnswer(0), 11));
  CHECK(longpoll::isEmptyFetchAnswer(fetchAnswer(-1), 11));
  CHECK_FALSE(longpoll::isEmptyFetchAnswer(fetchAnswer(10), 11));
  CHECK_FALSE(longpoll::isEmptyFetchAnswer(fetchAnswer(0, 1), 11));
  // Cut short, trailing bytes, a version it does not read: passed on.
  const std::string empty = fetchAnswer(0);
  CHECK_FALSE(longpoll::isEmptyFetchAnswer(empty.substr(0, empty.size() - 1), 11));
  CHECK_FALSE(longpoll::isEmptyFetchAnswer(empty + "x", 11));
  CHECK_FALSE(longpoll::isEmptyFetchAnswer(empty, 12));
  // A topic count far beyond the bytes is refused before any loop.
  Bytes huge;
  huge.i32(42).i32(0).i16(0).i32(0).i32(0x7fffffff);
  CHECK_FALSE(longpoll::isEmptyFetchAnswer(huge.s, 11));
  // A top-level error goes to the client.
  Bytes err;
  err.i32(42).i32(0).i16(7).i32(0).i32(0);
  CHECK_FALSE(longpoll::isEmptyFetchAnswer(err.s, 11));
}

TEST_CASE("long poll: Metadata and FindCoordinator answers name the proxy's ports") {
  const std::vector<std::pair<int32_t, int32_t>> ports{{9001, 7001}, {9002, 7002}};
  Bytes meta;
  meta.i32(1).i32(2);
  meta.i32(1).str("127.0.0.1").i32(9001).i16(-1);
  meta.i32(2).str("127.0.0.1").i32(9002).str("rack");
  meta.str("cluster").i32(1).i32(0);
  std::string body = meta.s;
  CHECK(longpoll::rewriteBrokerPorts(body, longpoll::kMetadata, 2, ports) == 2);
  CHECK(readI32(body, 4 + 4 + 4 + 11) == 7001);
  CHECK(body.size() == meta.s.size());

  Bytes coord;
  coord.i32(1).i32(0).i16(0).i16(-1).i32(1).str("127.0.0.1").i32(9002);
  body = coord.s;
  CHECK(longpoll::rewriteBrokerPorts(body, longpoll::kFindCoordinator, 1, ports) == 1);
  CHECK(readI32(body, body.size() - 4) == 7002);

  // Cut short: left as it is.
  std::string cut = meta.s.substr(0, 20);
  const std::string cutBefore = cut;
  CHECK(longpoll::rewriteBrokerPorts(cut, longpoll::kMetadata, 2, ports) == 0);
  CHECK(cut == cutBefore);
}

TEST_CASE("long poll: a produce of one batch to one partition, and where it was written") {
  const std::string batch = recordBatch(3);
  // The answer views the request's bytes: the request outlives it.
  const std::string request = produceRequest({batch});
  auto one = longpoll::singleBatchOfProduce(request);
  REQUIRE(one);
  CHECK(one->topic == "t");
  CHECK(one->partition == 0);
  CHECK(one->batch == batch);
  // Two partitions, a transactional or control batch, two batches in one
  // records field, a cut-short frame: not one plain batch.
  CHECK_FALSE(longpoll::singleBatchOfProduce(produceRequest({batch, batch})));
  CHECK_FALSE(longpoll::singleBatchOfProduce(produceRequest({recordBatch(3, 0x10)})));
  CHECK_FALSE(longpoll::singleBatchOfProduce(produceRequest({recordBatch(3, 0x20)})));
  CHECK_FALSE(longpoll::singleBatchOfProduce(produceRequest({batch + batch})));
  const std::string whole = produceRequest({batch});
  for (size_t cut = 0; cut < whole.size(); ++cut) {
    CHECK_FALSE(longpoll::singleBatchOfProduce(whole.substr(0, cut)));
  }

  Bytes answer;
  answer.i32(43).i32(1).str("t").i32(1).i32(0).i16(0).i64(17).i64(-1).i64(0).i32(0);
  auto result = longpoll::singleProduceResult(answer.s, 7);
  REQUIRE(result);
  CHECK(result->partition == 0);
  CHECK(result->error == 0);
  CHECK(result->baseOffset == 17);
  CHECK_FALSE(longpoll::singleProduceResult(answer.s.substr(0, 20), 7));
}

TEST_CASE("long poll: a held fetch at the log's end is answered with the batch written there") {
  auto at = longpoll::singleFetchPosition(fetchRequest(500));
  REQUIRE(at);
  CHECK(at->topic == "t");
  CHECK(at->partition == 0);
  CHECK(at->offset == 5);

  // The mock's empty answer says the log ends at 5; the batch was written at 5.
  const std::string batch = recordBatch(3);
  const std::string empty = fetchAnswer(0);
  auto answer = longpoll::answerWithBatch(empty, 11, 5, batch);
  REQUIRE(answer);
  CHECK(longpoll::isEmptyFetchAnswer(empty, 11));
  CHECK_FALSE(longpoll::isEmptyFetchAnswer(*answer, 11));
  // The watermarks move past the batch's three records; the batch follows its
  // length, at its offset.
  const size_t watermarks = 4 + 4 + 2 + 4 + 4 + 2 + 1 + 4 + 4 + 2;
  CHECK(readI64(*answer, watermarks) == 8);
  CHECK(readI64(*answer, watermarks + 8) == 8);
  const size_t records = watermarks + 8 + 8 + 8 + 4 + 4;
  CHECK(readI32(*answer, records) == static_cast<int32_t>(batch.size()));
  CHECK(answer->size() == records + 4 + batch.size());
  CHECK(readI64(*answer, records + 4) == 5);
  CHECK(answer->substr(records + 12) == batch.substr(8));

  // Elsewhere than the log's end, an answer with records or an error, a
  // transactional batch, an answer cut short: left to the mock.
  CHECK_FALSE(longpoll::answerWithBatch(empty, 11, 4, batch));
  CHECK_FALSE(longpoll::answerWithBatch(fetchAnswer(3), 11, 5, batch));
  CHECK_FALSE(longpoll::answerWithBatch(fetchAnswer(0, 1), 11, 5, batch));
  CHECK_FALSE(longpoll::answerWithBatch(empty, 11, 5, recordBatch(3, 0x10)));
  for (size_t cut = 0; cut < empty.size(); ++cut) {
    CHECK_FALSE(longpoll::answerWithBatch(empty.substr(0, cut), 11, 5, batch));
  }
}

TEST_CASE("embedded broker: a record reaches a consumer that waits long, before its wait ends") {
  EmbeddedKafka broker;
  broker.createTopic("longpoll", 1);
  testkafka::Message m;
  m.topic = "longpoll";
  m.partition = 0;
  m.value = "first";
  testkafka::produce(broker.bootstrap(), {m});

  // A wait of a minute: librdkafka's mock alone answers the empty fetch only
  // then, so the second record would come after the 30 s this test waits.
  rd_kafka_t* rk = testkafka::client(RD_KAFKA_CONSUMER, broker.bootstrap(),
                                     {{"group.id", "longpoll"}, {"fetch.wait.max.ms", "60000"},
                                      {"socket.timeout.ms", "90000"}});
  rd_kafka_poll_set_consumer(rk);
  rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(list, "longpoll", 0)->offset = RD_KAFKA_OFFSET_BEGINNING;
  rd_kafka_assign(rk, list);
  rd_kafka_topic_partition_list_destroy(list);

  auto next = [&](int seconds) {
    std::string value;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    while (value.empty() && std::chrono::steady_clock::now() < deadline) {
      rd_kafka_message_t* msg = rd_kafka_consumer_poll(rk, 100);
      if (!msg) continue;
      if (!msg->err && msg->payload) value.assign(static_cast<const char*>(msg->payload), msg->len);
      rd_kafka_message_destroy(msg);
    }
    return value;
  };
  CHECK(next(30) == "first");
  // The consumer's next fetch, at the end of the log, is now held; the write
  // below must end it.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const uint64_t fromProduce = broker.fetchesAnsweredFromProduce();
  m.value = "second";
  testkafka::produce(broker.bootstrap(), {m});
  CHECK(next(30) == "second");
  // The held fetch read where the record went: the proxy answered it with the
  // produced batch, without asking the mock to walk its log.
  CHECK(broker.fetchesAnsweredFromProduce() == fromProduce + 1);
  rd_kafka_consumer_close(rk);
  rd_kafka_destroy(rk);
}

TEST_CASE("embedded broker: shutting down ends a held fetch") {
  auto broker = std::make_unique<EmbeddedKafka>();
  broker->createTopic("held", 1);
  rd_kafka_t* rk = testkafka::client(RD_KAFKA_CONSUMER, broker->bootstrap(),
                                     {{"group.id", "held"},
                                      {"fetch.wait.max.ms", "60000"},
                                      {"socket.timeout.ms", "90000"},
                                      {"reconnect.backoff.ms", "10"}});
  rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(list, "held", 0)->offset = RD_KAFKA_OFFSET_BEGINNING;
  rd_kafka_assign(rk, list);
  rd_kafka_topic_partition_list_destroy(list);
  // Until the consumer has a fetch out (its position is known once it did).
  for (int i = 0; i < 300; ++i) {
    rd_kafka_message_t* msg = rd_kafka_consumer_poll(rk, 100);
    if (msg) rd_kafka_message_destroy(msg);
    rd_kafka_topic_partition_list_t* pos = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(pos, "held", 0);
    rd_kafka_position(rk, pos);
    const bool fetching = pos->elems[0].offset >= 0;
    rd_kafka_topic_partition_list_destroy(pos);
    if (fetching) break;
  }
  const auto start = std::chrono::steady_clock::now();
  broker.reset();  // joins the proxy's thread: the held fetch must not keep it
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(30));
  rd_kafka_destroy(rk);
}
