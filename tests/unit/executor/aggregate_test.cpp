// The Aggregate operator (plain GROUP BY, tumbling, sliding and session
// windows): every update emitted in update mode, exact window boundaries,
// session merging, late rows, EMIT ON WINDOW CLOSE, state expiry and the state
// statistics. Runs against an in-memory StateTable so that the operator's own
// logic is tested in isolation, and the state-heavy cases again against the
// RocksDB store with a small cache, so that state lives mostly on disk.
#include <doctest/doctest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "common/expr.h"
#include "executor/operators/aggregate.h"
#include "capture_operator.h"
#include "tests/unit/executor/state_test_util.h"

using namespace rtsql;

namespace {

using testing::Capture;

constexpr int64_t kSec = 1000 * 1000;

// A StateTable over a std::map: the contract of state_store.h without RocksDB.
class MemoryTable final : public StateTable {
 public:
  bool get(std::string_view key, std::string& value) override {
    auto it = map_.find(std::string(key));
    if (it == map_.end()) return false;
    value = it->second;
    return true;
  }
  void put(std::string_view key, std::string_view value) override {
    auto [it, inserted] = map_.try_emplace(std::string(key));
    if (inserted) bytes_ += static_cast<int64_t>(key.size());
    bytes_ += static_cast<int64_t>(value.size()) - static_cast<int64_t>(it->second.size());
    it->second.assign(value);
    ++puts;
  }
  void erase(std::string_view key) override {
    auto it = map_.find(std::string(key));
    if (it == map_.end()) return;
    bytes_ -= static_cast<int64_t>(it->first.size() + it->second.size());
    map_.erase(it);
  }
  void scan(std::string_view from, std::string_view to,
            const std::function<bool(std::string_view, std::string_view)>& fn) override {
    ++scans;
    auto it = map_.lower_bound(std::string(from));
    while (it != map_.end() && it->first < to) {
      auto next = std::next(it);
      std::string key = it->first;  // fn may erase this entry
      if (!fn(key, it->second)) return;
      it = next;
    }
  }
  void flush() override { ++flushes; }
  uint64_t size() const override { return map_.size(); }
  int64_t memoryBytes() const override { return bytes_; }

  int flushes = 0;
  int puts = 0;
  int scans = 0;

 private:
  std::map<std::string, std::string> map_;
  int64_t bytes_ = 0;
};

// Input rows: k STRING, v INT, ts TIMESTAMP, d DOUBLE.
ExprPtr colK() { return makeColumnRef(0, DataType::of(TypeId::String), "k"); }
ExprPtr colV() { return makeColumnRef(1, DataType::of(TypeId::Int), "v"); }
ExprPtr colTs() { return makeColumnRef(2, DataType::of(TypeId::Timestamp), "ts"); }
ExprPtr colD() { return makeColumnRef(3, DataType::of(TypeId::Double), "d"); }

Row in(Value k, Value v, int64_t tsMicros = 0, Value d = Value()) {
  return {std::move(k), std::move(v), Value::timestamp(tsMicros), std::move(d)};
}
Value S(const char* s) { return Value::string(s); }
Value I(int64_t v) { return Value::bigint(v); }
Value D(double v) { return Value::float64(v); }
Value W(int64_t startMicros, int64_t endMicros) {
  return Value::structure({Value::timestamp(startMicros), Value::timestamp(endMicros)});
}

AggregateCall call(AggregateFunction f, ExprPtr arg, TypeId result) {
  AggregateCall c;
  c.function = f;
  c.arg = std::move(arg);
  c.resultType = DataType::of(result);
  return c;
}
AggregateCall countStar() { return call(AggregateFunction::CountStar, nullptr, TypeId::BigInt); }

AggregateSpec spec(std::vector<AggregateCall> calls, WindowSpec window = {}, bool emitOnClose = false) {
  AggregateSpec s;
  s.id = 7;
  s.groupKeys = {colK()};
  s.aggregates = std::move(calls);
  s.window = std::move(window);
  s.emitOnWindowClose = emitOnClose;
  return s;
}

WindowSpec tumbling(int64_t size) {
  WindowSpec w;
  w.kind = WindowKind::Tumbling;
  w.time = colTs();
  w.sizeMicros = size;
  w.slideMicros = size;
  return w;
}
WindowSpec sliding(int64_t size, int64_t slide) {
  WindowSpec w = tumbling(size);
  w.kind = WindowKind::Sliding;
  w.slideMicros = slide;
  return w;
}
WindowSpec session(int64_t gap) {
  WindowSpec w;
  w.kind = WindowKind::Session;
  w.time = colTs();
  w.gapMicros = gap;
  return w;
}

// Which StateTable a test runs against.
struct MemoryBackend {};
struct RocksBackend {};

// An aggregate wired to a Capture, with its state table kept visible.
struct Harness {
  Harness(const AggregateSpec& s, MemoryBackend = {}) {
    auto t = std::make_unique<MemoryTable>();
    table = t.get();
    anyTable = t.get();
    op = makeAggregate(s, std::move(t));
    op->setNext(&out);
  }
  // A small cache budget (256 KiB) makes large tests evict to RocksDB.
  Harness(const AggregateSpec& s, RocksBackend, int64_t cacheBytes = 256 * 1024) {
    dir = std::make_unique<testing::TempDir>("aggregate_test");
    StateStoreOptions o;
    o.path = dir->path.string();
    o.cacheBytes = cacheBytes;
    o.destroyOnClose = true;
    store = StateStore::open(o);
    auto t = store->table(s.id, 3);
    anyTable = t.get();
    op = makeAggregate(s, std::move(t));
    op->setNext(&out);
  }
  void push(Row row, int64_t sourceTs = 0, int64_t readMicros = 0) {
    RecordContext ctx{sourceTs, readMicros};
    op->push(row, ctx);
  }
  uint64_t total() const { return op->stats().numRowsTotal.load(); }
  uint64_t updated() const { return op->stats().numRowsUpdated.load(); }
  uint64_t dropped() const { return op->stats().numRowsDroppedByWatermark.load(); }

