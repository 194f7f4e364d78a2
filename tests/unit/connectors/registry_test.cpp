// The connector registry and the provider that dispatches through it: lookup
// by name, the roles each builtin connector serves, the one error for an
// unknown connector, and that a registered connector is all it takes to be
// found.
#include <doctest/doctest.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "connector_test_util.h"
#include "common/error.h"
#include "connectors/datagen/datagen_connector.h"
#include "connectors/file/file_connector.h"
#include "connectors/kafka/kafka_connector.h"
#include "connectors/provider.h"
#include "connectors/registry.h"
#include "parser/parser.h"

using namespace rtsql;

namespace {

using testing::sqlErrorOf;
using testing::opts;

std::vector<std::string> namesOf(const ConnectorRegistry& r, ConnectorRole role) {
  std::vector<std::string> out;
  for (std::string_view n : r.names(role)) out.emplace_back(n);
  return out;
}

// A connector that is only a source, standing in for the next one added.
class TestConnector final : public Connector {
 public:
  TestConnector() : Connector("test", {ConnectorRole::Source}) {}
  void validateSource(const Options& options, size_t stmtPos) const override {
    options.require("needed", stmtPos);
  }
};

std::unique_ptr<ast::Statement> parseOne(const std::string& sql) {
  auto stmts = parseStatements(sql);
  REQUIRE(stmts.size() == 1);
  return std::move(stmts[0]);
}

}  // namespace

TEST_CASE("registry: builtin connectors are found by name in any case") {
  const ConnectorRegistry& r = ConnectorRegistry::builtin();
  REQUIRE(r.find("kafka") != nullptr);
  CHECK(r.find("KAFKA") == r.find("kafka"));
  CHECK(r.find("kafka")->name() == "kafka");
  CHECK(r.find("Datagen")->name() == "datagen");
  CHECK(r.find("file")->name() == "file");
  CHECK(r.find("Nexmark")->name() == "nexmark");
  CHECK(r.find("blackhole")->name() == "blackhole");
  CHECK(r.find("Kinesis")->name() == "kinesis");
  CHECK(r.find("pulsar") == nullptr);
  CHECK(r.find("") == nullptr);
}

TEST_CASE("registry: the roles each builtin connector serves") {
  const ConnectorRegistry& r = ConnectorRegistry::builtin();
  CHECK(namesOf(r, ConnectorRole::Source) ==
        std::vector<std::string>{"kafka", "datagen", "nexmark", "kinesis"});
  CHECK(namesOf(r, ConnectorRole::Sink) ==
        std::vector<std::string>{"kafka", "file", "blackhole", "http"});
  CHECK(namesOf(r, ConnectorRole::Table) == std::vector<std::string>{"file"});
  CHECK(r.find("kafka")->exactlyOnce());
  CHECK_FALSE(r.find("file")->exactlyOnce());
  CHECK_FALSE(r.find("datagen")->exactlyOnce());
  CHECK_FALSE(r.find("blackhole")->exactlyOnce());
}

TEST_CASE("registry: an unknown connector is 22023 at the option's value with the choices") {
  const ConnectorRegistry& r = ConnectorRegistry::builtin();
  Options o = opts({{"format", "json"}, {"connector", "pulsar"}});
  SqlError e = sqlErrorOf([&] { r.require("pulsar", ConnectorRole::Source, o, 7); });
  CHECK(e.sqlstate() == "22023");
  CHECK(e.message() == "unknown source connector 'pulsar'");
  CHECK(e.position() == 150);
  CHECK(e.hint() == "available: kafka, datagen, nexmark, kinesis");

  e = sqlErrorOf([&] { r.require("s3", ConnectorRole::Sink, opts({{"connector", "s3"}}), 7); });
  CHECK(e.message() == "unknown sink connector 's3'");
  CHECK(e.position() == 50);
  CHECK(e.hint() == "available: kafka, file, blackhole, http");

  // Without a 'connector' option the error is at the statement.
  e = sqlErrorOf([&] { r.require("x", ConnectorRole::Source, Options(), 7); });
  CHECK(e.position() == 7);
}

