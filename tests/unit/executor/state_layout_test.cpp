// The state key layouts of the stateful operators, pinned byte for byte.
// Checkpoints hold these bytes, so they are a file format: a checkpoint
// written by an earlier build must restore after a change to the operators.
// Each case builds the keys (and values where their layout is fixed-width)
// by hand from the layout documented at the top of the operator, compares
// them with what the operator wrote, and then has a new operator restore the
// same state and act on it. Runs on the in-memory table, whose map is the
// bytes RocksDB would hold under the operator's prefix. The stream join's
// layouts are pinned the same way in stream_join_test.cpp (interval join) and
// regular_join_test.cpp (regular join), next to their specs.
#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

#include "capture_operator.h"
#include "common/expr.h"
#include "common/row_codec.h"
#include "executor/operators/aggregate.h"
#include "executor/operators/dedup.h"
#include "executor/operators/over_aggregate.h"
#include "executor/operators/top_n.h"
#include "state_test_util.h"

using namespace rtsql;

namespace {

using testing::Capture;
using testing::MemBackend;

constexpr int64_t kSec = 1000 * 1000;

DataTypePtr bigint() {
  return DataType::of(TypeId::BigInt);
}
DataTypePtr str() {
  return DataType::of(TypeId::String);
}
DataTypePtr ts() {
  return DataType::of(TypeId::Timestamp);
}

std::string tag(char c) {
  return std::string(1, c);
}
std::string k(const Value& v) {
  std::string out;
  encodeKey(out, v);
  return out;
}
std::string t(int64_t v) {
  std::string out;
  encodeKeyInt(out, v);
  return out;
}
// Little-endian fixed-width integers, as the aggregates' values hold them.
std::string le(uint64_t v, int bytes) {
  std::string out;
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  return out;
}

// Aggregates: rows (k STRING, ts TIMESTAMP), GROUP BY k, count(*).
AggregateSpec aggregate(WindowSpec window = {}) {
  AggregateSpec s;
  s.id = 7;
  s.groupKeys = {makeColumnRef(0, str(), "k")};
  AggregateCall c;
  c.function = AggregateFunction::CountStar;
  c.resultType = bigint();
  s.aggregates = {c};
  s.window = std::move(window);
  return s;
}
void pushAt(Operator& op, const char* key, int64_t time) {
  Row r{Value::string(key), Value::timestamp(time)};
  op.push(r, RecordContext{});
}
// A window of `kind` on the rows' time column.
WindowSpec window(WindowKind kind) {
  WindowSpec w;
  w.kind = kind;
  w.time = makeColumnRef(1, ts(), "ts");
  return w;
}
// An aggregate over the backend's table that has taken rows (key, time).
OperatorPtr aggregateAfter(const AggregateSpec& s, MemBackend& b, Capture& out,
                           const std::vector<std::pair<const char*, int64_t>>& rows) {
  auto op = makeAggregate(s, b.table());
  op->setNext(&out);
  for (const auto& r : rows) pushAt(*op, r.first, r.second);
  return op;
}

}  // namespace

TEST_CASE("state layout: GROUP BY without a window keeps 'G' + group key -> accumulators") {
  MemBackend b;
  Capture first;
  aggregateAfter(aggregate(), b, first, {{"a", 0}, {"a", 0}, {"b", 0}});
  const std::map<std::string, std::string, std::less<>> want{
      {tag('G') + k(Value::string("a")), le(2, 8)},
      {tag('G') + k(Value::string("b")), le(1, 8)},
  };
  CHECK(b.storage->data == want);

  Capture out;
  aggregateAfter(aggregate(), b, out, {{"a", 0}});
  REQUIRE(out.rows.size() == 1);
  CHECK(out.rows[0][1] == Value::bigint(3));
}

