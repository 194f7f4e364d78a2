// Sinks that write every change (connectors/format/changes.h): debezium-json
// records with their op, upsert rows under their key and deletes as
// tombstones, through the encoder, the Kafka sink on the embedded broker and
// the file sink; and the CREATE SINK checks of 'mode' and the format.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "common/error.h"
#include "connector_test_util.h"
#include "connectors/embedded/broker.h"
#include "connectors/file/file_sink.h"
#include "connectors/format/changes.h"
#include "connectors/kafka/kafka_connector.h"
#include "connectors/kafka/sink.h"
#include "tests/unit/connectors/kafka_test_util.h"

using namespace rtsql;
using testing::countsSink;
using testing::opts;
using testing::sqlErrorOf;

namespace {

Row row(const std::string& user, int64_t n) {
  return {Value::string(user), Value::bigint(n)};
}

struct Written {
  bool hasKey;
  std::string key;
  bool hasValue;
  std::string value;
};

struct Collect {
  std::vector<Written> got;
  ChangeEncoder::Emit emit = [this](const EncodedRecord& r) {
    got.push_back({r.hasKey, r.key, r.hasValue, r.value});
  };
};

}  // namespace

TEST_CASE("debezium-json: an insert is op c, an update one op u with both rows, a delete op d") {
  auto enc = ChangeEncoder::make(countsSink("debezium-json", {}));
  REQUIRE(enc);
  Collect c;
  enc->add(row("a", 1), RowKind::Insert, c.emit);
  enc->add(row("a", 1), RowKind::UpdateBefore, c.emit);
  CHECK(c.got.size() == 1);  // held until its UpdateAfter
  enc->add(row("a", 2), RowKind::UpdateAfter, c.emit);
  enc->add(row("a", 2), RowKind::Delete, c.emit);
  REQUIRE(c.got.size() == 3);
  CHECK(c.got[0].value == R"({"before":null,"after":{"user":"a","n":1},"op":"c"})");
  CHECK(c.got[1].value == R"({"before":{"user":"a","n":1},"after":{"user":"a","n":2},"op":"u"})");
  CHECK(c.got[2].value == R"({"before":{"user":"a","n":2},"after":null,"op":"d"})");
  for (const Written& w : c.got) {
    CHECK(w.hasKey);
    CHECK(w.key == "a");
    CHECK(w.hasValue);
  }
}

TEST_CASE("debezium-json: an UpdateBefore nothing pairs with is written as a delete") {
  auto enc = ChangeEncoder::make(countsSink("debezium-json", {}));
  Collect c;
  enc->add(row("a", 1), RowKind::UpdateBefore, c.emit);
  enc->add(row("b", 5), RowKind::Insert, c.emit);  // not an UpdateAfter: the old row goes first
  enc->add(row("b", 5), RowKind::UpdateBefore, c.emit);
  enc->finish(c.emit);  // the epoch ends with one held
  enc->finish(c.emit);  // nothing held any more
  REQUIRE(c.got.size() == 3);
  CHECK(c.got[0].value == R"({"before":{"user":"a","n":1},"after":null,"op":"d"})");
  CHECK(c.got[0].key == "a");
  CHECK(c.got[1].value == R"({"before":null,"after":{"user":"b","n":5},"op":"c"})");
  CHECK(c.got[2].value == R"({"before":{"user":"b","n":5},"after":null,"op":"d"})");
  CHECK(c.got[2].key == "b");
}

TEST_CASE("debezium-json without a unique key writes keyless records") {
  SinkSpec sink = countsSink("debezium-json", {});
  sink.keyColumn = -1;
  sink.keyColumns.clear();
  auto enc = ChangeEncoder::make(sink);
  Collect c;
  enc->add(row("a", 1), RowKind::Insert, c.emit);
  REQUIRE(c.got.size() == 1);
  CHECK_FALSE(c.got[0].hasKey);
}

TEST_CASE("upsert: new rows under their key, the old row dropped, a delete a tombstone") {
  auto enc = ChangeEncoder::make(countsSink("json", {{"mode", "upsert"}}));
  REQUIRE(enc);
  Collect c;
  enc->add(row("a", 1), RowKind::Insert, c.emit);
  enc->add(row("a", 1), RowKind::UpdateBefore, c.emit);
  enc->add(row("a", 2), RowKind::UpdateAfter, c.emit);
  enc->add(row("a", 2), RowKind::Delete, c.emit);
  enc->finish(c.emit);
  REQUIRE(c.got.size() == 3);
  CHECK(c.got[0].value == R"({"user":"a","n":1})");
  CHECK(c.got[1].value == R"({"user":"a","n":2})");
  CHECK_FALSE(c.got[2].hasValue);
  for (const Written& w : c.got) CHECK(w.key == "a");
}

