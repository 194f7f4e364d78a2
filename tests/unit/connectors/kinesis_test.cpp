// The Kinesis source's pieces that need no service: the API's request bodies
// and the parsing of its answers and errors (as kinesalite and AWS write
// them), shard numbers, the lineage rule that holds a reshard's children
// until their parents are drained, the source's columns and its options'
// refusals at CREATE SOURCE.
#include <doctest/doctest.h>

#include <set>
#include <string>
#include <vector>

#include "connector_test_util.h"
#include "connectors/kinesis/client.h"
#include "connectors/kinesis/columns.h"
#include "connectors/kinesis/lineage.h"
#include "connectors/kinesis/protocol.h"
#include "connectors/kinesis/source.h"
#include "connectors/provider.h"
#include "connectors/registry.h"
#include "parser/parser.h"
#include "planner/planner.h"

using namespace rtsql;
using namespace rtsql::kinesis;
using testing::opts;
using testing::sqlErrorOf;

TEST_CASE("kinesis: request bodies") {
  CHECK(listShardsBody("clicks", "") == R"({"StreamName":"clicks"})");
  // A page after the first names only the token.
  CHECK(listShardsBody("clicks", "AAA=") == R"({"NextToken":"AAA="})");
  StartAt at;
  CHECK(
      shardIteratorBody("s\"1", "shardId-000000000001", at) ==
      R"({"StreamName":"s\"1","ShardId":"shardId-000000000001","ShardIteratorType":"TRIM_HORIZON"})");
  at.kind = StartAt::Kind::AtTimestamp;
  at.timestampMillis = 1714557600123;
  CHECK(
      shardIteratorBody("s", "x", at) ==
      R"({"StreamName":"s","ShardId":"x","ShardIteratorType":"AT_TIMESTAMP","Timestamp":1714557600.123})");
  at.timestampMillis = 1714557600005;
  CHECK(shardIteratorBody("s", "x", at).find("\"Timestamp\":1714557600.005}") != std::string::npos);
  at.kind = StartAt::Kind::AfterSequenceNumber;
  at.sequenceNumber = "4959";
  CHECK(
      shardIteratorBody("s", "x", at) ==
      R"({"StreamName":"s","ShardId":"x","ShardIteratorType":"AFTER_SEQUENCE_NUMBER","StartingSequenceNumber":"4959"})");
  at.kind = StartAt::Kind::Latest;
  CHECK(shardIteratorBody("s", "x", at).find("\"LATEST\"") != std::string::npos);
  CHECK(getRecordsBody("it/+=", 500) == R"({"ShardIterator":"it/+=","Limit":500})");
}

TEST_CASE("kinesis: ListShards answers") {
  std::string token;
  std::vector<Shard> shards = parseListShards(R"({
    "Shards": [
      {"ShardId": "shardId-000000000000",
       "HashKeyRange": {"StartingHashKey": "0", "EndingHashKey": "17"},
       "SequenceNumberRange": {"StartingSequenceNumber": "1", "EndingSequenceNumber": "9"}},
      {"ShardId": "shardId-000000000002", "ParentShardId": "shardId-000000000000",
       "SequenceNumberRange": {"StartingSequenceNumber": "10"}},
      {"ShardId": "shardId-000000000004", "ParentShardId": "shardId-000000000002",
       "AdjacentParentShardId": "shardId-000000000003",
       "SequenceNumberRange": {"StartingSequenceNumber": "20", "EndingSequenceNumber": null}}
    ],
    "NextToken": "page2"})",
                                              token);
  CHECK(token == "page2");
  REQUIRE(shards.size() == 3);
  CHECK(shards[0].id == "shardId-000000000000");
  CHECK(shards[0].closed);
  CHECK(shards[0].parent.empty());
  CHECK_FALSE(shards[1].closed);
  CHECK(shards[1].parent == "shardId-000000000000");
  CHECK(shards[2].adjacentParent == "shardId-000000000003");
  CHECK_FALSE(shards[2].closed);
  parseListShards(R"({"Shards": []})", token);
  CHECK(token.empty());
  CHECK_THROWS_AS(parseListShards("not json", token), ProtocolError);
  CHECK_THROWS_AS(parseListShards(R"({"Shards": [{"ParentShardId": "x"}]})", token), ProtocolError);
  CHECK_THROWS_AS(parseListShards(R"({"Shards": [{"ShardId": 7}]})", token), ProtocolError);
  CHECK_THROWS_AS(parseListShards(R"({"Other": 1})", token), ProtocolError);
}