TEST_CASE("state layout: tumbling windows keep 'W' + end + group key -> accumulators") {
  WindowSpec w = window(WindowKind::Tumbling);
  w.sizeMicros = 10 * kSec;
  w.slideMicros = 10 * kSec;
  MemBackend b;
  Capture first;
  aggregateAfter(aggregate(w), b, first, {{"a", 1 * kSec}, {"a", 2 * kSec}, {"a", 12 * kSec}});
  const std::map<std::string, std::string, std::less<>> want{
      {tag('W') + t(10 * kSec) + k(Value::string("a")), le(2, 8)},
      {tag('W') + t(20 * kSec) + k(Value::string("a")), le(1, 8)},
  };
  CHECK(b.storage->data == want);

  // A new operator on the state closes the restored window [0, 10s) and keeps
  // counting in [10s, 20s).
  Capture out;
  auto op = aggregateAfter(aggregate(w), b, out, {});
  op->onWatermark(10 * kSec);
  CHECK(b.storage->data.size() == 1);
  pushAt(*op, "a", 15 * kSec);
  REQUIRE(out.rows.size() == 1);
  CHECK(out.rows[0][2] == Value::bigint(2));
}

TEST_CASE(
    "state layout: session windows keep 'S' + group key -> sessions and 'T' + end + group key + "
    "start") {
  WindowSpec w = window(WindowKind::Session);
  w.gapMicros = 5 * kSec;
  MemBackend b;
  Capture first;
  aggregateAfter(aggregate(w), b, first, {{"a", 1 * kSec}, {"a", 20 * kSec}});
  const std::string a = k(Value::string("a"));
  // count (4), then per session start (8), end (8), payload length (4), payload.
  const std::string sessions = le(2, 4) + le(1 * kSec, 8) + le(6 * kSec, 8) + le(8, 4) + le(1, 8) +
                               le(20 * kSec, 8) + le(25 * kSec, 8) + le(8, 4) + le(1, 8);
  const std::map<std::string, std::string, std::less<>> want{
      {tag('S') + a, sessions},
      {tag('T') + t(6 * kSec) + a + t(1 * kSec), ""},
      {tag('T') + t(25 * kSec) + a + t(20 * kSec), ""},
  };
  CHECK(b.storage->data == want);

  // A new operator counts the restored sessions, closes the first and merges
  // a row into the second.
  Capture out;
  auto op = aggregateAfter(aggregate(w), b, out, {});
  CHECK(op->stats().numRowsTotal.load() == 2);
  op->onWatermark(10 * kSec);
  CHECK(op->stats().numRowsTotal.load() == 1);
  pushAt(*op, "a", 22 * kSec);
  REQUIRE(out.rows.size() == 1);
  CHECK(out.rows[0][1] ==
        Value::structure({Value::timestamp(20 * kSec), Value::timestamp(27 * kSec)}));
  CHECK(out.rows[0][2] == Value::bigint(2));
}

namespace {

// Dedup: rows (id BIGINT, t TIMESTAMP), DISTINCT ON (id).
DedupSpec dedup(bool withinWatermark) {
  DedupSpec s;
  s.id = 3;
  s.output.columns = {{"id", bigint()}, {"t", ts()}};
  s.dedupKeys = {makeColumnRef(0, bigint(), "id")};
  s.withinWatermark = withinWatermark;
  if (withinWatermark) s.eventTime = makeColumnRef(1, ts(), "t");
  return s;
}
void pushId(Operator& op, int64_t id, int64_t time) {
  Row r{Value::bigint(id), Value::timestamp(time)};
  op.push(r, RecordContext{});
}

}  // namespace

