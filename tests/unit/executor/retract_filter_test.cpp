// The filter over a retracting stream: an update whose old row alone passes
// becomes a delete, one whose new row alone passes an insert, and a held
// UpdateBefore is released as a delete by a row of another key, the end of the
// task's batch, a watermark or the epoch's end. Over an append stream the
// filter passes rows as before.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "capture_operator.h"
#include "common/expr.h"
#include "common/row_kind.h"
#include "executor/operators/filter.h"

using namespace rtsql;

namespace {

using testing::Capture;

// Rows: k STRING, n BIGINT; the predicate is n < 2 (a HAVING count(*) < 2).
struct Fixture {
  explicit Fixture(ChangelogMode input) {
    FilterSpec spec;
    spec.predicate =
        makeCall("<",
                 {makeColumnRef(1, DataType::of(TypeId::BigInt), "n"),
                  makeLiteral(Value::bigint(2), DataType::of(TypeId::BigInt))},
                 0);
    spec.input = input;
    spec.changelog.mode = input;
    spec.changelog.uniqueKey = std::vector<int>{0};
    filter = makeFilter(spec);
    filter->setNext(&out);
  }

  void push(const char* k, int64_t n, RowKind kind) {
    Row row{Value::string(k), Value::bigint(n)};
    RecordContext ctx;
    ctx.kind = kind;
    filter->push(row, ctx);
  }

  // "+I a 1"-style lines of what reached the next operator.
  std::vector<std::string> changes() const {
    std::vector<std::string> lines;
    for (size_t i = 0; i < out.rows.size(); ++i) {
      lines.push_back(std::string(rowKindSymbol(out.contexts[i].kind)) + " " +
                      out.rows[i][0].asString() + " " + std::to_string(out.rows[i][1].asInt()));
    }
    return lines;
  }

  OperatorPtr filter;
  Capture out;
};

}  // namespace

TEST_CASE("retract filter: an update whose new row fails is a delete of the old row") {
  Fixture f(ChangelogMode::Retract);
  f.push("a", 1, RowKind::Insert);
  f.push("a", 1, RowKind::UpdateBefore);
  f.push("a", 2, RowKind::UpdateAfter);
  CHECK(f.changes() == std::vector<std::string>{"+I a 1", "-D a 1"});
}

TEST_CASE("retract filter: an update whose old row failed is an insert of the new row") {
  Fixture f(ChangelogMode::Retract);
  f.push("a", 3, RowKind::UpdateBefore);
  f.push("a", 1, RowKind::UpdateAfter);
  CHECK(f.changes() == std::vector<std::string>{"+I a 1"});
}

TEST_CASE("retract filter: an update where both rows pass or both fail") {
  Fixture f(ChangelogMode::Retract);
  f.push("a", 0, RowKind::UpdateBefore);
  f.push("a", 1, RowKind::UpdateAfter);
  f.push("b", 5, RowKind::UpdateBefore);
  f.push("b", 6, RowKind::UpdateAfter);
  CHECK(f.changes() == std::vector<std::string>{"-U a 0", "+U a 1"});
}

TEST_CASE("retract filter: deletes and inserts pass as the predicate says") {
  Fixture f(ChangelogMode::Retract);
  f.push("a", 1, RowKind::Delete);
  f.push("b", 7, RowKind::Delete);
  f.push("c", 0, RowKind::Insert);
  f.push("d", 9, RowKind::Insert);
  CHECK(f.changes() == std::vector<std::string>{"-D a 1", "+I c 0"});
}

TEST_CASE("retract filter: an UpdateBefore followed by another key's row is a delete") {
  Fixture f(ChangelogMode::Retract);
  f.push("a", 1, RowKind::UpdateBefore);
  f.push("b", 1, RowKind::UpdateAfter);
  CHECK(f.changes() == std::vector<std::string>{"-D a 1", "+U b 1"});
}

TEST_CASE("retract filter: a held UpdateBefore is released at the batch's end") {
  Fixture f(ChangelogMode::Retract);
  f.push("a", 1, RowKind::UpdateBefore);
  CHECK(f.changes().empty());
  f.filter->onBatchEnd();
  CHECK(f.changes() == std::vector<std::string>{"-D a 1"});
  // Nothing is held any more: a later UpdateAfter stands alone.
  f.push("a", 1, RowKind::UpdateAfter);
  CHECK(f.changes() == std::vector<std::string>{"-D a 1", "+U a 1"});
}

TEST_CASE("retract filter: a watermark and an epoch's end release a held row first") {
  Fixture f(ChangelogMode::Retract);
  f.push("a", 1, RowKind::UpdateBefore);
  f.filter->onWatermark(100);
  CHECK(f.changes() == std::vector<std::string>{"-D a 1"});
  CHECK(f.out.watermarks == std::vector<int64_t>{100});
  f.push("b", 0, RowKind::UpdateBefore);
  f.filter->onEpochEnd();
  CHECK(f.changes() == std::vector<std::string>{"-D a 1", "-D b 0"});
  CHECK(f.out.epochs == 1);
  // A held row that failed is released as nothing.
  f.push("c", 9, RowKind::UpdateBefore);
  f.filter->onBatchEnd();
  CHECK(f.changes().size() == 2);
}

TEST_CASE("filter over an append or updates stream passes rows unchanged") {
  for (ChangelogMode mode : {ChangelogMode::Append, ChangelogMode::Updates}) {
    Fixture f(mode);
    f.push("a", 1, mode == ChangelogMode::Append ? RowKind::Insert : RowKind::UpdateAfter);
    f.push("a", 2, mode == ChangelogMode::Append ? RowKind::Insert : RowKind::UpdateAfter);
    const char* kind = mode == ChangelogMode::Append ? "+I" : "+U";
    CHECK(f.changes() == std::vector<std::string>{std::string(kind) + " a 1"});
  }
}