TEST_CASE("kinesis: GetRecords answers") {
  RecordsPage page = parseGetRecords(R"({
    "Records": [
      {"SequenceNumber": "49590338271490256608559692538361571095921575989136588898",
       "ApproximateArrivalTimestamp": 1714557600.123, "Data": "eyJhIjoxfQ==", "PartitionKey": "u1"},
      {"SequenceNumber": "2", "Data": "", "PartitionKey": "u2"}
    ],
    "NextShardIterator": "AAAA", "MillisBehindLatest": 0})");
  REQUIRE(page.records.size() == 2);
  CHECK(page.records[0].sequenceNumber ==
        "49590338271490256608559692538361571095921575989136588898");
  CHECK(page.records[0].data == R"({"a":1})");
  CHECK(page.records[0].partitionKey == "u1");
  CHECK(page.records[0].arrivalMicros == 1714557600123000);
  CHECK(page.records[1].data.empty());
  CHECK(page.records[1].arrivalMicros == -1);
  CHECK(page.nextIterator == "AAAA");
  CHECK(page.millisBehindLatest == 0);

  // A closed shard read to its end has no next iterator (null or absent).
  page = parseGetRecords(R"({"Records": [], "NextShardIterator": null, "MillisBehindLatest": 0})");
  CHECK(page.records.empty());
  CHECK(page.nextIterator.empty());
  page = parseGetRecords(R"({"Records": []})");
  CHECK(page.nextIterator.empty());
  CHECK(page.millisBehindLatest == -1);

  CHECK_THROWS_AS(parseGetRecords(R"({"Records": [{"SequenceNumber": "1", "Data": "!!"}]})"),
                  ProtocolError);
  CHECK_THROWS_AS(parseGetRecords(R"({"Records": [{"Data": "AA=="}]})"), ProtocolError);
  CHECK_THROWS_AS(parseGetRecords(R"({"NextShardIterator": "x"})"), ProtocolError);
  CHECK_THROWS_AS(parseGetRecords("<html>"), ProtocolError);
  CHECK(parseShardIterator(R"({"ShardIterator": "it"})") == "it");
  CHECK_THROWS_AS(parseShardIterator("{}"), ProtocolError);
  CHECK(parseStreamStatus(R"({"StreamDescriptionSummary": {"StreamStatus": "ACTIVE"}})") ==
        "ACTIVE");
}