  // Declared in destruction order: the operator (and its table) go first.
  std::unique_ptr<testing::TempDir> dir;
  std::unique_ptr<StateStore> store;
  MemoryTable* table = nullptr;  // the in-memory table, when that is the backend
  StateTable* anyTable = nullptr;
  OperatorPtr op;
  Capture out;
};

void checkRow(const Row& actual, const Row& expected) {
  REQUIRE(actual.size() == expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    INFO("column " << i << ": got " << actual[i].toString() << ", want " << expected[i].toString());
    CHECK(actual[i].type() == expected[i].type());
    CHECK(actual[i] == expected[i]);
  }
}

}  // namespace

TEST_CASE("aggregate: count, sum, min, max, avg per key, every update emitted") {
  Harness h(spec({countStar(), call(AggregateFunction::Count, colV(), TypeId::BigInt),
                  call(AggregateFunction::Sum, colV(), TypeId::BigInt),
                  call(AggregateFunction::Min, colV(), TypeId::Int),
                  call(AggregateFunction::Max, colV(), TypeId::Int),
                  call(AggregateFunction::Avg, colV(), TypeId::Double)}));
  CHECK(h.op->name() == "Aggregate");
  CHECK(h.op->stateful());

  h.push(in(S("a"), Value::integer(1)));
  h.push(in(S("b"), Value::integer(5)));
  h.push(in(S("a"), Value()));  // NULL argument: counted by count(*) only
  h.push(in(S("a"), Value::integer(3)));
  h.push(in(Value(), Value::integer(7)));  // NULL key: its own group
  h.push(in(Value(), Value::integer(-2)));
  h.push(in(S("c"), Value()));  // a group with only NULL arguments

  REQUIRE(h.out.rows.size() == 7);
  checkRow(h.out.rows[0], {S("a"), I(1), I(1), I(1), Value::integer(1), Value::integer(1), D(1.0)});
  checkRow(h.out.rows[1], {S("b"), I(1), I(1), I(5), Value::integer(5), Value::integer(5), D(5.0)});
  checkRow(h.out.rows[2], {S("a"), I(2), I(1), I(1), Value::integer(1), Value::integer(1), D(1.0)});
  checkRow(h.out.rows[3], {S("a"), I(3), I(2), I(4), Value::integer(1), Value::integer(3), D(2.0)});
  checkRow(h.out.rows[4], {Value(), I(1), I(1), I(7), Value::integer(7), Value::integer(7), D(7.0)});
  checkRow(h.out.rows[5], {Value(), I(2), I(2), I(5), Value::integer(-2), Value::integer(7), D(2.5)});
  checkRow(h.out.rows[6], {S("c"), I(1), I(0), Value(), Value(), Value(), Value()});

  CHECK(h.op->stats().rowsIn.load() == 7);
  CHECK(h.op->stats().rowsOut.load() == 7);
  CHECK(h.total() == 4);
  CHECK(h.updated() == 7);
  CHECK(h.op->stats().memoryUsedBytes.load() == h.table->memoryBytes());
  CHECK(h.op->stats().memoryUsedBytes.load() > 0);
}

TEST_CASE("aggregate: update rows carry the input record's context") {
  Harness h(spec({countStar()}));
  h.push(in(S("a"), Value()), 111, 222);
  REQUIRE(h.out.contexts.size() == 1);
  CHECK(h.out.contexts[0].sourceTimestampMicros == 111);
  CHECK(h.out.contexts[0].readMicros == 222);
}

