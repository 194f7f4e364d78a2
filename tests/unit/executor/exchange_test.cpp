// A sharded flow's exchange (executor/exchange.h): the front's writer sends
// each key to exactly one copy, with its origin, and markers to all; the
// back's receiver drops repeats, keeps its place across a checkpoint, and
// takes the minimum watermark over the producers that are not idle.
#include "executor/exchange.h"

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <thread>
#include <vector>

#include "../sql_error_of.h"
#include "common/clock.h"
#include "common/expr.h"
#include "executor/shuffle.h"

using namespace rtsql;
using rtsql::testing::sqlErrorOf;

namespace {

// The exchange topic in memory: each partition's messages, in order.
struct MemoryExchange final : ExchangeOut {
  explicit MemoryExchange(int partitions) : parts(static_cast<size_t>(partitions)) {}
  void send(int partition, std::string_view bytes, int64_t timestampMicros) override {
    parts.at(static_cast<size_t>(partition)).push_back({std::string(bytes), timestampMicros});
  }
  void flush(int) override { ++flushes; }
  std::string description() const override { return "memory"; }

  struct Message {
    std::string bytes;
    int64_t timestampMicros;
  };
  std::vector<std::vector<Message>> parts;
  int flushes = 0;
};

std::vector<DataTypePtr> types() {
  return {DataType::of(TypeId::String), DataType::of(TypeId::BigInt)};
}

ExchangeWriter writerOf(MemoryExchange& out, uint32_t producer = 0, uint32_t producers = 1,
                        int64_t paceMillis = ExchangeWriter::kMarkerPaceMillis) {
  return ExchangeWriter({makeColumnRef(0, DataType::of(TypeId::String), "k")},
                        static_cast<int>(out.parts.size()), producer, producers, out, paceMillis);
}

void push(ExchangeWriter& w, const std::string& key, int64_t v, int64_t ts = 7) {
  Row row{Value::string(key), Value::bigint(v)};
  w.push(row, RecordContext{ts, 8});
}

ExchangeMessage marker(ExchangeMessage::Kind kind, uint32_t producer, uint32_t producers,
                       int64_t wm = INT64_MIN) {
  return decodeExchange(encodeExchangeMarker(kind, producer, producers, wm), types());
}

// The tasks of a stage a shuffle writes into: their queues, and a writer
// into them (by the key in column 0) as producer `producer`.
struct ShuffleTargets {
  ShuffleTargets(int tasks, uint16_t producer) {
    std::vector<ShuffleQueue*> targets;
    for (int t = 0; t < tasks; ++t) {
      queues.push_back(std::make_unique<ShuffleQueue>(1024));
      targets.push_back(queues.back().get());
    }
    writer = std::make_unique<ShuffleWriter>(
        std::vector<ExprPtr>{makeColumnRef(0, DataType::of(TypeId::String), "k")}, targets, 0,
        producer, stopping);
  }
  std::atomic<bool> stopping{false};
  std::vector<std::unique_ptr<ShuffleQueue>> queues;
  std::unique_ptr<ShuffleWriter> writer;
};

}  // namespace

