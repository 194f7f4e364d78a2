// Dead letters of a Kafka source (connectors/kafka/dead_letter.h): the option
// checks, the headers added, what reaches the dead-letter topic, and that a
// dead letter the broker refuses fails the epoch's flush instead of being lost.
#include "connectors/kafka/dead_letter.h"

#include <doctest/doctest.h>
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <chrono>

#include "common/error.h"
#include "connector_test_util.h"
#include "connectors/embedded/broker.h"
#include "connectors/kafka/source.h"
#include "connectors/registry.h"
#include "tests/unit/connectors/kafka_test_util.h"

using namespace rtsql;
using testing::sqlErrorOf;
using testkafka::makeOptions;
using testkafka::pollFor;

namespace {

ScanSpec orderScan(const std::string& bootstrap, const std::string& topic,
                   const std::string& deadLetterTopic) {
  ScanSpec scan;
  scan.name = "orders";
  scan.connector = "kafka";
  scan.format = "json";
  scan.options = makeOptions({{"connector", "kafka"},
                              {"kafka.bootstrap.servers", bootstrap},
                              {"subscribe", topic},
                              {"startingOffsets", "earliest"},
                              {"on.error", "dead-letter"},
                              {"dead-letter.topic", deadLetterTopic}});
  scan.schema.columns.push_back({"id", DataType::of(TypeId::BigInt), false});
  return scan;
}

testkafka::Message record(const std::string& topic, std::string value, std::string key = "",
                          kafka::Headers headers = {}) {
  testkafka::Message m;
  m.topic = topic;
  m.partition = 0;
  m.hasKey = !key.empty();
  m.key = std::move(key);
  m.value = std::move(value);
  m.headers = std::move(headers);
  return m;
}

std::string header(const testkafka::Message& m, const std::string& name) {
  for (const auto& [k, v] : m.headers) {
    if (k == name) return v;
  }
  return "<none>";
}

}  // namespace

TEST_CASE("dead letters: the record's headers first, then rtsql's") {
  kafka::DeadLetterOrigin origin{"bad field", "f", "orders", kafka::kafkaPosition("in", 3, 42)};
  kafka::Headers h = kafka::deadLetterHeaders({{"trace", "t1"}, {"trace", "t2"}}, origin);
  kafka::Headers want = {{"trace", "t1"},
                         {"trace", "t2"},
                         {"rtsql.error", "bad field"},
                         {"rtsql.flow", "f"},
                         {"rtsql.source", "orders"},
                         {"rtsql.topic", "in"},
                         {"rtsql.partition", "3"},
                         {"rtsql.offset", "42"}};
  CHECK(h == want);
}

TEST_CASE("dead-letter options at CREATE SOURCE") {
  auto with = [](std::vector<std::pair<std::string, std::string>> extra) {
    std::vector<std::pair<std::string, std::string>> kv = {
        {"connector", "kafka"}, {"kafka.bootstrap.servers", "embedded"}, {"subscribe", "in, more"}};
    kv.insert(kv.end(), extra.begin(), extra.end());
    return makeOptions(kv);
  };
  CHECK_NOTHROW(validateSourceOptions(
      "kafka", with({{"on.error", "dead-letter"}, {"dead-letter.topic", "in.dead_letters-1"}}), 0));
  CHECK_NOTHROW(validateSourceOptions(
      "kafka", with({{"on.error", "DEAD-LETTER"}, {"DEAD-LETTER.TOPIC", "d"}}), 0));

  // Option i (from 1) has its key at 100*i and its value at 100*i+50.
  SqlError e = sqlErrorOf([&] {
    validateSourceOptions("kafka", with({{"on.error", "dead-letter"}}), 7);
  });
  CHECK(e.sqlstate() == sqlstate::kInvalidParameterValue);
  CHECK(e.position() == 450);
  CHECK(e.hint().find("'dead-letter.topic' = '<topic>'") != std::string::npos);

  e = sqlErrorOf([&] { validateSourceOptions("kafka", with({{"dead-letter.topic", "d"}}), 7); });
  CHECK(e.sqlstate() == sqlstate::kInvalidParameterValue);
  CHECK(e.position() == 400);
  e = sqlErrorOf([&] {
    validateSourceOptions("kafka", with({{"on.error", "skip"}, {"dead-letter.topic", "d"}}), 7);
  });
  CHECK(e.position() == 500);

  for (const char* bad : {"", "  ", "a b", "x/y", ".", ".."}) {
    e = sqlErrorOf([&] {
      validateSourceOptions("kafka",
                            with({{"on.error", "dead-letter"}, {"dead-letter.topic", bad}}), 7);
    });
    CHECK(e.sqlstate() == sqlstate::kInvalidParameterValue);
    CHECK(e.position() == 550);
  }
  e = sqlErrorOf([&] {
    validateSourceOptions(
        "kafka", with({{"on.error", "dead-letter"}, {"dead-letter.topic", std::string(250, 'x')}}),
        7);
  });
  CHECK(e.position() == 550);
  CHECK_NOTHROW(validateSourceOptions(
      "kafka", with({{"on.error", "dead-letter"}, {"dead-letter.topic", std::string(249, 'x')}}),
      7));

  // A topic the source reads would take its own dead letters back, for ever.
  e = sqlErrorOf([&] {
    validateSourceOptions("kafka",
                          with({{"on.error", "dead-letter"}, {"dead-letter.topic", "more"}}), 7);
  });
  CHECK(e.position() == 550);
  CHECK(e.message().find("one of the topics the source reads") != std::string::npos);
}

