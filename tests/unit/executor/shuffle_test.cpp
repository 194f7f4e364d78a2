// The shuffle between stages: a key always goes to the same task, control
// messages reach every task in order with the records, and a full queue holds
// its producer back (or lets it go when the flow stops).
#include "executor/shuffle.h"

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <deque>
#include <future>
#include <map>
#include <memory>
#include <thread>
#include <vector>

#include "common/expr.h"

using namespace rtsql;

namespace {

struct Fanout {
  explicit Fanout(size_t tasks, size_t capacity = 1024) {
    for (size_t i = 0; i < tasks; ++i) {
      queues.push_back(std::make_unique<ShuffleQueue>(capacity));
      targets.push_back(queues.back().get());
    }
  }

  // A writer keyed on column 0, as producer `producer` of input `input`.
  ShuffleWriter writer(uint8_t input = 0, uint16_t producer = 0) {
    return ShuffleWriter({makeColumnRef(0, DataType::of(TypeId::String), "k")}, targets, input,
                         producer, stopping);
  }

  std::vector<std::deque<ShuffleMessage>> drain() {
    std::vector<std::deque<ShuffleMessage>> out(queues.size());
    for (size_t i = 0; i < queues.size(); ++i) queues[i]->popAll(out[i], 0);
    return out;
  }

  std::atomic<bool> stopping{false};
  std::vector<std::unique_ptr<ShuffleQueue>> queues;
  std::vector<ShuffleQueue*> targets;
};

void push(ShuffleWriter& w, const std::string& key, int64_t v) {
  Row row{Value::string(key), Value::bigint(v)};
  w.push(row, RecordContext{7, 8});
}

}  // namespace

TEST_CASE("a key always goes to the same task, from every producer") {
  Fanout f(4);
  ShuffleWriter a = f.writer(0, 0);
  ShuffleWriter b = f.writer(0, 1);
  for (int round = 0; round < 3; ++round) {
    for (int k = 0; k < 50; ++k) {
      push(a, "key" + std::to_string(k), round);
      push(b, "key" + std::to_string(k), round);
    }
  }
  std::map<std::string, size_t> taskOf;
  size_t used = 0;
  auto out = f.drain();
  for (size_t task = 0; task < out.size(); ++task) {
    if (!out[task].empty()) ++used;
    for (const ShuffleMessage& m : out[task]) {
      CHECK(m.kind == ShuffleMessage::Kind::Record);
      auto [it, inserted] = taskOf.emplace(m.row[0].asString(), task);
      CHECK(it->second == task);
      // What a view's lookup by key reads first (executor/state/view_table.cpp).
      CHECK(shuffleKeyHashOf({m.row[0]}) % out.size() == task);
    }
  }
  CHECK(taskOf.size() == 50);
  CHECK(used > 1);  // the keys spread over the tasks
  CHECK(a.stats().rowsIn.load() == 150);
  CHECK(a.stats().rowsOut.load() == 150);
}

TEST_CASE("a record crosses with its input, producer and timestamps") {
  Fanout f(1);
  ShuffleWriter w = f.writer(1, 5);
  Row row{Value::string("x"), Value::bigint(42)};
  w.push(row, RecordContext{7, 8});
  // The row moved; the producer keeps a row of the same width to reuse.
  REQUIRE(row.size() == 2);
  CHECK(row[0].isNull());
  row[1] = Value::bigint(0);
  auto out = f.drain();
  REQUIRE(out[0].size() == 1);
  const ShuffleMessage& m = out[0].front();
  CHECK(m.input == 1);
  CHECK(m.producer == 5);
  CHECK(m.row[1].asInt() == 42);
  CHECK(m.ctx.sourceTimestampMicros == 7);
  CHECK(m.ctx.readMicros == 8);
}

