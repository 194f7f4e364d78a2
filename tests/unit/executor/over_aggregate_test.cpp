// OverAggregate (agg(x) OVER (PARTITION BY k ORDER BY p ROWS BETWEEN n
// PRECEDING AND CURRENT ROW)): the exact changes it emits when a row arrives
// in order, lands before kept rows, ties with one, or is retracted; each
// aggregate function over frames with NULLs; UNBOUNDED PRECEDING; that
// applying its changelog always gives the brute-force frame aggregates of the
// rows so far (random inserts and retractions); and that its state survives a
// restart.
#include "executor/operators/over_aggregate.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "capture_operator.h"
#include "common/expr.h"
#include "state_test_util.h"

using namespace rtsql;

namespace {

using testing::Capture;
using testing::MemBackend;
using RocksBackend = testing::RocksBackend<11>;

DataTypePtr bigint() {
  return DataType::of(TypeId::BigInt);
}
Value I(int64_t v) {
  return Value::bigint(v);
}

AggregateCall call(AggregateFunction f) {
  AggregateCall c;
  c.function = f;
  if (f != AggregateFunction::CountStar) c.arg = makeColumnRef(2, bigint(), "v");
  c.resultType = f == AggregateFunction::Avg ? DataType::of(TypeId::Double) : bigint();
  return c;
}

// Rows are (k BIGINT, p BIGINT, v BIGINT); PARTITION BY k ORDER BY p.
OverAggregateSpec spec(int64_t preceding, std::vector<AggregateFunction> fs, bool desc = false,
                       bool retracting = false) {
  OverAggregateSpec s;
  s.id = 11;
  s.output.columns = {{"k", bigint()}, {"p", bigint()}, {"v", bigint()}};
  s.partitionKeys = {makeColumnRef(0, bigint(), "k")};
  s.orderKeys = {makeColumnRef(1, bigint(), "p")};
  s.descending = {desc};
  s.precedingRows = preceding;
  for (AggregateFunction f : fs) {
    s.aggregates.push_back(call(f));
    s.output.columns.push_back(
        {"a" + std::to_string(s.aggregates.size()), s.aggregates.back().resultType});
  }
  s.input = retracting ? ChangelogMode::Retract : ChangelogMode::Append;
  return s;
}

template <typename Backend = MemBackend>
struct Fixture {
  explicit Fixture(const OverAggregateSpec& s) : op(makeOverAggregate(s, backend.table())) {
    op->setNext(&out);
  }
  void push(int64_t k, int64_t p, Value v, RowKind kind = RowKind::Insert) {
    Row r{I(k), I(p), std::move(v)};
    RecordContext ctx;
    ctx.kind = kind;
    op->push(r, ctx);
  }
  // The changes emitted since the last call, as "+I 1 10 5 5".
  std::vector<std::string> changes() {
    std::vector<std::string> got;
    for (size_t i = seen; i < out.rows.size(); ++i) {
      std::string line = rowKindSymbol(out.contexts[i].kind);
      for (const Value& v : out.rows[i]) line += " " + v.toString();
      got.push_back(line);
    }
    seen = out.rows.size();
    return got;
  }
  Backend backend;
  OperatorPtr op;
  Capture out;
  size_t seen = 0;
};

using Lines = std::vector<std::string>;
constexpr auto kSum = AggregateFunction::Sum;

}  // namespace

TEST_CASE("over 1 preceding row: in-order rows, a row landing between, a retraction") {
  Fixture f(spec(1, {kSum}, false, true));
  CHECK(f.op->stateful());
  f.push(1, 10, I(5));
  CHECK(f.changes() == Lines{"+I 1 10 5 5"});
  f.push(1, 20, I(7));  // frame: 10, 20
  CHECK(f.changes() == Lines{"+I 1 20 7 12"});
  f.push(1, 15, I(1));  // lands between: 20's frame is now 15, 20
  CHECK(f.changes() == Lines{"-U 1 20 7 12", "+U 1 20 7 8", "+I 1 15 1 6"});
  f.push(2, 1, I(3));  // another key has its own frames
  CHECK(f.changes() == Lines{"+I 2 1 3 3"});
  f.push(1, 10, I(5), RowKind::Delete);  // 15's frame loses it; 20's never held it
  CHECK(f.changes() == Lines{"-D 1 10 5 5", "-U 1 15 1 6", "+U 1 15 1 1"});
  f.push(1, 99, I(0), RowKind::Delete);  // never kept: nothing
  f.push(1, 15, I(2), RowKind::Delete);  // same order key, other values: not kept either
  CHECK(f.changes().empty());
  CHECK(f.op->stats().numRowsTotal == 3);
  CHECK(f.op->stats().rowsIn == 7);
}