TEST_CASE("upsert of a global aggregate: its one row under the key {}") {
  SinkSpec sink = countsSink("json", {{"mode", "upsert"}});
  sink.keyColumn = -1;
  sink.keyColumns.clear();
  auto enc = ChangeEncoder::make(sink);
  Collect c;
  enc->add(row("a", 1), RowKind::Insert, c.emit);
  REQUIRE(c.got.size() == 1);
  CHECK(c.got[0].hasKey);
  CHECK(c.got[0].key == "{}");
}

TEST_CASE("debezium-json: an update that changes the key is a d under the old key, a c under the new") {
  // A top-N rank change: the row moves from one key to another.
  auto enc = ChangeEncoder::make(countsSink("debezium-json", {}));
  Collect c;
  enc->add(row("a", 1), RowKind::UpdateBefore, c.emit);
  enc->add(row("b", 1), RowKind::UpdateAfter, c.emit);
  REQUIRE(c.got.size() == 2);
  CHECK(c.got[0].key == "a");
  CHECK(c.got[0].value == R"({"before":{"user":"a","n":1},"after":null,"op":"d"})");
  CHECK(c.got[1].key == "b");
  CHECK(c.got[1].value == R"({"before":null,"after":{"user":"b","n":1},"op":"c"})");
}

TEST_CASE("upsert: an update that changes the key writes a tombstone under the old key first") {
  auto enc = ChangeEncoder::make(countsSink("json", {{"mode", "upsert"}}));
  Collect c;
  enc->add(row("a", 1), RowKind::UpdateBefore, c.emit);
  enc->add(row("b", 1), RowKind::UpdateAfter, c.emit);
  // An old row nothing follows is a delete of its key.
  enc->add(row("c", 3), RowKind::UpdateBefore, c.emit);
  enc->finish(c.emit);
  REQUIRE(c.got.size() == 3);
  CHECK(c.got[0].key == "a");
  CHECK_FALSE(c.got[0].hasValue);
  CHECK(c.got[1].key == "b");
  CHECK(c.got[1].value == R"({"user":"b","n":1})");
  CHECK(c.got[2].key == "c");
  CHECK_FALSE(c.got[2].hasValue);
}

TEST_CASE("a sink in the default mode has no change encoder: today's writes") {
  CHECK_FALSE(ChangeEncoder::make(countsSink("json", {})));
  CHECK_FALSE(ChangeEncoder::make(countsSink("json", {{"mode", "update"}})));
}

TEST_CASE("kafka sink in upsert mode writes a tombstone for a delete") {
  EmbeddedKafka broker;
  SinkSpec sink = countsSink("json", {{"mode", "upsert"}});
  sink.options = opts({{"connector", "kafka"},
                       {"kafka.bootstrap.servers", broker.bootstrap()},
                       {"topic", "counts"},
                       {"mode", "upsert"}});
  auto writer = makeKafkaSink(sink, broker.bootstrap(), "f", 0);
  writer->write(row("a", 1), 0);
  writer->writeChange(row("a", 1), 0, RowKind::UpdateBefore);
  writer->writeChange(row("a", 2), 0, RowKind::UpdateAfter);
  writer->writeChange(row("a", 2), 0, RowKind::Delete);
  writer->flush(10000);
  CHECK(writer->deliveryErrors() == 0);
  auto got = testkafka::consume(broker.bootstrap(), "counts", 0, 3);
  REQUIRE(got.size() == 3);
  CHECK(got[0].key == "a");
  CHECK(got[0].value == R"({"user":"a","n":1})");
  CHECK(got[1].value == R"({"user":"a","n":2})");
  CHECK(got[2].key == "a");
  CHECK(got[2].value.empty());
}

