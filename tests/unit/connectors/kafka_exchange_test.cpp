// The Kafka exchange of a sharded flow (connectors/kafka/exchange_topic.h): front
// writers sending rows and markers into the partitions of an exchange topic,
// and the back's source tasks reading them, on the embedded broker.
#include <doctest/doctest.h>

#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/error.h"
#include "connector_test_util.h"
#include "connectors/embedded/broker.h"
#include "connectors/kafka/exchange_topic.h"
#include "connectors/provider.h"
#include "executor/exchange.h"
#include "tests/unit/connectors/kafka_test_util.h"

using namespace rtsql;
using testing::sqlErrorOf;

namespace {

// Every wait below is bounded by this, however loaded the machine.
constexpr auto kPatience = std::chrono::seconds(20);

// Two copies, each with one front task: producers 0 and 1.
ExchangeSpec exchangeSpec(const std::string& bootstrap, const std::string& topic) {
  ExchangeSpec spec;
  spec.topic = topic;
  spec.bootstrap = bootstrap;
  spec.partitions = 2;
  spec.producers = 2;
  return spec;
}

// Copy `copy`'s back: partition `copy` of the topic, rows (id BIGINT, name STRING).
ScanSpec backScan(const ExchangeSpec& spec, int copy) {
  ScanSpec scan;
  scan.name = "exchange";
  scan.schema.columns.push_back({"id", DataType::of(TypeId::BigInt), false});
  scan.schema.columns.push_back({"name", DataType::of(TypeId::String), false});
  scan.exchange = spec;
  scan.share.slotCount = spec.partitions;
  scan.share.held = {copy};
  return scan;
}

Row row(int64_t id) {
  return {Value::bigint(id), Value::string("n" + std::to_string(id))};
}

void sendRow(ExchangeOut& out, int partition, ExchangeOrigin origin, int64_t tsMicros,
             RowKind kind = RowKind::Insert) {
  out.send(partition,
           encodeExchangeRow(origin, tsMicros, kind, row(origin.offset * 10 + origin.index)),
           tsMicros);
}

void sendMarker(ExchangeOut& out, int partition, ExchangeMessage::Kind kind, uint32_t producer,
                int64_t watermark = INT64_MIN) {
  out.send(partition, encodeExchangeMarker(kind, producer, 2, watermark), nowMicros());
}

// Polls `task` (one partition) until it has read everything partition
// `partition` of `topic` holds now, and returns the records it gave.
std::vector<SourceRecord> drain(SourceTask& task, const std::string& bootstrap,
                                const std::string& topic, int32_t partition) {
  const int64_t end = testkafka::endOffset(bootstrap, topic, partition);
  std::vector<SourceRecord> out;
  const auto deadline = std::chrono::steady_clock::now() + kPatience;
  while (task.progress().at(0).endOffset < end && std::chrono::steady_clock::now() < deadline) {
    task.poll(out, 100, 100);
  }
  REQUIRE(task.progress().at(0).endOffset == end);
  return out;
}

SourceTask::OwnWatermark watermarkOf(const SourceTask& task) {
  std::optional<SourceTask::OwnWatermark> w = task.ownWatermark();
  REQUIRE(w.has_value());
  return *w;
}

// The position token of a receiver that took exactly `taken`.
std::string positionAfter(std::vector<ExchangeOrigin> taken) {
  ExchangeReceiver r(2);
  for (const ExchangeOrigin& o : taken) r.accept(o);
  return r.position();
}

}  // namespace

