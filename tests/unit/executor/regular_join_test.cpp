// Regular stream-stream join (no time bound): every pair of equal keys in
// either arrival order, rows kept without bound (the watermark drops nothing)
// unless a state TTL is set, outer sides' NULL rows emitted at once and
// retracted when a pair arrives (and emitted again when the last pair is
// retracted), retracted input rows retracting their pairs, the exact row
// kinds of each, a changelog source's retractions found without the hidden
// Kafka columns of their records, a model check over random changes of a FULL
// join, and the state layout pinned byte for byte.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "capture_operator.h"
#include "common/expr.h"
#include "common/row_codec.h"
#include "common/row_kind.h"
#include "executor/operators/stream_join.h"
#include "executor/state/state_store.h"
#include "state_test_util.h"

using namespace rtsql;

namespace {

using testing::Capture;
using testing::MemBackend;
using RocksBackend = testing::RocksBackend<5>;

DataTypePtr bigint() {
  return DataType::of(TypeId::BigInt);
}
DataTypePtr str() {
  return DataType::of(TypeId::String);
}
DataTypePtr ts() {
  return DataType::of(TypeId::Timestamp);
}
Value I(int64_t v) {
  return Value::bigint(v);
}
Value S(const char* v) {
  return Value::string(v);
}
Value T(int64_t v) {
  return Value::timestamp(v);
}
Value N() {
  return Value();
}

enum class Kind { Inner, Left, Right, Full };

// Left rows: (k BIGINT, lt TIMESTAMP, lv STRING); right rows: (k BIGINT, rt
// TIMESTAMP, rv STRING). A pair joins when the keys are equal, whatever the
// times.
StreamJoinSpec spec(Kind kind, ExprPtr residual = nullptr, int64_t ttl = 0) {
  StreamJoinSpec s;
  s.id = 6;
  s.output.columns = {{"k", bigint()}, {"lt", ts()}, {"lv", str()},
                      {"k", bigint()}, {"rt", ts()}, {"rv", str()}};
  s.leftKeys = {makeColumnRef(0, bigint(), "k")};
  s.rightKeys = {makeColumnRef(0, bigint(), "k")};
  s.leftTime = makeColumnRef(1, ts(), "lt");
  s.rightTime = makeColumnRef(1, ts(), "rt");
  s.leftWidth = 3;
  s.rightWidth = 3;
  s.unbounded = true;
  s.leftOuter = kind == Kind::Left || kind == Kind::Full;
  s.rightOuter = kind == Kind::Right || kind == Kind::Full;
  s.stateTtlMicros = ttl;
  s.residual = std::move(residual);
  return s;
}

template <typename Backend>
struct Fixture {
  explicit Fixture(const StreamJoinSpec& s, Backend* shared = nullptr)
      : backend(shared ? shared : &own), op(makeStreamJoin(s, backend->table())) {
    op->setNext(&out);
  }
  void left(Value k, int64_t t, const char* v, RowKind kind = RowKind::Insert) {
    Row r{std::move(k), T(t), S(v)};
    RecordContext ctx;
    ctx.kind = kind;
    op->push(r, ctx);
  }
  void right(Value k, int64_t t, const char* v, RowKind kind = RowKind::Insert) {
    Row r{std::move(k), T(t), S(v)};
    RecordContext ctx;
    ctx.kind = kind;
    op->pushRight(r, ctx);
  }
  // "+I 1 a x" for each output row: kind, key, left value, right value (NULL
  // as "-"), the times left out.
  std::vector<std::string> changes() const {
    std::vector<std::string> out;
    for (size_t i = 0; i < this->out.rows.size(); ++i) {
      const Row& r = this->out.rows[i];
      auto text = [](const Value& v) { return v.isNull() ? std::string("-") : v.toString(); };
      Value key = r[0].isNull() ? r[3] : r[0];
      out.push_back(std::string(rowKindSymbol(this->out.contexts[i].kind)) + " " + text(key) + " " +
                    text(r[2]) + " " + text(r[5]));
    }
    return out;
  }
  const OperatorStats& stats() const { return op->stats(); }
  Backend own;
  Backend* backend;
  OperatorPtr op;
  Capture out;
};

using V = std::vector<std::string>;

}  // namespace

#define BACKENDS MemBackend, RocksBackend