TEST_CASE("registry: a known connector in a role it does not serve is the same error") {
  const ConnectorRegistry& r = ConnectorRegistry::builtin();
  SqlError e = sqlErrorOf([&] { r.require("datagen", ConnectorRole::Sink, opts({{"connector", "datagen"}}), 3); });
  CHECK(e.sqlstate() == "22023");
  CHECK(e.message() == "unknown sink connector 'datagen'");
  e = sqlErrorOf([&] { r.require("file", ConnectorRole::Source, opts({{"connector", "file"}}), 3); });
  CHECK(e.message() == "unknown source connector 'file'");
  CHECK(e.hint() == "available: kafka, datagen, nexmark, kinesis");

  e = sqlErrorOf([&] { r.require("kafka", ConnectorRole::Table, opts({{"connector", "Kafka"}}), 3); });
  CHECK(e.sqlstate() == "22023");
  CHECK(e.message() == "invalid value 'Kafka' for option 'connector' of a table");
  CHECK(e.position() == 50);
  CHECK(e.hint() == "static tables are loaded with connector = 'file', or filled with INSERT");

  CHECK(&r.require("KAFKA", ConnectorRole::Sink, Options(), 0) == r.find("kafka"));
  CHECK(&r.require("file", ConnectorRole::Table, Options(), 0) == r.find("file"));
}

TEST_CASE("registry: a registered connector is found, validated and listed") {
  ConnectorRegistry r;
  r.add(std::make_unique<TestConnector>());
  CHECK_THROWS_AS(r.add(std::make_unique<TestConnector>()), InternalError);
  const Connector& c = r.require("TEST", ConnectorRole::Source, Options(), 0);
  CHECK(c.name() == "test");
  CHECK(namesOf(r, ConnectorRole::Source) == std::vector<std::string>{"test"});
  CHECK(namesOf(r, ConnectorRole::Sink).empty());
  SqlError e = sqlErrorOf([&] { c.validateSource(opts({{"connector", "test"}}), 9); });
  CHECK(e.position() == 9);
  CHECK(e.message().find("needed") != std::string::npos);
  // A role's method it does not implement is a bug, not a user error.
  CHECK_THROWS_AS(c.validateSink(Options(), 0), InternalError);
  CHECK_THROWS_AS(c.openSink(SinkSpec(), ConnectorEnv(), "f", 0), InternalError);
  CHECK_FALSE(c.exactlyOnce());
}

TEST_CASE("validateSourceOptions and validateSinkOptions go through the registry") {
  SqlError e = sqlErrorOf([&] { validateSourceOptions("file", opts({{"connector", "file"}}), 4); });
  CHECK(e.message() == "unknown source connector 'file'");
  // datagen's own check: an unknown option key.
  e = sqlErrorOf([&] { validateSourceOptions("datagen", opts({{"connector", "datagen"}, {"rate", "1"}}), 4); });
  CHECK(e.sqlstate() == "22023");
  CHECK(e.position() == 100);
  CHECK_NOTHROW(validateSourceOptions("DATAGEN", opts({{"connector", "datagen"}}), 4));
  e = sqlErrorOf([&] { validateSinkOptions("file", opts({{"connector", "file"}}), 4); });
  CHECK(e.message().find("path") != std::string::npos);
}

TEST_CASE("serverSideOptions: each connector names its own") {
  Options file = opts({{"connector", "file"}, {"path", "/tmp/x"}});
  ServerSideOptions s = serverSideOptions("file", file);
  REQUIRE(s.files.size() == 1);
  CHECK(s.files[0]->key == "path");
  CHECK(s.programs.empty());

  Options kafka = opts({{"connector", "kafka"},
                        {"kafka.ssl.ca.location", "probe"},
                        {"kafka.ssl.key.location", "/k"},
                        {"kafka.plugin.library.paths", "/p.so"}});
  s = serverSideOptions("kafka", kafka);
  REQUIRE(s.files.size() == 1);
  CHECK(s.files[0]->key == "kafka.ssl.key.location");
  REQUIRE(s.programs.size() == 1);
  CHECK(s.programs[0]->key == "kafka.plugin.library.paths");

  CHECK(serverSideOptions("datagen", file).files.empty());
  CHECK(serverSideOptions("unknown", file).files.empty());
}

TEST_CASE("connectors bind their sources' schemas") {
  const ConnectorRegistry& r = ConnectorRegistry::builtin();
  auto stmt = parseOne("CREATE SOURCE s (a INT) WITH (connector = 'kafka')");
  const auto& kafkaSource = static_cast<const ast::CreateSource&>(*stmt);
  Options none = opts({{"connector", "kafka"}});
  CHECK(r.find("kafka")->sourceFormat(none) == "json");
  CHECK(r.find("kafka")->sourceFormat(opts({{"format", "CSV"}})) == "csv");
  Schema kafka = r.find("kafka")->bindSourceSchema(kafkaSource, none);
  CHECK(kafka.size() == 6);  // a, then the five hidden metadata columns
  CHECK(kafka.columns[1].hidden);

  CHECK(r.find("datagen")->sourceFormat(none).empty());
  CHECK(r.find("datagen")->bindSourceSchema(kafkaSource, none).size() == 1);
  auto empty = parseOne("CREATE SOURCE g WITH (connector = 'datagen')");
  SqlError e = sqlErrorOf([&] {
    r.find("datagen")->bindSourceSchema(static_cast<const ast::CreateSource&>(*empty), none);
  });
  CHECK(e.sqlstate() == "22023");
  CHECK(e.message() == "a datagen source needs a column list");
  CHECK(e.position() == std::string("CREATE SOURCE ").size());
  CHECK(e.hint() == "datagen fills each declared column by its type");
}