TEST_CASE("kafka sink with debezium-json writes one record per change") {
  EmbeddedKafka broker;
  SinkSpec sink = countsSink("debezium-json", {});
  sink.options = opts({{"connector", "kafka"},
                       {"kafka.bootstrap.servers", broker.bootstrap()},
                       {"topic", "cdc"},
                       {"format", "debezium-json"}});
  auto writer = makeKafkaSink(sink, broker.bootstrap(), "f", 0);
  writer->write(row("a", 1), 0);
  writer->writeChange(row("a", 1), 0, RowKind::UpdateBefore);
  writer->writeChange(row("a", 2), 0, RowKind::UpdateAfter);
  writer->writeChange(row("a", 2), 0, RowKind::Delete);
  writer->flush(10000);
  auto got = testkafka::consume(broker.bootstrap(), "cdc", 0, 3);
  REQUIRE(got.size() == 3);
  CHECK(got[0].value == R"({"before":null,"after":{"user":"a","n":1},"op":"c"})");
  CHECK(got[1].value == R"({"before":{"user":"a","n":1},"after":{"user":"a","n":2},"op":"u"})");
  CHECK(got[2].value == R"({"before":{"user":"a","n":2},"after":null,"op":"d"})");
  CHECK(got[2].key == "a");
}

TEST_CASE("file sink with debezium-json writes one line per change") {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("rtsql-changes-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::string path = (dir / "cdc.jsonl").string();
  SinkSpec sink = countsSink("debezium-json", {});
  sink.connector = "file";
  sink.options = opts({{"connector", "file"}, {"path", path}, {"format", "debezium-json"}});
  {
    auto writer = makeFileSink(sink, 0);
    writer->write(row("a", 1), 0);
    writer->writeChange(row("a", 1), 0, RowKind::UpdateBefore);
    writer->writeChange(row("a", 2), 0, RowKind::UpdateAfter);
    writer->writeChange(row("a", 2), 0, RowKind::UpdateBefore);  // no UpdateAfter follows
    writer->flush(1000);
  }
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  fs::remove_all(dir);
  REQUIRE(lines.size() == 3);
  CHECK(lines[0] == R"({"before":null,"after":{"user":"a","n":1},"op":"c"})");
  CHECK(lines[1] == R"({"before":{"user":"a","n":1},"after":{"user":"a","n":2},"op":"u"})");
  CHECK(lines[2] == R"({"before":{"user":"a","n":2},"after":null,"op":"d"})");
}

TEST_CASE("CREATE SINK: 'mode' and debezium-json on Kafka and file sinks") {
  KafkaConnector kafka;
  auto kafkaOpts = [](std::vector<std::pair<std::string, std::string>> extra) {
    std::vector<std::pair<std::string, std::string>> kv = {
        {"connector", "kafka"}, {"kafka.bootstrap.servers", "127.0.0.1:9092"}, {"topic", "t"}};
    kv.insert(kv.end(), extra.begin(), extra.end());
    return opts(kv);
  };
  CHECK_NOTHROW(kafka.validateSink(kafkaOpts({{"mode", "upsert"}}), 0));
  CHECK_NOTHROW(kafka.validateSink(kafkaOpts({{"format", "debezium-json"}}), 0));
  CHECK_NOTHROW(
      kafka.validateSink(kafkaOpts({{"mode", "append"}, {"format", "debezium-json"}}), 0));
  SqlError bad = sqlErrorOf([&] { kafka.validateSink(kafkaOpts({{"mode", "replace"}}), 0); });
  CHECK(bad.position() == 350);
  // Entry 3 is 'format', entry 4 'mode': the error points at the mode's value.
  SqlError raw = sqlErrorOf([&] {
    kafka.validateSink(kafkaOpts({{"format", "raw"}, {"mode", "upsert"}}), 0);
  });
  CHECK(raw.sqlstate() == "0A000");
  CHECK(raw.position() == 450);
  SqlError dbz = sqlErrorOf([&] {
    kafka.validateSink(kafkaOpts({{"format", "debezium-json"}, {"mode", "upsert"}}), 0);
  });
  CHECK(dbz.sqlstate() == "0A000");
  SqlError key = sqlErrorOf([&] {
    kafka.validateSink(kafkaOpts({{"mode", "upsert"}, {"key", "user"}}), 0);
  });
  CHECK(key.sqlstate() == "0A000");
  CHECK(key.position() == 400);

  std::string path = (std::filesystem::temp_directory_path() / "rtsql-changes-test.jsonl").string();
  CHECK_NOTHROW(validateFileSinkOptions(
      opts({{"connector", "file"}, {"path", path}, {"format", "debezium-json"}}), 0));
  SqlError file = sqlErrorOf([&] {
    validateFileSinkOptions(opts({{"connector", "file"}, {"path", path}, {"mode", "upsert"}}), 0);
  });
  CHECK(file.sqlstate() == "0A000");
  CHECK(file.position() == 250);
  CHECK(file.hint().find("debezium-json") != std::string::npos);
}