TEST_CASE("over aggregates: sum, count, avg, min, max and count(*) skip NULL as GROUP BY does") {
  Fixture f(spec(2, {kSum, AggregateFunction::Count, AggregateFunction::Avg, AggregateFunction::Min,
                     AggregateFunction::Max, AggregateFunction::CountStar}));
  f.push(1, 1, I(4));
  f.push(1, 2, Value());
  f.push(1, 3, I(2));
  f.push(1, 4, I(8));     // frame: NULL, 2, 8
  f.push(2, 1, Value());  // only NULL: sum, avg, min, max are NULL, count 0
  CHECK(f.changes() == Lines{"+I 1 1 4 4 1 4.0 4 4 1", "+I 1 2 NULL 4 1 4.0 4 4 2",
                             "+I 1 3 2 6 2 3.0 2 4 3", "+I 1 4 8 10 2 5.0 2 8 3",
                             "+I 2 1 NULL NULL 0 NULL NULL NULL 1"});
}

TEST_CASE("over: equal order keys are framed by arrival") {
  Fixture f(spec(1, {kSum}));
  f.push(1, 10, I(1));
  f.push(1, 10, I(2));  // after the first
  f.push(1, 10, I(4));  // after both: its frame is the second and itself
  CHECK(f.changes() == Lines{"+I 1 10 1 1", "+I 1 10 2 3", "+I 1 10 4 6"});
}

TEST_CASE("over UNBOUNDED PRECEDING: a running aggregate; an early row updates every later one") {
  Fixture f(spec(-1, {kSum}));
  f.push(1, 2, I(5));
  f.push(1, 3, I(1));
  CHECK(f.changes() == Lines{"+I 1 2 5 5", "+I 1 3 1 6"});
  f.push(1, 1, I(10));
  CHECK(f.changes() ==
        Lines{"-U 1 2 5 5", "+U 1 2 5 15", "-U 1 3 1 6", "+U 1 3 1 16", "+I 1 1 10 10"});
}

TEST_CASE("over ORDER BY ... DESC frames the later order keys first") {
  Fixture f(spec(1, {kSum}, true));
  f.push(1, 10, I(1));
  f.push(1, 20, I(2));  // comes before 10, which now frames 20 and itself
  CHECK(f.changes() == Lines{"+I 1 10 1 1", "-U 1 10 1 1", "+U 1 10 1 3", "+I 1 20 2 2"});
}

TEST_CASE("over: a row whose aggregate does not change is not updated") {
  Fixture f(spec(1, {AggregateFunction::Max}));
  f.push(1, 1, I(9));
  f.push(1, 3, I(9));
  f.push(1, 2, I(1));  // 3's frame is now 2, 3: max still 9
  CHECK(f.changes() == Lines{"+I 1 1 9 9", "+I 1 3 9 9", "+I 1 2 1 9"});
}

TEST_CASE("over 0 preceding rows: each row's frame is itself") {
  Fixture f(spec(0, {AggregateFunction::CountStar}));
  f.push(1, 5, I(1));
  f.push(1, 1, I(1));
  CHECK(f.changes() == Lines{"+I 1 5 1 1", "+I 1 1 1 1"});
}

TEST_CASE_TEMPLATE("over keeps its rows and arrival order across a restart", B, MemBackend,
                   RocksBackend) {
  B backend;
  Capture out1, out2;
  {
    auto op = makeOverAggregate(spec(1, {kSum}), backend.table());
    op->setNext(&out1);
    Row a{I(1), I(10), I(5)};
    op->push(a, {});
    op->onEpochEnd();
  }
  auto op = makeOverAggregate(spec(1, {kSum}), backend.table());
  op->setNext(&out2);
  CHECK(op->stats().numRowsTotal == 1);
  Row b{I(1), I(10), I(7)};  // ties with a: after it, after the restart too
  op->push(b, {});
  REQUIRE(out2.rows.size() == 1);
  CHECK(out2.rows[0] == Row{I(1), I(10), I(7), I(12)});
  CHECK(out2.contexts[0].kind == RowKind::Insert);
}