TEST_CASE("exchange: each copy's source gets the rows sent to its partition, in order, once") {
  EmbeddedKafka broker;
  const ExchangeSpec spec = exchangeSpec(broker.bootstrap(), "_rtsql-x-rows");
  // The writers create the topic, with a partition per copy.
  auto w0 = kafka::makeExchangeWriter(spec, "f", 0);
  auto w1 = kafka::makeExchangeWriter(spec, "f", 1);
  CHECK(w0->description() == "Exchange[_rtsql-x-rows]");
  const int64_t ts = 1700000000000000;

  // Front task 0 reads source partition 0, task 1 source partition 1.
  sendRow(*w0, 0, {0, 10, 0}, ts, RowKind::Insert);
  sendRow(*w0, 0, {0, 10, 1}, ts + 1, RowKind::UpdateBefore);
  sendRow(*w0, 1, {0, 10, 2}, ts + 2, RowKind::UpdateAfter);
  sendRow(*w0, 0, {0, 11, 0}, ts + 3, RowKind::Delete);
  w0->flush(10000);
  sendRow(*w1, 0, {1, 5, 0}, ts + 4);
  sendRow(*w1, 1, {1, 5, 1}, ts + 5);
  w1->flush(10000);
  // Front task 0 recovered from a checkpoint before record 10 writes its rows
  // again, then goes on.
  sendRow(*w0, 0, {0, 10, 1}, ts + 1, RowKind::UpdateBefore);
  sendRow(*w0, 0, {0, 11, 0}, ts + 3, RowKind::Delete);
  sendRow(*w0, 0, {0, 12, 0}, ts + 6);
  w0->flush(10000);
  CHECK(testkafka::endOffset(spec.bootstrap, spec.topic, 0) == 7);
  CHECK(testkafka::endOffset(spec.bootstrap, spec.topic, 1) == 2);

  DefaultConnectorProvider provider(broker.bootstrap());
  auto back0 = provider.openExchangeSource(backScan(spec, 0), "f");
  auto back1 = provider.openExchangeSource(backScan(spec, 1), "f");
  CHECK(back0->description() == "Exchange[_rtsql-x-rows/0]");
  CHECK(back0->wakes());
  CHECK(back0->decodeErrors() == 0);

  const int64_t before = nowMicros();
  std::vector<SourceRecord> got = drain(*back0, spec.bootstrap, spec.topic, 0);
  REQUIRE(got.size() == 5);
  struct Want {
    int64_t id;
    int64_t offset;
    int64_t ts;
    RowKind kind;
  };
  const Want want[] = {{100, 0, ts, RowKind::Insert},
                       {101, 1, ts + 1, RowKind::UpdateBefore},
                       {110, 2, ts + 3, RowKind::Delete},
                       {50, 3, ts + 4, RowKind::Insert},
                       {120, 6, ts + 6, RowKind::Insert}};
  for (size_t i = 0; i < 5; ++i) {
    CAPTURE(i);
    CHECK(got[i].row.size() == 2);
    CHECK(got[i].row[0].asInt() == want[i].id);
    CHECK(got[i].row[1].asString() == "n" + std::to_string(want[i].id));
    CHECK(got[i].partition == 0);
    CHECK(got[i].offset == want[i].offset);
    CHECK(got[i].timestampMicros == want[i].ts);
    CHECK(got[i].kind == want[i].kind);
    CHECK(got[i].readMicros >= before);
  }
  // The repeats moved the offsets on without a record.
  std::vector<PartitionProgress> progress = back0->progress();
  REQUIRE(progress.size() == 1);
  CHECK(progress[0].topic == spec.topic);
  CHECK(progress[0].partition == 0);
  CHECK(progress[0].startOffset == 0);
  CHECK(progress[0].endOffset == 7);
  CHECK(progress[0].position == positionAfter({{0, 12, 0}, {1, 5, 0}}));

  // The end of the partition: caught up, the high watermark known.
  const auto deadline = std::chrono::steady_clock::now() + kPatience;
  std::vector<SourceRecord> more;
  while (!back0->caughtUp(0) && std::chrono::steady_clock::now() < deadline) {
    back0->poll(more, 100, 100);
  }
  CHECK(back0->caughtUp(0));
  CHECK(more.empty());
  CHECK(back0->progress()[0].latestOffset == 7);

  got = drain(*back1, spec.bootstrap, spec.topic, 1);
  REQUIRE(got.size() == 2);
  CHECK(got[0].row[0].asInt() == 102);
  CHECK(got[0].kind == RowKind::UpdateAfter);
  CHECK(got[0].partition == 1);
  CHECK(got[1].row[0].asInt() == 51);
  CHECK(got[1].timestampMicros == ts + 5);

  // An epoch's end moves the start of the next one; nothing else.
  back0->commit(back0->progress());
  CHECK(back0->progress()[0].startOffset == 7);
  CHECK(back0->progress()[0].endOffset == 7);
}