TEST_CASE("kafka source writes the records it cannot decode to the dead-letter topic") {
  EmbeddedKafka broker;
  broker.createTopic("in", 1);
  testkafka::produce(broker.bootstrap(),
                     {record("in", R"({"id": 1})", "k1"),
                      record("in", "{not json", "k2", {{"trace", "t-2"}, {"empty", ""}}),
                      record("in", R"({"id": "two"})"), record("in", R"({"id": 4})", "k4")});
  ScanSpec scan = orderScan(broker.bootstrap(), "in", "dlq");
  auto task = makeKafkaSource(scan, broker.bootstrap(), "f", 0, 1);
  auto recs = pollFor(*task, 2);
  REQUIRE(recs.size() == 2);
  CHECK(recs[0].row[0].asInt() == 1);
  CHECK(recs[1].row[0].asInt() == 4);
  CHECK(task->decodeErrors() == 2);
  CHECK(task->deadLetters() == 2);
  CHECK(task->progress()[0].endOffset == 4);
  task->flushDeadLetters(10000);

  // The reason is the one the 'fail' policy gives for the same record.
  ScanSpec failing = scan;
  failing.options = makeOptions({{"kafka.bootstrap.servers", broker.bootstrap()},
                                 {"subscribe", "in"},
                                 {"startingOffsets", "earliest"}});
  auto strict = makeKafkaSource(failing, broker.bootstrap(), "strict", 0, 1);
  SqlError e = sqlErrorOf([&] { pollFor(*strict, 2); });

  auto letters = testkafka::consume(broker.bootstrap(), "dlq", 0, 2);
  REQUIRE(letters.size() == 2);
  CHECK(letters[0].hasKey);
  CHECK(letters[0].key == "k2");
  CHECK(letters[0].value == "{not json");
  REQUIRE(letters[0].headers.size() == 8);
  CHECK(letters[0].headers[0] == std::pair<std::string, std::string>{"trace", "t-2"});
  CHECK(letters[0].headers[1] == std::pair<std::string, std::string>{"empty", ""});
  CHECK(e.message() == "cannot decode the record at topic 'in' partition 0 offset 1: " +
                           header(letters[0], "rtsql.error"));
  CHECK(header(letters[0], "rtsql.flow") == "f");
  CHECK(header(letters[0], "rtsql.source") == "orders");
  CHECK(header(letters[0], "rtsql.topic") == "in");
  CHECK(header(letters[0], "rtsql.partition") == "0");
  CHECK(header(letters[0], "rtsql.offset") == "1");
  CHECK_FALSE(letters[1].hasKey);
  CHECK(letters[1].value == R"({"id": "two"})");
  CHECK(letters[1].headers.size() == 6);
  CHECK(header(letters[1], "rtsql.offset") == "2");
  CHECK(header(letters[1], "rtsql.error").find("'id'") != std::string::npos);

  // A task that ends without committing (a crash) leaves its offsets where
  // they were: the next run reads the records again and writes the dead
  // letters again (at least once). After a commit, nothing is written twice.
  task.reset();
  task = makeKafkaSource(scan, broker.bootstrap(), "f", 0, 1);
  CHECK(pollFor(*task, 2).size() == 2);
  task->flushDeadLetters(10000);
  CHECK(task->deadLetters() == 2);
  task->commit();
  task.reset();
  testkafka::produce(broker.bootstrap(), {record("in", "[]")});
  task = makeKafkaSource(scan, broker.bootstrap(), "f", 0, 1);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  std::vector<SourceRecord> none;
  while (task->deadLetters() < 1 && std::chrono::steady_clock::now() < deadline) {
    task->poll(none, 10, 100);
  }
  task->flushDeadLetters(10000);
  CHECK(none.empty());
  CHECK(task->deadLetters() == 1);
  // Every dead letter is acknowledged: the topic's end offset counts each
  // one ever written, the two of the first run twice and the new one once.
  CHECK(testkafka::endOffset(broker.bootstrap(), "dlq", 0) == 5);
  letters = testkafka::consume(broker.bootstrap(), "dlq", 0, 5);
  REQUIRE(letters.size() == 5);
  CHECK(letters[4].value == "[]");
  CHECK(header(letters[4], "rtsql.offset") == "4");
}