TEST_CASE("aggregate: sum and avg of doubles, min and max of strings, no group keys") {
  AggregateSpec s = spec({call(AggregateFunction::Sum, colD(), TypeId::Double),
                         call(AggregateFunction::Avg, colD(), TypeId::Double),
                         call(AggregateFunction::Min, colK(), TypeId::String),
                         call(AggregateFunction::Max, colK(), TypeId::String)});
  s.groupKeys.clear();  // a global aggregate: one group
  Harness h(s);
  h.push(in(S("m"), Value(), 0, D(1.5)));
  h.push(in(S("b"), Value(), 0, D(2.0)));
  h.push(in(Value(), Value(), 0, Value()));
  h.push(in(S("z"), Value(), 0, D(-0.5)));
  REQUIRE(h.out.rows.size() == 4);
  checkRow(h.out.rows[0], {D(1.5), D(1.5), S("m"), S("m")});
  checkRow(h.out.rows[1], {D(3.5), D(1.75), S("b"), S("m")});
  checkRow(h.out.rows[2], {D(3.5), D(1.75), S("b"), S("m")});
  checkRow(h.out.rows[3], {D(3.0), D(1.0), S("b"), S("z")});
  CHECK(h.total() == 1);
}

TEST_CASE("aggregate: integral sum of BIGINT arguments") {
  ExprPtr big = makeCast(colV(), DataType::of(TypeId::BigInt), SqlError::npos);
  Harness h(spec({call(AggregateFunction::Sum, big, TypeId::BigInt)}));
  h.push(in(S("a"), Value::integer(2000000000)));
  h.push(in(S("a"), Value::integer(2000000000)));
  REQUIRE(h.out.rows.size() == 2);
  checkRow(h.out.rows[1], {S("a"), I(4000000000LL)});
}

TEST_CASE_TEMPLATE("aggregate: tumbling windows with exact boundaries", B, MemoryBackend, RocksBackend) {
  Harness h(spec({countStar(), call(AggregateFunction::Sum, colV(), TypeId::BigInt)}, tumbling(10 * kSec)), B{});
  CHECK(h.op->name() == "WindowAggregate");
  h.push(in(S("a"), Value::integer(1), 0));
  h.push(in(S("a"), Value::integer(2), 10 * kSec - 1));
  h.push(in(S("a"), Value::integer(4), 10 * kSec));  // exactly the end: next window
  h.push(in(S("a"), Value::integer(8), -1));         // before the epoch
  h.push(in(S("b"), Value::integer(16), 25 * kSec));
  REQUIRE(h.out.rows.size() == 5);
  checkRow(h.out.rows[0], {S("a"), W(0, 10 * kSec), I(1), I(1)});
  checkRow(h.out.rows[1], {S("a"), W(0, 10 * kSec), I(2), I(3)});
  checkRow(h.out.rows[2], {S("a"), W(10 * kSec, 20 * kSec), I(1), I(4)});
  checkRow(h.out.rows[3], {S("a"), W(-10 * kSec, 0), I(1), I(8)});
  checkRow(h.out.rows[4], {S("b"), W(20 * kSec, 30 * kSec), I(1), I(16)});
  CHECK(h.total() == 4);
}

TEST_CASE("aggregate: a NULL event time drops the row") {
  Harness h(spec({countStar()}, tumbling(10 * kSec)));
  Row r = in(S("a"), Value());
  r[2] = Value();
  RecordContext ctx;
  h.op->push(r, ctx);
  CHECK(h.out.rows.empty());
  CHECK(h.total() == 0);
  CHECK(h.dropped() == 0);
}

TEST_CASE_TEMPLATE("aggregate: sliding windows put each row in size/slide windows", B, MemoryBackend, RocksBackend) {
  Harness h(spec({countStar()}, sliding(10 * kSec, 5 * kSec)), B{});
  h.push(in(S("a"), Value(), 7 * kSec));
  REQUIRE(h.out.rows.size() == 2);
  checkRow(h.out.rows[0], {S("a"), W(0, 10 * kSec), I(1)});
  checkRow(h.out.rows[1], {S("a"), W(5 * kSec, 15 * kSec), I(1)});
  h.push(in(S("a"), Value(), 5 * kSec));  // on a slide boundary
  REQUIRE(h.out.rows.size() == 4);
  checkRow(h.out.rows[2], {S("a"), W(0, 10 * kSec), I(2)});
  checkRow(h.out.rows[3], {S("a"), W(5 * kSec, 15 * kSec), I(2)});
  h.push(in(S("a"), Value(), 5 * kSec - 1));
  REQUIRE(h.out.rows.size() == 6);
  checkRow(h.out.rows[4], {S("a"), W(-5 * kSec, 5 * kSec), I(1)});
  checkRow(h.out.rows[5], {S("a"), W(0, 10 * kSec), I(3)});
  CHECK(h.total() == 3);
  CHECK(h.updated() == 6);

  Harness four(spec({countStar()}, sliding(60 * kSec, 15 * kSec)), B{});
  four.push(in(S("x"), Value(), 61 * kSec));
  REQUIRE(four.out.rows.size() == 4);
  checkRow(four.out.rows[0], {S("x"), W(15 * kSec, 75 * kSec), I(1)});
  checkRow(four.out.rows[3], {S("x"), W(60 * kSec, 120 * kSec), I(1)});
}