TEST_CASE("DefaultConnectorProvider dispatches to the connector the spec names") {
  DefaultConnectorProvider provider("");
  ScanSpec scan;
  scan.name = "gen";
  scan.connector = "datagen";
  scan.options = opts({{"connector", "datagen"}, {"maxPartitions", "3"}});
  scan.schema.columns.push_back(Column{"id", DataType::of(TypeId::BigInt), false});
  CHECK(provider.sourcePartitions(scan) == 3);
  CHECK(provider.openSource(scan, "f", 0, 3)->description().find("Datagen") == 0);

  scan.connector = "pulsar";
  SqlError e = sqlErrorOf([&] { provider.sourcePartitions(scan); });
  CHECK(e.sqlstate() == "22023");
  CHECK(e.message() == "unknown source connector 'pulsar'");

  SinkSpec sink;
  sink.name = "audit";
  sink.connector = "file";
  e = sqlErrorOf([&] { provider.openSinkTransaction(sink, "f", 1000); });
  CHECK(e.sqlstate() == "0A000");
  CHECK(e.message() == "sink \"audit\" (file) has no transactions for 'delivery' = 'exactly-once'");
  sink.connector = "datagen";
  e = sqlErrorOf([&] { provider.openSink(sink, "f", 0); });
  CHECK(e.message() == "unknown sink connector 'datagen'");

  // checkCreate asks only the named connector; unknown ones are left to validation.
  Options embedded = opts({{"connector", "kafka"}, {"kafka.bootstrap.servers", "embedded"}});
  CHECK_THROWS_AS(provider.checkCreate("kafka", embedded), SqlError);
  CHECK_NOTHROW(provider.checkCreate("datagen", embedded));
  CHECK_NOTHROW(provider.checkCreate("pulsar", embedded));
}

TEST_CASE("registry: each connector answers what the planner asks of its sources and sinks") {
  const ConnectorRegistry& r = ConnectorRegistry::builtin();
  CHECK(r.find("kafka")->sourceTraits().partitionedLog);
  CHECK_FALSE(r.find("datagen")->sourceTraits().partitionedLog);
  CHECK_FALSE(r.find("kinesis")->sourceTraits().partitionedLog);
  CHECK_FALSE(r.find("nexmark")->sourceTraits().partitionedLog);
  CHECK(r.find("kafka")->sinkTraits().kafkaCluster);
  CHECK_FALSE(r.find("kafka")->sinkTraits().writesEveryChange);
  CHECK(r.find("blackhole")->sinkTraits().writesEveryChange);
  CHECK_FALSE(r.find("blackhole")->sinkTraits().kafkaCluster);
  for (const char* name : {"file", "http"}) {
    CAPTURE(name);
    CHECK_FALSE(r.find(name)->sinkTraits().kafkaCluster);
    CHECK_FALSE(r.find(name)->sinkTraits().writesEveryChange);
  }
  for (const char* name : {"kafka", "file", "blackhole", "http"}) {
    CAPTURE(name);
    CHECK_FALSE(r.find(name)->sinkTraits().toClient);  // the planner's alone
  }
}