TEST_CASE("watermarks, idleness and barriers reach every task, in order with the records") {
  Fanout f(3);
  ShuffleWriter w = f.writer(0, 2);
  for (int k = 0; k < 30; ++k) push(w, "key" + std::to_string(k), k);
  w.onWatermark(1000);
  w.broadcast(ShuffleMessage::Kind::Barrier, 4);
  for (int k = 30; k < 60; ++k) push(w, "key" + std::to_string(k), k);
  w.broadcast(ShuffleMessage::Kind::Idle, 0);
  auto out = f.drain();
  for (const auto& q : out) {
    std::vector<ShuffleMessage::Kind> controls;
    int64_t lastValue = -1;
    bool pastBarrier = false;
    for (const ShuffleMessage& m : q) {
      CHECK(m.producer == 2);
      if (m.kind == ShuffleMessage::Kind::Record) {
        const int64_t v = m.row[1].asInt();
        CHECK(v > lastValue);  // one producer's records stay in order
        lastValue = v;
        CHECK((v >= 30) == pastBarrier);
        continue;
      }
      controls.push_back(m.kind);
      if (m.kind == ShuffleMessage::Kind::Watermark) CHECK(m.value == 1000);
      if (m.kind == ShuffleMessage::Kind::Barrier) {
        CHECK(m.value == 4);
        pastBarrier = true;
      }
    }
    CHECK(controls == std::vector<ShuffleMessage::Kind>{ShuffleMessage::Kind::Watermark,
                                                        ShuffleMessage::Kind::Barrier,
                                                        ShuffleMessage::Kind::Idle});
  }
}

TEST_CASE("a consumer with nothing queued waits at most its timeout") {
  ShuffleQueue q(4);
  std::deque<ShuffleMessage> out;
  CHECK_FALSE(q.popAll(out, 1));
  CHECK(out.empty());
}

TEST_CASE("a full queue holds its producer until the consumer takes the messages") {
  ShuffleQueue q(2);
  std::atomic<bool> stopping{false};
  CHECK(q.push(ShuffleMessage{}, stopping));
  CHECK(q.push(ShuffleMessage{}, stopping));
  std::atomic<bool> pushed{false};
  std::thread producer([&] {
    ShuffleMessage m;
    m.value = 3;
    pushed = q.push(std::move(m), stopping);
  });
  std::deque<ShuffleMessage> out;
  // The producer's message is in only after the consumer made room.
  CHECK(q.size() == 2);
  REQUIRE(q.popAll(out, 1000));
  size_t got = out.size();
  for (int i = 0; i < 1000 && got < 3; ++i) {
    if (q.popAll(out, 10)) got = out.size();
  }
  producer.join();
  CHECK(pushed);
  REQUIRE(out.size() == 3);
  CHECK(out.back().value == 3);
}

TEST_CASE("a producer waiting on a full queue gives up when the flow stops") {
  ShuffleQueue q(1);
  std::atomic<bool> stopping{false};
  CHECK(q.push(ShuffleMessage{}, stopping));
  std::atomic<bool> result{true};
  std::thread producer([&] { result = q.push(ShuffleMessage{}, stopping); });
  stopping = true;
  q.wakeAll();
  producer.join();
  CHECK_FALSE(result);
  CHECK(q.size() == 1);
}

TEST_CASE("a batch is handed over at its end, in order, before any control message") {
  Fanout f(2);
  ShuffleWriter w = f.writer(0, 1);
  w.beginBatch();
  for (int k = 0; k < 20; ++k) push(w, "key" + std::to_string(k), k);
  // Kept by the producer until the batch ends.
  CHECK(f.queues[0]->size() + f.queues[1]->size() == 0);
  w.endBatch();
  CHECK(f.queues[0]->size() + f.queues[1]->size() == 20);
  CHECK(w.stats().rowsOut.load() == 20);
  // A control message sent within a batch follows the records before it.
  w.beginBatch();
  for (int k = 20; k < 40; ++k) push(w, "key" + std::to_string(k), k);
  w.broadcast(ShuffleMessage::Kind::Barrier, 9);
  for (int k = 40; k < 60; ++k) push(w, "key" + std::to_string(k), k);
  w.onWatermark(500);
  for (int k = 60; k < 70; ++k) push(w, "key" + std::to_string(k), k);
  w.endBatch();
  // Outside a batch, a record goes at once.
  push(w, "key70", 70);
  auto out = f.drain();
  size_t records = 0;
  for (const auto& q : out) {
    int64_t last = -1;
    int controls = 0;
    for (const ShuffleMessage& m : q) {
      if (m.kind == ShuffleMessage::Kind::Record) {
        const int64_t v = m.row[1].asInt();
        CHECK(v > last);
        last = v;
        ++records;
        // Records 20..39 come before the barrier, 40..59 between it and the
        // watermark, the others after.
        if (v >= 20 && v < 40) CHECK(controls == 0);
        if (v >= 40 && v < 60) CHECK(controls == 1);
        if (v >= 60) CHECK(controls == 2);
        continue;
      }
      ++controls;
      CHECK(m.kind ==
            (controls == 1 ? ShuffleMessage::Kind::Barrier : ShuffleMessage::Kind::Watermark));
    }
    CHECK(controls == 2);
  }
  CHECK(records == 71);
  CHECK(w.stats().rowsOut.load() == 71);
}