TEST_CASE_TEMPLATE("aggregate: session windows grow, stay apart at the gap, and merge on a bridging row", B, MemoryBackend, RocksBackend) {
  Harness h(spec({countStar(), call(AggregateFunction::Sum, colV(), TypeId::BigInt),
                  call(AggregateFunction::Min, colV(), TypeId::Int),
                  call(AggregateFunction::Max, colV(), TypeId::Int),
                  call(AggregateFunction::Avg, colV(), TypeId::Double)},
                 session(5 * kSec)),
            B{});
  CHECK(h.op->name() == "SessionWindowAggregate");
  h.push(in(S("a"), Value::integer(1), 0));
  checkRow(h.out.rows.back(), {S("a"), W(0, 5 * kSec), I(1), I(1), Value::integer(1), Value::integer(1), D(1)});
  h.push(in(S("a"), Value::integer(2), 3 * kSec));  // within the gap: extends the session
  checkRow(h.out.rows.back(), {S("a"), W(0, 8 * kSec), I(2), I(3), Value::integer(1), Value::integer(2), D(1.5)});
  h.push(in(S("a"), Value::integer(4), 8 * kSec));  // exactly at the end: a new session
  checkRow(h.out.rows.back(), {S("a"), W(8 * kSec, 13 * kSec), I(1), I(4), Value::integer(4), Value::integer(4), D(4)});
  h.push(in(S("b"), Value::integer(100), 1 * kSec));  // another key: its own sessions
  checkRow(h.out.rows.back(), {S("b"), W(1 * kSec, 6 * kSec), I(1), I(100), Value::integer(100), Value::integer(100), D(100)});
  h.push(in(S("a"), Value::integer(8), 20 * kSec));
  checkRow(h.out.rows.back(), {S("a"), W(20 * kSec, 25 * kSec), I(1), I(8), Value::integer(8), Value::integer(8), D(8)});
  CHECK(h.total() == 4);

  // A row at 16s reaches [16s, 21s): it overlaps [8s, 13s)? no (13 <= 16); it
  // overlaps [20s, 25s), which it extends backwards.
  h.push(in(S("a"), Value::integer(16), 16 * kSec));
  checkRow(h.out.rows.back(), {S("a"), W(16 * kSec, 25 * kSec), I(2), I(24), Value::integer(8), Value::integer(16), D(12)});
  CHECK(h.total() == 4);

  // A row at 12s reaches [12s, 17s): it overlaps both [8s, 13s) and [16s, 25s)
  // (but not [0s, 8s)), so it bridges them into one session.
  h.push(in(S("a"), Value::integer(32), 12 * kSec));
  checkRow(h.out.rows.back(), {S("a"), W(8 * kSec, 25 * kSec), I(4), I(60), Value::integer(4), Value::integer(32), D(15)});
  CHECK(h.total() == 3);  // a: [0,8) and [8,25); b: [1,6)

  // The merged session is one session from now on.
  h.push(in(S("a"), Value::integer(64), 24 * kSec));
  checkRow(h.out.rows.back(), {S("a"), W(8 * kSec, 29 * kSec), I(5), I(124), Value::integer(4), Value::integer(64), D(124.0 / 5)});
  CHECK(h.total() == 3);
  CHECK(h.out.rows.size() == 8);

  // The watermark closes sessions by their end: a's [0,8) and b's [1,6) at 8s.
  h.op->onWatermark(8 * kSec);
  CHECK(h.total() == 1);
  CHECK(h.out.rows.size() == 8);  // update mode emits nothing on close
  h.op->onWatermark(29 * kSec);
  CHECK(h.total() == 0);
  CHECK(h.anyTable->size() == 0);  // the time index went with the sessions
}

