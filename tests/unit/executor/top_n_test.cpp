// TopN (ROW_NUMBER() ... WHERE rn <= N): the exact changes it emits when a row
// enters the top, pushes one out, ties with another, or is retracted; the
// rank column's updates; that applying its changelog always gives the top N
// per key of the rows so far (checked against a brute-force ranking on random
// input); and that its state survives a restart. The same for RANK() and
// DENSE_RANK(), whose ties share a rank.
#include "executor/operators/top_n.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <map>
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
using RocksBackend = testing::RocksBackend<9>;

DataTypePtr bigint() {
  return DataType::of(TypeId::BigInt);
}
DataTypePtr str() {
  return DataType::of(TypeId::String);
}
Value I(int64_t v) {
  return Value::bigint(v);
}
Value S(const char* v) {
  return Value::string(v);
}

// Rows are (k BIGINT, p BIGINT, name STRING); PARTITION BY k ORDER BY p.
TopNSpec spec(int64_t limit, bool rank, bool desc = true, bool retracting = false,
              TopNSpec::Function function = TopNSpec::Function::RowNumber) {
  TopNSpec s;
  s.function = function;
  s.id = 9;
  s.output.columns = {{"k", bigint()}, {"p", bigint()}, {"name", str()}};
  if (rank) s.output.columns.push_back({"rn", bigint()});
  s.partitionKeys = {makeColumnRef(0, bigint(), "k")};
  s.orderKeys = {makeColumnRef(1, bigint(), "p")};
  s.descending = {desc};
  s.limit = limit;
  s.rankColumn = rank;
  s.input = retracting ? ChangelogMode::Retract : ChangelogMode::Append;
  return s;
}

template <typename Backend = MemBackend>
struct Fixture {
  explicit Fixture(const TopNSpec& s) : op(makeTopN(s, backend.table())) { op->setNext(&out); }
  void push(int64_t k, Value p, const char* name, RowKind kind = RowKind::Insert) {
    Row r{I(k), std::move(p), S(name)};
    RecordContext ctx;
    ctx.kind = kind;
    op->push(r, ctx);
  }
  // The changes emitted since the last call, as "+I 1 30 a 1".
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

}  // namespace

TEST_CASE("top-N with the rank: inserts, rank updates and the row pushed out") {
  Fixture f(spec(2, true));
  CHECK(f.op->stateful());
  f.push(1, I(10), "a");
  CHECK(f.changes() == Lines{"+I 1 10 a 1"});
  f.push(1, I(30), "b");  // ranks first: a moves to rank 2
  CHECK(f.changes() == Lines{"-U 1 10 a 1", "+U 1 10 a 2", "+I 1 30 b 1"});
  f.push(1, I(20), "c");  // between them: a falls out
  CHECK(f.changes() == Lines{"-D 1 10 a 2", "+I 1 20 c 2"});
  f.push(1, I(5), "d");  // below the top: nothing
  CHECK(f.changes().empty());
  f.push(2, I(1), "e");  // another key has its own ranks
  CHECK(f.changes() == Lines{"+I 2 1 e 1"});
  f.push(1, I(40), "g");  // new first: c falls out, b moves down
  CHECK(f.changes() == Lines{"-D 1 20 c 2", "-U 1 30 b 1", "+U 1 30 b 2", "+I 1 40 g 1"});
  // Only the top 2 per key are kept when the input never retracts.
  CHECK(f.op->stats().numRowsTotal == 3);
  CHECK(f.op->stats().rowsIn == 6);
}

TEST_CASE("top-N without the rank emits only rows entering and leaving the top") {
  Fixture f(spec(2, false));
  f.push(1, I(10), "a");
  f.push(1, I(30), "b");
  CHECK(f.changes() == Lines{"+I 1 10 a", "+I 1 30 b"});
  f.push(1, I(20), "c");
  CHECK(f.changes() == Lines{"-D 1 10 a", "+I 1 20 c"});
  f.push(1, I(40), "d");
  CHECK(f.changes() == Lines{"-D 1 20 c", "+I 1 40 d"});
}

TEST_CASE("top-N ranks equal order keys by arrival") {
  Fixture f(spec(2, true));
  f.push(1, I(10), "a");
  f.push(1, I(10), "b");  // ties with a: ranks after it
  CHECK(f.changes() == Lines{"+I 1 10 a 1", "+I 1 10 b 2"});
  f.push(1, I(10), "c");  // ties with both: below the top
  CHECK(f.changes().empty());
}

