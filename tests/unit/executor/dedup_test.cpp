// Dedup (DISTINCT ON): the first row per key passes and later ones are dropped;
// NULL keys are keys; WITHIN WATERMARK forgets keys as the watermark passes
// their event time, admits the key again afterwards, and drops late rows; a row
// without an event time is never late.
#include <doctest/doctest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <unistd.h>

#include <filesystem>

#include "common/expr.h"
#include "executor/operators/dedup.h"
#include "executor/state/state_store.h"
#include "state_test_util.h"
#include "capture_operator.h"

using namespace rtsql;

namespace {

using testing::Capture;

using testing::MemBackend;
using RocksBackend = testing::RocksBackend<3>;

DataTypePtr bigint() { return DataType::of(TypeId::BigInt); }
DataTypePtr str() { return DataType::of(TypeId::String); }
DataTypePtr ts() { return DataType::of(TypeId::Timestamp); }

// Rows are (id BIGINT, s STRING, t TIMESTAMP).
Row row(Value id, Value s, Value t = Value()) { return {std::move(id), std::move(s), std::move(t)}; }
Value I(int64_t v) { return Value::bigint(v); }
Value S(const char* v) { return Value::string(v); }
Value T(int64_t v) { return Value::timestamp(v); }

DedupSpec spec(std::vector<ExprPtr> keys, bool withinWatermark) {
  DedupSpec s;
  s.id = 3;
  s.output.columns = {{"id", bigint()}, {"s", str()}, {"t", ts()}};
  s.dedupKeys = std::move(keys);
  s.withinWatermark = withinWatermark;
  if (withinWatermark) s.eventTime = makeColumnRef(2, ts(), "t");
  return s;
}

template <typename Backend>
struct Fixture {
  Fixture(std::vector<ExprPtr> keys, bool within)
      : op(makeDedup(spec(std::move(keys), within), backend.table())) {
    op->setNext(&out);
  }
  void push(Row r) { op->push(r, RecordContext{}); }
  Backend backend;
  OperatorPtr op;
  Capture out;
};

}  // namespace

#define BACKENDS MemBackend, RocksBackend

TEST_CASE_TEMPLATE("dedup passes the first row per key and drops later ones", B, BACKENDS) {
  Fixture<B> f({makeColumnRef(0, bigint(), "id")}, false);
  CHECK(f.op->stateful());
  f.push(row(I(1), S("a")));
  f.push(row(I(2), S("b")));
  f.push(row(I(1), S("c")));
  f.push(row(I(2), S("d")));
  f.push(row(I(3), S("e")));
  REQUIRE(f.out.rows.size() == 3);
  CHECK(f.out.rows[0] == row(I(1), S("a")));
  CHECK(f.out.rows[1] == row(I(2), S("b")));
  CHECK(f.out.rows[2] == row(I(3), S("e")));
  const auto& st = f.op->stats();
  CHECK(st.rowsIn == 5);
  CHECK(st.rowsOut == 3);
  CHECK(st.numRowsTotal == 3);
  CHECK(st.numRowsUpdated == 3);
  CHECK(st.memoryUsedBytes > 0);

  // Without WITHIN WATERMARK keys are kept forever and no row is late.
  f.op->onWatermark(1'000'000);
  CHECK(f.out.watermarks == std::vector<int64_t>{1'000'000});
  f.push(row(I(1), S("f"), T(5)));
  CHECK(f.out.rows.size() == 3);
  CHECK(st.numRowsTotal == 3);
  CHECK(st.numRowsDroppedByWatermark == 0);

  f.op->onEpochEnd();
  if (f.backend.flushes() >= 0) CHECK(f.backend.flushes() == 1);
  CHECK(f.out.epochs == 1);
  CHECK(st.numRowsUpdated == 0);
  f.push(row(I(4), S("g")));
  CHECK(st.numRowsUpdated == 1);
  CHECK(st.numRowsTotal == 4);
}

TEST_CASE_TEMPLATE("dedup treats NULL key values as equal to each other", B, BACKENDS) {
  Fixture<B> f({makeColumnRef(0, bigint(), "id"), makeColumnRef(1, str(), "s")}, false);
  f.push(row(Value(), S("a")));
  f.push(row(Value(), S("a")));
  f.push(row(Value(), Value()));
  f.push(row(Value(), Value()));
  f.push(row(I(1), Value()));
  f.push(row(I(1), S("a")));
  f.push(row(I(1), Value()));
  REQUIRE(f.out.rows.size() == 4);
  CHECK(f.out.rows[0] == row(Value(), S("a")));
  CHECK(f.out.rows[1] == row(Value(), Value()));
  CHECK(f.out.rows[2] == row(I(1), Value()));
  CHECK(f.out.rows[3] == row(I(1), S("a")));
  CHECK(f.op->stats().numRowsTotal == 4);
}

TEST_CASE_TEMPLATE("dedup keeps the state of a previous run (same state table)", B, BACKENDS) {
  B backend;
  Capture out1, out2;
  auto s = spec({makeColumnRef(0, bigint(), "id")}, false);
  {
    auto op = makeDedup(s, backend.table());
    op->setNext(&out1);
    Row r = row(I(7), S("a"));
    op->push(r, {});
    op->onEpochEnd();
  }
  auto op = makeDedup(s, backend.table());
  op->setNext(&out2);
  CHECK(op->stats().numRowsTotal == 1);
  Row r = row(I(7), S("b"));
  op->push(r, {});
  CHECK(out2.rows.empty());
}