TEST_CASE_TEMPLATE("aggregate: late rows are dropped and counted", B, MemoryBackend, RocksBackend) {
  SUBCASE("tumbling") {
    Harness h(spec({countStar()}, tumbling(10 * kSec)), B{});
    h.op->onWatermark(10 * kSec);
    h.push(in(S("a"), Value(), 5 * kSec));  // window [0,10) ended at the watermark
    CHECK(h.out.rows.empty());
    CHECK(h.dropped() == 1);
    h.push(in(S("a"), Value(), 10 * kSec));
    REQUIRE(h.out.rows.size() == 1);
    checkRow(h.out.rows[0], {S("a"), W(10 * kSec, 20 * kSec), I(1)});
    CHECK(h.dropped() == 1);
  }
  SUBCASE("sliding: only closed windows are skipped") {
    Harness h(spec({countStar()}, sliding(10 * kSec, 5 * kSec)), B{});
    h.op->onWatermark(10 * kSec);
    h.push(in(S("a"), Value(), 7 * kSec));  // [0,10) closed, [5,15) open
    REQUIRE(h.out.rows.size() == 1);
    checkRow(h.out.rows[0], {S("a"), W(5 * kSec, 15 * kSec), I(1)});
    CHECK(h.dropped() == 0);
    h.push(in(S("a"), Value(), 4 * kSec));  // [-5,5) and [0,10) both closed
    CHECK(h.out.rows.size() == 1);
    CHECK(h.dropped() == 1);
  }
  SUBCASE("session") {
    Harness h(spec({countStar()}, session(5 * kSec)), B{});
    h.op->onWatermark(10 * kSec);
    h.push(in(S("a"), Value(), 5 * kSec));  // [5,10) ended at the watermark
    CHECK(h.out.rows.empty());
    CHECK(h.dropped() == 1);
    h.push(in(S("a"), Value(), 6 * kSec));
    REQUIRE(h.out.rows.size() == 1);
    checkRow(h.out.rows[0], {S("a"), W(6 * kSec, 11 * kSec), I(1)});
  }
  SUBCASE("the watermark never goes back") {
    Harness h(spec({countStar()}, tumbling(10 * kSec)), B{});
    h.op->onWatermark(20 * kSec);
    h.op->onWatermark(5 * kSec);
    h.push(in(S("a"), Value(), 15 * kSec));
    CHECK(h.dropped() == 1);
    CHECK(h.out.watermarks == std::vector<int64_t>{20 * kSec, 5 * kSec});
  }
}

TEST_CASE_TEMPLATE("aggregate: update mode drops window state when the watermark passes its end", B, MemoryBackend, RocksBackend) {
  Harness h(spec({countStar()}, tumbling(10 * kSec)), B{});
  h.push(in(S("a"), Value(), 1 * kSec));
  h.push(in(S("b"), Value(), 2 * kSec));
  h.push(in(S("a"), Value(), 11 * kSec));
  CHECK(h.total() == 3);
  h.op->onWatermark(10 * kSec - 1);
  CHECK(h.total() == 3);
  h.op->onWatermark(10 * kSec);
  CHECK(h.total() == 1);
  CHECK(h.out.rows.size() == 3);  // no rows on close in update mode
  CHECK(h.out.watermarks == std::vector<int64_t>{10 * kSec - 1, 10 * kSec});
  // The closed window is not brought back by a later (late) row.
  h.push(in(S("a"), Value(), 3 * kSec));
  CHECK(h.total() == 1);
  h.op->onWatermark(20 * kSec);
  CHECK(h.total() == 0);
  CHECK(h.anyTable->size() == 0);
}

TEST_CASE("aggregate: a watermark that closes no window does not scan the state") {
  Harness h(spec({countStar()}, tumbling(10 * kSec)));
  h.push(in(S("a"), Value(), 1 * kSec));
  h.push(in(S("b"), Value(), 12 * kSec));
  h.op->onWatermark(1 * kSec);  // the first one learns the windows in the state
  const int scans = h.table->scans;
  for (int i = 2; i < 10; ++i) h.op->onWatermark(i * kSec);
  CHECK(h.table->scans == scans);
  CHECK(h.total() == 2);
  h.op->onWatermark(10 * kSec);  // closes [0, 10)
  CHECK(h.table->scans == scans + 1);
  CHECK(h.total() == 1);
  h.op->onWatermark(15 * kSec);
  CHECK(h.table->scans == scans + 1);
  h.op->onWatermark(20 * kSec);  // closes [10, 20)
  CHECK(h.total() == 0);
}

TEST_CASE("aggregate: windows in restored state close although this operator never saw them open") {
  MemoryTable restored;
  const AggregateSpec windowed = spec({countStar()}, tumbling(10 * kSec));
  Capture out;
  RecordContext ctx;
  {
    // What an earlier run left in the state (a checkpoint's snapshot).
    auto table = std::make_unique<MemoryTable>();
    MemoryTable* t = table.get();
    OperatorPtr before = makeAggregate(windowed, std::move(table));
    before->setNext(&out);
    Row a = in(S("a"), Value(), 1 * kSec);
    before->push(a, ctx);
    Row b = in(S("b"), Value(), 25 * kSec);
    before->push(b, ctx);
    t->scan("", "\xff", [&](std::string_view k, std::string_view v) {
      restored.put(k, v);
      return true;
    });
  }
  auto table = std::make_unique<MemoryTable>(restored);
  MemoryTable* t = table.get();
  OperatorPtr after = makeAggregate(windowed, std::move(table));
  after->setNext(&out);
  CHECK(t->size() == 2);
  after->onWatermark(10 * kSec);
  CHECK(t->size() == 1);  // [0, 10) closed
  after->onWatermark(30 * kSec);
  CHECK(t->size() == 0);  // [20, 30) closed
}