TEST_CASE("a dead letter the broker refuses fails the epoch's flush") {
  testkafka::MockCluster cluster;
  rd_kafka_mock_topic_create(cluster.get(), "in", 1, 1);
  testkafka::produce(cluster.bootstrap(),
                     {record("in", "{not json"), record("in", R"({"id": 2})")});
  // Every produce request is refused for good: the dead letter cannot be
  // delivered, so the epoch must not end with the offset past it.
  rd_kafka_mock_topic_create(cluster.get(), "dlq", 1, 1);
  constexpr int16_t kProduceApiKey = 0;  // Kafka protocol's ApiKey of Produce
  rd_kafka_mock_push_request_errors(cluster.get(), kProduceApiKey, 1,
                                    RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED);
  auto task =
      makeKafkaSource(orderScan(cluster.bootstrap(), "in", "dlq"), cluster.bootstrap(), "f", 0, 1);
  REQUIRE(pollFor(*task, 1).size() == 1);
  CHECK(task->deadLetters() == 1);
  SqlError e = sqlErrorOf([&] { task->flushDeadLetters(10000); });
  CHECK(e.message().find("dead letters of source 'orders' to topic 'dlq'") != std::string::npos);
  CHECK(e.message().find("could not be delivered") != std::string::npos);
}

// -- late rows ('late.rows' = 'dead-letter' on a flow) --------------------------------------------

namespace {

// A flow into a Kafka sink on `bootstrap` whose late rows go to `topic`.
PhysicalPlan lateRowsPlan(const std::string& bootstrap, const std::string& topic) {
  PhysicalPlan plan;
  plan.flowName = "per_user";
  plan.sink.name = "counts";
  plan.sink.connector = "kafka";
  plan.sink.traits.kafkaCluster = true;  // as KafkaConnector says
  plan.sink.options = makeOptions(
      {{"connector", "kafka"}, {"kafka.bootstrap.servers", bootstrap}, {"topic", "counts"}});
  plan.flowOptions = makeOptions({{"late.rows", "dead-letter"}, {"late.rows.topic", topic}});
  plan.lateRowsDeadLettered = true;  // as planFlow reads them
  plan.lateRowsTopic = {topic, ""};
  return plan;
}

Schema clickSchema() {
  Schema s;
  s.columns.push_back({"user_id", DataType::of(TypeId::String), false});
  s.columns.push_back({"ts", DataType::of(TypeId::Timestamp), false});
  return s;
}

}  // namespace

TEST_CASE("late rows: their headers name the reason, flow, operator, times") {
  LateRowOrigin window{"WindowAggregate", 3, "", 1714557605000000, 1714557615000000};
  kafka::Headers want = {{"rtsql.error", "late"},
                         {"rtsql.flow", "f"},
                         {"rtsql.operator", "WindowAggregate"},
                         {"rtsql.operator.id", "3"},
                         {"rtsql.event.time", "2024-05-01T10:00:05.000Z"},
                         {"rtsql.watermark", "2024-05-01T10:00:15.000Z"}};
  CHECK(kafka::lateRowHeaders("f", window) == want);

  // A join's row says which side it came in on.
  LateRowOrigin join{"StreamJoin", 1, "right", 1714557605123000, 1714557615000000};
  kafka::Headers h = kafka::lateRowHeaders("f", join);
  REQUIRE(h.size() == 7);
  CHECK(h[4] == std::pair<std::string, std::string>{"rtsql.input", "right"});
  CHECK(h[5] ==
        std::pair<std::string, std::string>{"rtsql.event.time", "2024-05-01T10:00:05.123Z"});
}