TEST_CASE_TEMPLATE("dedup within watermark forgets keys once the watermark reaches their time", B, BACKENDS) {
  Fixture<B> f({makeColumnRef(0, bigint(), "id")}, true);
  const auto& st = f.op->stats();
  f.push(row(I(1), S("a"), T(100)));
  f.push(row(I(2), S("b"), T(200)));
  f.push(row(I(1), S("c"), T(150)));  // duplicate, dropped (not late)
  REQUIRE(f.out.rows.size() == 2);
  CHECK(st.numRowsTotal == 2);
  CHECK(st.numRowsDroppedByWatermark == 0);

  f.op->onWatermark(99);  // below key 1's time: still remembered
  CHECK(st.numRowsTotal == 2);
  f.push(row(I(1), S("d"), T(120)));
  CHECK(f.out.rows.size() == 2);

  f.op->onWatermark(100);  // reaches key 1's time (100): forgotten
  CHECK(st.numRowsTotal == 1);
  CHECK(f.out.watermarks == std::vector<int64_t>{99, 100});
  f.push(row(I(1), S("e"), T(130)));  // admitted again
  REQUIRE(f.out.rows.size() == 3);
  CHECK(f.out.rows[2] == row(I(1), S("e"), T(130)));
  CHECK(st.numRowsTotal == 2);
  f.push(row(I(2), S("f"), T(300)));  // key 2 (time 200) is still remembered
  CHECK(f.out.rows.size() == 3);

  // A late row (time below the watermark) is dropped.
  f.push(row(I(9), S("g"), T(99)));
  CHECK(f.out.rows.size() == 3);
  CHECK(st.numRowsDroppedByWatermark == 1);
  // A row exactly at the watermark is on time.
  f.push(row(I(9), S("i"), T(100)));
  CHECK(f.out.rows.size() == 4);

  f.op->onWatermark(1000);
  CHECK(st.numRowsTotal == 0);
  // A lower watermark never brings keys back or moves it backwards.
  f.op->onWatermark(500);
  f.push(row(I(2), S("j"), T(600)));
  CHECK(f.out.rows.size() == 4);
  CHECK(st.numRowsDroppedByWatermark == 2);
}

TEST_CASE_TEMPLATE("dedup within watermark passes rows without an event time, deduplicated by key", B,
                   BACKENDS) {
  // Spark's dropDuplicatesWithinWatermark: a NULL event time is never late,
  // the key is checked against the state as usual, and the key is remembered
  // only until the next state cleanup (the watermark's next move).
  Fixture<B> f({makeColumnRef(0, bigint(), "id")}, true);
  const auto& st = f.op->stats();
  f.push(row(I(1), S("a"), Value()));  // no watermark yet: passes
  f.push(row(I(1), S("b"), Value()));  // same key: a duplicate
  f.push(row(I(2), S("c"), T(500)));
  f.push(row(I(2), S("d"), Value()));  // key 2 is in state: a duplicate
  REQUIRE(f.out.rows.size() == 2);
  CHECK(f.out.rows[0] == row(I(1), S("a"), Value()));
  CHECK(st.numRowsDroppedByWatermark == 0);

  f.op->onWatermark(400);  // far past any time: NULL's key 1 is forgotten, key 2 (500) is not
  CHECK(st.numRowsTotal == 1);
  f.push(row(I(3), S("e"), Value()));  // a watermark exists: still never late
  f.push(row(I(1), S("f"), Value()));  // key 1 again, after it was forgotten
  f.push(row(I(3), S("g"), Value()));  // a duplicate until the watermark moves
  f.push(row(I(2), S("h"), Value()));  // key 2 still remembered
  REQUIRE(f.out.rows.size() == 4);
  CHECK(f.out.rows[2] == row(I(3), S("e"), Value()));
  CHECK(f.out.rows[3] == row(I(1), S("f"), Value()));
  CHECK(st.numRowsDroppedByWatermark == 0);
  f.op->onWatermark(401);
  CHECK(st.numRowsTotal == 1);
  f.push(row(I(3), S("i"), Value()));
  CHECK(f.out.rows.size() == 5);
}

TEST_CASE_TEMPLATE("dedup holds many keys (more than the RocksDB cache)", B, BACKENDS) {
  Fixture<B> f({makeColumnRef(0, bigint(), "id")}, true);
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < 1000; ++i) f.push(row(I(i), S("x"), T(1000 + i)));
    if (round == 0) f.op->onEpochEnd();
  }
  CHECK(f.out.rows.size() == 1000);
  CHECK(f.op->stats().numRowsTotal == 1000);
  f.op->onWatermark(1499);  // forgets the keys with times 1000..1499
  CHECK(f.op->stats().numRowsTotal == 500);
  for (int i = 0; i < 1000; ++i) f.push(row(I(i), S("y"), T(2000)));
  CHECK(f.out.rows.size() == 1500);
  CHECK(f.out.rows[1000] == row(I(0), S("y"), T(2000)));
}