TEST_CASE("top-1 ordered by time descending keeps the latest row per key") {
  Fixture f(spec(1, false));
  f.push(1, I(100), "a");
  f.push(1, I(200), "b");
  f.push(1, I(150), "late");  // older than the kept row: dropped
  f.push(2, I(100), "c");
  CHECK(f.changes() == Lines{"+I 1 100 a", "-D 1 100 a", "+I 1 200 b", "+I 2 100 c"});
}

TEST_CASE("top-N ascending puts NULL first; descending puts NULL last") {
  Fixture asc(spec(1, false, false));
  asc.push(1, I(5), "a");
  asc.push(1, Value(), "null");
  CHECK(asc.changes() == Lines{"+I 1 5 a", "-D 1 5 a", "+I 1 NULL null"});
  Fixture desc(spec(1, false, true));
  desc.push(1, I(5), "a");
  desc.push(1, Value(), "null");
  CHECK(desc.changes() == Lines{"+I 1 5 a"});
}

TEST_CASE("top-N over a retracting input refills the top from the rows below it") {
  Fixture f(spec(2, true, true, true));
  f.push(1, I(30), "a");
  f.push(1, I(20), "b");
  f.push(1, I(10), "c");  // kept below the top
  CHECK(f.changes() == Lines{"+I 1 30 a 1", "+I 1 20 b 2"});
  CHECK(f.op->stats().numRowsTotal == 3);
  f.push(1, I(30), "a", RowKind::Delete);  // b moves up, c enters
  CHECK(f.changes() == Lines{"-D 1 30 a 1", "-U 1 20 b 2", "+U 1 20 b 1", "+I 1 10 c 2"});
  f.push(1, I(10), "c", RowKind::UpdateBefore);  // an update: old row out...
  f.push(1, I(25), "c", RowKind::UpdateAfter);   // ...new row in, first
  CHECK(f.changes() == Lines{"-D 1 10 c 2", "-U 1 20 b 1", "+U 1 20 b 2", "+I 1 25 c 1"});
  f.push(1, I(99), "never", RowKind::Delete);  // not kept: nothing to retract
  f.push(1, I(20), "other", RowKind::Delete);  // same order key, other row: not b
  CHECK(f.changes().empty());
  CHECK(f.op->stats().numRowsTotal == 2);
}

TEST_CASE_TEMPLATE("top-N keeps its rows and ties across a restart", B, MemBackend, RocksBackend) {
  B backend;
  Capture out1, out2;
  {
    auto op = makeTopN(spec(2, false), backend.table());
    op->setNext(&out1);
    Row a{I(1), I(10), S("a")};
    op->push(a, {});
    op->onEpochEnd();
  }
  auto op = makeTopN(spec(2, false), backend.table());
  op->setNext(&out2);
  CHECK(op->stats().numRowsTotal == 1);
  Row b{I(1), I(10), S("b")};  // ties with a: ranks second after the restart too
  op->push(b, {});
  Row c{I(1), I(10), S("c")};
  op->push(c, {});
  REQUIRE(out2.rows.size() == 1);
  CHECK(out2.rows[0] == Row{I(1), I(10), S("b")});
  CHECK(out2.contexts[0].kind == RowKind::Insert);
}

// Random inserts and retractions of existing rows: applying the changelog
// (delete/update-before remove the row, insert/update-after add it) always
// gives the brute-force top N per key, with the ranks.
TEST_CASE("top-N changelog applied equals the brute-force ranking on random input") {
  for (bool retracting : {false, true}) {
    for (int64_t limit : {1, 3}) {
      CAPTURE(retracting);
      CAPTURE(limit);
      Fixture f(spec(limit, true, true, retracting));
      std::mt19937 rng(42 + static_cast<int>(limit) + (retracting ? 100 : 0));
      struct In {
        int64_t k, p;
        std::string name;
        int64_t seq;
      };
      std::vector<In> live;
      std::multiset<std::string> applied;  // "k p name rank"
      int64_t seq = 0;
      for (int step = 0; step < 600; ++step) {
        if (retracting && !live.empty() && rng() % 3 == 0) {
          size_t i = rng() % live.size();
          In gone = live[i];
          live.erase(live.begin() + static_cast<long>(i));
          f.push(gone.k, I(gone.p), gone.name.c_str(), RowKind::Delete);
        } else {
          In in{static_cast<int64_t>(rng() % 3), static_cast<int64_t>(rng() % 8),
                "r" + std::to_string(seq), seq};
          ++seq;
          live.push_back(in);
          f.push(in.k, I(in.p), in.name.c_str());
        }
        for (size_t i = f.seen; i < f.out.rows.size(); ++i) {
          const Row& r = f.out.rows[i];
          std::string line = r[0].toString() + " " + r[1].toString() + " " + r[2].toString() + " " +
                             r[3].toString();
          if (retractsRow(f.out.contexts[i].kind)) {
            auto it = applied.find(line);
            REQUIRE(it != applied.end());
            applied.erase(it);
          } else {
            applied.insert(line);
          }
        }
        f.seen = f.out.rows.size();
        // Brute force: per key, by p descending, then arrival.
        std::vector<In> sorted = live;
        std::stable_sort(sorted.begin(), sorted.end(), [](const In& a, const In& b) {
          if (a.k != b.k) return a.k < b.k;
          if (a.p != b.p) return a.p > b.p;
          return a.seq < b.seq;
        });
        std::multiset<std::string> want;
        std::map<int64_t, int64_t> rank;
        for (const In& in : sorted) {
          int64_t r = ++rank[in.k];
          if (r <= limit) {
            want.insert(std::to_string(in.k) + " " + std::to_string(in.p) + " " + in.name + " " +
                        std::to_string(r));
          }
        }
        REQUIRE(applied == want);
      }
    }
  }
}