TEST_CASE(
    "the front sends each key to exactly one copy, which spreads its keys over all its tasks") {
  constexpr int kShards = 3;
  MemoryExchange out(kShards);
  ExchangeWriter w = writerOf(out);
  for (int round = 0; round < 2; ++round) {
    for (int k = 0; k < 300; ++k) {
      w.setOrigin(0, round * 300 + k);
      push(w, "key" + std::to_string(k), round);
    }
  }
  CHECK(w.stats().rowsIn.load() == 600);
  CHECK(w.stats().rowsOut.load() == 600);
  std::map<std::string, int> shardOf;
  size_t rows = 0;
  for (int s = 0; s < kShards; ++s) {
    // Each copy's back shuffles its partition's rows into 4 tasks, by the
    // same key hash: its keys must reach all of them, not a few.
    ShuffleTargets tasks(4, 0);
    auto& queues = tasks.queues;
    ShuffleWriter& back = *tasks.writer;
    size_t keys = 0;
    for (const auto& m : out.parts[static_cast<size_t>(s)]) {
      ExchangeMessage msg = decodeExchange(m.bytes, types());
      if (msg.kind != ExchangeMessage::Kind::Row) continue;
      ++rows;
      auto [it, inserted] = shardOf.emplace(msg.row[0].asString(), s);
      CHECK(it->second == s);  // never in two copies
      keys += inserted ? 1 : 0;
      back.push(msg.row, RecordContext{});
    }
    CHECK(keys > 50);
    size_t used = 0;
    for (auto& q : queues) {
      std::deque<ShuffleMessage> got;
      q->popAll(got, 0);
      used += got.empty() ? 0 : 1;
    }
    CHECK(used == 4);
  }
  CHECK(shardOf.size() == 300);  // and never in none
  CHECK(rows == 600);
  CHECK(shardOfKeyHash(12345, 7) == shardOfKeyHash(12345, 7));
  for (size_t h = 0; h < 1000; ++h) CHECK(shardOfKeyHash(h, 5) < 5);
}

TEST_CASE("a row crosses with its origin, timestamp and kind; rows of one record count up") {
  MemoryExchange out(1);
  ExchangeWriter w = writerOf(out);
  w.setOrigin(4, 1234);
  Row a{Value::string("x"), Value::bigint(42)};
  RecordContext ctx{5'000'000, 8};
  ctx.kind = RowKind::UpdateAfter;
  w.push(a, ctx);
  Row b{Value::string("y"), Value::null()};
  w.push(b, ctx);
  REQUIRE(out.parts[0].size() == 2);
  CHECK(out.parts[0][0].timestampMicros == 5'000'000);
  ExchangeMessage m0 = decodeExchange(out.parts[0][0].bytes, types());
  ExchangeMessage m1 = decodeExchange(out.parts[0][1].bytes, types());
  REQUIRE(m0.kind == ExchangeMessage::Kind::Row);
  CHECK(m0.origin.partition == 4);
  CHECK(m0.origin.offset == 1234);
  CHECK(m0.origin.index == 0);
  CHECK(m1.origin.index == 1);
  CHECK(m0.sourceTimestampMicros == 5'000'000);
  CHECK(m0.rowKind == RowKind::UpdateAfter);
  CHECK(m0.row[0].asString() == "x");
  CHECK(m0.row[1].asInt() == 42);
  CHECK(m1.row[1].isNull());
}

TEST_CASE("markers go to every copy, say idle or the watermark, and repeat each second") {
  MemoryExchange out(3);
  ExchangeWriter w = writerOf(out, 2, 6, 0);  // unpaced: each watermark at once
  // A new writer says where it stands at once.
  CHECK(w.wakeAtMillis() <= nowMicros() / 1000);
  w.onBatchEnd();
  for (const auto& part : out.parts) {
    REQUIRE(part.size() == 1);
    ExchangeMessage m = decodeExchange(part[0].bytes, types());
    CHECK(m.kind == ExchangeMessage::Kind::Watermark);
    CHECK(m.producer == 2);
    CHECK(m.producers == 6);
    CHECK(m.watermark == INT64_MIN);
  }
  // Then not again before its time.
  CHECK(w.wakeAtMillis() > nowMicros() / 1000);
  w.onBatchEnd();
  CHECK(out.parts[0].size() == 1);
  w.onWatermark(900);
  w.onIdle();
  for (const auto& part : out.parts) {
    REQUIRE(part.size() == 3);
    CHECK(decodeExchange(part[1].bytes, types()).watermark == 900);
    ExchangeMessage idle = decodeExchange(part[2].bytes, types());
    CHECK(idle.kind == ExchangeMessage::Kind::Idle);
  }
  w.flush(10);
  CHECK(out.flushes == 1);
}

