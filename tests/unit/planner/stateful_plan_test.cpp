// Staged plans of the stateful operators, planned from SQL text: aggregation
// (HAVING, types, the grouping rule), windows, DISTINCT ON, broadcast and
// stream-stream joins, UNION ALL, subqueries under them, stage/task/slot
// counts, EXPLAIN, and the errors with their SQLSTATE and position. Bound
// expressions are evaluated on sample rows to check they read the right columns.
#include <doctest/doctest.h>

#include <algorithm>

#include "common/json.h"
#include "planner/planner.h"
#include "planner_fixture.h"

using namespace rtsql;
using namespace rtsql::testing;

namespace {

constexpr int64_t kSecond = 1000 * 1000;
constexpr int64_t kT0 = 1714557600000000;  // 2024-05-01 10:00:00

struct Fixture : PlannerFixture {
  Fixture() {
    partitions = 8;
    addClicksAndSinks(*this);
    ddl(R"(
      CREATE SOURCE orders (id BIGINT, user_id STRING, total DOUBLE, ots TIMESTAMP,
                            WATERMARK FOR ots AS ots - INTERVAL '5' SECOND)
        WITH (connector = 'kafka', subscribe = 'orders', format = 'json', maxPartitions = '4');
      CREATE SOURCE pays (order_id BIGINT, paid DOUBLE, pts TIMESTAMP, WATERMARK FOR pts AS pts)
        WITH (connector = 'kafka', subscribe = 'pays', format = 'json', maxPartitions = '4');
      CREATE SOURCE ev (event_id STRING, k STRING, v INT, ts TIMESTAMP,
                        WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
        WITH (connector = 'kafka', subscribe = 'ev', format = 'json', maxPartitions = '8');
      CREATE SOURCE nowm (id BIGINT, ts TIMESTAMP)
        WITH (connector = 'kafka', subscribe = 'n', format = 'json');
      CREATE TABLE merchants (id BIGINT, name STRING, risk DOUBLE);
    )");
    auto rows = std::make_shared<std::vector<Row>>();
    rows->push_back({Value::bigint(1), Value::string("acme"), Value::float64(0.9)});
    rows->push_back({Value::bigint(2), Value::string("bolt"), Value::float64(0.1)});
    catalog.setTableRows("merchants", rows);
  }
};

// clicks: user_id url amount ts info tags + 5 hidden Kafka columns.
Row click(const std::string& user, const std::string& url, double amount, int64_t ts = kT0) {
  return Row{Value::string(user), Value::string(url), Value::float64(amount), Value::timestamp(ts),
             Value::structure({Value::string("fr"), Value::integer(75)}), Value::array({}),
             Value::binary("k"), Value::timestamp(ts), Value::integer(0), Value::bigint(7),
             Value::array({})};
}

// orders: id user_id total ots + hidden; pays: order_id paid pts + hidden.
Row order(int64_t id, double total, int64_t ts) {
  return Row{Value::bigint(id), Value::string("u"), Value::float64(total), Value::timestamp(ts),
             Value::binary("k"), Value::timestamp(ts), Value::integer(0), Value::bigint(1),
             Value::array({})};
}

Row applyProject(const OperatorSpec& op, const Row& row) {
  REQUIRE(op.is<ProjectSpec>());
  Row out;
  for (const auto& e : op.as<ProjectSpec>().exprs) out.push_back(e->eval(row));
  return out;
}

Row evalAll(const std::vector<ExprPtr>& exprs, const Row& row) {
  Row out;
  for (const auto& e : exprs) out.push_back(e->eval(row));
  return out;
}

std::string head(const std::string& options = "") {
  return "CREATE FLOW f INTO alerts " + options + " AS ";
}

// Into a sink that writes every change, for flows that retract rows.
std::string changesHead(const std::string& options = "") {
  return "CREATE FLOW f INTO changes " + options + " AS ";
}

}  // namespace

TEST_CASE("GROUP BY: two stages, pre-projection, aggregate, HAVING, select list, sink key") {
  Fixture f;
  PhysicalPlan p = f.flow(head("WITH ('shuffle.partitions' = '20')") +
                          "SELECT user_id, count(*) AS n, sum(amount) AS total, max(url) AS top "
                          "FROM clicks WHERE amount > 1 GROUP BY user_id HAVING count(*) > 2");
  CHECK(p.shufflePartitions == 20);
  REQUIRE(p.stages.size() == 2);
  REQUIRE(p.scans.size() == 1);
  CHECK(p.scans.at(0).name == "clicks");
  const StageSpec& src = p.stages[0];
  const StageSpec& agg = p.stages[1];
  CHECK(src.scan == 0);
  CHECK(src.tasks == 8);
  CHECK(src.output.kind == StageOutput::Kind::Shuffle);
  CHECK(src.output.targetStage == 1);
  CHECK(src.output.targetInput == 0);
  REQUIRE(src.operators.size() == 2);
  CHECK(src.operators[0].is<FilterSpec>());
  CHECK(src.outputSchema.toString() == "(user_id STRING, amount DOUBLE, url STRING)");
  Row shuffled = applyProject(src.operators[1], click("u1", "b", 4.5));
  CHECK(shuffled == Row{Value::string("u1"), Value::float64(4.5), Value::string("b")});
  REQUIRE(src.output.keys.size() == 1);
  CHECK(src.output.keys[0]->eval(shuffled).asString() == "u1");

  CHECK(agg.scan == -1);
  CHECK(agg.inputs == 1);
  CHECK(agg.tasks == 20);
  CHECK(agg.output.kind == StageOutput::Kind::Sink);
  REQUIRE(agg.operators.size() == 3);
  CHECK(agg.operators[0].is<AggregateSpec>());
  const AggregateSpec& a = agg.operators[0].as<AggregateSpec>();
  CHECK(a.window.kind == WindowKind::None);
  REQUIRE(a.groupKeys.size() == 1);
  CHECK(a.groupKeys[0]->eval(shuffled).asString() == "u1");
  REQUIRE(a.aggregates.size() == 3);
  CHECK(a.aggregates[0].function == AggregateFunction::CountStar);
  CHECK_FALSE(a.aggregates[0].arg);
  CHECK(a.aggregates[1].function == AggregateFunction::Sum);
  CHECK(a.aggregates[1].arg->eval(shuffled).asDouble() == 4.5);
  CHECK(a.aggregates[2].function == AggregateFunction::Max);
  CHECK(a.aggregates[2].arg->eval(shuffled).asString() == "b");
  CHECK(a.output.toString() ==
        "(user_id STRING, count(*) BIGINT, sum(amount) DOUBLE, max(url) STRING)");

  // HAVING and the select list read the aggregate's output row.
  Row aggRow{Value::string("u1"), Value::bigint(3), Value::float64(9.0), Value::string("z")};
  CHECK(agg.operators[1].is<FilterSpec>());
  CHECK(agg.operators[1].as<FilterSpec>().predicate->eval(aggRow).asBool());
  Row small{Value::string("u1"), Value::bigint(2), Value::float64(9.0), Value::string("z")};
  CHECK_FALSE(agg.operators[1].as<FilterSpec>().predicate->eval(small).asBool());
  CHECK(applyProject(agg.operators[2], aggRow) ==
        Row{Value::string("u1"), Value::bigint(3), Value::float64(9.0), Value::string("z")});
  CHECK(p.sink.input.toString() == "(user_id STRING, n BIGINT, total DOUBLE, top STRING)");
  // The group key is the Kafka key of a json sink.
  CHECK(p.sink.keyColumn == 0);
  CHECK(p.sink.keyColumns == std::vector<int>{0});

  // Operator ids are unique in the flow.
  std::vector<int> ids;
  for (const auto& s : p.stages) {
    for (const auto& op : s.operators) ids.push_back(op.id());
  }
  std::sort(ids.begin(), ids.end());
  CHECK(std::adjacent_find(ids.begin(), ids.end()) == ids.end());
}

TEST_CASE("aggregate result types and argument errors") {
  Fixture f;
  PhysicalPlan p = f.flow(head() +
                          "SELECT k, count(v) AS c, sum(v) AS s, avg(v) AS a, min(v) AS lo, "
                          "max(ts) AS hi, sum(v * 1.5) AS d FROM ev GROUP BY k");
  CHECK(p.sink.input.toString() ==
        "(k STRING, c BIGINT, s BIGINT, a DOUBLE, lo INT, hi TIMESTAMP, d DECIMAL(23,1))");
  const AggregateSpec& a = p.stages[1].operators[0].as<AggregateSpec>();
  REQUIRE(a.aggregates.size() == 6);
  CHECK(a.aggregates[0].resultType->id == TypeId::BigInt);
  CHECK(a.aggregates[1].resultType->id == TypeId::BigInt);
  CHECK(a.aggregates[2].resultType->id == TypeId::Double);
  CHECK(a.aggregates[3].resultType->id == TypeId::Int);
  // Arguments used by several aggregates are shuffled once.
  CHECK(p.stages[0].outputSchema.toString() ==
        "(k STRING, v INT, ts TIMESTAMP, (CAST(v AS DECIMAL(10,0)) * 1.5BD) DECIMAL(13,1))");

  std::string sql = head() + "SELECT k, sum(event_id) FROM ev GROUP BY k";
  SqlError e = sqlErrorOf([&] { f.flow(sql); });
  CHECK(e.sqlstate() == "42804");
  CHECK(e.position() == sql.find("event_id)"));
  sql = head() + "SELECT k, avg(ts) FROM ev GROUP BY k";
  e = sqlErrorOf([&] { f.flow(sql); });
  CHECK(e.sqlstate() == "42804");
  sql = head() + "SELECT k, sum(count(*)) FROM ev GROUP BY k";
  e = sqlErrorOf([&] { f.flow(sql); });
  CHECK(e.sqlstate() == "42803");
  CHECK(e.position() == sql.find("count(*)"));
}

TEST_CASE("the grouping rule: 42803 at the column, Spark's message") {
  Fixture f;
  std::string sql = head() + "SELECT user_id, url, count(*) FROM clicks GROUP BY user_id";
  SqlError e = sqlErrorOf([&] { f.flow(sql); });
  CHECK(e.sqlstate() == "42803");
  CHECK(e.message() == "expression \"url\" is neither in GROUP BY nor an aggregate");
  CHECK(e.position() == sql.find("url,"));
  CHECK_FALSE(e.hint().empty());

  sql = head() + "SELECT user_id, count(*) FROM clicks GROUP BY user_id HAVING amount > 1";
  e = sqlErrorOf([&] { f.flow(sql); });
  CHECK(e.sqlstate() == "42803");
  CHECK(e.position() == sql.find("amount >"));

  sql = head() + "SELECT *, count(*) AS n FROM clicks GROUP BY user_id";
  e = sqlErrorOf([&] { f.flow(sql); });
  CHECK(e.sqlstate() == "42803");

  // Expressions over keys, qualified spellings, struct fields of a grouped
  // struct, GROUP BY an alias or an ordinal all follow the rule.
  PhysicalPlan p = f.flow(head() +
                          "SELECT upper(c.user_id) AS u, info.country AS country, "
                          "count(*) * 2 AS n2 FROM clicks c GROUP BY user_id, info");
  Row aggRow{Value::string("ab"), Value::structure({Value::string("fr"), Value::integer(1)}),
             Value::bigint(4)};
  CHECK(applyProject(p.stages[1].operators.back(), aggRow) ==
        Row{Value::string("AB"), Value::string("fr"), Value::bigint(8)});
  // Not every group key is selected: no default Kafka key.
  CHECK(p.sink.keyColumn == -1);
  CHECK(p.sink.keyColumns.empty());

  p = f.flow(head() + "SELECT upper(url) AS u, count(*) AS n FROM clicks GROUP BY u");
  CHECK(p.stages[0].operators.back().as<ProjectSpec>().exprs[0]->eval(click("a", "x/y", 1)).asString() == "X/Y");
  CHECK(p.sink.keyColumn == 0);
  p = f.flow(head() + "SELECT upper(url) AS u, count(*) AS n FROM clicks GROUP BY 1");
  CHECK(p.stages[0].operators.back().as<ProjectSpec>().exprs[0]->eval(click("a", "x/y", 1)).asString() == "X/Y");
  sql = head() + "SELECT upper(url) AS u, count(*) AS n FROM clicks GROUP BY 3";
  e = sqlErrorOf([&] { f.flow(sql); });
  CHECK(e.sqlstate() == "42P10");
  CHECK(e.position() == sql.find("3"));
}

TEST_CASE("a global aggregate runs in one task") {
  Fixture f;
  PhysicalPlan p = f.flow(head() + "SELECT count(*) AS n, avg(amount) AS a FROM clicks");
  REQUIRE(p.stages.size() == 2);
  CHECK(p.stages[1].tasks == 1);
  CHECK(p.stages[0].output.keys.empty());
  CHECK(p.stages[1].operators[0].as<AggregateSpec>().groupKeys.empty());
  CHECK(p.slots() == 9);
  CHECK(p.sink.input.toString() == "(n BIGINT, a DOUBLE)");
}

TEST_CASE("windows: tumbling, sliding, session, the window struct, EMIT ON WINDOW CLOSE") {
  Fixture f;
  PhysicalPlan p = f.flow(head() +
                          "SELECT window.start, window.end, user_id, count(*) AS n FROM clicks "
                          "GROUP BY window(ts, '10 seconds'), user_id");
  REQUIRE(p.stages.size() == 2);
  CHECK(p.stages[1].operators[0].is<AggregateSpec>());
  const AggregateSpec& w = p.stages[1].operators[0].as<AggregateSpec>();
  CHECK(w.window.kind == WindowKind::Tumbling);
  CHECK(w.window.sizeMicros == 10 * kSecond);
  CHECK(w.window.slideMicros == 10 * kSecond);
  CHECK_FALSE(w.emitOnWindowClose);
  // The source stage shuffles by the keys without the window, with the time.
  Row shuffled = applyProject(p.stages[0].operators[0], click("u1", "a", 1, kT0 + 3));
  CHECK(shuffled == Row{Value::string("u1"), Value::timestamp(kT0 + 3)});
  CHECK(evalAll(p.stages[0].output.keys, shuffled) == Row{Value::string("u1")});
  CHECK(w.window.time->eval(shuffled).asInt() == kT0 + 3);
  CHECK(w.output.toString() ==
        "(user_id STRING, window STRUCT<start: TIMESTAMP, end: TIMESTAMP>, count(*) BIGINT)");
  Row aggRow{Value::string("u1"),
             Value::structure({Value::timestamp(kT0), Value::timestamp(kT0 + 10 * kSecond)}),
             Value::bigint(5)};
  CHECK(applyProject(p.stages[1].operators[1], aggRow) ==
        Row{Value::timestamp(kT0), Value::timestamp(kT0 + 10 * kSecond), Value::string("u1"),
            Value::bigint(5)});
  CHECK(p.sink.input.toString() == "(start TIMESTAMP, end TIMESTAMP, user_id STRING, n BIGINT)");

  // `SELECT window` and the window call itself name the struct; both group
  // keys selected make the Kafka key (window, user_id).
  p = f.flow(head() +
             "SELECT window, user_id, sum(amount) AS s FROM clicks "
             "GROUP BY window(ts, '1 minute', '10 seconds'), user_id EMIT ON WINDOW CLOSE");
  const AggregateSpec& s = p.stages[1].operators[0].as<AggregateSpec>();
  CHECK(s.window.kind == WindowKind::Sliding);
  CHECK(s.window.sizeMicros == 60 * kSecond);
  CHECK(s.window.slideMicros == 10 * kSecond);
  CHECK(s.emitOnWindowClose);
  CHECK(p.sink.input.columns[0].type->toString() == "STRUCT<start: TIMESTAMP, end: TIMESTAMP>");
  CHECK(p.sink.keyColumn == -1);
  CHECK(p.sink.keyColumns == std::vector<int>{0, 1});

  p = f.flow(head() +
             "SELECT session_window(ts, '5 minutes') AS session, user_id, count(*) AS n "
             "FROM clicks GROUP BY user_id, session_window(ts, INTERVAL '5' MINUTE)");
  CHECK(p.stages[1].operators[0].as<AggregateSpec>().window.kind == WindowKind::Session);
  CHECK(p.stages[1].operators[0].as<AggregateSpec>().window.gapMicros == 5 * 60 * kSecond);
  CHECK(p.sink.keyColumns == std::vector<int>{1, 0});

  // HAVING may test the window's fields too.
  p = f.flow(head() + "SELECT window, count(*) AS n FROM clicks GROUP BY window(ts, '10 seconds') "
                      "HAVING window.start >= TIMESTAMP '2024-05-01 10:00:00' AND count(*) > 1");
  REQUIRE(p.stages[1].operators[1].is<FilterSpec>());
  const FilterSpec& having = p.stages[1].operators[1].as<FilterSpec>();
  Row early{Value::structure({Value::timestamp(kT0 - kSecond), Value::timestamp(kT0)}),
            Value::bigint(2)};
  Row late{Value::structure({Value::timestamp(kT0), Value::timestamp(kT0 + 10 * kSecond)}),
           Value::bigint(2)};
  CHECK_FALSE(having.predicate->eval(early).asBool());
  CHECK(having.predicate->eval(late).asBool());
}

TEST_CASE("window errors") {
  Fixture f;
  std::string sql = head() + "SELECT count(*) FROM clicks GROUP BY window(url, '10 seconds')";
  SqlError e = sqlErrorOf([&] { f.flow(sql); });
  CHECK(e.sqlstate() == "42804");
  CHECK(e.position() == sql.find("url,"));

  sql = head() + "SELECT count(*) FROM nowm GROUP BY window(ts, '10 seconds')";
  e = sqlErrorOf([&] { f.flow(sql); });
  CHECK(e.sqlstate() == "42P10");
  CHECK(e.message() == "windowed aggregation on source \"nowm\" needs a WATERMARK");
  CHECK(e.position() == sql.find("window("));
  CHECK(e.hint().find("WATERMARK FOR") != std::string::npos);

  sql = head() + "SELECT count(*) FROM clicks GROUP BY window(ts, '10 seconds', '1 minute')";
  e = sqlErrorOf([&] { f.flow(sql); });
  CHECK(e.sqlstate() == "22023");
  CHECK(e.position() == sql.find("'1 minute'"));

  sql = head() + "SELECT count(*) FROM clicks GROUP BY window(ts, 'ten')";
  e = sqlErrorOf([&] { f.flow(sql); });
  CHECK(e.sqlstate() == "22P02");

  sql = head() + "SELECT user_id, count(*) FROM clicks GROUP BY user_id EMIT ON WINDOW CLOSE";
  e = sqlErrorOf([&] { f.flow(sql); });
  CHECK(e.sqlstate() == "0A000");
  CHECK(e.message().find("EMIT ON WINDOW CLOSE") != std::string::npos);

  sql = head() + "SELECT window(ts, '1 minute') AS w, count(*) FROM clicks "
                 "GROUP BY window(ts, '10 seconds')";
  e = sqlErrorOf([&] { f.flow(sql); });
  CHECK(e.sqlstate() == "42803");
  CHECK(e.position() == sql.find("window(ts, '1 minute')"));
}

TEST_CASE("DISTINCT ON, WITHIN WATERMARK and plain DISTINCT") {
  Fixture f;
  PhysicalPlan p = f.flow(head() + "SELECT DISTINCT ON (event_id) WITHIN WATERMARK k, v FROM ev");
  REQUIRE(p.stages.size() == 2);
  Row ev{Value::string("e1"), Value::string("k1"), Value::integer(3), Value::timestamp(kT0),
         Value::binary(""), Value::timestamp(kT0), Value::integer(0), Value::bigint(0),
         Value::array({})};
  Row shuffled = applyProject(p.stages[0].operators[0], ev);
  CHECK(evalAll(p.stages[0].output.keys, shuffled) == Row{Value::string("e1")});
  CHECK(p.stages[1].operators[0].is<DedupSpec>());
  const DedupSpec& d = p.stages[1].operators[0].as<DedupSpec>();
  CHECK(d.withinWatermark);
  CHECK(evalAll(d.dedupKeys, shuffled) == Row{Value::string("e1")});
  REQUIRE(d.eventTime);
  CHECK(d.eventTime->eval(shuffled).asInt() == kT0);
  CHECK(applyProject(p.stages[1].operators[1], shuffled) ==
        Row{Value::string("k1"), Value::integer(3)});
  CHECK(p.sink.input.toString() == "(k STRING, v INT)");
  CHECK(p.stages[1].operators[0].describe() == "Dedup keys=[event_id] within watermark");

  p = f.flow(head() + "SELECT DISTINCT user_id, url FROM clicks");
  const DedupSpec& plain = p.stages[1].operators[0].as<DedupSpec>();
  CHECK_FALSE(plain.withinWatermark);
  shuffled = applyProject(p.stages[0].operators[0], click("u", "x", 1));
  CHECK(evalAll(plain.dedupKeys, shuffled) == Row{Value::string("u"), Value::string("x")});

  std::string sql = head() + "SELECT DISTINCT ON (id) WITHIN WATERMARK * FROM nowm";
  SqlError e = sqlErrorOf([&] { f.flow(sql); });
  CHECK(e.sqlstate() == "42P10");
  CHECK(e.position() == sql.find("id)"));
  // Without WITHIN WATERMARK keys are kept forever: no watermark needed.
  CHECK(f.flow(head() + "SELECT DISTINCT ON (id) * FROM nowm").stages.size() == 2);
}

TEST_CASE("broadcast join with a static table") {
  Fixture f;
  PhysicalPlan p = f.flow(head() +
                          "SELECT /*+ BROADCAST(m) */ o.id, m.name, total FROM orders o "
                          "JOIN merchants m ON o.id = m.id AND m.risk > 0.5 WHERE total > 10");
  REQUIRE(p.stages.size() == 1);
  const StageSpec& st = p.stages[0];
  CHECK(st.tasks == 4);
  REQUIRE(st.operators.size() == 3);
  CHECK(st.operators[0].is<BroadcastJoinSpec>());
  const BroadcastJoinSpec& j = st.operators[0].as<BroadcastJoinSpec>();
  CHECK_FALSE(j.leftOuter);
  REQUIRE(j.tableRows);
  CHECK(j.tableRows->size() == 2);
  CHECK(j.tableName == "merchants");
  Row o = order(1, 50, kT0);
  REQUIRE(j.probeKeys.size() == 1);
  CHECK(j.probeKeys[0]->eval(o).asInt() == 1);
  CHECK(j.buildKeys[0]->eval((*j.tableRows)[0]).asInt() == 1);
  Row joined = o;
  for (const auto& v : (*j.tableRows)[0]) joined.push_back(v);
  REQUIRE(j.residual);
  CHECK(j.residual->eval(joined).asBool());
  CHECK(j.output.size() == 12);
  CHECK(st.operators[1].is<FilterSpec>());
  CHECK(st.operators[1].as<FilterSpec>().predicate->eval(joined).asBool());
  CHECK(applyProject(st.operators[2], joined) ==
        Row{Value::bigint(1), Value::string("acme"), Value::float64(50)});
  CHECK(j.describe() == "BroadcastJoin inner table=merchants (2 rows) on [o.id = m.id] and "
                        "(m.risk > 0.5)");

  // LEFT JOIN, table written first with a RIGHT JOIN, `*` in the written order.
  p = f.flow(head() + "SELECT o.id, name FROM orders o LEFT JOIN merchants m ON m.id = o.id");
  CHECK(p.stages[0].operators[0].as<BroadcastJoinSpec>().leftOuter);
  CHECK(p.stages[0].operators[0].as<BroadcastJoinSpec>().probeKeys[0]->eval(o).asInt() == 1);
  p = f.query("SELECT * FROM merchants m RIGHT JOIN orders o ON m.id = o.id");
  CHECK(p.stages[0].operators[0].as<BroadcastJoinSpec>().leftOuter);
  CHECK(p.sink.input.toString() ==
        "(id BIGINT, name STRING, risk DOUBLE, id BIGINT, user_id STRING, total DOUBLE, "
        "ots TIMESTAMP)");
  // (a live query may repeat names; a flow may not)
  std::string sql = head() + "SELECT * FROM orders o JOIN merchants m ON m.id = o.id";
  SqlError e = sqlErrorOf([&] { f.flow(sql); });
  CHECK(e.sqlstate() == "42701");
}

TEST_CASE("broadcast join errors") {
  Fixture f;
  std::string sql = head() + "SELECT /*+ BROADCAST(x) */ o.id FROM orders o JOIN merchants m "
                             "ON o.id = m.id";
  SqlError e = sqlErrorOf([&] { f.flow(sql); });
  CHECK(e.sqlstate() == "42P01");
  CHECK(e.position() == sql.find("BROADCAST"));

  sql = head() + "SELECT m.name FROM merchants m LEFT JOIN orders o ON m.id = o.id";
  e = sqlErrorOf([&] { f.flow(sql); });
  CHECK(e.sqlstate() == "0A000");
  CHECK(e.position() == sql.find("orders o"));

  sql = head() + "SELECT o.id FROM orders o JOIN merchants m ON m.risk > o.total";
  e = sqlErrorOf([&] { f.flow(sql); });
  CHECK(e.sqlstate() == "0A000");
  CHECK(e.position() == sql.find("m.risk"));

  sql = head() + "SELECT id FROM orders o JOIN merchants m ON o.id = m.id";
  e = sqlErrorOf([&] { f.flow(sql); });
  CHECK(e.sqlstate() == "42702");
  CHECK(e.position() == sql.find("id FROM"));
}

TEST_CASE("stream-stream join: stages, keys, time bounds") {
  Fixture f;
  PhysicalPlan p = f.flow(head() +
                          "SELECT o.id, p.paid FROM orders o LEFT JOIN pays p "
                          "ON o.id = p.order_id AND p.pts BETWEEN o.ots AND o.ots + INTERVAL '1' "
                          "MINUTE WHERE p.paid IS NULL OR p.paid < o.total");
  REQUIRE(p.stages.size() == 3);
  REQUIRE(p.scans.size() == 2);
  CHECK(p.scans[0].name == "orders");
  CHECK(p.scans[1].name == "pays");
  CHECK(p.stages[0].scan == 0);
  CHECK(p.stages[1].scan == 1);
  CHECK(p.stages[0].output.targetStage == 2);
  CHECK(p.stages[0].output.targetInput == 0);
  CHECK(p.stages[1].output.targetStage == 2);
  CHECK(p.stages[1].output.targetInput == 1);
  CHECK(p.stages[2].inputs == 2);
  CHECK(p.stages[2].tasks == 8);
  CHECK(p.slots() == 16);
  CHECK(p.stages[2].operators[0].is<StreamJoinSpec>());
  const StreamJoinSpec& j = p.stages[2].operators[0].as<StreamJoinSpec>();
  CHECK(j.leftOuter);
  CHECK(j.lowerBoundMicros == 0);
  CHECK(j.upperBoundMicros == 60 * kSecond);
  Row o = order(7, 10, kT0);
  Row pay{Value::bigint(7), Value::float64(3), Value::timestamp(kT0 + 5), Value::binary(""),
          Value::timestamp(kT0), Value::integer(0), Value::bigint(0), Value::array({})};
  CHECK(evalAll(j.leftKeys, o) == Row{Value::bigint(7)});
  CHECK(evalAll(j.rightKeys, pay) == Row{Value::bigint(7)});
  CHECK(evalAll(p.stages[0].output.keys, o) == Row{Value::bigint(7)});
  CHECK(evalAll(p.stages[1].output.keys, pay) == Row{Value::bigint(7)});
  CHECK(j.leftTime->eval(o).asInt() == kT0);
  CHECK(j.rightTime->eval(pay).asInt() == kT0 + 5);
  CHECK(j.leftWidth == 9);
  CHECK(j.rightWidth == 8);
  CHECK_FALSE(j.residual);
  Row joined = o;
  joined.insert(joined.end(), pay.begin(), pay.end());
  CHECK(p.stages[2].operators[1].as<FilterSpec>().predicate->eval(joined).asBool());
  CHECK(applyProject(p.stages[2].operators[2], joined) ==
        Row{Value::bigint(7), Value::float64(3)});
  CHECK(j.describe() ==
        "StreamJoin left on [o.id = p.order_id] p.pts in [o.ots + 0 seconds, o.ots + 1 minute]");

  // >= / <= with intervals on either side; other conditions are the residual.
  p = f.flow(head() +
             "SELECT o.id FROM orders o JOIN pays p ON p.order_id = o.id "
             "AND p.pts + INTERVAL '10' SECOND >= o.ots AND o.ots + INTERVAL '2' MINUTE >= p.pts "
             "AND p.paid > o.total");
  const StreamJoinSpec& k = p.stages[2].operators[0].as<StreamJoinSpec>();
  CHECK_FALSE(k.leftOuter);
  CHECK(k.lowerBoundMicros == -10 * kSecond);
  CHECK(k.upperBoundMicros == 120 * kSecond);
  REQUIRE(k.residual);
  Row pay2 = pay;
  pay2[1] = Value::float64(20);
  Row joined2 = o;
  joined2.insert(joined2.end(), pay2.begin(), pay2.end());
  CHECK(k.residual->eval(joined2).asBool());
  CHECK_FALSE(k.residual->eval(joined).asBool());
}

TEST_CASE("stream-stream join errors") {
  Fixture f;
  std::string sql = head() + "SELECT o.id FROM orders o JOIN pays p ON o.total > p.paid";
  SqlError e = sqlErrorOf([&] { f.flow(sql); });
  CHECK(e.sqlstate() == "0A000");
  CHECK(e.message().find("needs an equality") != std::string::npos);
  CHECK(e.position() == sql.find("o.total >"));
  CHECK(e.hint().find("BETWEEN") != std::string::npos);

  sql = head() + "SELECT o.id FROM orders o RIGHT JOIN pays p ON o.id = p.order_id AND "
                 "p.pts BETWEEN o.ots AND o.ots + INTERVAL '1' MINUTE";
  e = sqlErrorOf([&] { f.flow(sql); });
  CHECK(e.sqlstate() == "0A000");
  sql = head() + "SELECT o.id FROM orders o FULL JOIN pays p ON o.id = p.order_id AND "
                 "p.pts BETWEEN o.ots AND o.ots + INTERVAL '1' MINUTE";
  e = sqlErrorOf([&] { f.flow(sql); });
  CHECK(e.sqlstate() == "0A000");

  sql = head() + "SELECT o.id FROM orders o JOIN nowm n ON o.id = n.id AND "
                 "n.ts BETWEEN o.ots AND o.ots + INTERVAL '1' MINUTE";
  e = sqlErrorOf([&] { f.flow(sql); });
  CHECK(e.sqlstate() == "42P10");
  CHECK(e.message().find("\"nowm\" needs a WATERMARK") != std::string::npos);
  CHECK(e.position() == sql.find("nowm n"));

  sql = head() + "SELECT o.id FROM orders o JOIN pays p ON o.id = p.order_id AND "
                 "p.pts BETWEEN o.ots + INTERVAL '1' MINUTE AND o.ots";
  e = sqlErrorOf([&] { f.flow(sql); });
  CHECK(e.sqlstate() == "22023");
}

TEST_CASE("UNION ALL: one source stage per term, widened types, errors") {
  Fixture f;
  PhysicalPlan p = f.flow(head() +
                          "SELECT user_id, amount FROM clicks UNION ALL "
                          "SELECT user_id, v FROM (SELECT k AS user_id, v FROM ev) s");
  REQUIRE(p.stages.size() == 2);
  CHECK(p.scans.size() == 2);
  CHECK(p.stages[0].output.kind == StageOutput::Kind::Sink);
  CHECK(p.stages[1].output.kind == StageOutput::Kind::Sink);
  CHECK(p.sink.input.toString() == "(user_id STRING, amount DOUBLE)");
  CHECK(p.stages[1].outputSchema.toString() == "(user_id STRING, amount DOUBLE)");
  Row ev{Value::string("e1"), Value::string("k1"), Value::integer(3), Value::timestamp(kT0),
         Value::binary(""), Value::timestamp(kT0), Value::integer(0), Value::bigint(0),
         Value::array({})};
  CHECK(applyProject(p.stages[1].operators.back(), ev) ==
        Row{Value::string("k1"), Value::float64(3.0)});
  CHECK(p.slots() == 16);

  std::string sql = head() + "SELECT user_id, amount FROM clicks UNION ALL SELECT k FROM ev";
  SqlError e = sqlErrorOf([&] { f.flow(sql); });
  CHECK(e.sqlstate() == "42601");
  CHECK(e.position() == sql.find("SELECT k"));

  sql = head() + "SELECT user_id, amount FROM clicks UNION ALL SELECT k, ts FROM ev";
  e = sqlErrorOf([&] { f.flow(sql); });
  CHECK(e.sqlstate() == "42804");
  CHECK(e.position() == sql.find("ts FROM"));

  // Under an aggregate both branches shuffle into the same stage.
  p = f.flow(head() + "SELECT u, count(*) AS n FROM (SELECT user_id AS u FROM clicks "
                      "UNION ALL SELECT user_id FROM orders) GROUP BY u");
  REQUIRE(p.stages.size() == 3);
  CHECK(p.stages[0].output.targetStage == 2);
  CHECK(p.stages[1].output.targetStage == 2);
  CHECK(p.explain().find("Stage 2: 8 tasks (shuffle by u from stages 0, 1)") != std::string::npos);
}

TEST_CASE("subqueries under stateful operators") {
  Fixture f;
  PhysicalPlan p = f.flow(head() +
                          "SELECT k, count(*) AS n FROM (SELECT upper(user_id) AS k FROM clicks "
                          "WHERE amount > 1) GROUP BY k");
  REQUIRE(p.stages.size() == 2);
  const StageSpec& src = p.stages[0];
  REQUIRE(src.operators.size() == 2);
  CHECK(src.operators[0].is<FilterSpec>());
  CHECK(applyProject(src.operators[1], click("ab", "x", 2)) == Row{Value::string("AB")});
  CHECK(p.sink.keyColumn == 0);

  // An aggregation over an aggregation reads its retractions
  // (aggregate_binder_test.cpp); DISTINCT ON over one is still refused.
  std::string sql = head() +
                    "SELECT DISTINCT ON (n) * FROM (SELECT user_id, count(*) AS n FROM "
                    "clicks GROUP BY user_id)";
  SqlError e = sqlErrorOf([&] { f.flow(sql); });
  CHECK(e.sqlstate() == "0A000");
  // A stateless query over an aggregation stays in its stage.
  p = f.flow(head() + "SELECT user_id FROM (SELECT user_id, count(*) AS n FROM clicks "
                      "GROUP BY user_id) WHERE n > 3");
  REQUIRE(p.stages.size() == 2);
  CHECK(p.stages[1].operators[1].is<FilterSpec>());
  CHECK(p.sink.keyColumn == 0);
}

TEST_CASE("task slots: 8, 28 and 48") {
  Fixture f;
  f.ddl("CREATE SOURCE events (event_id STRING, user_id STRING, ts TIMESTAMP, "
        "WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) WITH (connector = 'kafka', "
        "subscribe = 'events', format = 'json', maxPartitions = '8')");
  f.partitions = 12;
  PhysicalPlan a = f.flow(head() + "SELECT event_id, upper(user_id) AS u FROM events");
  CHECK(a.slots() == 8);
  CHECK(a.explain().find("Task slots: 8\n") != std::string::npos);

  PhysicalPlan b = f.flow(head("WITH ('shuffle.partitions' = '20')") +
                          "SELECT user_id, count(*) AS n FROM events GROUP BY user_id");
  CHECK(b.slots() == 28);
  CHECK(b.explain() ==
        "Flow f INTO alerts (kafka, json)  checkpoint every 5 minutes  with "
        "'shuffle.partitions' = '20'\n"
        "Stage 0: 8 tasks\n"
        "  Scan events (kafka json, subscribe=events, partitions 0..11, watermark ts - 5 seconds)\n"
        "  Project user_id  [append]\n"
        "  Shuffle by [user_id] to stage 1\n"
        "Stage 1: 20 tasks (shuffle by user_id from stage 0)\n"
        "  Aggregate keys=[user_id] aggs=[count(*)]  [updates by (user_id); state: a row per "
        "key, kept without bound]\n"
        "  Project user_id, count(*) AS n  [updates by (user_id)]\n"
        "  Sink alerts (kafka json, topic=alerts, key=user_id)\n"
        "Task slots: 28\n");

  PhysicalPlan c = f.flow(head("WITH ('shuffle.partitions' = '20')") +
                          "SELECT user_id, count(*) AS n FROM "
                          "(SELECT DISTINCT ON (event_id) * FROM events) GROUP BY user_id");
  CHECK(c.slots() == 48);
  REQUIRE(c.stages.size() == 3);
  CHECK(c.stages[1].operators[0].is<DedupSpec>());
  CHECK(c.stages[1].output.targetStage == 2);
  CHECK(c.stages[2].operators[0].is<AggregateSpec>());
  CHECK(c.explain() ==
        "Flow f INTO alerts (kafka, json)  checkpoint every 5 minutes  with "
        "'shuffle.partitions' = '20'\n"
        "Stage 0: 8 tasks\n"
        "  Scan events (kafka json, subscribe=events, partitions 0..11, watermark ts - 5 seconds)\n"
        "  Project event_id, user_id, ts  [append]\n"
        "  Shuffle by [event_id] to stage 1\n"
        "Stage 1: 20 tasks (shuffle by event_id from stage 0)\n"
        "  Dedup keys=[event_id]  [append, unique (event_id); state: every key seen, kept "
        "without bound]\n"
        "  Project user_id  [append]\n"
        "  Shuffle by [user_id] to stage 2\n"
        "Stage 2: 20 tasks (shuffle by user_id from stage 1)\n"
        "  Aggregate keys=[user_id] aggs=[count(*)]  [updates by (user_id); state: a row per "
        "key, kept without bound]\n"
        "  Project user_id, count(*) AS n  [updates by (user_id)]\n"
        "  Sink alerts (kafka json, topic=alerts, key=user_id)\n"
        "Task slots: 48\n");
}

TEST_CASE("shuffle.partitions: flow option, else the session, else 8") {
  Fixture f;
  const std::string q = "SELECT user_id, count(*) AS n FROM clicks GROUP BY user_id";
  CHECK(f.flow(head() + q).shufflePartitions == 8);
  f.ctx.session = Options({OptionEntry{"shuffle.partitions", "3", 0, 0}});
  PhysicalPlan p = f.flow(head() + q);
  CHECK(p.shufflePartitions == 3);
  CHECK(p.stages[1].tasks == 3);
  CHECK(f.flow(head("WITH ('shuffle.partitions' = '5')") + q).stages[1].tasks == 5);
  CHECK(f.query(q).stages[1].tasks == 3);
  f.ctx.session = Options({OptionEntry{"shuffle.partitions", "zero", 0, 0}});
  SqlError e = sqlErrorOf([&] { f.flow(head() + q); });
  CHECK(e.sqlstate() == "22023");
}

TEST_CASE("EXPLAIN SELECT of a windowed aggregation") {
  Fixture f;
  PhysicalPlan p = f.query(
      "SELECT window.start, user_id, count(*) AS n FROM clicks "
      "GROUP BY window(ts, '10 seconds'), user_id EMIT ON WINDOW CLOSE");
  CHECK(p.explain() ==
        "Query (rows stream to the client)\n"
        "Stage 0: 8 tasks\n"
        "  Scan clicks (kafka json, subscribe=clicks, partitions 0..7, watermark ts - 10 seconds)\n"
        "  Project user_id, ts  [append]\n"
        "  Shuffle by [user_id] to stage 1\n"
        "Stage 1: 8 tasks (shuffle by user_id from stage 0)\n"
        "  WindowAggregate window=tumbling 10 seconds on ts keys=[user_id] aggs=[count(*)] "
        "emit on window close  [append, unique (user_id, window); state: a row per key and "
        "window, dropped when the watermark passes the window's end]\n"
        "  Project window.start AS start, user_id, count(*) AS n  [append, unique (user_id, "
        "start)]\n"
        "  Sink client\n"
        "Task slots: 16\n");
}

TEST_CASE("regular stream-stream join: no time bound, outer kinds, the changelog it reads") {
  Fixture f;
  // Without a time bound: keys only, no watermark needed, the rows kept
  // without bound, append output.
  PhysicalPlan p = f.flow(changesHead() + "SELECT o.id, n.ts FROM orders o JOIN nowm n ON o.id = n.id");
  REQUIRE(p.stages.size() == 3);
  const StreamJoinSpec& j = p.stages[2].operators[0].as<StreamJoinSpec>();
  CHECK(j.unbounded);
  CHECK_FALSE(j.leftOuter);
  CHECK_FALSE(j.rightOuter);
  CHECK(j.stateTtlMicros == 0);
  CHECK(j.describe() == "StreamJoin inner on [o.id = n.id]");
  CHECK(j.changelog.mode == ChangelogMode::Append);
  CHECK(j.changelog.stateUnbounded);
  CHECK(j.changelog.state == "the rows of both sides per key, kept without bound");
  CHECK(p.output.mode == ChangelogMode::Append);
  REQUIRE(j.leftTime);
  CHECK_FALSE(j.rightTime);  // nowm has no watermark
  Row o = order(7, 10, kT0);
  CHECK(evalAll(j.leftKeys, o) == Row{Value::bigint(7)});

  // A bound on one side only filters the pairs: the join is a regular one
  // with the condition as its residual.
  p = f.flow(changesHead() +
             "SELECT o.id FROM orders o JOIN pays p ON o.id = p.order_id AND "
             "p.pts >= o.ots");
  const StreamJoinSpec& h = p.stages[2].operators[0].as<StreamJoinSpec>();
  CHECK(h.unbounded);
  CHECK(h.describe() == "StreamJoin inner on [o.id = p.order_id] and (p.pts >= o.ots)");
  REQUIRE(h.residual);
  Row pay{Value::bigint(7),      Value::float64(3), Value::timestamp(kT0 + 5), Value::binary(""),
          Value::timestamp(kT0), Value::integer(0), Value::bigint(0),          Value::array({})};
  Row joined = o;
  joined.insert(joined.end(), pay.begin(), pay.end());
  CHECK(h.residual->eval(joined).asBool());
  pay[2] = Value::timestamp(kT0 - 5);
  joined = o;
  joined.insert(joined.end(), pay.begin(), pay.end());
  CHECK_FALSE(h.residual->eval(joined).asBool());

  // Outer joins of every kind retract.
  struct Case {
    const char* join;
    bool left, right;
    const char* text;
  };
  for (const Case& c : {Case{"LEFT", true, false, "left"}, Case{"RIGHT", false, true, "right"},
                        Case{"FULL", true, true, "full"}}) {
    CAPTURE(c.join);
    p = f.flow(changesHead() + "SELECT o.id, p.paid FROM orders o " + c.join +
               " JOIN pays p ON o.id = p.order_id");
    const StreamJoinSpec& k = p.stages[2].operators[0].as<StreamJoinSpec>();
    CHECK(k.unbounded);
    CHECK(k.leftOuter == c.left);
    CHECK(k.rightOuter == c.right);
    CHECK(k.describe() == std::string("StreamJoin ") + c.text + " on [o.id = p.order_id]");
    CHECK(k.changelog.mode == ChangelogMode::Retract);
    CHECK(p.output.mode == ChangelogMode::Retract);
  }

  // A join reads an aggregation's changelog: the aggregation retracts, so
  // does the join.
  p = f.flow(changesHead() +
             "SELECT o.id, s.n FROM orders o JOIN (SELECT order_id, count(*) AS n "
             "FROM pays GROUP BY order_id) s ON o.id = s.order_id");
  const OperatorSpec* agg = nullptr;
  const OperatorSpec* join = nullptr;
  for (const StageSpec& s : p.stages) {
    for (const OperatorSpec& op : s.operators) {
      if (op.is<AggregateSpec>()) agg = &op;
      if (op.is<StreamJoinSpec>()) join = &op;
    }
  }
  REQUIRE(agg);
  REQUIRE(join);
  CHECK(agg->base().changelog.mode == ChangelogMode::Retract);
  CHECK(join->base().input == ChangelogMode::Retract);
  CHECK(join->base().changelog.mode == ChangelogMode::Retract);
  CHECK(join->as<StreamJoinSpec>().unbounded);

  // A regular join reads another one's retractions.
  p = f.flow(changesHead() +
             "SELECT j.id, n.ts FROM (SELECT o.id, p.paid FROM orders o LEFT JOIN pays p "
             "ON o.id = p.order_id) j JOIN nowm n ON j.id = n.id");
  std::vector<const OperatorSpec*> joins;
  for (const StageSpec& s : p.stages) {
    for (const OperatorSpec& op : s.operators) {
      if (op.is<StreamJoinSpec>()) joins.push_back(&op);
    }
  }
  REQUIRE(joins.size() == 2);
  CHECK(joins[0]->base().input == ChangelogMode::Append);
  CHECK(joins[0]->base().changelog.mode == ChangelogMode::Retract);
  CHECK(joins[1]->base().input == ChangelogMode::Retract);
  CHECK(joins[1]->base().changelog.mode == ChangelogMode::Retract);
  CHECK_FALSE(joins[1]->as<StreamJoinSpec>().leftOuter);

  // The final rows of closed windows are append: so is the join of them.
  p = f.flow(changesHead() +
             "SELECT o.id, w.m FROM orders o JOIN (SELECT max(total) AS m, "
             "window.end AS wend FROM orders GROUP BY window(ots, '10 seconds') "
             "EMIT ON WINDOW CLOSE) w ON o.total = w.m "
             "WHERE o.ots BETWEEN w.wend - INTERVAL '10' SECOND AND w.wend");
  for (const StageSpec& s : p.stages) {
    for (const OperatorSpec& op : s.operators) {
      if (op.is<StreamJoinSpec>()) join = &op;
    }
  }
  CHECK(join->base().input == ChangelogMode::Append);
  CHECK(join->base().changelog.mode == ChangelogMode::Append);
  CHECK(p.output.mode == ChangelogMode::Append);
}

TEST_CASE("regular stream-stream join: 'state.ttl' and the errors") {
  Fixture f;
  PhysicalPlan p = f.flow(changesHead("WITH ('state.ttl' = '1 hour')") +
                          "SELECT o.id FROM orders o LEFT JOIN pays p ON o.id = p.order_id");
  const StreamJoinSpec& j = p.stages[2].operators[0].as<StreamJoinSpec>();
  CHECK(j.stateTtlMicros == 3600 * kSecond);
  CHECK_FALSE(j.changelog.stateUnbounded);
  CHECK(j.changelog.state ==
        "the rows of both sides per key, dropped when the watermark passes their event time + 1 "
        "hour");
  CHECK(p.explain().find("with 'state.ttl' = '1 hour'") != std::string::npos);

  // The TTL needs a watermark on both sides.
  std::string sql = changesHead("WITH ('state.ttl' = '1 hour')") +
                    "SELECT o.id FROM orders o JOIN nowm n ON o.id = n.id";
  SqlError e = sqlErrorOf([&] { f.flow(sql); });
  CHECK(e.sqlstate() == "42P10");
  CHECK(e.position() == sql.find("'1 hour'"));
  CHECK(e.hint().find("WATERMARK FOR") != std::string::npos);

  sql = changesHead("WITH ('state.ttl' = '10 milliseconds')") +
        "SELECT o.id FROM orders o JOIN pays p ON o.id = p.order_id";
  e = sqlErrorOf([&] { f.flow(sql); });
  CHECK(e.sqlstate() == "22023");
  CHECK(e.position() == sql.find("'10 milliseconds'"));

  sql = changesHead("WITH ('state.ttl' = 'soon')") +
        "SELECT o.id FROM orders o JOIN pays p ON o.id = p.order_id";
  e = sqlErrorOf([&] { f.flow(sql); });
  CHECK(e.sqlstate() != "");

  // Nothing for the TTL to bound.
  sql = changesHead("WITH ('state.ttl' = '1 hour')") +
        "SELECT o.id FROM orders o JOIN pays p ON o.id = p.order_id AND "
        "p.pts BETWEEN o.ots AND o.ots + INTERVAL '1' MINUTE";
  e = sqlErrorOf([&] { f.flow(sql); });
  CHECK(e.sqlstate() == "22023");
  CHECK(e.message().find("without a time bound") != std::string::npos);

  // A regular join's rows have no event time a watermark bounds: no window
  // over them.
  sql = changesHead() +
        "SELECT count(*) FROM (SELECT o.ots FROM orders o JOIN pays p "
        "ON o.id = p.order_id) j GROUP BY window(ots, '1 minute')";
  e = sqlErrorOf([&] { f.flow(sql); });
  CHECK(e.sqlstate() == "42P10");

  // The final rows of windows are append-only but have no event time: a time
  // bound on them cannot be an interval join.
  sql = changesHead() +
        "SELECT o.id FROM orders o JOIN (SELECT max(total) AS m, window.end AS wend "
        "FROM orders GROUP BY window(ots, '10 seconds') EMIT ON WINDOW CLOSE) w "
        "ON o.total = w.m AND o.ots BETWEEN w.wend - INTERVAL '10' SECOND AND w.wend";
  e = sqlErrorOf([&] { f.flow(sql); });
  CHECK(e.sqlstate() == "42P10");
  CHECK(e.message().find("the rows of \"w\" have none") != std::string::npos);
  CHECK(e.hint().find("from ON to WHERE") != std::string::npos);

  // An interval join reads append-only streams.
  sql = changesHead() +
        "SELECT o.id FROM orders o JOIN (SELECT order_id, max(pts) AS pts FROM pays "
        "GROUP BY order_id) p ON o.id = p.order_id AND "
        "p.pts BETWEEN o.ots AND o.ots + INTERVAL '1' MINUTE";
  e = sqlErrorOf([&] { f.flow(sql); });
  CHECK(e.sqlstate() == "0A000");
  CHECK(e.message().find("time bound") != std::string::npos);
  CHECK(e.hint().find("EMIT ON WINDOW CLOSE") != std::string::npos);
  CHECK(e.position() == sql.find("(SELECT order_id"));
}