TEST_CASE_TEMPLATE("aggregate: EMIT ON WINDOW CLOSE emits one final row per window", B, MemoryBackend, RocksBackend) {
  SUBCASE("tumbling") {
    Harness h(spec({countStar(), call(AggregateFunction::Max, colV(), TypeId::Int)}, tumbling(10 * kSec), true), B{});
    h.push(in(S("a"), Value::integer(1), 1 * kSec), 100, 101);
    h.push(in(S("b"), Value::integer(2), 2 * kSec), 200, 201);
    h.push(in(S("a"), Value::integer(3), 3 * kSec), 300, 301);
    h.push(in(Value(), Value::integer(5), 4 * kSec), 400, 401);
    h.push(in(S("a"), Value::integer(4), 12 * kSec), 500, 501);
    CHECK(h.out.rows.empty());  // nothing before the window closes
    CHECK(h.total() == 4);
    h.op->onWatermark(10 * kSec - 1);
    CHECK(h.out.rows.empty());
    h.op->onWatermark(10 * kSec);
    REQUIRE(h.out.rows.size() == 3);
    // In key order within a window end: NULL first.
    checkRow(h.out.rows[0], {Value(), W(0, 10 * kSec), I(1), Value::integer(5)});
    checkRow(h.out.rows[1], {S("a"), W(0, 10 * kSec), I(2), Value::integer(3)});
    checkRow(h.out.rows[2], {S("b"), W(0, 10 * kSec), I(1), Value::integer(2)});
    // Final rows carry the context of the last row that updated the window.
    CHECK(h.out.contexts[1].sourceTimestampMicros == 300);
    CHECK(h.out.contexts[1].readMicros == 301);
    CHECK(h.out.contexts[2].sourceTimestampMicros == 200);
    CHECK(h.total() == 1);
    h.op->onWatermark(10 * kSec);  // once only
    h.op->onWatermark(15 * kSec);
    CHECK(h.out.rows.size() == 3);
    h.op->onWatermark(20 * kSec);
    REQUIRE(h.out.rows.size() == 4);
    checkRow(h.out.rows[3], {S("a"), W(10 * kSec, 20 * kSec), I(1), Value::integer(4)});
    CHECK(h.total() == 0);
    CHECK(h.anyTable->size() == 0);
    CHECK(h.op->stats().rowsOut.load() == 4);
  }
  SUBCASE("sliding") {
    Harness h(spec({countStar()}, sliding(10 * kSec, 5 * kSec), true), B{});
    h.push(in(S("a"), Value(), 7 * kSec));
    h.push(in(S("a"), Value(), 8 * kSec));
    CHECK(h.out.rows.empty());
    h.op->onWatermark(100 * kSec);
    REQUIRE(h.out.rows.size() == 2);
    checkRow(h.out.rows[0], {S("a"), W(0, 10 * kSec), I(2)});
    checkRow(h.out.rows[1], {S("a"), W(5 * kSec, 15 * kSec), I(2)});
    CHECK(h.total() == 0);
  }
  SUBCASE("session, after a merge") {
    Harness h(spec({countStar(), call(AggregateFunction::Sum, colV(), TypeId::BigInt)}, session(5 * kSec), true), B{});
    h.push(in(S("a"), Value::integer(1), 0), 1, 1);
    h.push(in(S("a"), Value::integer(2), 8 * kSec), 2, 2);
    h.push(in(S("a"), Value::integer(4), 4 * kSec), 3, 3);  // [4,9) bridges [0,5) and [8,13)
    h.push(in(S("b"), Value::integer(8), 1 * kSec), 4, 4);
    CHECK(h.out.rows.empty());
    CHECK(h.total() == 2);
    h.op->onWatermark(6 * kSec);  // b's [1,6) closes
    REQUIRE(h.out.rows.size() == 1);
    checkRow(h.out.rows[0], {S("b"), W(1 * kSec, 6 * kSec), I(1), I(8)});
    h.op->onWatermark(13 * kSec - 1);
    CHECK(h.out.rows.size() == 1);
    h.op->onWatermark(13 * kSec);
    REQUIRE(h.out.rows.size() == 2);
    checkRow(h.out.rows[1], {S("a"), W(0, 13 * kSec), I(3), I(7)});
    CHECK(h.out.contexts[1].sourceTimestampMicros == 3);
    CHECK(h.total() == 0);
    CHECK(h.anyTable->size() == 0);
  }
}

TEST_CASE("aggregate: onEpochEnd flushes the state and restarts numRowsUpdated") {
  Harness h(spec({countStar()}));
  h.push(in(S("a"), Value()));
  h.push(in(S("a"), Value()));
  h.push(in(S("b"), Value()));
  CHECK(h.updated() == 3);
  CHECK(h.table->flushes == 0);
  h.op->onEpochEnd();
  CHECK(h.table->flushes == 1);
  CHECK(h.updated() == 0);
  CHECK(h.out.epochs == 1);
  CHECK(h.total() == 2);  // state survives the epoch
  h.push(in(S("a"), Value()));
  checkRow(h.out.rows.back(), {S("a"), I(3)});
  CHECK(h.updated() == 1);
}

