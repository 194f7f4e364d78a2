// makeOperator (executor/operators/factory.h): every spec kind builds its own
// operator, the stateful ones over the table of their operator id and task.
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/expr.h"
#include "executor/operators/factory.h"
#include "state_test_util.h"

namespace rtsql {
namespace {

DataTypePtr bigint() { return DataType::of(TypeId::BigInt); }
DataTypePtr ts() { return DataType::of(TypeId::Timestamp); }

// A store of in-memory tables that records which tables were asked for.
class RecordingStore : public StateStore {
 public:
  std::unique_ptr<StateTable> table(int operatorId, int task) override {
    asked.emplace_back(operatorId, task);
    return std::make_unique<testing::MemStateTable>(std::make_shared<testing::MemStorage>());
  }
  void snapshot(const std::string&, std::vector<StateChange>*) override {}
  void write(const std::vector<StateChange>&) override {}
  void forEach(const std::function<void(std::string_view, std::string_view)>&) override {}
  void holdWrites(int, int, bool) override {}
  int64_t diskBytes() const override { return 0; }

  std::vector<std::pair<int, int>> asked;
};

std::vector<OperatorSpec> oneOfEachKind() {
  ExprPtr k = makeColumnRef(0, bigint(), "k");
  ExprPtr t = makeColumnRef(1, ts(), "t");
  Schema row;
  row.columns = {{"k", bigint()}, {"t", ts()}};

  FilterSpec filter;
  filter.predicate = makeCall(">", {k, makeLiteral(Value::bigint(1), bigint())}, 0);
  ProjectSpec project;
  project.exprs = {k};
  BroadcastJoinSpec broadcast;
  broadcast.tableRows = std::make_shared<const std::vector<Row>>();
  broadcast.tableSchema.columns = {{"k", bigint()}};
  broadcast.probeKeys = {k};
  broadcast.buildKeys = {k};
  AggregateSpec aggregate;
  aggregate.groupKeys = {k};
  AggregateCall count;
  count.resultType = bigint();
  aggregate.aggregates = {count};
  AggregateSpec window = aggregate;
  window.window.kind = WindowKind::Tumbling;
  window.window.time = t;
  window.window.sizeMicros = window.window.slideMicros = 1000;
  DedupSpec dedup;
  dedup.dedupKeys = {k};
  StreamJoinSpec join;
  join.leftKeys = join.rightKeys = {k};
  join.leftTime = join.rightTime = t;
  join.leftWidth = join.rightWidth = 2;
  join.output.columns = row.columns;
  join.output.columns.insert(join.output.columns.end(), row.columns.begin(), row.columns.end());

  std::vector<OperatorSpec> specs = {filter, project, broadcast, aggregate, window, dedup, join};
  for (size_t i = 0; i < specs.size(); ++i) specs[i].base().id = static_cast<int>(i) + 10;
  return specs;
}

}  // namespace

TEST_CASE("makeOperator: each kind builds its operator, stateful exactly when its spec says") {
  RecordingStore store;
  std::vector<std::string> names;
  std::vector<std::pair<int, int>> expectedTables;
  for (const OperatorSpec& spec : oneOfEachKind()) {
    OperatorPtr op = makeOperator(spec, &store, 3);
    REQUIRE(op);
    CHECK(op->stateful() == spec.stateful());
    names.push_back(op->name());
    if (spec.stateful()) expectedTables.emplace_back(spec.id(), 3);
  }
  CHECK(names == std::vector<std::string>{"Filter", "Project", "BroadcastJoin", "Aggregate",
                                          "WindowAggregate", "Dedup", "StreamJoin"});
  // One table per stateful operator, keyed by its id and the task.
  CHECK(store.asked == expectedTables);
}

TEST_CASE("makeOperator: stateless kinds need no store, stateful ones do") {
  for (const OperatorSpec& spec : oneOfEachKind()) {
    if (spec.stateful()) {
      CHECK_THROWS_AS(makeOperator(spec, nullptr, 0), InternalError);
    } else {
      CHECK(makeOperator(spec, nullptr, 0) != nullptr);
    }
  }
}

}  // namespace rtsql