TEST_CASE("state layout: dedup keeps 'K' + key, and 'T' + time + key WITHIN WATERMARK") {
  MemBackend plain, within;
  {
    Capture out;
    auto p = makeDedup(dedup(false), plain.table());
    auto w = makeDedup(dedup(true), within.table());
    p->setNext(&out);
    w->setNext(&out);
    for (Operator* op : {p.get(), w.get()}) {
      pushId(*op, 1, 5);
      pushId(*op, 2, 7);
      pushId(*op, 1, 8);
    }
  }
  const std::string one = k(Value::bigint(1)), two = k(Value::bigint(2));
  const std::map<std::string, std::string, std::less<>> wantPlain{
      {tag('K') + one, ""},
      {tag('K') + two, ""},
  };
  CHECK(plain.storage->data == wantPlain);
  const std::map<std::string, std::string, std::less<>> wantWithin{
      {tag('K') + one, t(5)},
      {tag('K') + two, t(7)},
      {tag('T') + t(5) + one, ""},
      {tag('T') + t(7) + two, ""},
  };
  CHECK(within.storage->data == wantWithin);

  // Restored: key 2 is still a duplicate; after the watermark passes 5, key 1
  // is forgotten and passes again.
  auto op = makeDedup(dedup(true), within.table());
  Capture out;
  op->setNext(&out);
  pushId(*op, 2, 9);
  CHECK(out.rows.empty());
  op->onWatermark(5);
  CHECK(within.storage->data.size() == 2);
  pushId(*op, 1, 6);
  CHECK(out.rows.size() == 1);
}

namespace {

// TopN: rows (k BIGINT, p BIGINT), PARTITION BY k ORDER BY p DESC, top 2.
TopNSpec topN() {
  TopNSpec s;
  s.id = 4;
  s.output.columns = {{"k", bigint()}, {"p", bigint()}};
  s.partitionKeys = {makeColumnRef(0, bigint(), "k")};
  s.orderKeys = {makeColumnRef(1, bigint(), "p")};
  s.descending = {true};
  s.limit = 2;
  return s;
}
std::string inverted(std::string bytes) {
  for (char& c : bytes) c = static_cast<char>(~static_cast<unsigned char>(c));
  return bytes;
}
std::string rowBytes(const Row& row) {
  std::string out;
  encodeRow(out, row);
  return out;
}

}  // namespace

TEST_CASE("state layout: top-N keeps 'R' + key + time 0 + order bytes + seq, and 'S' + seq") {
  MemBackend backend;
  {
    Capture out;
    auto op = makeTopN(topN(), backend.table());
    op->setNext(&out);
    for (int64_t p : {10, 30, 20}) {  // 20 pushes 10 out of the top 2
      Row r{Value::bigint(1), Value::bigint(p)};
      op->push(r, RecordContext{});
    }
    op->onEpochEnd();
  }
  const std::string key = k(Value::bigint(1));
  const std::map<std::string, std::string, std::less<>> want{
      {tag('R') + key + t(0) + inverted(k(Value::bigint(30))) + t(1),
       rowBytes({Value::bigint(1), Value::bigint(30)})},
      {tag('R') + key + t(0) + inverted(k(Value::bigint(20))) + t(2),
       rowBytes({Value::bigint(1), Value::bigint(20)})},
      {tag('S'), t(3)},
  };
  CHECK(backend.storage->data == want);

  // Restored: 25 ranks between 30 and 20 and pushes 20 out.
  auto op = makeTopN(topN(), backend.table());
  Capture out;
  op->setNext(&out);
  Row r{Value::bigint(1), Value::bigint(25)};
  op->push(r, RecordContext{});
  REQUIRE(out.rows.size() == 2);
  CHECK(out.contexts[0].kind == RowKind::Delete);
  CHECK(out.rows[0] == Row{Value::bigint(1), Value::bigint(20)});
  CHECK(out.contexts[1].kind == RowKind::Insert);
  CHECK(out.rows[1] == Row{Value::bigint(1), Value::bigint(25)});
}