TEST_CASE("aggregate: one state write per row and window") {
  Harness h(spec({countStar()}, sliding(30 * kSec, 10 * kSec)));
  h.push(in(S("a"), Value(), 15 * kSec));
  CHECK(h.table->puts == 3);
  Harness s(spec({countStar()}, session(5 * kSec)));
  s.push(in(S("a"), Value(), 0));
  s.push(in(S("a"), Value(), 0));  // same session, same end: only the session is rewritten
  CHECK(s.table->puts == 3);
}

TEST_CASE_TEMPLATE("aggregate: many keys stay correct", B, MemoryBackend, RocksBackend) {
  Harness h(spec({countStar(), call(AggregateFunction::Sum, colV(), TypeId::BigInt)}, tumbling(10 * kSec), true), B{});
  constexpr int kKeys = 100000;
  for (int round = 0; round < 2; ++round)
    for (int i = 0; i < kKeys; ++i)
      h.push(in(S(("key-" + std::to_string(i)).c_str()), Value::integer(i), round * kSec));
  CHECK(h.total() == kKeys);
  h.op->onWatermark(10 * kSec);
  REQUIRE(h.out.rows.size() == kKeys);
  bool allRight = true;
  for (const Row& r : h.out.rows) {
    const std::string& k = r[0].asString();
    int64_t i = std::stoll(k.substr(4));
    allRight = allRight && r[2] == I(2) && r[3] == I(2 * i);
  }
  CHECK(allRight);
  CHECK(h.total() == 0);
}

TEST_CASE("aggregate: many keys without a window, state mostly on disk") {
  Harness h(spec({countStar(), call(AggregateFunction::Max, colV(), TypeId::Int)}), RocksBackend{});
  constexpr int kKeys = 100000;
  for (int round = 0; round < 3; ++round)
    for (int i = 0; i < kKeys; ++i)
      h.push(in(S(("key-" + std::to_string(i)).c_str()), Value::integer(i * 10 + round)));
  CHECK(h.total() == kKeys);
  REQUIRE(h.out.rows.size() == 3 * kKeys);
  // The last round's rows: the third update of every key.
  bool allRight = true;
  for (size_t j = 2 * kKeys; j < h.out.rows.size(); ++j) {
    const Row& r = h.out.rows[j];
    int64_t i = std::stoll(r[0].asString().substr(4));
    allRight = allRight && r[1] == I(3) && r[2] == Value::integer(static_cast<int32_t>(i * 10 + 2));
  }
  CHECK(allRight);
  // The cache stayed near its budget: most groups live on disk.
  CHECK(h.op->stats().memoryUsedBytes.load() < 2 * 1024 * 1024);
}

TEST_CASE("aggregate: state flushed at an epoch end is what a new operator on the table sees") {
  testing::TempDir dir("aggregate_test");
  StateStoreOptions o;
  o.path = dir.path.string();
  auto store = StateStore::open(o);
  const AggregateSpec plain = spec({countStar()});
  AggregateSpec sessions = spec({countStar()}, session(5 * kSec), true);
  sessions.id = 8;
  Capture out;
  RecordContext ctx;
  {
    OperatorPtr a = makeAggregate(plain, store->table(plain.id, 0));
    OperatorPtr s = makeAggregate(sessions, store->table(sessions.id, 0));
    a->setNext(&out);
    s->setNext(&out);
    for (int i = 0; i < 3; ++i) {
      Row r = in(S("a"), Value(), i * kSec);
      a->push(r, ctx);
      Row r2 = in(S("a"), Value(), i * kSec);
      s->push(r2, ctx);
    }
    a->onEpochEnd();
    s->onEpochEnd();
    Row late = in(S("a"), Value(), 0);  // after the epoch: not flushed, so lost
    a->push(late, ctx);
  }
  OperatorPtr a = makeAggregate(plain, store->table(plain.id, 0));
  OperatorPtr s = makeAggregate(sessions, store->table(sessions.id, 0));
  a->setNext(&out);
  s->setNext(&out);
  CHECK(a->stats().numRowsTotal.load() == 1);
  CHECK(s->stats().numRowsTotal.load() == 1);
  out.rows.clear();
  Row r = in(S("a"), Value(), 0);
  a->push(r, ctx);
  REQUIRE(out.rows.size() == 1);
  checkRow(out.rows[0], {S("a"), I(4)});
  s->onWatermark(100 * kSec);
  REQUIRE(out.rows.size() == 2);
  checkRow(out.rows[1], {S("a"), W(0, 7 * kSec), I(3)});
  CHECK(s->stats().numRowsTotal.load() == 0);
}

