#include <doctest/doctest.h>
#include <librdkafka/rdkafka.h>

#include "connectors/embedded/broker.h"
#include "tests/unit/connectors/kafka_test_util.h"

using namespace rtsql;

namespace {

int partitionCount(const std::string& bootstrap, const std::string& topic) {
  rd_kafka_t* rk = testkafka::client(RD_KAFKA_PRODUCER, bootstrap);
  rd_kafka_topic_t* rkt = rd_kafka_topic_new(rk, topic.c_str(), nullptr);
  const struct rd_kafka_metadata* md = nullptr;
  int count = -1;
  if (rd_kafka_metadata(rk, 0, rkt, &md, 5000) == RD_KAFKA_RESP_ERR_NO_ERROR) {
    if (md->topic_cnt == 1 && !md->topics[0].err) count = md->topics[0].partition_cnt;
    rd_kafka_metadata_destroy(md);
  }
  rd_kafka_topic_destroy(rkt);
  rd_kafka_destroy(rk);
  return count;
}

}  // namespace

TEST_CASE("embedded broker listens on loopback and is registered while alive") {
  std::string bootstrap;
  {
    EmbeddedKafka broker;
    bootstrap = broker.bootstrap();
    CHECK(bootstrap.rfind("127.0.0.1:", 0) == 0);
    CHECK(std::stoi(bootstrap.substr(10)) > 0);
    CHECK(EmbeddedKafka::find(bootstrap) == &broker);
    CHECK(EmbeddedKafka::find("127.0.0.1:1") == nullptr);
    CHECK(EmbeddedKafka::find("") == nullptr);
  }
  CHECK(EmbeddedKafka::find(bootstrap) == nullptr);
}

TEST_CASE("embedded broker creates topics with the requested or default partitions") {
  EmbeddedKafka broker(EmbeddedKafkaOptions{1, 3});
  CHECK(broker.defaultPartitions() == 3);
  CHECK(broker.createTopic("two", 2));
  CHECK_FALSE(broker.createTopic("two", 5));  // exists: unchanged
  broker.ensureTopic("dflt");
  CHECK(partitionCount(broker.bootstrap(), "two") == 2);
  CHECK(partitionCount(broker.bootstrap(), "dflt") == 3);
}

TEST_CASE("embedded broker serves ordinary Kafka clients: produce then consume") {
  EmbeddedKafka broker;
  broker.createTopic("roundtrip", 1);
  testkafka::Message m;
  m.topic = "roundtrip";
  m.partition = 0;
  m.hasKey = true;
  m.key = "k1";
  m.value = "hello";
  m.timestampMs = 1700000000123;
  m.headers = {{"h", "v"}};
  testkafka::Message m2 = m;
  m2.value = "world";
  testkafka::produce(broker.bootstrap(), {m, m2});
  auto got = testkafka::consume(broker.bootstrap(), "roundtrip", 0, 2);
  REQUIRE(got.size() == 2);
  CHECK(got[0].value == "hello");
  CHECK(got[0].key == "k1");
  CHECK(got[0].offset == 0);
  CHECK(got[0].timestampMs == 1700000000123);
  REQUIRE(got[0].headers.size() == 1);
  CHECK(got[0].headers[0].second == "v");
  CHECK(got[1].value == "world");
  CHECK(got[1].offset == 1);
}

TEST_CASE("producing to an unknown topic creates it on the embedded broker") {
  EmbeddedKafka broker;
  testkafka::Message m;
  m.topic = "fresh";
  m.partition = RD_KAFKA_PARTITION_UA;
  m.value = "x";
  testkafka::produce(broker.bootstrap(), {m});
  CHECK(partitionCount(broker.bootstrap(), "fresh") > 0);
}