TEST_CASE("a batch larger than kMaxBatch for one target is handed over in parts") {
  Fanout f(1);
  ShuffleWriter w = f.writer();
  w.beginBatch();
  const int n = static_cast<int>(ShuffleWriter::kMaxBatch) + 5;
  for (int k = 0; k < n; ++k) push(w, "key", k);
  CHECK(f.queues[0]->size() == ShuffleWriter::kMaxBatch);
  w.endBatch();
  auto out = f.drain();
  REQUIRE(out[0].size() == static_cast<size_t>(n));
  for (int k = 0; k < n; ++k) CHECK(out[0][static_cast<size_t>(k)].row[1].asInt() == k);
}

TEST_CASE("a batch larger than the queue waits for the consumer, which it wakes") {
  auto q = std::make_unique<ShuffleQueue>(4);
  std::atomic<bool> stopping{false};
  ShuffleWriter w({makeColumnRef(0, DataType::of(TypeId::String), "k")}, {q.get()}, 0, 0, stopping);
  const int n = 40;
  std::thread producer([&] {
    w.beginBatch();
    for (int k = 0; k < n; ++k) push(w, "key", k);
    w.endBatch();
  });
  std::vector<int64_t> got;
  std::deque<ShuffleMessage> out;
  while (got.size() < static_cast<size_t>(n)) {
    // Generous: a consumer that is never woken would still see them, late.
    if (!q->popAll(out, 10000)) continue;
    for (const ShuffleMessage& m : out) got.push_back(m.row[1].asInt());
    out.clear();
  }
  producer.join();
  for (int k = 0; k < n; ++k) CHECK(got[static_cast<size_t>(k)] == k);
}

TEST_CASE("a wake ends the consumer's wait, and a wake before the wait ends the next one") {
  ShuffleQueue q(16);
  std::deque<ShuffleMessage> out;
  // Woken while it waits: a wait of a minute returns without messages.
  auto waiting = std::async(std::launch::async, [&] { return q.popAll(out, 60'000); });
  // Wake until the wait has returned: whether the first wake comes before or
  // during the wait, it must end it.
  std::future_status status = std::future_status::timeout;
  for (int i = 0; i < 600 && status != std::future_status::ready; ++i) {
    q.wakeAll();
    status = waiting.wait_for(std::chrono::milliseconds(100));
  }
  REQUIRE(status == std::future_status::ready);
  CHECK_FALSE(waiting.get());
  CHECK(out.empty());
  // A wake that comes while nobody waits is kept for the next wait.
  q.wakeAll();
  CHECK_FALSE(q.popAll(out, 60'000));
  // ...once: the wait after that runs its course (a short one here).
  CHECK_FALSE(q.popAll(out, 1));
  // A wake does not hide messages: they are returned, and the wake is spent.
  std::atomic<bool> stopping{false};
  ShuffleMessage m;
  m.kind = ShuffleMessage::Kind::Watermark;
  m.value = 7;
  q.wakeAll();
  REQUIRE(q.push(std::move(m), stopping));
  CHECK(q.popAll(out, 60'000));
  REQUIRE(out.size() == 1);
  CHECK(out[0].value == 7);
  CHECK_FALSE(q.popAll(out, 1));
}