TEST_CASE_TEMPLATE("regular join pairs equal keys in either order and keeps every row", B,
                   BACKENDS) {
  Fixture<B> f(spec(Kind::Inner));
  f.left(I(1), 100, "a");
  f.right(I(1), 5, "x");  // long before the left row: no time bound
  f.right(I(2), 100, "y");
  f.left(I(1), 9000, "b");
  f.right(I(1), 1'000'000, "z");
  f.left(N(), 100, "null key");
  f.right(N(), 100, "null key");
  CHECK(f.changes() == V{"+I 1 a x", "+I 1 b x", "+I 1 a z", "+I 1 b z"});
  CHECK(f.out.rows[0] == Row{I(1), T(100), S("a"), I(1), T(5), S("x")});
  // NULL keys are neither joined nor kept.
  CHECK(f.stats().numRowsTotal == 5);
  // The watermark drops nothing.
  f.op->onWatermark(1'000'000'000);
  CHECK(f.stats().numRowsTotal == 5);
  CHECK(f.out.watermarks == std::vector<int64_t>{1'000'000'000});
  CHECK(f.stats().numRowsDroppedByWatermark == 0);
  // Rows below the watermark are not late: they still pair.
  f.left(I(2), 1, "c");
  CHECK(f.changes().back() == "+I 2 c y");
  f.op->onEpochEnd();
  CHECK(f.stats().numRowsTotal == 6);  // the saved sequence number is no row
}

TEST_CASE_TEMPLATE("regular join emits every pair of duplicate rows and applies the residual", B,
                   BACKENDS) {
  // rv <> 'no'
  auto residual =
      makeCall("<>", {makeColumnRef(5, str(), "rv"), makeLiteral(S("no"), str())}, SqlError::npos);
  Fixture<B> f(spec(Kind::Inner, residual));
  f.left(I(1), 100, "a");
  f.left(I(1), 100, "a");
  f.right(I(1), 100, "no");
  f.right(I(1), 100, "yes");
  CHECK(f.changes() == V{"+I 1 a yes", "+I 1 a yes"});
}

TEST_CASE_TEMPLATE("regular join retracts the pairs of a retracted input row", B, BACKENDS) {
  Fixture<B> f(spec(Kind::Inner));
  f.left(I(1), 100, "a");
  f.left(I(1), 100, "a");
  f.right(I(1), 200, "x");
  f.right(I(1), 300, "y");
  REQUIRE(f.changes().size() == 4);
  CHECK(f.stats().numRowsTotal == 4);
  // One of the two equal left rows goes: its two pairs are retracted.
  f.left(I(1), 100, "a", RowKind::UpdateBefore);
  CHECK(f.stats().numRowsTotal == 3);
  // The right row at 200 goes: one pair with the remaining left row.
  f.right(I(1), 200, "x", RowKind::Delete);
  // A row that was never kept retracts nothing (same key, other time or value).
  f.right(I(1), 201, "y", RowKind::Delete);
  f.left(I(1), 100, "other", RowKind::Delete);
  f.left(N(), 100, "a", RowKind::Delete);
  // An update's new row pairs as an insert.
  f.left(I(1), 100, "b", RowKind::UpdateAfter);
  V want{"+I 1 a x", "+I 1 a x", "+I 1 a y", "+I 1 a y",
         "-D 1 a x", "-D 1 a y", "-D 1 a x", "+I 1 b y"};
  CHECK(f.changes() == want);
  CHECK(f.stats().numRowsTotal == 3);
}

TEST_CASE_TEMPLATE("regular left join: the NULL row comes at once and is replaced by pairs", B,
                   BACKENDS) {
  Fixture<B> f(spec(Kind::Left));
  f.left(I(1), 100, "a");
  f.right(I(1), 100, "x");
  f.right(I(1), 100, "y");
  f.right(I(2), 100, "alone");  // right rows of a LEFT join never stand alone
  f.right(I(1), 100, "x", RowKind::Delete);
  f.right(I(1), 100, "y", RowKind::Delete);
  f.left(N(), 100, "null key");
  f.left(N(), 100, "null key", RowKind::Delete);
  f.left(I(1), 100, "a", RowKind::Delete);
  V want{"+I 1 a -", "-D 1 a -", "+I 1 a x",        "+I 1 a y",        "-D 1 a x",
         "-D 1 a y", "+I 1 a -", "+I - null key -", "-D - null key -", "-D 1 a -"};
  CHECK(f.changes() == want);
  CHECK(f.out.rows[0] == Row{I(1), T(100), S("a"), N(), N(), N()});
  CHECK(f.stats().numRowsTotal == 1);  // the right row of key 2
}

TEST_CASE_TEMPLATE("regular right and full joins keep the right side's rows", B, BACKENDS) {
  SUBCASE("right") {
    Fixture<B> f(spec(Kind::Right));
    f.right(I(1), 100, "x");
    f.left(I(1), 100, "a");
    f.left(I(2), 100, "alone");
    f.left(I(1), 100, "a", RowKind::Delete);
    V want{"+I 1 - x", "-D 1 - x", "+I 1 a x", "-D 1 a x", "+I 1 - x"};
    CHECK(f.changes() == want);
    CHECK(f.out.rows[0] == Row{N(), N(), N(), I(1), T(100), S("x")});
  }
  SUBCASE("full") {
    Fixture<B> f(spec(Kind::Full));
    f.right(I(1), 100, "x");
    f.left(I(1), 100, "a");
    f.left(I(2), 100, "b");
    f.right(I(1), 100, "y");
    f.right(I(1), 100, "x", RowKind::Delete);
    V want{"+I 1 - x", "-D 1 - x", "+I 1 a x", "+I 2 b -", "+I 1 a y", "-D 1 a x"};
    CHECK(f.changes() == want);
  }
}

TEST_CASE_TEMPLATE("regular join with a state TTL drops rows the watermark passed by the TTL", B,
                   BACKENDS) {
  Fixture<B> f(spec(Kind::Inner, nullptr, 1000));
  f.left(I(1), 100, "a");
  f.left(I(1), 500, "b");
  CHECK(f.stats().numRowsTotal == 2);
  f.op->onWatermark(1100);  // 100 + 1000 is not below 1100: kept
  CHECK(f.stats().numRowsTotal == 2);
  f.op->onWatermark(1101);
  CHECK(f.stats().numRowsTotal == 1);
  f.right(I(1), 2000, "x");
  CHECK(f.changes() == V{"+I 1 b x"});
  // A row the TTL already passed still pairs but is not kept.
  f.right(I(1), 50, "old");
  CHECK(f.changes() == V{"+I 1 b x", "+I 1 b old"});
  CHECK(f.stats().numRowsTotal == 2);
  f.op->onWatermark(5000);
  CHECK(f.stats().numRowsTotal == 0);
  f.left(I(1), 4500, "c");
  CHECK(f.changes().size() == 2);
}

TEST_CASE_TEMPLATE("regular join resumes from its state without reusing sequence numbers", B,
                   BACKENDS) {
  B backend;
  auto s = spec(Kind::Left);
  {
    Fixture<B> f(s, &backend);
    f.left(I(1), 100, "a");
    f.op->onEpochEnd();
  }
  Fixture<B> f(s, &backend);
  CHECK(f.stats().numRowsTotal == 1);
  f.left(I(1), 100, "a");  // same key, time and row: must not overwrite the first
  CHECK(f.stats().numRowsTotal == 2);
  f.right(I(1), 100, "x");
  CHECK(f.changes() == V{"+I 1 a -", "-D 1 a -", "+I 1 a x", "-D 1 a -", "+I 1 a x"});
}

// Random inserts and deletes on both sides of a FULL join (with a residual):
// the changes the operator emits, applied to a multiset, always give the full
// outer join of the rows currently live, computed by a nested loop.
TEST_CASE_TEMPLATE("regular full join's changes add up to the join of the live rows", B, BACKENDS) {
  // lv <> rv
  auto residual = makeCall("<>", {makeColumnRef(2, str(), "lv"), makeColumnRef(5, str(), "rv")},
                           SqlError::npos);
  Fixture<B> f(spec(Kind::Full, residual));
  std::mt19937 rng(7);
  const char* values[] = {"p", "q", "r"};
  std::vector<Row> lefts, rights;
  std::map<std::string, int> result;
  size_t applied = 0;
  auto rowText = [](const Row& r) {
    std::string s;
    for (const auto& v : r) s += (v.isNull() ? std::string("-") : v.toString()) + "|";
    return s;
  };
  int deletes = 0;
  for (int step = 0; step < 600; ++step) {
    bool isLeft = rng() % 2 == 0;
    std::vector<Row>& live = isLeft ? lefts : rights;
    RowKind kind = RowKind::Insert;
    Row row;
    if (!live.empty() && rng() % 3 == 0) {
      size_t at = rng() % live.size();
      row = live[at];
      live.erase(live.begin() + static_cast<long>(at));
      kind = rng() % 2 ? RowKind::Delete : RowKind::UpdateBefore;
      ++deletes;
    } else {
      int key = static_cast<int>(rng() % 5);
      row = Row{key == 4 ? N() : I(key), T(static_cast<int64_t>(rng() % 3)), S(values[rng() % 3])};
      live.push_back(row);
    }
    Row copy = row;
    RecordContext ctx;
    ctx.kind = kind;
    if (isLeft) {
      f.op->push(copy, ctx);
    } else {
      f.op->pushRight(copy, ctx);
    }
    for (; applied < f.out.rows.size(); ++applied) {
      int& n = result[rowText(f.out.rows[applied])];
      n += addsRow(f.out.contexts[applied].kind) ? 1 : -1;
      REQUIRE(n >= 0);
    }
    if (step % 20 != 19) continue;
    std::map<std::string, int> want;
    std::vector<int> rightMatched(rights.size(), 0);
    for (const Row& l : lefts) {
      bool any = false;
      for (size_t j = 0; j < rights.size(); ++j) {
        const Row& r = rights[j];
        if (l[0].isNull() || r[0].isNull() || !(l[0] == r[0]) || l[2] == r[2]) continue;
        any = true;
        rightMatched[j] = 1;
        ++want[rowText(Row{l[0], l[1], l[2], r[0], r[1], r[2]})];
      }
      if (!any) ++want[rowText(Row{l[0], l[1], l[2], N(), N(), N()})];
    }
    for (size_t j = 0; j < rights.size(); ++j) {
      const Row& r = rights[j];
      if (!rightMatched[j]) ++want[rowText(Row{N(), N(), N(), r[0], r[1], r[2]})];
    }
    std::erase_if(result, [](const auto& e) { return e.second == 0; });
    REQUIRE(result == want);
  }
  CHECK(deletes > 50);
  CHECK(f.out.rows.size() > 300);
}

// Rows of a changelog source carry the hidden Kafka columns of the record
// that brought them: a delete's _offset is the delete record's, not the
// insert's. Left rows (k, v, _offset), right rows (k, w, _offset), no times.
TEST_CASE_TEMPLATE("regular join retracts a changelog source's row whatever its record columns",
                   B, BACKENDS) {
  auto recordSpec = [](Kind kind, bool recordColumns) {
    StreamJoinSpec s;
    s.id = 7;
    s.output.columns = {{"k", bigint()},       {"v", str()}, {"_offset", bigint(), true},
                        {"k", bigint()},       {"w", str()}, {"_offset", bigint(), true}};
    s.leftKeys = {makeColumnRef(0, bigint(), "k")};
    s.rightKeys = {makeColumnRef(0, bigint(), "k")};
    s.leftWidth = 3;
    s.rightWidth = 3;
    s.unbounded = true;
    s.leftOuter = kind == Kind::Left || kind == Kind::Full;
    s.rightOuter = kind == Kind::Right || kind == Kind::Full;
    if (recordColumns) {
      s.leftRecordColumns = {2};
      s.rightRecordColumns = {2};
    }
    return s;
  };
  struct RecordFixture {
    explicit RecordFixture(const StreamJoinSpec& s) : op(makeStreamJoin(s, backend.table())) {
      op->setNext(&out);
    }
    void push(bool left, int64_t k, const char* v, int64_t offset, RowKind kind) {
      Row r{I(k), S(v), I(offset)};
      RecordContext ctx;
      ctx.kind = kind;
      if (left) {
        op->push(r, ctx);
      } else {
        op->pushRight(r, ctx);
      }
    }
    // "+I a 10 x 20": kind, then each side's value and offset ("-" for NULL).
    std::vector<std::string> changes() const {
      std::vector<std::string> got;
      auto text = [](const Value& v) { return v.isNull() ? std::string("-") : v.toString(); };
      for (size_t i = 0; i < out.rows.size(); ++i) {
        const Row& r = out.rows[i];
        got.push_back(std::string(rowKindSymbol(out.contexts[i].kind)) + " " + text(r[1]) + " " +
                      text(r[2]) + " " + text(r[4]) + " " + text(r[5]));
      }
      return got;
    }
    B backend;
    OperatorPtr op;
    Capture out;
  };

  SUBCASE("inner: the delete of either side retracts the pair as it was emitted") {
    RecordFixture f(recordSpec(Kind::Inner, true));
    f.push(true, 1, "a", 10, RowKind::Insert);
    f.push(false, 1, "x", 20, RowKind::Insert);
    f.push(true, 1, "a", 11, RowKind::Delete);
    f.push(true, 1, "b", 12, RowKind::Insert);
    // An update of the right row: its old row out, the new one in.
    f.push(false, 1, "x", 21, RowKind::UpdateBefore);
    f.push(false, 1, "y", 21, RowKind::UpdateAfter);
    CHECK(f.changes() == V{"+I a 10 x 20", "-D a 10 x 20", "+I b 12 x 20", "-D b 12 x 20",
                           "+I b 12 y 21"});
    CHECK(f.op->stats().numRowsTotal == 2);
  }
  SUBCASE("full: the NULL rows come back as the pairs go") {
    RecordFixture f(recordSpec(Kind::Full, true));
    f.push(true, 1, "a", 10, RowKind::Insert);
    f.push(false, 1, "x", 20, RowKind::Insert);
    f.push(false, 1, "x", 21, RowKind::Delete);
    f.push(true, 1, "a", 12, RowKind::Delete);
    CHECK(f.changes() == V{"+I a 10 - -", "-D a 10 - -", "+I a 10 x 20", "-D a 10 x 20",
                           "+I a 10 - -", "-D a 10 - -"});
    CHECK(f.op->stats().numRowsTotal == 0);
  }
  SUBCASE("without record columns every column is compared") {
    RecordFixture f(recordSpec(Kind::Inner, false));
    f.push(true, 1, "a", 10, RowKind::Insert);
    f.push(false, 1, "x", 20, RowKind::Insert);
    f.push(true, 1, "a", 11, RowKind::Delete);
    CHECK(f.changes() == V{"+I a 10 x 20"});
    f.push(true, 1, "a", 10, RowKind::Delete);
    CHECK(f.changes() == V{"+I a 10 x 20", "-D a 10 x 20"});
  }
}


// The state is a file format (checkpoints hold it): the keys and values below
// are built by hand from the layout documented in stream_join.cpp.
TEST_CASE("regular join state layout: rows by key then time, match counts on outer sides") {
  auto enc = [](auto encode, const auto& v) {
    std::string out;
    encode(out, v);
    return out;
  };
  auto k = [&](int64_t v) { return enc(encodeKey, I(v)); };
  auto t = [&](int64_t v) { return enc(encodeKeyInt, v); };
  auto row = [&](const Row& r) { return enc(encodeRow, r); };
  SUBCASE("left join: counts on the left rows only, no index without a TTL") {
    Fixture<MemBackend> f(spec(Kind::Left));
    f.left(I(1), 100, "a");
    f.left(I(2), 100, "b");
    f.right(I(1), 105, "x");
    f.op->onEpochEnd();
    const std::map<std::string, std::string, std::less<>> want{
        {"J" + k(1) + t(100) + t(0), t(1) + row({I(1), T(100), S("a")})},
        {"J" + k(2) + t(100) + t(1), t(0) + row({I(2), T(100), S("b")})},
        {"K" + k(1) + t(105) + t(2), row({I(1), T(105), S("x")})},
        {"S", t(3)},
    };
    CHECK(f.backend->storage->data == want);
    // Restored: the left row of key 1 has one pair, so retracting it brings
    // back the NULL row.
    Fixture<MemBackend> g(spec(Kind::Left), f.backend);
    g.right(I(1), 105, "x", RowKind::Delete);
    CHECK(g.changes() == V{"-D 1 a x", "+I 1 a -"});
    CHECK(f.backend->storage->data.at("J" + k(1) + t(100) + t(0)) ==
          t(0) + row({I(1), T(100), S("a")}));
  }
  SUBCASE("inner join with a TTL: plain rows and an index by time") {
    Fixture<MemBackend> f(spec(Kind::Inner, nullptr, 50));
    f.left(I(1), 100, "a");
    f.right(I(1), 120, "x");
    f.op->onEpochEnd();
    const std::map<std::string, std::string, std::less<>> want{
        {"J" + k(1) + t(100) + t(0), row({I(1), T(100), S("a")})},
        {"K" + k(1) + t(120) + t(1), row({I(1), T(120), S("x")})},
        {"j" + t(100) + t(0) + k(1), ""},
        {"k" + t(120) + t(1) + k(1), ""},
        {"S", t(2)},
    };
    CHECK(f.backend->storage->data == want);
    Fixture<MemBackend> g(spec(Kind::Inner, nullptr, 50), f.backend);
    g.op->onWatermark(151);  // 100 + 50 < 151 <= 120 + 50
    CHECK(f.backend->storage->data.count("J" + k(1) + t(100) + t(0)) == 0);
    CHECK(f.backend->storage->data.count("K" + k(1) + t(120) + t(1)) == 1);
  }
}