TEST_CASE("registry: a source's options are read once into its settings") {
  const Connector& kafka = *ConnectorRegistry::builtin().find("kafka");
  Options o = opts({{"connector", "kafka"},
                    {"kafka.bootstrap.servers", "embedded"},
                    {"subscribe", "clicks, views"},
                    {"startingOffsets", "Earliest"},
                    {"on.error", "Dead-Letter"},
                    {"dead-letter.topic", "clicks.dead"},
                    {"failOnDataLoss", "false"}});
  kafka.validateSource(o, 0);
  SourceOptions parsed = kafka.parseSource(o);
  CHECK(parsed.onError == RowErrorPolicy::DeadLetter);
  CHECK(parsed.topics == std::vector<std::string>{"clicks", "views"});
  CHECK(parsed.fromEarliest);
  CHECK_FALSE(parsed.failOnDataLoss);

  // The defaults.
  parsed = kafka.parseSource(
      opts({{"connector", "kafka"}, {"kafka.bootstrap.servers", "embedded"}, {"subscribe", "a"}}));
  CHECK(parsed.onError == RowErrorPolicy::Fail);
  CHECK(parsed.topics == std::vector<std::string>{"a"});
  CHECK_FALSE(parsed.fromEarliest);
  CHECK(parsed.failOnDataLoss);

  // A connector without topics reads the options they all share.
  parsed = ConnectorRegistry::builtin().find("datagen")->parseSource(
      opts({{"connector", "datagen"}, {"on.error", "skip"}}));
  CHECK(parsed.onError == RowErrorPolicy::Skip);
  CHECK(parsed.topics.empty());

  // A plan's spec carries them; one built by hand is read when opened.
  ScanSpec scan;
  scan.connector = "kafka";
  scan.options = opts({{"subscribe", "b,c"}});
  CHECK(sourceOptionsOf(scan).topics == std::vector<std::string>{"b", "c"});
  scan.parsed = std::make_shared<const SourceOptions>(SourceOptions{.topics = {"carried"}});
  CHECK(sourceOptionsOf(scan).topics == std::vector<std::string>{"carried"});
}

TEST_CASE("registry: maxPartitions, the dead-letter topic and a sink's topic are read once, typed") {
  const Connector& kafka = *ConnectorRegistry::builtin().find("kafka");
  Options o = opts({{"connector", "kafka"},
                    {"kafka.bootstrap.servers", "embedded"},
                    {"subscribe", "clicks,"},
                    {"maxPartitions", "4"},
                    {"on.error", "dead-letter"},
                    {"dead-letter.topic", "clicks.dead"}});
  kafka.validateSource(o, 0);
  SourceOptions parsed = kafka.parseSource(o);
  // A trailing comma names no topic, here as everywhere the topics are read.
  CHECK(parsed.topics == std::vector<std::string>{"clicks"});
  CHECK(parsed.maxPartitions == 4);
  CHECK(parsed.deadLetterTopic == "clicks.dead");
  // A Kafka source writes its dead letters to its own cluster.
  CHECK(parsed.deadLetterBootstrap.empty());

  // A generator's 'maxPartitions' is read at CREATE SOURCE too: a bad one
  // fails there, at its value, rather than first when a flow is planned.
  SqlError e = sqlErrorOf([] {
    ConnectorRegistry::builtin().find("datagen")->parseSource(
        opts({{"connector", "datagen"}, {"maxPartitions", "abc"}}));
  });
  CHECK(e.sqlstate() == "22023");
  CHECK(e.position() == 150);
  CHECK(ConnectorRegistry::builtin()
            .find("datagen")
            ->parseSource(opts({{"connector", "datagen"}, {"maxPartitions", "3"}}))
            .maxPartitions == 3);

  // Without 'dead-letter' there is no dead-letter topic, and no cap on tasks.
  parsed = kafka.parseSource(
      opts({{"connector", "kafka"}, {"kafka.bootstrap.servers", "embedded"}, {"subscribe", "a"}}));
  CHECK(parsed.maxPartitions == 0);
  CHECK(parsed.deadLetterTopic.empty());

  // Another source names the dead letters' cluster too.
  parsed = parseCommonSourceOptions(opts({{"on.error", "dead-letter"},
                                          {"dead-letter.topic", "dl"},
                                          {"dead-letter.kafka.bootstrap.servers", "h:9092"}}));
  CHECK(parsed.deadLetterTopic == "dl");
  CHECK(parsed.deadLetterBootstrap == "h:9092");

  // A Kafka sink's topic, and none for a sink without topics.
  CHECK(kafka.parseSink(opts({{"connector", "kafka"}, {"topic", "out"}})).topic == "out");
  CHECK(ConnectorRegistry::builtin()
            .find("blackhole")
            ->parseSink(opts({{"connector", "blackhole"}}))
            .topic.empty());

  // A plan's sink spec carries the topic; one built by hand is read when opened.
  SinkSpec sink;
  sink.connector = "kafka";
  sink.options = opts({{"topic", "by-hand"}});
  CHECK(sinkOptionsOf(sink).topic == "by-hand");
  SinkOptions carried;
  carried.topic = "carried";
  sink.parsed = std::make_shared<const SinkOptions>(carried);
  CHECK(sinkOptionsOf(sink).topic == "carried");
}