TEST_CASE("a watermark within the pace of the last marker waits for it; idleness does not") {
  MemoryExchange out(2);
  {
    // A pace longer than the test: what is held stays held.
    ExchangeWriter w = writerOf(out, 0, 1, 600'000);
    w.onBatchEnd();  // a new writer says where it stands at once
    REQUIRE(out.parts[0].size() == 1);
    const int64_t firstWake = w.wakeAtMillis();
    w.onWatermark(100);
    w.onWatermark(200);
    CHECK(out.parts[0].size() == 1);
    CHECK(out.parts[1].size() == 1);
    // Held, it is sent no later than the marker repeated each second.
    CHECK(w.wakeAtMillis() == firstWake);
    // That the task is idle goes at once, as does the watermark after it.
    w.onIdle();
    w.onWatermark(300);
    w.onWatermark(400);
    for (const auto& part : out.parts) {
      REQUIRE(part.size() == 3);
      CHECK(decodeExchange(part[1].bytes, types()).kind == ExchangeMessage::Kind::Idle);
      ExchangeMessage m = decodeExchange(part[2].bytes, types());
      CHECK(m.kind == ExchangeMessage::Kind::Watermark);
      CHECK(m.watermark == 300);
    }
  }
  {
    // A pace of 1 ms: the held watermark goes, its latest value, once the
    // task wakes after it.
    MemoryExchange paced(2);
    ExchangeWriter w = writerOf(paced, 0, 1, 1);
    w.onBatchEnd();
    w.onWatermark(500);
    w.onWatermark(600);
    for (int i = 0;
         i < 5000 && decodeExchange(paced.parts[0].back().bytes, types()).watermark != 600; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      w.onBatchEnd();
    }
    for (const auto& part : paced.parts) {
      CHECK(decodeExchange(part.back().bytes, types()).watermark == 600);
      CHECK(part.size() <= 3);  // 500 may have gone at once; nothing else
    }
  }
}

TEST_CASE("the back drops repeats of what it took, per origin partition") {
  ExchangeReceiver r(1);
  CHECK(r.accept({0, 10, 0}));
  CHECK(r.accept({0, 10, 1}));
  CHECK(r.accept({1, 3, 0}));
  CHECK(r.accept({0, 11, 0}));
  // A front run again from its checkpoint writes offsets 10 and 11 again.
  CHECK_FALSE(r.accept({0, 10, 0}));
  CHECK_FALSE(r.accept({0, 10, 1}));
  CHECK_FALSE(r.accept({0, 11, 0}));
  CHECK(r.accept({0, 11, 1}));  // a row of that record it had not sent
  CHECK_FALSE(r.accept({1, 3, 0}));
  CHECK(r.accept({1, 4, 0}));
  CHECK(r.repeatsDropped() == 4);

  // Its place survives a checkpoint.
  ExchangeReceiver again(1);
  again.restore(r.position());
  CHECK(again.position() == r.position());
  CHECK_FALSE(again.accept({0, 11, 1}));
  CHECK_FALSE(again.accept({1, 2, 5}));
  CHECK(again.accept({0, 12, 0}));
  again.restore("");
  CHECK(again.accept({0, 0, 0}));

  for (const char* bad : {"x", "1:2", "1:2:3,", "1:2:3:4", "a:1:2", "1::2"}) {
    CAPTURE(bad);
    CHECK(sqlErrorOf([&] { again.restore(bad); }).sqlstate() == std::string("XX001"));
  }
}

TEST_CASE("the back's watermark is the minimum over producers that are not idle") {
  ExchangeReceiver r(3);
  CHECK(r.watermark() == INT64_MIN);
  r.marker(marker(ExchangeMessage::Kind::Watermark, 0, 3, 100));
  r.marker(marker(ExchangeMessage::Kind::Watermark, 1, 3, 50));
  CHECK(r.watermark() == INT64_MIN);  // producer 2 has said nothing
  r.marker(marker(ExchangeMessage::Kind::Idle, 2, 3));
  CHECK(r.watermark() == 50);
  CHECK_FALSE(r.allIdle());
  r.marker(marker(ExchangeMessage::Kind::Watermark, 1, 3, 150));
  CHECK(r.watermark() == 100);
  // Back from idle without a watermark yet: it holds the others back again.
  r.marker(marker(ExchangeMessage::Kind::Watermark, 2, 3, INT64_MIN));
  r.marker(marker(ExchangeMessage::Kind::Watermark, 0, 3, 200));
  CHECK(r.watermark() == 100);  // never goes back, never moves on without producer 2
  r.marker(marker(ExchangeMessage::Kind::Watermark, 2, 3, 170));
  CHECK(r.watermark() == 150);
  // Going idle one by one: the last one standing decides, then nothing moves.
  for (uint32_t p = 0; p < 3; ++p) r.marker(marker(ExchangeMessage::Kind::Idle, p, 3));
  CHECK(r.allIdle());
  CHECK(r.watermark() == 170);
  // A marker of another shape of the flow is refused.
  CHECK(sqlErrorOf([&] { r.marker(marker(ExchangeMessage::Kind::Idle, 3, 3)); }).sqlstate() ==
        std::string("XX001"));
  CHECK(sqlErrorOf([&] { r.marker(marker(ExchangeMessage::Kind::Idle, 0, 4)); }).sqlstate() ==
        std::string("XX001"));
}

TEST_CASE("a front keeps its own copy's rows in process; the topic gets the others'") {
  constexpr int kShards = 3;
  constexpr int kOwn = 1;
  MemoryExchange out(kShards);
  ExchangeWriter w = writerOf(out, 4, 6, 600'000);  // copy 1's second of two front tasks
  ShuffleTargets stateful(2, 7);                    // the copy's stateful stage
  auto& queues = stateful.queues;
  w.keepOwnShard(kOwn, *stateful.writer);
  w.onBatchEnd();  // the first marker: to the other copies only
  CHECK(out.parts[kOwn].empty());
  CHECK(out.parts[0].size() == 1);
  CHECK(out.parts[2].size() == 1);

  for (int k = 0; k < 300; ++k) {
    w.setOrigin(3, k);
    push(w, "key" + std::to_string(k), k);
  }
  CHECK(w.stats().rowsOut.load() == 300);
  // A watermark within the pace waits, for the stateful tasks too: the
  // other copies' come no sooner.
  w.onWatermark(5000);

  // The topic's rows: none of the own shard, and each key by its shard.
  std::map<std::string, int> sent;
  for (int s = 0; s < kShards; ++s) {
    for (const auto& m : out.parts[static_cast<size_t>(s)]) {
      ExchangeMessage msg = decodeExchange(m.bytes, types());
      if (msg.kind != ExchangeMessage::Kind::Row) continue;
      sent.emplace(msg.row[0].asString(), s);
    }
  }
  CHECK(out.parts[kOwn].empty());
  // The own rows: in the queues, by the same task a shuffle of them picks,
  // as producer 7; no watermark yet.
  std::map<std::string, int> kept;
  for (size_t t = 0; t < queues.size(); ++t) {
    std::deque<ShuffleMessage> got;
    queues[t]->popAll(got, 0);
    REQUIRE_FALSE(got.empty());
    for (const ShuffleMessage& m : got) {
      CHECK(m.producer == 7);
      REQUIRE(m.kind == ShuffleMessage::Kind::Record);
      const size_t hash =
          shuffleKeyHash({makeColumnRef(0, DataType::of(TypeId::String), "k")}, m.row);
      CHECK(shardOfKeyHash(hash, kShards) == kOwn);
      CHECK(hash % queues.size() == t);
      CHECK(m.ctx.sourceTimestampMicros == 7);
      kept.emplace(m.row[0].asString(), kOwn);
    }
  }
  CHECK(kept.size() > 50);
  CHECK(kept.size() + sent.size() == 300);
  for (const auto& [key, shard] : kept) CHECK(sent.count(key) == 0);
  // The topic's markers, to the other copies only. The first watermark
  // after idleness goes at once, to the topic and to every stateful task.
  w.onIdle();
  CHECK(out.parts[kOwn].empty());
  CHECK(decodeExchange(out.parts[0].back().bytes, types()).kind == ExchangeMessage::Kind::Idle);
  w.onWatermark(6000);
  CHECK(out.parts[kOwn].empty());
  CHECK(decodeExchange(out.parts[2].back().bytes, types()).watermark == 6000);
  for (auto& q : queues) {
    std::deque<ShuffleMessage> got;
    q->popAll(got, 0);
    REQUIRE(got.size() == 1);
    CHECK(got[0].kind == ShuffleMessage::Kind::Watermark);
    CHECK(got[0].value == 6000);
  }
}

TEST_CASE("a back whose copy keeps its own rows leaves its own fronts out") {
  // Copy 1 of 3, two front tasks each: producers 2 and 3 are its own.
  ExchangeReceiver r(6, 1, 3);
  for (uint32_t p : {0U, 1U, 4U}) r.marker(marker(ExchangeMessage::Kind::Watermark, p, 6, 100));
  CHECK(r.watermark() == INT64_MIN);  // producer 5 has said nothing
  r.marker(marker(ExchangeMessage::Kind::Watermark, 5, 6, 80));
  CHECK(r.watermark() == 80);  // producers 2 and 3 are not waited for
  // Their markers, were any in the topic, change nothing.
  r.marker(marker(ExchangeMessage::Kind::Watermark, 2, 6, 10));
  r.marker(marker(ExchangeMessage::Kind::Watermark, 5, 6, 90));
  CHECK(r.watermark() == 90);
  for (uint32_t p : {0U, 1U, 4U}) r.marker(marker(ExchangeMessage::Kind::Idle, p, 6));
  CHECK_FALSE(r.allIdle());
  r.marker(marker(ExchangeMessage::Kind::Idle, 5, 6));
  CHECK(r.allIdle());  // every other copy's front is idle
  r.marker(marker(ExchangeMessage::Kind::Watermark, 3, 6, 500));
  CHECK(r.allIdle());
  // Rows of the partitions copy 1 reads (1, 4, 7, ...) come in process.
  CHECK_FALSE(r.accept({1, 0, 0}));
  CHECK_FALSE(r.accept({4, 9, 0}));
  CHECK(r.accept({0, 0, 0}));
  CHECK(r.accept({5, 3, 0}));
  CHECK(r.position() == "0:0:0,5:3:0");
  // A receiver of the whole topic hears everyone.
  ExchangeReceiver all(6);
  CHECK(all.accept({1, 0, 0}));
  for (uint32_t p : {0U, 1U, 4U, 5U})
    all.marker(marker(ExchangeMessage::Kind::Watermark, p, 6, 100));
  CHECK(all.watermark() == INT64_MIN);
}

TEST_CASE("a damaged message is refused as corrupted data") {
  const std::string good =
      encodeExchangeRow({1, 2, 0}, 3, RowKind::Insert, Row{Value::string("k"), Value::bigint(9)});
  CHECK(decodeExchange(good, types()).row[1].asInt() == 9);
  for (size_t cut : {size_t{0}, size_t{1}, size_t{10}, good.size() - 1}) {
    CAPTURE(cut);
    CHECK(sqlErrorOf([&] { decodeExchange(good.substr(0, cut), types()); }).sqlstate() ==
          std::string("XX001"));
  }
  std::string unknown = good;
  unknown[0] = 9;
  CHECK(sqlErrorOf([&] { decodeExchange(unknown, types()); }).sqlstate() == std::string("XX001"));
  std::string kind = good;
  kind[25] = 7;  // the row kind
  CHECK(sqlErrorOf([&] { decodeExchange(kind, types()); }).sqlstate() == std::string("XX001"));
}
