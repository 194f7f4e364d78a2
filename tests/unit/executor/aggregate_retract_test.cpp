// The GROUP BY operator as a changelog operator: the exact kinds it emits in
// retract mode (insert, update-before + update-after, nothing for an unchanged
// row, delete when a group empties), rows taken out of their groups when the
// input retracts (count, sum, avg, min/max with their multiset), count/sum/avg
// (DISTINCT x), FILTER (WHERE ...), and the windowed operator's retract
// output. Rows are pushed with their kinds and the output is captured.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "capture_operator.h"
#include "common/expr.h"
#include "common/row_kind.h"
#include "executor/operators/aggregate.h"
#include "state_test_util.h"

using namespace rtsql;

namespace {

using testing::Capture;
using testing::MemBackend;

// Input rows: k STRING, v BIGINT, b BOOLEAN, ts TIMESTAMP.
ExprPtr colK() {
  return makeColumnRef(0, DataType::of(TypeId::String), "k");
}
ExprPtr colV() {
  return makeColumnRef(1, DataType::of(TypeId::BigInt), "v");
}
ExprPtr colB() {
  return makeColumnRef(2, DataType::of(TypeId::Boolean), "b");
}
ExprPtr colTs() {
  return makeColumnRef(3, DataType::of(TypeId::Timestamp), "ts");
}

Value S(const char* s) {
  return Value::string(s);
}
Value I(int64_t v) {
  return Value::bigint(v);
}
Value N() {
  return Value();
}

AggregateCall call(AggregateFunction f, ExprPtr arg, TypeId result) {
  AggregateCall c;
  c.function = f;
  c.arg = std::move(arg);
  c.resultType = DataType::of(result);
  return c;
}
AggregateCall countStar() {
  return call(AggregateFunction::CountStar, nullptr, TypeId::BigInt);
}

// GROUP BY k with `calls`; `input` is the mode of the rows it reads, and the
// output retracts.
AggregateSpec spec(std::vector<AggregateCall> calls, ChangelogMode input) {
  AggregateSpec s;
  s.id = 9;
  s.groupKeys = {colK()};
  s.aggregates = std::move(calls);
  s.input = input;
  s.changelog.mode = ChangelogMode::Retract;
  return s;
}

struct Harness {
  explicit Harness(const AggregateSpec& s) {
    op = makeAggregate(s, backend.table());
    op->setNext(&out);
  }
  void push(RowKind kind, Value k, Value v, Value b = Value::boolean(true), int64_t ts = 0) {
    Row r{std::move(k), std::move(v), std::move(b), Value::timestamp(ts)};
    RecordContext ctx;
    ctx.kind = kind;
    op->push(r, ctx);
  }
  void add(Value k, Value v, Value b = Value::boolean(true)) {
    push(RowKind::Insert, std::move(k), std::move(v), std::move(b));
  }
  void remove(Value k, Value v, Value b = Value::boolean(true)) {
    push(RowKind::Delete, std::move(k), std::move(v), std::move(b));
  }
  // "+I[a, 1]" per captured row since the last call, joined by spaces.
  std::string changes() {
    std::string s;
    for (size_t i = seen; i < out.rows.size(); ++i) {
      if (!s.empty()) s += ' ';
      s += rowKindSymbol(out.contexts[i].kind);
      s += '[';
      for (size_t c = 0; c < out.rows[i].size(); ++c) {
        if (c) s += ", ";
        s += out.rows[i][c].toString();
      }
      s += ']';
    }
    seen = out.rows.size();
    return s;
  }

  MemBackend backend;
  OperatorPtr op;
  Capture out;
  size_t seen = 0;
};

}  // namespace

TEST_CASE("retracting aggregate: append input, insert then update-before + update-after") {
  Harness h(spec({countStar()}, ChangelogMode::Append));
  h.add(S("a"), I(1));
  CHECK(h.changes() == "+I[a, 1]");
  h.add(S("a"), I(1));
  CHECK(h.changes() == "-U[a, 1] +U[a, 2]");
  h.add(S("b"), I(1));
  CHECK(h.changes() == "+I[b, 1]");
  // An append input keeps the value layout of update mode: the count only.
  CHECK(h.backend.storage->data.size() == 2);
}

TEST_CASE("retracting aggregate: an unchanged row emits nothing") {
  Harness h(spec({call(AggregateFunction::Max, colV(), TypeId::BigInt)}, ChangelogMode::Append));
  h.add(S("a"), I(5));
  h.add(S("a"), I(3));
  h.add(S("a"), N());
  CHECK(h.changes() == "+I[a, 5]");
  h.add(S("a"), I(8));
  CHECK(h.changes() == "-U[a, 5] +U[a, 8]");
}