TEST_CASE("late rows reach the late-rows topic on the sink's cluster, as JSON, once flushed") {
  testkafka::MockCluster cluster;
  rd_kafka_mock_topic_create(cluster.get(), "late", 1, 1);
  auto writer = kafka::openFlowDeadLetterWriter(lateRowsPlan(cluster.bootstrap(), "late"),
                                                FlowDeadLetters::LateRows, "", 7);
  Row a = {Value::string("a"), Value::timestamp(1714557605000000)};
  Row b = {Value(), Value::timestamp(1714557601500000)};
  writer->writeLate(a, clickSchema(),
                    {"WindowAggregate", 3, "", 1714557605000000, 1714557615000000});
  writer->writeLate(b, clickSchema(),
                    {"WindowAggregate", 3, "", 1714557601500000, 1714557615000000});
  writer->flush(10000);
  // Flushed: both are on the broker already.
  CHECK(testkafka::endOffset(cluster.bootstrap(), "late", 0) == 2);
  std::vector<testkafka::Message> got = testkafka::consume(cluster.bootstrap(), "late", 0, 2);
  REQUIRE(got.size() == 2);
  CHECK(got[0].value == R"({"user_id":"a","ts":"2024-05-01T10:00:05.000Z"})");
  CHECK(got[1].value == R"({"user_id":null,"ts":"2024-05-01T10:00:01.500Z"})");
  CHECK_FALSE(got[0].hasKey);
  CHECK(header(got[0], "rtsql.error") == "late");
  CHECK(header(got[0], "rtsql.flow") == "per_user");
  CHECK(header(got[0], "rtsql.operator") == "WindowAggregate");
  CHECK(header(got[1], "rtsql.event.time") == "2024-05-01T10:00:01.500Z");
  CHECK(header(got[1], "rtsql.watermark") == "2024-05-01T10:00:15.000Z");
}

TEST_CASE("late rows of a flow whose sink is not Kafka go to 'late.rows.kafka.bootstrap.servers'") {
  testkafka::MockCluster cluster;
  rd_kafka_mock_topic_create(cluster.get(), "late", 1, 1);
  PhysicalPlan plan = lateRowsPlan("127.0.0.1:1", "late");  // no broker there
  plan.sink.connector = "blackhole";
  plan.sink.traits.kafkaCluster = false;
  plan.flowOptions = makeOptions({{"late.rows", "dead-letter"},
                                  {"late.rows.topic", "late"},
                                  {"late.rows.kafka.bootstrap.servers", cluster.bootstrap()}});
  plan.lateRowsTopic = {"late", cluster.bootstrap()};  // as planFlow reads them
  auto writer = kafka::openFlowDeadLetterWriter(plan, FlowDeadLetters::LateRows, "", 0);
  Row a = {Value::string("a"), Value::timestamp(1714557605000000)};
  writer->writeLate(a, clickSchema(), {"Dedup", 2, "", 1714557605000000, 1714557615000000});
  writer->flush(10000);
  std::vector<testkafka::Message> got = testkafka::consume(cluster.bootstrap(), "late", 0, 1);
  REQUIRE(got.size() == 1);
  CHECK(header(got[0], "rtsql.operator") == "Dedup");

  // 'embedded' names the server's broker.
  plan.flowOptions = makeOptions({{"late.rows", "dead-letter"},
                                  {"late.rows.topic", "late"},
                                  {"late.rows.kafka.bootstrap.servers", "embedded"}});
  plan.lateRowsTopic = {"late", "embedded"};
  writer = kafka::openFlowDeadLetterWriter(plan, FlowDeadLetters::LateRows, cluster.bootstrap(), 0);
  writer->writeLate(a, clickSchema(), {"Dedup", 2, "", 1714557605000000, 1714557615000000});
  writer->flush(10000);
  CHECK(testkafka::endOffset(cluster.bootstrap(), "late", 0) == 2);
}