namespace {
constexpr auto kRank = TopNSpec::Function::Rank;
constexpr auto kDenseRank = TopNSpec::Function::DenseRank;
}  // namespace

TEST_CASE("RANK() top-N keeps every row tied at a rank within N") {
  Fixture f(spec(2, true, true, false, kRank));
  f.push(1, I(10), "a");
  f.push(1, I(10), "b");  // ties with a: rank 1 too
  CHECK(f.changes() == Lines{"+I 1 10 a 1", "+I 1 10 b 1"});
  f.push(1, I(10), "c");  // a third tie: still rank 1, three rows in a top 2
  CHECK(f.changes() == Lines{"+I 1 10 c 1"});
  f.push(1, I(5), "d");  // rank 4: outside
  CHECK(f.changes().empty());
  f.push(1, I(20), "e");  // ranks first: the ties move to rank 2
  CHECK(f.changes() == Lines{"-U 1 10 a 1", "+U 1 10 a 2", "-U 1 10 b 1", "+U 1 10 b 2",
                             "-U 1 10 c 1", "+U 1 10 c 2", "+I 1 20 e 1"});
  f.push(1, I(30), "g");  // the ties move to rank 3: all leave
  CHECK(f.changes() == Lines{"-D 1 10 a 2", "-D 1 10 b 2", "-D 1 10 c 2", "-U 1 20 e 1",
                             "+U 1 20 e 2", "+I 1 30 g 1"});
  // Over append-only input only the rows ranked within N are kept.
  CHECK(f.op->stats().numRowsTotal == 2);
}

TEST_CASE("DENSE_RANK() top-N keeps the rows of the first N distinct order keys") {
  Fixture f(spec(2, true, true, false, kDenseRank));
  f.push(1, I(10), "a");
  f.push(1, I(20), "b");
  f.push(1, I(20), "c");  // ties with b: rank 1
  CHECK(f.changes() == Lines{"+I 1 10 a 1", "-U 1 10 a 1", "+U 1 10 a 2", "+I 1 20 b 1",
                             "+I 1 20 c 1"});
  f.push(1, I(10), "d");  // ties with a at rank 2 (RANK would say 3)
  CHECK(f.changes() == Lines{"+I 1 10 d 2"});
  f.push(1, I(15), "e");  // a new second key: a and d fall to rank 3
  CHECK(f.changes() == Lines{"-D 1 10 a 2", "-D 1 10 d 2", "+I 1 15 e 2"});
  CHECK(f.op->stats().numRowsTotal == 3);
}

TEST_CASE("RANK() top-N without the rank column emits only entering and leaving rows") {
  Fixture f(spec(1, false, true, false, kRank));
  f.push(1, I(10), "a");
  f.push(1, I(10), "b");
  f.push(1, I(20), "c");
  CHECK(f.changes() == Lines{"+I 1 10 a", "+I 1 10 b", "-D 1 10 a", "-D 1 10 b", "+I 1 20 c"});
}