TEST_CASE("state layout: a RANK() top-N keeps its ties in the top-N layout, ranks not stored") {
  MemBackend backend;
  TopNSpec spec = topN();
  spec.function = TopNSpec::Function::Rank;
  const std::string key = k(Value::bigint(1));
  auto entry = [&](int64_t p, int64_t seq) {
    return std::pair{tag('R') + key + t(0) + inverted(k(Value::bigint(p))) + t(seq),
                     rowBytes({Value::bigint(1), Value::bigint(p)})};
  };
  {
    Capture out;
    auto op = makeTopN(spec, backend.table());
    op->setNext(&out);
    for (int64_t p : {10, 30, 10}) {  // the two 10s tie at rank 2: all three kept
      Row r{Value::bigint(1), Value::bigint(p)};
      op->push(r, RecordContext{});
    }
    op->onEpochEnd();
    const std::map<std::string, std::string, std::less<>> want{
        entry(10, 0), entry(30, 1), entry(10, 2), {tag('S'), t(3)}};
    CHECK(backend.storage->data == want);
  }
  // Restored: 40 ranks first, 30 second, and both 10s (rank 3) are dropped.
  auto op = makeTopN(spec, backend.table());
  Capture out;
  op->setNext(&out);
  Row r{Value::bigint(1), Value::bigint(40)};
  op->push(r, RecordContext{});
  REQUIRE(out.rows.size() == 3);
  CHECK(out.contexts[0].kind == RowKind::Delete);
  CHECK(out.contexts[1].kind == RowKind::Delete);
  CHECK(out.contexts[2].kind == RowKind::Insert);
  op->onEpochEnd();
  const std::map<std::string, std::string, std::less<>> want{
      entry(30, 1), entry(40, 3), {tag('S'), t(4)}};
  CHECK(backend.storage->data == want);
}

// Over a retracting input: rows (k STRING, ts TIMESTAMP, v BIGINT), GROUP BY k,
// count(*), sum(v), max(v), count(DISTINCT v).
TEST_CASE("state layout: a retracting GROUP BY adds the row count, 'M' and 'D' per value") {
  AggregateSpec s = aggregate();
  ExprPtr v = makeColumnRef(2, bigint(), "v");
  AggregateCall sum;
  sum.function = AggregateFunction::Sum;
  sum.arg = v;
  sum.resultType = bigint();
  AggregateCall max = sum;
  max.function = AggregateFunction::Max;
  AggregateCall distinct = sum;
  distinct.function = AggregateFunction::Count;
  distinct.distinct = true;
  s.aggregates.push_back(sum);
  s.aggregates.push_back(max);
  s.aggregates.push_back(distinct);
  s.input = ChangelogMode::Retract;
  s.changelog.mode = ChangelogMode::Retract;
  auto push = [](Operator& op, int64_t value, RowKind kind) {
    Row r{Value::string("a"), Value::timestamp(0), Value::bigint(value)};
    RecordContext ctx;
    ctx.kind = kind;
    op.push(r, ctx);
  };
  MemBackend b;
  Capture first;
  {
    auto op = makeAggregate(s, b.table());
    op->setNext(&first);
    push(*op, 7, RowKind::Insert);
    push(*op, 7, RowKind::Insert);
    push(*op, 9, RowKind::Insert);
    push(*op, 3, RowKind::Insert);
    push(*op, 3, RowKind::Delete);
  }
  const std::string g = k(Value::string("a"));
  auto encoded = [](int64_t x) {
    std::string out;
    encodeValue(out, Value::bigint(x));
    return out;
  };
  const std::map<std::string, std::string, std::less<>> want{
      // count(*) 3; sum: has, 23, 3 values; max: has, 9; count(DISTINCT): 2; rows: 3.
      {tag('G') + g, le(3, 8) + std::string(1, '\1') + le(23, 8) + le(3, 8) + std::string(1, '\1') +
                         encoded(9) + le(2, 8) + le(3, 8)},
      {tag('M') + g + t(2) + k(Value::bigint(7)), le(2, 8) + encoded(7)},
      {tag('M') + g + t(2) + k(Value::bigint(9)), le(1, 8) + encoded(9)},
      {tag('D') + g + t(3) + k(Value::bigint(7)), le(2, 8)},
      {tag('D') + g + t(3) + k(Value::bigint(9)), le(1, 8)},
  };
  CHECK(b.storage->data == want);

  // A new operator on the same state takes out the max and finds the next one.
  Capture out;
  auto op = makeAggregate(s, b.table());
  op->setNext(&out);
  push(*op, 9, RowKind::Delete);
  REQUIRE(out.rows.size() == 2);
  CHECK(out.contexts[1].kind == RowKind::UpdateAfter);
  CHECK(out.rows[1] == Row{Value::string("a"), Value::bigint(2), Value::bigint(14),
                           Value::bigint(7), Value::bigint(1)});
}