TEST_CASE("registry: a Kafka source's group, its decoding and a sink's settings are read once") {
  const Connector& kafka = *ConnectorRegistry::builtin().find("kafka");
  SourceOptions source = kafka.parseSource(opts({{"connector", "kafka"},
                                                 {"subscribe", "a"},
                                                 {"kafka.group.id", "mine"},
                                                 {"format", "protobuf"},
                                                 {"protobuf.framing", "Confluent"}}));
  CHECK(source.userGroup);
  CHECK(source.decode.protobufConfluent);
  source = kafka.parseSource(opts({{"connector", "kafka"},
                                   {"subscribe", "a"},
                                   {"format", "csv"},
                                   {"csv.delimiter", "\\t"},
                                   {"json.ignore-missing", "false"}}));
  CHECK_FALSE(source.userGroup);
  CHECK(source.decode.csvDelimiter == '\t');
  // Only the format's own settings are read: a csv source's json one is not.
  CHECK(source.decode.jsonIgnoreMissing);
  source = kafka.parseSource(opts({{"connector", "kafka"},
                                   {"subscribe", "a"},
                                   {"json.ignore-missing", "false"},
                                   {"avro.framing", "confluent"}}));
  CHECK_FALSE(source.decode.jsonIgnoreMissing);
  CHECK_FALSE(source.decode.avroConfluent);

  SinkOptions sink = kafka.parseSink(opts({{"connector", "kafka"},
                                           {"topic", "out"},
                                           {"key", "user_id"},
                                           {"topic.partitions", "6"},
                                           {"csv.delimiter", ";"},
                                           {"protobuf.framing", "confluent"},
                                           {"mode", "Upsert"}}));
  CHECK(sink.key == std::optional<std::string>("user_id"));
  CHECK(sink.topicPartitions == 6);
  CHECK(sink.csvDelimiter == ';');
  CHECK(sink.protobufConfluent);
  CHECK(sink.mode == SinkMode::Upsert);
  sink = kafka.parseSink(opts({{"connector", "kafka"}, {"topic", "out"}}));
  CHECK_FALSE(sink.key);
  CHECK(sink.topicPartitions == -1);
  CHECK(sink.mode == SinkMode::Update);
  CHECK_FALSE(sink.protobufConfluent);
  // Every sink reads 'mode'; a connector without a parseSink of its own too.
  CHECK(ConnectorRegistry::builtin()
            .find("file")
            ->parseSink(opts({{"connector", "file"}, {"path", "/tmp/x"}, {"mode", "append"}}))
            .mode == SinkMode::Append);
  SinkSpec byHand;
  byHand.connector = "none-such";
  byHand.options = opts({{"mode", "upsert"}});
  CHECK(sinkOptionsOf(byHand).mode == SinkMode::Upsert);
}

TEST_CASE("registry: a wrong value fails the connector's parse as it fails CREATE") {
  // Replayed definitions are not validated again: what they are parsed with
  // must refuse what validation refuses, with the same error.
  const Connector& kafka = *ConnectorRegistry::builtin().find("kafka");
  const Options bad = opts({{"connector", "kafka"},
                            {"kafka.bootstrap.servers", "embedded"},
                            {"topic", "t"},
                            {"topic.partitions", "0"}});
  SqlError validated = sqlErrorOf([&] { kafka.validateSink(bad, 0); });
  SqlError parsed = sqlErrorOf([&] { kafka.parseSink(bad); });
  CHECK(validated.sqlstate() == "22023");
  CHECK(parsed.sqlstate() == validated.sqlstate());
  CHECK(parsed.message() == validated.message());
  CHECK(parsed.position() == validated.position());

  const Connector& file = *ConnectorRegistry::builtin().find("file");
  const Options badFile = opts({{"connector", "file"}, {"path", "/tmp/x"}, {"buffer.bytes", "-1"}});
  validated = sqlErrorOf([&] { file.validateSink(badFile, 0); });
  parsed = sqlErrorOf([&] { file.parseSink(badFile); });
  CHECK(validated.sqlstate() == "22023");
  CHECK(parsed.message() == validated.message());
}

TEST_CASE("registry: 'on.error' out of its three values is 22023 at the value") {
  SqlError e = sqlErrorOf([] { parseRowErrorPolicy(opts({{"a", "b"}, {"on.error", "ignore"}})); });
  CHECK(e.sqlstate() == "22023");
  CHECK(e.position() == 150);
  CHECK(parseRowErrorPolicy(opts({})) == RowErrorPolicy::Fail);
  CHECK(parseRowErrorPolicy(opts({{"late", "SKIP"}}), "late") == RowErrorPolicy::Skip);
}