TEST_CASE("exchange: the watermark is the minimum over the producers that are not idle") {
  EmbeddedKafka broker;
  const ExchangeSpec spec = exchangeSpec(broker.bootstrap(), "_rtsql-x-marks");
  auto w0 = kafka::makeExchangeWriter(spec, "f", 0);
  auto w1 = kafka::makeExchangeWriter(spec, "f", 1);
  auto back = kafka::makeExchangeSource(backScan(spec, 0), "f");
  auto step = [&](ExchangeOut& w, ExchangeMessage::Kind kind, uint32_t producer,
                  int64_t watermark) {
    sendMarker(w, 0, kind, producer, watermark);
    w.flush(10000);
    drain(*back, spec.bootstrap, spec.topic, 0);
    return watermarkOf(*back);
  };
  using Kind = ExchangeMessage::Kind;

  SourceTask::OwnWatermark w = watermarkOf(*back);
  CHECK(w.watermark == INT64_MIN);
  CHECK_FALSE(w.allIdle);
  // Producer 1 has said nothing yet: no watermark.
  w = step(*w0, Kind::Watermark, 0, 1000);
  CHECK(w.watermark == INT64_MIN);
  w = step(*w1, Kind::Watermark, 1, 500);
  CHECK(w.watermark == 500);
  w = step(*w0, Kind::Watermark, 0, 2000);
  CHECK(w.watermark == 500);
  w = step(*w1, Kind::Watermark, 1, 1500);
  CHECK(w.watermark == 1500);
  // An idle producer is left out.
  w = step(*w1, Kind::Idle, 1, INT64_MIN);
  CHECK(w.watermark == 2000);
  CHECK_FALSE(w.allIdle);
  w = step(*w0, Kind::Idle, 0, INT64_MIN);
  CHECK(w.allIdle);
  CHECK(w.watermark == 2000);
  // Back from idle.
  w = step(*w0, Kind::Watermark, 0, 3000);
  CHECK_FALSE(w.allIdle);
  CHECK(w.watermark == 3000);
  CHECK(back->progress()[0].position.empty());  // markers take no rows
}

TEST_CASE("exchange: a marker that moves the watermark ends a long poll") {
  constexpr int kForever = 120'000;  // longer than any bound below
  EmbeddedKafka broker;
  const ExchangeSpec spec = exchangeSpec(broker.bootstrap(), "_rtsql-x-wake");
  auto w0 = kafka::makeExchangeWriter(spec, "f", 0);
  auto back = kafka::makeExchangeSource(backScan(spec, 0), "f");
  sendMarker(*w0, 0, ExchangeMessage::Kind::Idle, 1);
  w0->flush(10000);
  drain(*back, spec.bootstrap, spec.topic, 0);
  auto waitFor = [](std::future<void>& f, const std::function<void()>& meanwhile) {
    const auto deadline = std::chrono::steady_clock::now() + kPatience;
    while (std::chrono::steady_clock::now() < deadline) {
      if (meanwhile) meanwhile();
      if (f.wait_for(std::chrono::milliseconds(100)) == std::future_status::ready) return true;
    }
    return false;
  };
  // Polls until the watermark moved: only a marker can end it in time.
  std::future<void> polled = std::async(std::launch::async, [&] {
    std::vector<SourceRecord> none;
    while (watermarkOf(*back).watermark == INT64_MIN) back->poll(none, 10, kForever);
  });
  sendMarker(*w0, 0, ExchangeMessage::Kind::Watermark, 0, 42);
  w0->flush(10000);
  REQUIRE(waitFor(polled, nullptr));
  polled.get();
  CHECK(watermarkOf(*back).watermark == 42);

  // A wake ends it as well.
  std::future<void> woken = std::async(std::launch::async, [&] {
    std::vector<SourceRecord> none;
    back->poll(none, 10, kForever);
  });
  CHECK(waitFor(woken, [&] { back->wake(); }));
}