TEST_CASE("a late row the broker refuses fails the epoch's flush") {
  testkafka::MockCluster cluster;
  rd_kafka_mock_topic_create(cluster.get(), "late", 1, 1);
  constexpr int16_t kProduceApiKey = 0;  // Kafka protocol's ApiKey of Produce
  rd_kafka_mock_push_request_errors(cluster.get(), kProduceApiKey, 1,
                                    RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED);
  auto writer = kafka::openFlowDeadLetterWriter(lateRowsPlan(cluster.bootstrap(), "late"),
                                                FlowDeadLetters::LateRows, "", 0);
  Row a = {Value::string("a"), Value::timestamp(1714557605000000)};
  writer->writeLate(a, clickSchema(),
                    {"WindowAggregate", 3, "", 1714557605000000, 1714557615000000});
  SqlError e = sqlErrorOf([&] { writer->flush(10000); });
  CHECK(e.message().find("late rows of flow 'per_user' to topic 'late'") != std::string::npos);
  CHECK(e.message().find("could not be delivered") != std::string::npos);
}

TEST_CASE("a failed row's headers: the reason, flow, operator, SQLSTATE, message, traceback") {
  RowErrorOrigin project{"Project",
                         2,
                         "",
                         "22000",
                         "function f raised ValueError: bad",
                         "Traceback (most recent call last):\nValueError: bad"};
  kafka::Headers want = {{"rtsql.error", "error"},
                         {"rtsql.flow", "f"},
                         {"rtsql.operator", "Project"},
                         {"rtsql.operator.id", "2"},
                         {"rtsql.sqlstate", "22000"},
                         {"rtsql.message", "function f raised ValueError: bad"},
                         {"rtsql.detail", "Traceback (most recent call last):\nValueError: bad"}};
  CHECK(kafka::rowErrorHeaders("f", project) == want);

  // A join's row says its side; an error without a detail has no such header.
  RowErrorOrigin join{"StreamJoin", 1, "right", "P0001", "no", ""};
  kafka::Headers h = kafka::rowErrorHeaders("f", join);
  REQUIRE(h.size() == 7);
  CHECK(h[4] == std::pair<std::string, std::string>{"rtsql.input", "right"});
  CHECK(h[6] == std::pair<std::string, std::string>{"rtsql.message", "no"});
}

TEST_CASE("failed rows go to 'dead-letter.topic', on 'dead-letter.kafka.bootstrap.servers'") {
  testkafka::MockCluster cluster;
  rd_kafka_mock_topic_create(cluster.get(), "failed", 1, 1);
  rd_kafka_mock_topic_create(cluster.get(), "late", 1, 1);
  PhysicalPlan plan = lateRowsPlan("127.0.0.1:1", "late");  // no broker there
  plan.sink.connector = "blackhole";
  plan.sink.traits.kafkaCluster = false;
  plan.flowOptions = makeOptions({{"late.rows", "dead-letter"},
                                  {"late.rows.topic", "late"},
                                  {"late.rows.kafka.bootstrap.servers", cluster.bootstrap()},
                                  {"on.error", "dead-letter"},
                                  {"dead-letter.topic", "failed"},
                                  {"dead-letter.kafka.bootstrap.servers", cluster.bootstrap()}});
  plan.onError = RowErrorPolicy::DeadLetter;  // as planFlow reads them
  plan.lateRowsTopic = {"late", cluster.bootstrap()};
  plan.rowErrorsTopic = {"failed", cluster.bootstrap()};
  auto writer = kafka::openFlowDeadLetterWriter(plan, FlowDeadLetters::RowErrors, "", 0);
  Row a = {Value::string("a"), Value::timestamp(1714557605000000)};
  writer->writeError(a, clickSchema(), {"Project", 2, "", "22000", "bad", "Traceback"});
  writer->flush(10000);
  std::vector<testkafka::Message> got = testkafka::consume(cluster.bootstrap(), "failed", 0, 1);
  REQUIRE(got.size() == 1);
  CHECK(got[0].value == R"({"user_id":"a","ts":"2024-05-01T10:00:05.000Z"})");
  CHECK_FALSE(got[0].hasKey);
  CHECK(header(got[0], "rtsql.error") == "error");
  CHECK(header(got[0], "rtsql.detail") == "Traceback");
  // The late rows' topic got none of them.
  CHECK(testkafka::endOffset(cluster.bootstrap(), "late", 0) == 0);
}