TEST_CASE("RANK() top-N over a retracting input brings back rows that rank within N again") {
  Fixture f(spec(1, true, true, true, kRank));
  f.push(1, I(30), "a");
  f.push(1, I(20), "b");
  f.push(1, I(20), "c");
  CHECK(f.changes() == Lines{"+I 1 30 a 1"});
  f.push(1, I(30), "a", RowKind::Delete);  // the two ties now rank first
  CHECK(f.changes() == Lines{"-D 1 30 a 1", "+I 1 20 b 1", "+I 1 20 c 1"});
  f.push(1, I(20), "b", RowKind::Delete);
  CHECK(f.changes() == Lines{"-D 1 20 b 1"});
  CHECK(f.op->stats().numRowsTotal == 1);
}

TEST_CASE_TEMPLATE("DENSE_RANK() top-N keeps its rows and ranks across a restart", B, MemBackend,
                   RocksBackend) {
  B backend;
  const TopNSpec s = spec(2, true, true, false, kDenseRank);
  {
    auto op = makeTopN(s, backend.table());
    Capture out;
    op->setNext(&out);
    Row a{I(1), I(20), S("a")};
    Row b{I(1), I(10), S("b")};
    op->push(a, {});
    op->push(b, {});
    op->onEpochEnd();
  }
  auto op = makeTopN(s, backend.table());
  Capture out;
  op->setNext(&out);
  CHECK(op->stats().numRowsTotal == 2);
  Row c{I(1), I(20), S("c")};  // ties with a after the restart: b keeps rank 2
  op->push(c, {});
  Row d{I(1), I(30), S("d")};  // a new first key: b falls out, a and c move down
  op->push(d, {});
  std::vector<std::string> got;
  for (size_t i = 0; i < out.rows.size(); ++i) {
    std::string line = rowKindSymbol(out.contexts[i].kind);
    for (const Value& v : out.rows[i]) line += " " + v.toString();
    got.push_back(line);
  }
  CHECK(got == Lines{"+I 1 20 c 1", "-D 1 10 b 2", "-U 1 20 a 1", "+U 1 20 a 2", "-U 1 20 c 1",
                     "+U 1 20 c 2", "+I 1 30 d 1"});
}

// Random inserts and retractions with many ties: applying the changelog always
// gives the brute-force RANK / DENSE_RANK top N per key, with the ranks.
TEST_CASE("RANK() and DENSE_RANK() top-N changelog equals the brute-force ranking") {
  for (auto function : {kRank, kDenseRank}) {
    for (bool retracting : {false, true}) {
      for (int64_t limit : {1, 3}) {
        CAPTURE(function == kRank);
        CAPTURE(retracting);
        CAPTURE(limit);
        Fixture f(spec(limit, true, true, retracting, function));
        std::mt19937 rng(7 + static_cast<int>(limit) + (retracting ? 100 : 0));
        struct In {
          int64_t k, p;
          std::string name;
        };
        std::vector<In> live;
        std::multiset<std::string> applied;  // "k p name rank"
        int64_t seq = 0;
        for (int step = 0; step < 600; ++step) {
          if (retracting && !live.empty() && rng() % 3 == 0) {
            size_t i = rng() % live.size();
            In gone = live[i];
            live.erase(live.begin() + static_cast<long>(i));
            f.push(gone.k, I(gone.p), gone.name.c_str(), RowKind::Delete);
          } else {
            In in{static_cast<int64_t>(rng() % 3), static_cast<int64_t>(rng() % 6),
                  "r" + std::to_string(seq++)};
            live.push_back(in);
            f.push(in.k, I(in.p), in.name.c_str());
          }
          for (size_t i = f.seen; i < f.out.rows.size(); ++i) {
            const Row& r = f.out.rows[i];
            std::string line = r[0].toString() + " " + r[1].toString() + " " + r[2].toString() +
                               " " + r[3].toString();
            if (retractsRow(f.out.contexts[i].kind)) {
              auto it = applied.find(line);
              REQUIRE(it != applied.end());
              applied.erase(it);
            } else {
              applied.insert(line);
            }
          }
          f.seen = f.out.rows.size();
          // Brute force: a row's rank counts the rows (RANK) or distinct
          // values (DENSE_RANK) of its key with a higher p.
          std::multiset<std::string> want;
          for (const In& in : live) {
            std::set<int64_t> higher;
            int64_t rows = 0;
            for (const In& o : live) {
              if (o.k == in.k && o.p > in.p) {
                ++rows;
                higher.insert(o.p);
              }
            }
            const int64_t r =
                1 + (function == kRank ? rows : static_cast<int64_t>(higher.size()));
            if (r <= limit) {
              want.insert(std::to_string(in.k) + " " + std::to_string(in.p) + " " + in.name +
                          " " + std::to_string(r));
            }
          }
          REQUIRE(applied == want);
        }
      }
    }
  }
}