namespace {

// A GROUP BY over (k, v, p) at the given types: count(*), sum(v), avg(v),
// count(DISTINCT v), sum(p), avg(p), with the result types the binder gives.
AggregateSpec typedSpec(TypeId integral, int precision) {
  auto intType = DataType::of(integral);
  auto decType = DataType::decimal(precision, 2);
  ExprPtr k = makeColumnRef(0, intType, "k");
  ExprPtr v = makeColumnRef(1, intType, "v");
  ExprPtr p = makeColumnRef(2, decType, "p");
  AggregateCall distinct = call(AggregateFunction::Count, v, TypeId::BigInt);
  distinct.distinct = true;
  AggregateCall sumP = call(AggregateFunction::Sum, p, TypeId::Decimal);
  sumP.resultType = DataType::decimal(precision + 10, 2);
  AggregateCall avgP = call(AggregateFunction::Avg, p, TypeId::Decimal);
  avgP.resultType = DataType::decimal(precision + 4, 6);
  AggregateSpec s = spec({countStar(), call(AggregateFunction::Sum, v, TypeId::BigInt),
                          call(AggregateFunction::Avg, v, TypeId::Double), distinct, sumP, avgP});
  s.groupKeys = {k};
  return s;
}

Value Dec(int64_t unscaled, int precision, int scale) {
  return Value::decimal(static_cast<Int128>(unscaled), precision, scale);
}

}  // namespace

// CREATE OR REPLACE FLOW keeps this state when the key and the arguments
// widen (planner/state_plan.cpp); the migration moves the entries with their
// bytes unchanged (executor/flow_state_migration.cpp), so the wide operator
// reading the narrow one's table is what the replaced flow restores.
TEST_CASE("aggregate: state written with INT and DECIMAL(5,2) reads exact as BIGINT and DECIMAL(9,2)") {
  testing::TempDir dir("aggregate_test");
  StateStoreOptions o;
  o.path = dir.path.string();
  auto store = StateStore::open(o);
  Capture out;
  RecordContext ctx;
  {
    OperatorPtr narrow = makeAggregate(typedSpec(TypeId::Int, 5), store->table(7, 0));
    narrow->setNext(&out);
    for (Row r : {Row{Value::integer(1), Value::integer(2000000000), Dec(12345, 5, 2)},
                  Row{Value::integer(1), Value::integer(2000000000), Dec(55, 5, 2)},
                  Row{Value::integer(2), Value::integer(-5), Dec(-100, 5, 2)}})
      narrow->push(r, ctx);
    REQUIRE(out.rows.size() == 3);
    checkRow(out.rows[1], {Value::integer(1), I(2), I(4000000000), D(2000000000.0), I(1),
                           Dec(12400, 15, 2), Dec(62000000, 9, 6)});
    narrow->onEpochEnd();
  }
  out.rows.clear();
  OperatorPtr wide = makeAggregate(typedSpec(TypeId::BigInt, 9), store->table(7, 0));
  wide->setNext(&out);
  CHECK(wide->stats().numRowsTotal.load() == 4);  // 2 groups, 2 distinct values of v
  for (Row r : {Row{I(1), I(5000000000), Dec(100000001, 9, 2)},
                Row{I(1), I(2000000000), Dec(0, 9, 2)}, Row{I(2), I(7), Dec(100, 9, 2)},
                Row{I(3000000000), I(1), Dec(1, 9, 2)}})
    wide->push(r, ctx);
  REQUIRE(out.rows.size() == 4);
  // 123.45 + 0.55 + 1000000.01 = 1000124.01; its average over 3 rows is
  // 333374.67; 2000000000 was counted once before the replace already.
  checkRow(out.rows[0], {I(1), I(3), I(9000000000), D(3000000000.0), I(2), Dec(100012401, 19, 2),
                         Dec(333374670000, 13, 6)});
  checkRow(out.rows[1], {I(1), I(4), I(11000000000), D(2750000000.0), I(2), Dec(100012401, 19, 2),
                         Dec(250031002500, 13, 6)});
  checkRow(out.rows[2], {I(2), I(2), I(2), D(1.0), I(2), Dec(0, 19, 2), Dec(0, 13, 6)});
  checkRow(out.rows[3], {I(3000000000), I(1), I(1), D(1.0), I(1), Dec(1, 19, 2), Dec(10000, 13, 6)});
  CHECK(wide->stats().numRowsTotal.load() == 8);  // 3 groups, 5 distinct values of v
}

TEST_CASE("aggregate: a DECIMAL sum of a group starts at zero, whatever group came before") {
  AggregateSpec s = typedSpec(TypeId::Int, 5);
  Harness h(s);
  h.push({Value::integer(1), Value::integer(1), Dec(12345, 5, 2)});
  h.push({Value::integer(2), Value::integer(1), Dec(100, 5, 2)});
  REQUIRE(h.out.rows.size() == 2);
  checkRow(h.out.rows[1], {Value::integer(2), I(1), I(1), D(1.0), I(1), Dec(100, 15, 2),
                           Dec(1000000, 9, 6)});
}