TEST_CASE("retracting aggregate: retracted rows leave count, sum, avg, min and max") {
  Harness h(spec({countStar(), call(AggregateFunction::Count, colV(), TypeId::BigInt),
                  call(AggregateFunction::Sum, colV(), TypeId::BigInt),
                  call(AggregateFunction::Avg, colV(), TypeId::Double),
                  call(AggregateFunction::Min, colV(), TypeId::BigInt),
                  call(AggregateFunction::Max, colV(), TypeId::BigInt)},
                 ChangelogMode::Retract));
  h.add(S("a"), I(5));
  h.add(S("a"), I(3));
  h.add(S("a"), N());
  h.add(S("a"), I(9));
  CHECK(h.changes() ==
        "+I[a, 1, 1, 5, 5.0, 5, 5] "
        "-U[a, 1, 1, 5, 5.0, 5, 5] +U[a, 2, 2, 8, 4.0, 3, 5] "
        "-U[a, 2, 2, 8, 4.0, 3, 5] +U[a, 3, 2, 8, 4.0, 3, 5] "
        "-U[a, 3, 2, 8, 4.0, 3, 5] +U[a, 4, 3, 17, 5.666666666666667, 3, 9]");
  // Taking out the max and the min finds the next ones in the multiset.
  h.push(RowKind::UpdateBefore, S("a"), I(9));
  CHECK(h.changes() == "-U[a, 4, 3, 17, 5.666666666666667, 3, 9] +U[a, 3, 2, 8, 4.0, 3, 5]");
  h.remove(S("a"), I(3));
  CHECK(h.changes() == "-U[a, 3, 2, 8, 4.0, 3, 5] +U[a, 2, 1, 5, 5.0, 5, 5]");
  // The last non-NULL value leaves: sum, avg, min and max are NULL again.
  h.remove(S("a"), I(5));
  CHECK(h.changes() == "-U[a, 2, 1, 5, 5.0, 5, 5] +U[a, 1, 0, NULL, NULL, NULL, NULL]");
  // The group's last row leaves: a delete of its last row, and no state left.
  h.remove(S("a"), N());
  CHECK(h.changes() == "-D[a, 1, 0, NULL, NULL, NULL, NULL]");
  CHECK(h.backend.storage->data.empty());
  // A group that comes back starts afresh.
  h.add(S("a"), I(2));
  CHECK(h.changes() == "+I[a, 1, 1, 2, 2.0, 2, 2]");
}

TEST_CASE("retracting aggregate: min and max keep duplicates until the last one leaves") {
  Harness h(spec({call(AggregateFunction::Min, colV(), TypeId::BigInt),
                  call(AggregateFunction::Max, colV(), TypeId::BigInt)},
                 ChangelogMode::Retract));
  h.add(S("a"), I(5));
  h.add(S("a"), I(5));
  h.add(S("a"), I(1));
  h.add(S("a"), I(7));
  CHECK(h.changes() == "+I[a, 5, 5] -U[a, 5, 5] +U[a, 1, 5] -U[a, 1, 5] +U[a, 1, 7]");
  h.remove(S("a"), I(1));
  h.remove(S("a"), I(7));
  CHECK(h.changes() == "-U[a, 1, 7] +U[a, 5, 7] -U[a, 5, 7] +U[a, 5, 5]");
  h.remove(S("a"), I(5));  // one 5 is still there
  CHECK(h.changes() == "");
  h.remove(S("a"), I(5));
  CHECK(h.changes() == "-D[a, 5, 5]");
  CHECK(h.backend.storage->data.empty());
}

TEST_CASE("retracting aggregate: a retraction of an unknown group is ignored") {
  Harness h(spec({countStar()}, ChangelogMode::Retract));
  h.remove(S("x"), I(1));
  CHECK(h.changes() == "");
  CHECK(h.backend.storage->data.empty());
}

TEST_CASE("retracting aggregate: double sums subtract") {
  Harness h(spec({call(AggregateFunction::Sum, colV(), TypeId::Double)}, ChangelogMode::Retract));
  h.add(S("a"), I(2));
  h.add(S("a"), I(3));
  h.remove(S("a"), I(2));
  CHECK(h.changes() == "+I[a, 2.0] -U[a, 2.0] +U[a, 5.0] -U[a, 5.0] +U[a, 3.0]");
}