TEST_CASE("exchange: a source that seeks to another's checkpoint goes on without repeats") {
  EmbeddedKafka broker;
  const ExchangeSpec spec = exchangeSpec(broker.bootstrap(), "_rtsql-x-seek");
  auto w0 = kafka::makeExchangeWriter(spec, "f", 0);
  sendRow(*w0, 0, {0, 1, 0}, 1);
  sendRow(*w0, 0, {0, 2, 0}, 2);
  sendRow(*w0, 0, {0, 3, 0}, 3);
  sendMarker(*w0, 0, ExchangeMessage::Kind::Watermark, 0, 3);
  w0->flush(10000);

  std::vector<PartitionProgress> checkpoint;
  {
    auto first = kafka::makeExchangeSource(backScan(spec, 0), "f");
    REQUIRE(drain(*first, spec.bootstrap, spec.topic, 0).size() == 3);
    checkpoint = first->progress();
  }
  REQUIRE(checkpoint.size() == 1);
  CHECK(checkpoint[0].endOffset == 4);
  CHECK(checkpoint[0].position == positionAfter({{0, 3, 0}}));

  // The front recovered from a checkpoint of its own before record 2: it
  // writes records 2 and 3 again, then 4.
  w0.reset();
  w0 = kafka::makeExchangeWriter(spec, "f", 0);
  sendRow(*w0, 0, {0, 2, 0}, 2);
  sendRow(*w0, 0, {0, 3, 0}, 3);
  sendRow(*w0, 0, {0, 4, 0}, 4);
  w0->flush(10000);

  auto next = kafka::makeExchangeSource(backScan(spec, 0), "f");
  next->seek(checkpoint);
  CHECK(next->progress()[0].startOffset == 4);
  std::vector<SourceRecord> got = drain(*next, spec.bootstrap, spec.topic, 0);
  REQUIRE(got.size() == 1);
  CHECK(got[0].row[0].asInt() == 40);
  CHECK(got[0].offset == 6);
  CHECK(got[0].timestampMicros == 4);
  std::vector<PartitionProgress> progress = next->progress();
  CHECK(progress[0].startOffset == 4);
  CHECK(progress[0].endOffset == 7);
  CHECK(progress[0].position == positionAfter({{0, 4, 0}}));
  next->commit();
  CHECK(next->progress()[0].startOffset == 7);

  // Without a checkpoint (or a reset flow), from the start: each row once.
  auto fresh = kafka::makeExchangeSource(backScan(spec, 0), "f");
  fresh->seek(checkpoint);
  fresh->startFromStartingOffsets();
  got = drain(*fresh, spec.bootstrap, spec.topic, 0);
  REQUIRE(got.size() == 4);
  for (size_t i = 0; i < got.size(); ++i) CHECK(got[i].row[0].asInt() == int64_t(i + 1) * 10);
  CHECK(fresh->progress()[0].startOffset == 0);
}

TEST_CASE("exchange: damage in the topic fails the back with XX001") {
  EmbeddedKafka broker;
  const ExchangeSpec spec = exchangeSpec(broker.bootstrap(), "_rtsql-x-damage");
  auto w0 = kafka::makeExchangeWriter(spec, "f", 0);
  SUBCASE("bytes that are no exchange message") {
    w0->send(0, std::string("\x09garbage"), 0);
  }
  SUBCASE("a marker of a producer the flow does not have") {
    w0->send(0, encodeExchangeMarker(ExchangeMessage::Kind::Watermark, 5, 6, 0), 0);
  }
  w0->flush(10000);
  auto back = kafka::makeExchangeSource(backScan(spec, 0), "f");
  std::vector<SourceRecord> out;
  SqlError e = sqlErrorOf([&] {
    const auto deadline = std::chrono::steady_clock::now() + kPatience;
    while (std::chrono::steady_clock::now() < deadline) back->poll(out, 10, 100);
  });
  CHECK(e.sqlstate() == std::string(sqlstate::kDataCorrupted));
  CHECK(out.empty());
  // The damaged message is not taken.
  CHECK(back->progress()[0].endOffset == 0);
}

TEST_CASE("exchange: a writer whose broker is gone fails its flush in time") {
  auto broker = std::make_unique<EmbeddedKafka>();
  const ExchangeSpec spec = exchangeSpec(broker->bootstrap(), "_rtsql-x-gone");
  auto w0 = kafka::makeExchangeWriter(spec, "f", 0);
  sendRow(*w0, 1, {0, 1, 0}, 1);
  CHECK_NOTHROW(w0->flush(10000));
  broker.reset();
  sendRow(*w0, 1, {0, 2, 0}, 2);
  const auto start = std::chrono::steady_clock::now();
  SqlError e = sqlErrorOf([&] { w0->flush(300); });
  CHECK(e.sqlstate() == std::string(sqlstate::kConnectionFailure));
  CHECK(e.message().find("Exchange[_rtsql-x-gone]") != std::string::npos);
  MESSAGE(e.message());
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
  const auto closing = std::chrono::steady_clock::now();
  w0.reset();
  CHECK(std::chrono::steady_clock::now() - closing < std::chrono::seconds(10));
}

TEST_CASE("exchange: a topic with fewer partitions than the flow's copies is refused") {
  EmbeddedKafka broker;
  broker.createTopic("_rtsql-x-small", 1);
  const ExchangeSpec spec = exchangeSpec(broker.bootstrap(), "_rtsql-x-small");
  SqlError e = sqlErrorOf([&] { kafka::makeExchangeWriter(spec, "f", 0); });
  CHECK(e.sqlstate() == std::string(sqlstate::kObjectNotInPrerequisiteState));
  e = sqlErrorOf([&] { kafka::makeExchangeSource(backScan(spec, 0), "f"); });
  CHECK(e.sqlstate() == std::string(sqlstate::kObjectNotInPrerequisiteState));
}