TEST_CASE("kinesis: service errors and which are retried") {
  ServiceError e = parseServiceError(
      R"({"__type": "ResourceNotFoundException", "message": "Stream x under account 0 not found."})");
  CHECK(e.type == "ResourceNotFoundException");
  CHECK(e.message == "Stream x under account 0 not found.");
  e = parseServiceError(
      R"({"__type": "com.amazonaws.kinesis#ExpiredIteratorException", "Message": "old"})");
  CHECK(e.type == "ExpiredIteratorException");
  CHECK(e.message == "old");
  e = parseServiceError("Bad Gateway");
  CHECK(e.type.empty());
  CHECK(e.message == "Bad Gateway");

  CHECK(isRetryable("ProvisionedThroughputExceededException", 400));
  CHECK(isRetryable("LimitExceededException", 400));
  CHECK(isRetryable("", 503));
  CHECK(isRetryable("InternalFailure", 500));
  CHECK_FALSE(isRetryable("ResourceNotFoundException", 400));
  CHECK_FALSE(isRetryable("InvalidArgumentException", 400));
  CHECK_FALSE(isRetryable("AccessDeniedException", 400));
  CHECK(CallError("x", "", 0, true).retryable());
  CHECK_FALSE(CallError("x", "ResourceNotFoundException", 400, false).retryable());
}

TEST_CASE("kinesis: a shard's number is the end of its id") {
  CHECK(shardNumber("shardId-000000000000") == 0);
  CHECK(shardNumber("shardId-000000000017") == 17);
  CHECK(shardNumber("shardId-") == -1);
  CHECK(shardNumber("") == -1);
  CHECK(shardNumber("shardId-99999999999") == -1);
}

TEST_CASE("kinesis: a reshard's children wait for their parents to be drained") {
  // 0 and 1 at the start; 0 split into 2 and 3; 3 and 1 merged into 4.
  std::vector<Shard> shards(5);
  for (int i = 0; i < 5; ++i) shards[i].id = "s" + std::to_string(i);
  shards[2].parent = shards[3].parent = "s0";
  shards[4].parent = "s3";
  shards[4].adjacentParent = "s1";
  std::set<std::string> drained;
  auto readable = [&] {
    std::vector<std::string> out;
    for (const Shard* s :
         readableShards(shards, [&](const std::string& id) { return drained.count(id) > 0; })) {
      out.push_back(s->id);
    }
    return out;
  };
  CHECK(readable() == std::vector<std::string>{"s0", "s1"});
  drained.insert("s0");
  CHECK(readable() == std::vector<std::string>{"s1", "s2", "s3"});
  drained.insert("s3");
  // The merge's child waits for both parents.
  CHECK(readable() == std::vector<std::string>{"s1", "s2"});
  drained.insert("s1");
  CHECK(readable() == std::vector<std::string>{"s2", "s4"});
  drained.insert("s2");
  drained.insert("s4");
  CHECK(readable().empty());

  // A parent past the stream's retention is no longer listed: nothing to wait for.
  std::vector<Shard> orphans(1);
  orphans[0].id = "s9";
  orphans[0].parent = "s8";
  CHECK(readableShards(orphans, [](const std::string&) { return false; }).size() == 1);
}

TEST_CASE("kinesis: the source's options are checked at CREATE SOURCE") {
  auto check = [](std::vector<std::pair<std::string, std::string>> kv) {
    kv.insert(kv.begin(), {"connector", "kinesis"});
    return sqlErrorOf([&] { validateSourceOptions("kinesis", opts(kv), 7); });
  };
  const std::pair<std::string, std::string> stream{"kinesis.stream", "clicks"};
  const std::pair<std::string, std::string> region{"kinesis.region", "us-east-1"};
  CHECK_NOTHROW(validateSourceOptions(
      "kinesis",
      opts(
          {{"connector", "kinesis"}, stream, region, {"kinesis.startingPosition", "trim_horizon"}}),
      7));

  SqlError e = check({region});
  CHECK(e.sqlstate() == "22023");
  CHECK(e.position() == 7);
  CHECK(e.message().find("kinesis.stream") != std::string::npos);
  e = check({stream});
  CHECK(e.message().find("kinesis.region") != std::string::npos);
  e = check({stream, region, {"kinesis.strem", "x"}});
  CHECK(e.position() == 300);
  CHECK(e.hint().find("kinesis.stream") != std::string::npos);
  e = check({stream, region, {"kinesis.startingPosition", "earliest"}});
  CHECK(e.position() == 350);
  CHECK(e.hint().find("TRIM_HORIZON") != std::string::npos);
  e = check({stream, region, {"kinesis.startingPosition", "AT_TIMESTAMP"}});
  CHECK(e.message().find("kinesis.startingTimestamp") != std::string::npos);
  e = check({stream,
             region,
             {"kinesis.startingPosition", "AT_TIMESTAMP"},
             {"kinesis.startingTimestamp", "soon"}});
  CHECK(e.position() == 450);
  CHECK_NOTHROW(validateSourceOptions("kinesis",
                                      opts({{"connector", "kinesis"},
                                            stream,
                                            region,
                                            {"kinesis.startingPosition", "AT_TIMESTAMP"},
                                            {"kinesis.startingTimestamp", "2024-05-01 10:00:00"}}),
                                      7));
  e = check({stream, region, {"kinesis.startingTimestamp", "2024-05-01 10:00:00"}});
  CHECK(e.position() == 300);
  e = check({stream, region, {"kinesis.endpoint", "127.0.0.1:4567"}});
  CHECK(e.position() == 350);
  e = check({stream, region, {"kinesis.accessKeyId", "AKID"}});
  CHECK(e.message().find("kinesis.secretKey") != std::string::npos);
  e = check({stream, region, {"kinesis.sessionToken", "t"}});
  CHECK(e.position() == 300);
  e = check({stream, region, {"kinesis.pollInterval", "0 ms"}});
  CHECK(e.position() == 350);
  e = check({stream, region, {"format", "debezium-json"}});
  CHECK(e.position() == 350);
  e = check({stream, region, {"avro.schema", "{}"}});
  CHECK(e.position() == 300);
}

TEST_CASE("kinesis: dead letters need a topic and a Kafka cluster") {
  auto check = [](std::vector<std::pair<std::string, std::string>> kv) {
    kv.insert(
        kv.begin(),
        {{"connector", "kinesis"}, {"kinesis.stream", "clicks"}, {"kinesis.region", "us-east-1"}});
    return sqlErrorOf([&] { validateSourceOptions("kinesis", opts(kv), 7); });
  };
  const std::pair<std::string, std::string> deadLetter{"on.error", "dead-letter"};
  const std::pair<std::string, std::string> topic{"dead-letter.topic", "clicks.dead"};
  const std::pair<std::string, std::string> servers{"dead-letter.kafka.bootstrap.servers",
                                                    "embedded"};
  CHECK_NOTHROW(validateSourceOptions("kinesis",
                                      opts({{"connector", "kinesis"},
                                            {"kinesis.stream", "clicks"},
                                            {"kinesis.region", "us-east-1"},
                                            deadLetter,
                                            topic,
                                            servers}),
                                      7));

  // Positions: the options after connector, stream and region are at 300, 400, 500.
  SqlError e = check({deadLetter, servers});
  CHECK(e.sqlstate() == "22023");
  CHECK(e.position() == 350);
  CHECK(e.message().find("dead-letter.topic") != std::string::npos);
  e = check({deadLetter, {"dead-letter.topic", " "}, servers});
  CHECK(e.sqlstate() == "22023");
  CHECK(e.position() == 450);
  CHECK(e.message().find("empty") != std::string::npos);
  e = check({deadLetter, {"dead-letter.topic", "a/b"}, servers});
  CHECK(e.position() == 450);
  e = check({deadLetter, topic});
  CHECK(e.sqlstate() == "22023");
  CHECK(e.position() == 350);
  CHECK(e.message().find("dead-letter.kafka.bootstrap.servers") != std::string::npos);
  CHECK(e.hint().find("embedded") != std::string::npos);
  e = check({deadLetter, topic, {"dead-letter.kafka.bootstrap.servers", ""}});
  CHECK(e.position() == 550);
  e = check({{"on.error", "skip"}, topic});
  CHECK(e.sqlstate() == "22023");
  CHECK(e.position() == 400);
  CHECK(e.hint().find("'on.error' = 'dead-letter'") != std::string::npos);
  e = check({servers});
  CHECK(e.sqlstate() == "22023");
  CHECK(e.position() == 300);
  e = check({{"on.error", "drop"}});
  CHECK(e.position() == 350);
  CHECK(e.hint().find("dead-letter") != std::string::npos);
}

TEST_CASE("kinesis: dead letters on 'embedded' need the embedded broker") {
  Options o = opts({{"connector", "kinesis"},
                    {"on.error", "dead-letter"},
                    {"dead-letter.kafka.bootstrap.servers", "embedded"}});
  DefaultConnectorProvider noBroker("");
  SqlError e = sqlErrorOf([&] { noBroker.checkCreate("kinesis", o); });
  CHECK(e.sqlstate() == "55000");
  CHECK(e.position() == 250);
  DefaultConnectorProvider withBroker("127.0.0.1:9092");
  CHECK_NOTHROW(withBroker.checkCreate("kinesis", o));
  CHECK_NOTHROW(noBroker.checkCreate(
      "kinesis", opts({{"dead-letter.kafka.bootstrap.servers", "127.0.0.1:9092"}})));
}

TEST_CASE("kinesis: the options and the environment give the client its settings") {
  setenv("AWS_ACCESS_KEY_ID", "ENVKEY", 1);
  setenv("AWS_SECRET_ACCESS_KEY", "envsecret", 1);
  setenv("AWS_SESSION_TOKEN", "envtoken", 1);
  SourceConfig c = sourceConfig(opts({{"kinesis.stream", "s"}, {"kinesis.region", "eu-west-1"}}));
  CHECK(c.client.endpoint == "https://kinesis.eu-west-1.amazonaws.com");
  CHECK(c.client.credentials.accessKeyId == "ENVKEY");
  CHECK(c.client.credentials.secretAccessKey == "envsecret");
  CHECK(c.client.credentials.sessionToken == "envtoken");
  CHECK(c.pollIntervalMicros == 200'000);
  CHECK(c.startingPosition == "LATEST");
  c = sourceConfig(opts({{"kinesis.stream", "s"},
                         {"kinesis.region", "r"},
                         {"kinesis.endpoint", "http://127.0.0.1:4567"},
                         {"kinesis.accessKeyId", "AKID"},
                         {"kinesis.secretKey", "sk"},
                         {"kinesis.pollInterval", "20 ms"},
                         {"kinesis.startingPosition", "at_timestamp"},
                         {"kinesis.startingTimestamp", "2024-05-01 10:00:00"}}));
  CHECK(c.client.endpoint == "http://127.0.0.1:4567");
  CHECK(c.client.credentials.accessKeyId == "AKID");
  // Keys from the options never take the environment's token.
  CHECK(c.client.credentials.sessionToken.empty());
  CHECK(c.pollIntervalMicros == 20'000);
  CHECK(c.startingPosition == "AT_TIMESTAMP");
  CHECK(c.startingTimestampMillis == 1714557600000);
  unsetenv("AWS_ACCESS_KEY_ID");
  unsetenv("AWS_SECRET_ACCESS_KEY");
  unsetenv("AWS_SESSION_TOKEN");
}

TEST_CASE("kinesis: CREATE SOURCE reads the options; the environment is read as a task opens") {
  unsetenv("AWS_ACCESS_KEY_ID");
  unsetenv("AWS_SECRET_ACCESS_KEY");
  unsetenv("AWS_SESSION_TOKEN");
  SourceOptions parsed = ConnectorRegistry::builtin().find("kinesis")->parseSource(
      opts({{"connector", "kinesis"},
            {"kinesis.stream", "s"},
            {"kinesis.region", "eu-west-1"},
            {"kinesis.secretKey", "optsecret"},
            {"kinesis.maxRecordsPerFetch", "50"},
            {"kinesis.startingPosition", "trim_horizon"}}));
  const auto* own = dynamic_cast<const KinesisOptions*>(parsed.own.get());
  REQUIRE(own);
  CHECK(own->config.stream == "s");
  CHECK(own->config.maxRecordsPerFetch == 50);
  CHECK(own->config.startingPosition == "TRIM_HORIZON");
  CHECK(own->secretKey);
  CHECK_FALSE(own->accessKeyId);
  // Credentials the options leave out come from the environment when a task
  // opens, not when the source was created.
  setenv("AWS_ACCESS_KEY_ID", "LATERKEY", 1);
  setenv("AWS_SECRET_ACCESS_KEY", "latersecret", 1);
  setenv("AWS_SESSION_TOKEN", "latertoken", 1);
  SourceConfig c = sourceConfig(*own);
  CHECK(c.client.credentials.accessKeyId == "LATERKEY");
  CHECK(c.client.credentials.secretAccessKey == "optsecret");
  CHECK(c.client.credentials.sessionToken == "latertoken");
  unsetenv("AWS_ACCESS_KEY_ID");
  unsetenv("AWS_SECRET_ACCESS_KEY");
  unsetenv("AWS_SESSION_TOKEN");
}

TEST_CASE("kinesis: the source's columns") {
  auto bind = [](const std::string& sql) {
    auto stmts = parseStatements(sql);
    REQUIRE(stmts.size() == 1);
    const auto& create = static_cast<const ast::CreateSource&>(*stmts[0]);
    return ConnectorRegistry::builtin().find("kinesis")->bindSourceSchema(
        create, bindOptions(create.options));
  };
  Schema raw = bind("CREATE SOURCE k WITH (connector = 'kinesis', format = 'raw')");
  std::vector<std::string> names;
  for (const Column& c : raw.columns) {
    names.push_back(c.name);
    CHECK_FALSE(c.hidden);
    CHECK(metaColumnOf(c, true) != MetaColumn::None);
  }
  CHECK(names == std::vector<std::string>{"data", "streamName", "partitionKey", "sequenceNumber",
                                          "approximateArrivalTimestamp", "shardId"});
  CHECK(raw.columns[0].type->id == TypeId::Binary);
  CHECK(raw.columns[4].type->id == TypeId::Timestamp);

  Schema json = bind("CREATE SOURCE k (user STRING, data BIGINT) WITH (connector = 'kinesis')");
  REQUIRE(json.columns.size() == 7);
  CHECK(json.columns[1].name == "data");
  CHECK(metaColumnOf(json.columns[1], false) == MetaColumn::None);
  CHECK(json.columns[2].name == "_streamName");
  CHECK(json.columns[2].hidden);
  CHECK(metaColumnOf(json.columns[3], false) == MetaColumn::PartitionKey);
  CHECK(metaColumnOf(json.columns[5], false) == MetaColumn::ArrivalTimestamp);

  SqlError e = sqlErrorOf(
      [&] { bind("CREATE SOURCE k (a INT) WITH (connector = 'kinesis', format = 'raw')"); });
  CHECK(e.sqlstate() == "22023");
  e = sqlErrorOf([&] { bind("CREATE SOURCE k WITH (connector = 'kinesis')"); });
  CHECK(e.message().find("needs a column list") != std::string::npos);
  e = sqlErrorOf([&] { bind("CREATE SOURCE k (_shardId STRING) WITH (connector = 'kinesis')"); });
  CHECK(e.sqlstate() == "42701");
  CHECK(e.position() == 17);
}