TEST_CASE("count(DISTINCT x): a value counts once, over append and retracting input") {
  AggregateCall distinct = call(AggregateFunction::Count, colV(), TypeId::BigInt);
  distinct.distinct = true;
  AggregateCall sumDistinct = call(AggregateFunction::Sum, colV(), TypeId::BigInt);
  sumDistinct.distinct = true;
  SUBCASE("append input") {
    Harness h(spec({distinct, sumDistinct, countStar()}, ChangelogMode::Append));
    h.add(S("a"), I(1));
    h.add(S("a"), I(1));
    h.add(S("a"), N());
    h.add(S("a"), I(2));
    CHECK(h.changes() ==
          "+I[a, 1, 1, 1] -U[a, 1, 1, 1] +U[a, 1, 1, 2] -U[a, 1, 1, 2] +U[a, 1, 1, 3] "
          "-U[a, 1, 1, 3] +U[a, 2, 3, 4]");
  }
  SUBCASE("retracting input") {
    Harness h(spec({distinct, sumDistinct}, ChangelogMode::Retract));
    h.add(S("a"), I(1));
    h.add(S("a"), I(1));
    h.add(S("a"), I(2));
    CHECK(h.changes() == "+I[a, 1, 1] -U[a, 1, 1] +U[a, 2, 3]");
    h.remove(S("a"), I(1));  // another 1 is left
    CHECK(h.changes() == "");
    h.remove(S("a"), I(1));
    CHECK(h.changes() == "-U[a, 2, 3] +U[a, 1, 2]");
    h.remove(S("a"), I(2));
    CHECK(h.changes() == "-D[a, 1, 2]");
    CHECK(h.backend.storage->data.empty());
  }
}

TEST_CASE("FILTER (WHERE ...): only rows whose filter is TRUE reach the call") {
  AggregateCall filtered = countStar();
  filtered.filter = colB();
  AggregateCall sum = call(AggregateFunction::Sum, colV(), TypeId::BigInt);
  sum.filter = colB();
  AggregateCall distinct = call(AggregateFunction::Count, colV(), TypeId::BigInt);
  distinct.distinct = true;
  distinct.filter = colB();
  Harness h(spec({countStar(), filtered, sum, distinct}, ChangelogMode::Retract));
  h.add(S("a"), I(4), Value::boolean(true));
  h.add(S("a"), I(5), Value::boolean(false));
  h.add(S("a"), I(6), N());  // NULL is not TRUE
  h.add(S("a"), I(4), Value::boolean(true));
  CHECK(h.changes() ==
        "+I[a, 1, 1, 4, 1] -U[a, 1, 1, 4, 1] +U[a, 2, 1, 4, 1] -U[a, 2, 1, 4, 1] +U[a, 3, 1, 4, 1] "
        "-U[a, 3, 1, 4, 1] +U[a, 4, 2, 8, 1]");
  h.remove(S("a"), I(5), Value::boolean(false));
  h.remove(S("a"), I(4), Value::boolean(true));
  CHECK(h.changes() == "-U[a, 4, 2, 8, 1] +U[a, 3, 2, 8, 1] -U[a, 3, 2, 8, 1] +U[a, 2, 1, 4, 1]");
}

TEST_CASE("retracting aggregate: update mode keeps emitting each new row as an insert") {
  AggregateSpec s = spec({countStar()}, ChangelogMode::Append);
  s.changelog.mode = ChangelogMode::Updates;
  Harness h(s);
  h.add(S("a"), I(1));
  h.add(S("a"), I(1));
  CHECK(h.changes() == "+I[a, 1] +I[a, 2]");
}

TEST_CASE("windowed aggregate in retract mode: update-before + update-after per window") {
  AggregateSpec s = spec({countStar()}, ChangelogMode::Append);
  s.window.kind = WindowKind::Tumbling;
  s.window.time = colTs();
  s.window.sizeMicros = 10;
  s.window.slideMicros = 10;
  Harness h(s);
  h.push(RowKind::Insert, S("a"), I(1), Value::boolean(true), 1);
  h.push(RowKind::Insert, S("a"), I(1), Value::boolean(true), 2);
  h.push(RowKind::Insert, S("a"), I(1), Value::boolean(true), 12);
  const std::string w1 = Value::structure({Value::timestamp(0), Value::timestamp(10)}).toString();
  const std::string w2 = Value::structure({Value::timestamp(10), Value::timestamp(20)}).toString();
  CHECK(h.changes() ==
        "+I[a, " + w1 + ", 1] -U[a, " + w1 + ", 1] +U[a, " + w1 + ", 2] +I[a, " + w2 + ", 1]");
}