// Random inserts (in and out of order) and retractions of kept rows: applying
// the changelog (delete/update-before remove the row, insert/update-after add
// it) always gives, for every kept row, the aggregates over its frame counted
// by brute force.
TEST_CASE("over changelog applied equals the brute-force frames on random input") {
  for (bool retracting : {false, true}) {
    for (int64_t preceding : {0, 2, 5, -1}) {
      CAPTURE(retracting);
      CAPTURE(preceding);
      Fixture f(spec(preceding,
                     {kSum, AggregateFunction::Avg, AggregateFunction::Min, AggregateFunction::Max,
                      AggregateFunction::CountStar},
                     preceding == 5, retracting));
      const bool desc = preceding == 5;
      std::mt19937 rng(7 + static_cast<int>(preceding) + (retracting ? 100 : 0));
      struct In {
        int64_t k, p;
        Value v;
        int64_t seq;
      };
      std::vector<In> live;
      std::multiset<std::string> applied;
      int64_t seq = 0;
      for (int step = 0; step < 400; ++step) {
        if (retracting && !live.empty() && rng() % 3 == 0) {
          size_t i = rng() % live.size();
          In gone = live[i];
          // A retraction names a row by its values: of equal rows, the
          // operator takes out the earliest, which the model does too.
          for (size_t j = 0; j < live.size(); ++j) {
            if (live[j].k == gone.k && live[j].p == gone.p && live[j].v.compare(gone.v) == 0 &&
                live[j].v.isNull() == gone.v.isNull()) {
              i = j;
              break;
            }
          }
          live.erase(live.begin() + static_cast<long>(i));
          f.push(gone.k, gone.p, gone.v, rng() % 2 ? RowKind::Delete : RowKind::UpdateBefore);
        } else {
          Value v = rng() % 6 == 0 ? Value() : I(static_cast<int64_t>(rng() % 20) - 5);
          In in{static_cast<int64_t>(rng() % 3), static_cast<int64_t>(rng() % 10), v, seq++};
          live.push_back(in);
          f.push(in.k, in.p, in.v, rng() % 2 ? RowKind::Insert : RowKind::UpdateAfter);
        }
        for (size_t i = f.seen; i < f.out.rows.size(); ++i) {
          std::string line;
          for (const Value& v : f.out.rows[i]) line += v.toString() + " ";
          if (retractsRow(f.out.contexts[i].kind)) {
            auto it = applied.find(line);
            REQUIRE(it != applied.end());
            applied.erase(it);
          } else {
            applied.insert(line);
          }
        }
        f.seen = f.out.rows.size();
        // Brute force: per key, by p (descending when desc), then arrival.
        std::vector<In> sorted = live;
        std::stable_sort(sorted.begin(), sorted.end(), [desc](const In& a, const In& b) {
          if (a.k != b.k) return a.k < b.k;
          if (a.p != b.p) return desc ? a.p > b.p : a.p < b.p;
          return a.seq < b.seq;
        });
        std::multiset<std::string> want;
        for (size_t i = 0; i < sorted.size(); ++i) {
          size_t first = i;
          while (first > 0 && sorted[first - 1].k == sorted[i].k &&
                 (preceding < 0 || static_cast<int64_t>(i - first + 1) <= preceding))
            --first;
          int64_t sum = 0, n = 0, rows = 0;
          double dsum = 0;
          Value lo, hi;
          for (size_t j = first; j <= i; ++j) {
            ++rows;
            const Value& v = sorted[j].v;
            if (v.isNull()) continue;
            ++n;
            sum += v.asInt();
            dsum += v.toDouble();
            if (lo.isNull() || v.compare(lo) < 0) lo = v;
            if (hi.isNull() || v.compare(hi) > 0) hi = v;
          }
          const In& r = sorted[i];
          std::string line =
              I(r.k).toString() + " " + I(r.p).toString() + " " + r.v.toString() + " " +
              (n ? I(sum) : Value()).toString() + " " +
              (n ? Value::float64(dsum / static_cast<double>(n)) : Value()).toString() + " " +
              lo.toString() + " " + hi.toString() + " " + I(rows).toString() + " ";
          want.insert(line);
        }
        REQUIRE(applied == want);
      }
    }
  }
}
