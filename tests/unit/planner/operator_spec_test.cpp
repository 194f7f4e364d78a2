// Operator specs (planner/operator_spec.h): each kind's EXPLAIN line and
// statefulness, and OperatorSpec answering for whichever kind it holds.
#include <doctest/doctest.h>

#include <memory>
#include <vector>

#include "common/expr.h"
#include "planner/operator_spec.h"

namespace rtsql {
namespace {

DataTypePtr bigint() { return DataType::of(TypeId::BigInt); }
DataTypePtr ts() { return DataType::of(TypeId::Timestamp); }
ExprPtr col(int i, const char* name, DataTypePtr type = bigint()) {
  return makeColumnRef(i, std::move(type), name);
}
ExprPtr lit(int64_t v) { return makeLiteral(Value::bigint(v), bigint()); }

FilterSpec filter() {
  FilterSpec f;
  f.predicate = makeCall(">", {col(0, "x"), lit(10)}, 0);
  f.output.columns = {{"x", bigint()}};
  return f;
}

StreamJoinSpec streamJoin() {
  StreamJoinSpec j;
  j.leftKeys = {col(0, "k")};
  j.rightKeys = {col(0, "k")};
  j.leftTime = col(1, "lt", ts());
  j.rightTime = col(1, "rt", ts());
  j.lowerBoundMicros = -10;
  j.upperBoundMicros = 20;
  return j;
}

}  // namespace

TEST_CASE("operator specs: each kind prints its own EXPLAIN line") {
  CHECK(filter().describe() == "Filter " + filter().predicate->toString());
  CHECK(FilterSpec{}.describe() == "Filter ?");

  ProjectSpec p;
  CHECK(p.describe() == "Project (no columns)");
  p.exprs = {col(0, "x"), col(1, "y")};
  p.output.columns = {{"x", bigint()}, {"z", bigint()}};
  CHECK(p.describe() == "Project x, y AS z");

  AggregateSpec a;
  a.groupKeys = {col(0, "k")};
  AggregateCall count;
  count.resultType = bigint();
  AggregateCall sum;
  sum.function = AggregateFunction::Sum;
  sum.arg = col(1, "v");
  sum.resultType = bigint();
  a.aggregates = {count, sum};
  CHECK(a.describe() == "Aggregate keys=[k] aggs=[count(*), sum(v)]");
  a.window.kind = WindowKind::Tumbling;
  a.window.time = col(2, "ts", ts());
  a.window.sizeMicros = 10 * 1000 * 1000;
  a.emitOnWindowClose = true;
  CHECK(a.describe() ==
        "WindowAggregate window=tumbling 10 seconds on ts keys=[k] aggs=[count(*), sum(v)] "
        "emit on window close");

  DedupSpec d;
  d.dedupKeys = {col(0, "id")};
  CHECK(d.describe() == "Dedup keys=[id]");
  d.withinWatermark = true;
  CHECK(d.describe() == "Dedup keys=[id] within watermark");

  BroadcastJoinSpec b;
  b.tableName = "users";
  b.tableRows = std::make_shared<const std::vector<Row>>(std::vector<Row>{{Value::bigint(1)}});
  b.probeKeys = {col(0, "id")};
  b.buildKeys = {col(0, "uid")};
  CHECK(b.describe() == "BroadcastJoin inner table=users (1 row) on [id = uid]");
  b.leftOuter = true;
  b.label = "on [c.id = u.uid]";
  CHECK(b.describe() == "BroadcastJoin left table=users (1 row) on [c.id = u.uid]");

  StreamJoinSpec j = streamJoin();
  CHECK(j.describe() == "StreamJoin inner on [k = k] rt in [lt + -10, lt + 20]");
  j.label = "on [a.k = b.k]";
  CHECK(j.describe() == "StreamJoin inner on [a.k = b.k]");
}

TEST_CASE("operator specs: the stateful kinds are aggregate, dedup and stream join") {
  CHECK_FALSE(FilterSpec{}.stateful());
  CHECK_FALSE(ProjectSpec{}.stateful());
  CHECK_FALSE(BroadcastJoinSpec{}.stateful());
  CHECK(AggregateSpec{}.stateful());
  CHECK(DedupSpec{}.stateful());
  CHECK(StreamJoinSpec{}.stateful());
}

TEST_CASE("OperatorSpec answers for the kind it holds") {
  OperatorSpec op = filter();
  CHECK(op.is<FilterSpec>());
  CHECK_FALSE(op.is<ProjectSpec>());
  CHECK(op.describe() == filter().describe());
  CHECK_FALSE(op.stateful());
  CHECK(op.output().columns.size() == 1);
  CHECK(op.as<FilterSpec>().predicate->toString() == filter().predicate->toString());
  CHECK_THROWS_AS(op.as<ProjectSpec>(), InternalError);

  // The common fields are the kind's own: setting the id through the
  // OperatorSpec sets it on the kind, and a copy keeps kind and fields.
  op.base().id = 4;
  CHECK(op.id() == 4);
  CHECK(op.as<FilterSpec>().id == 4);
  OperatorSpec copy = op;
  CHECK(copy.id() == 4);
  CHECK(copy.is<FilterSpec>());

  OperatorSpec join = streamJoin();
  CHECK(join.stateful());
  CHECK(join.describe() == streamJoin().describe());
  CHECK(join.as<StreamJoinSpec>().upperBoundMicros == 20);
}

}  // namespace rtsql