namespace {

// OverAggregate: rows (k BIGINT, p BIGINT, v BIGINT), PARTITION BY k ORDER BY
// p, sum(v) over 1 preceding row.
OverAggregateSpec overAggregate() {
  OverAggregateSpec s;
  s.id = 5;
  s.output.columns = {{"k", bigint()}, {"p", bigint()}, {"v", bigint()}, {"s", bigint()}};
  s.partitionKeys = {makeColumnRef(0, bigint(), "k")};
  s.orderKeys = {makeColumnRef(1, bigint(), "p")};
  s.descending = {false};
  s.precedingRows = 1;
  AggregateCall sum;
  sum.function = AggregateFunction::Sum;
  sum.arg = makeColumnRef(2, bigint(), "v");
  sum.resultType = bigint();
  s.aggregates = {sum};
  return s;
}

}  // namespace

TEST_CASE(
    "state layout: an OVER aggregate keeps 'R' + key + time 0 + order bytes + seq, 'S' + seq") {
  MemBackend backend;
  {
    Capture out;
    auto op = makeOverAggregate(overAggregate(), backend.table());
    op->setNext(&out);
    for (int64_t p : {10, 30, 20}) {
      Row r{Value::bigint(1), Value::bigint(p), Value::bigint(p / 10)};
      op->push(r, RecordContext{});
    }
    op->onEpochEnd();
  }
  const std::string key = k(Value::bigint(1));
  const std::map<std::string, std::string, std::less<>> want{
      {tag('R') + key + t(0) + k(Value::bigint(10)) + t(0),
       rowBytes({Value::bigint(1), Value::bigint(10), Value::bigint(1)})},
      {tag('R') + key + t(0) + k(Value::bigint(30)) + t(1),
       rowBytes({Value::bigint(1), Value::bigint(30), Value::bigint(3)})},
      {tag('R') + key + t(0) + k(Value::bigint(20)) + t(2),
       rowBytes({Value::bigint(1), Value::bigint(20), Value::bigint(2)})},
      {tag('S'), t(3)},
  };
  CHECK(backend.storage->data == want);

  // Restored: 25 lands between 20 and 30, whose frame becomes 25, 30.
  auto op = makeOverAggregate(overAggregate(), backend.table());
  Capture out;
  op->setNext(&out);
  Row r{Value::bigint(1), Value::bigint(25), Value::bigint(7)};
  op->push(r, RecordContext{});
  REQUIRE(out.rows.size() == 3);
  CHECK(out.contexts[0].kind == RowKind::UpdateBefore);
  CHECK(out.rows[0] ==
        Row{Value::bigint(1), Value::bigint(30), Value::bigint(3), Value::bigint(5)});
  CHECK(out.contexts[1].kind == RowKind::UpdateAfter);
  CHECK(out.rows[1] ==
        Row{Value::bigint(1), Value::bigint(30), Value::bigint(3), Value::bigint(10)});
  CHECK(out.contexts[2].kind == RowKind::Insert);
  CHECK(out.rows[2] ==
        Row{Value::bigint(1), Value::bigint(25), Value::bigint(7), Value::bigint(9)});
}
