// The changelog the planner derives for each operator (planner/changelog.h):
// append or updates, the unique key followed through projections, the state
// each stateful operator keeps and whether anything bounds it, planned from
// SQL text.
#include <doctest/doctest.h>

#include "planner/changelog.h"
#include "planner/planner.h"
#include "planner_fixture.h"

using namespace rtsql;
using namespace rtsql::testing;

namespace {

struct Fixture : PlannerFixture {
  Fixture() {
    partitions = 4;
    addClicksAndSinks(*this);
    ddl(R"(
      CREATE SOURCE more (user_id STRING, amount DOUBLE, ts TIMESTAMP,
                          WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
        WITH (connector = 'kafka', subscribe = 'more', format = 'json');
      CREATE SOURCE imps (user_id STRING, its TIMESTAMP, WATERMARK FOR its AS its)
        WITH (connector = 'kafka', subscribe = 'imps', format = 'json');
      CREATE TABLE merchants (id BIGINT, name STRING);
    )");
  }

  // The last operator of the stage that writes to the sink.
  const OperatorSpec& last(const PhysicalPlan& p) {
    for (const StageSpec& s : p.stages) {
      if (s.output.kind == StageOutput::Kind::Sink && !s.operators.empty()) {
        return s.operators.back();
      }
    }
    FAIL("no operator writes to the sink");
    throw InternalError("unreachable");
  }

  // The first operator of kind Spec in the plan.
  template <typename Spec>
  const OperatorSpec& find(const PhysicalPlan& p) {
    for (const StageSpec& s : p.stages) {
      for (const OperatorSpec& op : s.operators) {
        if (op.is<Spec>()) return op;
      }
    }
    FAIL("no such operator");
    throw InternalError("unreachable");
  }

  std::string outputOf(const std::string& select) {
    PhysicalPlan p = flow("CREATE FLOW f INTO alerts AS " + select);
    const OperatorSpec& op = last(p);
    CHECK(p.output.mode == op.base().changelog.mode);
    return op.base().changelog.describe(op.output());
  }
};

}  // namespace

TEST_CASE("a stateless flow is append, and keeps no key") {
  Fixture f;
  CHECK(f.outputOf("SELECT user_id, upper(url) AS u FROM clicks WHERE amount > 1") == "append");
  PhysicalPlan p = f.flow("CREATE FLOW f INTO alerts AS SELECT user_id FROM clicks");
  for (const StageSpec& s : p.stages) {
    for (const OperatorSpec& op : s.operators) {
      CHECK(op.base().changelog.mode == ChangelogMode::Append);
      CHECK(op.base().changelog.state.empty());
    }
  }
}

TEST_CASE("GROUP BY emits updates keyed by its group, followed through the select list") {
  Fixture f;
  CHECK(f.outputOf("SELECT user_id, count(*) AS n FROM clicks GROUP BY user_id") ==
        "updates by (user_id)");
  // The select list reorders and renames: the key follows the column.
  CHECK(f.outputOf("SELECT count(*) AS n, user_id AS who FROM clicks GROUP BY user_id") ==
        "updates by (who)");
  // A group key that is not selected leaves updates no reader can apply.
  CHECK(f.outputOf("SELECT count(*) AS n FROM clicks GROUP BY user_id") == "updates, no key");
  // A computed key column is not the group key any more.
  CHECK(f.outputOf("SELECT upper(user_id) AS u, count(*) AS n FROM clicks GROUP BY user_id") ==
        "updates, no key");
  // One row for the whole stream: the empty key.
  CHECK(f.outputOf("SELECT count(*) AS n FROM clicks") == "updates by ()");

  PhysicalPlan p =
      f.flow("CREATE FLOW f INTO alerts AS SELECT user_id, count(*) AS n FROM clicks GROUP BY user_id");
  const Changelog& agg = f.find<AggregateSpec>(p).base().changelog;
  CHECK(agg.stateUnbounded);
  CHECK(agg.state == "a row per key, kept without bound");
  p = f.flow("CREATE FLOW f INTO alerts AS SELECT count(*) AS n FROM clicks");
  CHECK_FALSE(f.find<AggregateSpec>(p).base().changelog.stateUnbounded);
}

TEST_CASE("windows: updates by key and window, append once they emit on close") {
  Fixture f;
  CHECK(f.outputOf("SELECT user_id, window, count(*) AS n FROM clicks "
                   "GROUP BY user_id, window(ts, '10 seconds')") == "updates by (user_id, window)");
  CHECK(f.outputOf("SELECT user_id, window, count(*) AS n FROM clicks "
                   "GROUP BY user_id, window(ts, '10 seconds') EMIT ON WINDOW CLOSE") ==
        "append, unique (user_id, window)");
  // A session's window grows as rows arrive: its updates name no earlier row.
  CHECK(f.outputOf("SELECT user_id, window, count(*) AS n FROM clicks "
                   "GROUP BY user_id, session_window(ts, '1 minute')") == "updates, no key");
  CHECK(f.outputOf("SELECT user_id, window, count(*) AS n FROM clicks "
                   "GROUP BY user_id, session_window(ts, '1 minute') EMIT ON WINDOW CLOSE") ==
        "append, unique (user_id, window)");
  PhysicalPlan p = f.flow(
      "CREATE FLOW f INTO alerts AS SELECT user_id, window, count(*) AS n FROM clicks "
      "GROUP BY user_id, window(ts, '10 seconds')");
  CHECK_FALSE(f.find<AggregateSpec>(p).base().changelog.stateUnbounded);
}

TEST_CASE("a window's start or end stands for a window of a fixed size in the key") {
  Fixture f;
  CHECK(f.outputOf("SELECT window.start AS minute, user_id, count(*) AS n FROM clicks "
                   "GROUP BY window(ts, '1 minute'), user_id") == "updates by (user_id, minute)");
  CHECK(f.outputOf("SELECT user_id, window.end AS e, count(*) AS n FROM clicks "
                   "GROUP BY user_id, window(ts, '10 seconds', '5 seconds')") ==
        "updates by (user_id, e)");
  CHECK(f.outputOf("SELECT window.start AS minute, user_id, count(*) AS n FROM clicks "
                   "GROUP BY window(ts, '1 minute'), user_id EMIT ON WINDOW CLOSE") ==
        "append, unique (user_id, minute)");
  // Through a subquery's projection and a filter, still a window.
  CHECK(f.outputOf("SELECT m, user_id, n FROM (SELECT window.start AS m, user_id, "
                   "count(*) AS n FROM clicks GROUP BY window(ts, '1 minute'), user_id) "
                   "WHERE n > 1") == "updates by (user_id, m)");
  // A session's start does not name it: sessions merge.
  CHECK(f.outputOf("SELECT window.start AS s, user_id, count(*) AS n FROM clicks "
                   "GROUP BY session_window(ts, '1 minute'), user_id EMIT ON WINDOW CLOSE") ==
        "append");
  // A window's other fields, or a computed start, are not the window.
  CHECK(f.outputOf("SELECT user_id, count(*) AS n FROM clicks "
                   "GROUP BY window(ts, '1 minute'), user_id") == "updates, no key");
}

TEST_CASE("dedup is append; unique on its keys only while it remembers them") {
  Fixture f;
  CHECK(f.outputOf("SELECT DISTINCT ON (user_id) user_id, url FROM clicks") ==
        "append, unique (user_id)");
  PhysicalPlan p =
      f.flow("CREATE FLOW f INTO alerts AS SELECT DISTINCT ON (user_id) user_id, url FROM clicks");
  CHECK(f.find<DedupSpec>(p).base().changelog.stateUnbounded);
  CHECK(f.outputOf("SELECT DISTINCT ON (user_id) WITHIN WATERMARK user_id, url FROM clicks") ==
        "append");
  p = f.flow(
      "CREATE FLOW f INTO alerts AS SELECT DISTINCT ON (user_id) WITHIN WATERMARK user_id, url "
      "FROM clicks");
  CHECK_FALSE(f.find<DedupSpec>(p).base().changelog.stateUnbounded);
}

TEST_CASE("joins and unions keep the mode, not the key") {
  Fixture f;
  CHECK(f.outputOf("SELECT c.user_id, m.name FROM clicks c JOIN merchants m "
                   "ON c.amount = m.id") == "append");
  PhysicalPlan p = f.flow(
      "CREATE FLOW f INTO alerts AS SELECT c.user_id, i.its FROM clicks c JOIN imps i "
      "ON c.user_id = i.user_id AND i.its BETWEEN c.ts - INTERVAL '5' SECOND AND c.ts");
  const Changelog& join = f.find<StreamJoinSpec>(p).base().changelog;
  CHECK(join.mode == ChangelogMode::Append);
  CHECK_FALSE(join.stateUnbounded);
  CHECK(p.output.mode == ChangelogMode::Append);
  // Dedup per branch, then a union: each branch is unique, the union is not.
  p = f.flow(
      "CREATE FLOW f INTO alerts AS "
      "SELECT DISTINCT ON (user_id) user_id, amount FROM clicks UNION ALL "
      "SELECT DISTINCT ON (user_id) user_id, amount FROM more");
  CHECK(f.find<DedupSpec>(p).base().changelog.uniqueKey.has_value());
  CHECK(p.output.mode == ChangelogMode::Append);
  CHECK_FALSE(p.output.uniqueKey.has_value());
}

TEST_CASE("a join of a changelog source with an aggregation makes the aggregation retract") {
  Fixture f;
  f.ddl(R"(
    CREATE SOURCE accounts (id BIGINT, owner STRING)
      WITH (connector = 'kafka', subscribe = 'accounts', format = 'debezium-json');
    CREATE SINK changes2 WITH (connector = 'kafka', topic = 'changes2', format = 'debezium-json');
  )");
  // The IN subquery's grouping reads an append source and feeds the join
  // beside the retractions of the debezium-json source: were it left emitting
  // updates, the join would keep each of its updates as another row.
  PhysicalPlan p = f.flow(
      "CREATE FLOW f INTO changes2 AS SELECT id, owner FROM accounts WHERE owner IN "
      "(SELECT user_id FROM clicks)");
  const OperatorSpec& agg = f.find<AggregateSpec>(p);
  CHECK(agg.base().changelog.mode == ChangelogMode::Retract);
  const OperatorSpec& join = f.find<StreamJoinSpec>(p);
  CHECK(join.base().input == ChangelogMode::Retract);
  // The join finds a retracted row of the source without its Kafka columns.
  const auto& spec = join.as<StreamJoinSpec>();
  CHECK(spec.leftRecordColumns.size() == 5);
  CHECK(spec.rightRecordColumns.empty());
  CHECK(p.output.mode == ChangelogMode::Retract);
}
