// A record the Kafka client cannot decompress (fetch_errors.h), on the
// embedded broker: a zstd batch that decompresses to 5 MB, past the source's
// 'kafka.receive.message.max.bytes' (2 MB here). librdkafka reports it at the
// batch's first offset at every fetch; the source counts each of its offsets
// as a record it cannot decode, under 'on.error', instead of stalling there.
#include <doctest/doctest.h>
#include <librdkafka/rdkafka.h>

#include <string>
#include <vector>

#include "common/error.h"
#include "connector_test_util.h"
#include "connectors/embedded/broker.h"
#include "connectors/kafka/source.h"
#include "connectors/kafka/tap.h"
#include "tests/unit/connectors/kafka_test_util.h"

using namespace rtsql;
using testkafka::makeOptions;
using testkafka::pollFor;

namespace {

constexpr size_t kBombBytes = 5'000'000;

// Produces each batch of `batches` as one zstd batch to partition 0 of `topic`.
void produceBatches(const std::string& bootstrap, const std::string& topic,
                    const std::vector<std::vector<std::string>>& batches) {
  rd_kafka_t* rk = testkafka::client(RD_KAFKA_PRODUCER, bootstrap,
                                     {{"compression.type", "zstd"},
                                      {"message.max.bytes", "10000000"},
                                      {"batch.size", "100000000"},
                                      {"linger.ms", "100"}});
  for (const auto& batch : batches) {
    for (const std::string& value : batch) {
      REQUIRE(rd_kafka_producev(rk, RD_KAFKA_V_TOPIC(topic.c_str()), RD_KAFKA_V_PARTITION(0),
                                RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                                RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()),
                                RD_KAFKA_V_END) == RD_KAFKA_RESP_ERR_NO_ERROR);
    }
    REQUIRE(rd_kafka_flush(rk, 10000) == RD_KAFKA_RESP_ERR_NO_ERROR);
  }
  rd_kafka_destroy(rk);
}

std::string record(int64_t id) { return R"({"id": )" + std::to_string(id) + "}"; }

ScanSpec scanOf(const std::string& bootstrap, const std::string& topic,
                const std::string& onError) {
  ScanSpec scan;
  scan.name = "s";
  scan.connector = "kafka";
  scan.format = "json";
  scan.options = makeOptions({{"connector", "kafka"},
                              {"kafka.bootstrap.servers", bootstrap},
                              {"subscribe", topic},
                              {"startingOffsets", "earliest"},
                              {"on.error", onError},
                              {"kafka.fetch.max.bytes", "1000000"},
                              {"kafka.receive.message.max.bytes", "2000000"},
                              // The mock broker answers a held fetch only when
                              // the wait ends: keep it short for the live tap.
                              {"kafka.fetch.wait.max.ms", "10"}});
  scan.schema.columns.push_back({"id", DataType::of(TypeId::BigInt), false});
  return scan;
}

}  // namespace

TEST_CASE("kafka source: a record that decompresses past the limit is skipped, not a stall") {
  EmbeddedKafka broker;
  broker.createTopic("bomb", 1);
  produceBatches(broker.bootstrap(), "bomb",
                 {{record(0)}, {std::string(kBombBytes, '0')}, {record(2)}});
  auto task = makeKafkaSource(scanOf(broker.bootstrap(), "bomb", "skip"), broker.bootstrap(),
                              "skip", 0, 1);
  auto recs = pollFor(*task, 2);
  REQUIRE(recs.size() == 2);
  CHECK(recs[0].row[0].asInt() == 0);
  CHECK(recs[1].row[0].asInt() == 2);
  CHECK(task->decodeErrors() == 1);
  CHECK(task->progress()[0].endOffset == 3);
  CHECK(task->progress()[0].offsetsSkipped == 0);
}

TEST_CASE("kafka source: each offset of a batch it cannot decompress is a decode error") {
  EmbeddedKafka broker;
  broker.createTopic("bombs", 1);
  // Offsets 1-3 are one batch: the client names offset 1 for each of them.
  produceBatches(broker.bootstrap(), "bombs",
                 {{record(0)}, {std::string(kBombBytes, '0'), record(2), record(3)}, {record(4)}});
  auto task = makeKafkaSource(scanOf(broker.bootstrap(), "bombs", "skip"), broker.bootstrap(),
                              "skip", 0, 1);
  auto recs = pollFor(*task, 2);
  REQUIRE(recs.size() == 2);
  CHECK(recs[0].row[0].asInt() == 0);
  CHECK(recs[1].row[0].asInt() == 4);
  CHECK(recs[1].offset == 4);
  CHECK(task->decodeErrors() == 3);
}

TEST_CASE("kafka source: a record that decompresses past the limit fails the flow at its offset") {
  EmbeddedKafka broker;
  broker.createTopic("bombf", 1);
  produceBatches(broker.bootstrap(), "bombf",
                 {{record(0)}, {std::string(kBombBytes, '0')}, {record(2)}});
  auto task = makeKafkaSource(scanOf(broker.bootstrap(), "bombf", "fail"), broker.bootstrap(),
                              "fail", 0, 1);
  std::vector<SourceRecord> out;
  SqlError e = testing::sqlErrorOf([&] {
    for (int i = 0; i < 200; ++i) task->poll(out, 10, 100);
  });
  CHECK(e.sqlstate() == sqlstate::kInvalidTextRepresentation);
  CAPTURE(e.message());
  CHECK(e.message().find("topic 'bombf' partition 0 offset 1: the Kafka client cannot "
                         "decompress its batch") != std::string::npos);
  REQUIRE(out.size() == 1);
  CHECK(out[0].row[0].asInt() == 0);
  CHECK(task->decodeErrors() == 1);
  // Not consumed: the position stays at the record.
  CHECK(task->progress()[0].endOffset == 1);
}

TEST_CASE("live tap: a record that decompresses past the limit is each query's decode error") {
  EmbeddedKafka broker;
  broker.createTopic("bombt", 1);
  KafkaTaps taps(broker.bootstrap());
  auto skipping =
      taps.subscribe(scanOf(broker.bootstrap(), "bombt", "skip"), "q1", 0, 1);
  auto failing =
      taps.subscribe(scanOf(broker.bootstrap(), "bombt", "fail"), "q2", 0, 1);
  REQUIRE(taps.list().size() == 1);  // one consumer for both
  produceBatches(broker.bootstrap(), "bombt",
                 {{record(0)}, {std::string(kBombBytes, '0')}, {record(2)}});
  auto recs = pollFor(*skipping, 2);
  REQUIRE(recs.size() == 2);
  CHECK(recs[0].row[0].asInt() == 0);
  CHECK(recs[1].row[0].asInt() == 2);
  CHECK(skipping->decodeErrors() == 1);

  std::vector<SourceRecord> out;
  SqlError e = testing::sqlErrorOf([&] {
    for (int i = 0; i < 200; ++i) failing->poll(out, 10, 100);
  });
  CHECK(e.message().find("topic 'bombt' partition 0 offset 1: the Kafka client cannot "
                         "decompress its batch") != std::string::npos);
  REQUIRE(out.size() == 1);
  CHECK(out[0].row[0].asInt() == 0);
}
