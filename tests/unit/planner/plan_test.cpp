// Flow planning: the acceptance query evaluated through its planned operators,
// output names, sink format checks, task counts, EXPLAIN text, flow options, and
// the constructs that are refused (0A000) at their position.
#include <doctest/doctest.h>

#include "common/json.h"
#include "planner/flow_dead_letters.h"
#include "planner/planner.h"
#include "planner/sink_changelog.h"
#include "planner_fixture.h"

using namespace rtsql;
using namespace rtsql::testing;

namespace {

struct FlowFixture : PlannerFixture {
  FlowFixture() { addClicksAndSinks(*this); }
};

Row clicksRow(const std::string& user, const std::string& url, double amount) {
  return Row{Value::string(user), Value::string(url), Value::float64(amount),
             Value::timestamp(1714557600000000), Value(), Value(),
             Value::binary("k"), Value::timestamp(1714557600000000), Value::integer(0),
             Value::bigint(7), Value::array({})};
}

// Runs a single-stage plan's operators over one row, as the executor would:
// nullopt when a filter drops it.
std::optional<Row> runStage(const StageSpec& stage, Row row) {
  for (const auto& op : stage.operators) {
    if (op.is<FilterSpec>()) {
      Value keep = op.as<FilterSpec>().predicate->eval(row);
      if (keep.isNull() || !keep.asBool()) return std::nullopt;
    } else {
      Row out;
      for (const auto& e : op.as<ProjectSpec>().exprs) out.push_back(e->eval(row));
      row = std::move(out);
    }
  }
  return row;
}

const char* kAcceptance =
    "CREATE FLOW f INTO alerts AS "
    "SELECT user_id, upper(url) AS url, amount * 2 AS doubled FROM clicks WHERE amount > 10";

}  // namespace

TEST_CASE("the acceptance flow: plan shape and evaluation on sample rows") {
  FlowFixture f;
  PhysicalPlan p = f.flow(kAcceptance);
  CHECK(p.flowName == "f");
  CHECK(p.scans.at(0).name == "clicks");
  CHECK(p.scans.at(0).connector == "kafka");
  CHECK(p.scans.at(0).format == "json");
  CHECK(p.scans.at(0).schema.size() == 11);
  CHECK(p.scans.at(0).eventTimeColumn == 3);
  CHECK(p.scans.at(0).watermarkDelayMicros == 10 * 1000 * 1000);
  REQUIRE(p.stages.size() == 1);
  const StageSpec& stage = p.stages[0];
  CHECK(stage.tasks == 2);
  REQUIRE(stage.operators.size() == 2);
  CHECK(stage.operators[0].is<FilterSpec>());
  CHECK(stage.operators[1].is<ProjectSpec>());
  CHECK(p.sink.name == "alerts");
  CHECK(p.sink.connector == "kafka");
  CHECK(p.sink.format == "json");
  CHECK(p.sink.input.toString() == "(user_id STRING, url STRING, doubled DOUBLE)");
  CHECK(p.sink.keyColumn == -1);
  CHECK(p.checkpointIntervalMicros == 5LL * 60 * 1000 * 1000);

  auto out = runStage(stage, clicksRow("u1", "http://x/a", 12.5));
  REQUIRE(out);
  REQUIRE(out->size() == 3);
  CHECK((*out)[0].asString() == "u1");
  CHECK((*out)[1].asString() == "HTTP://X/A");
  CHECK((*out)[2].asDouble() == 25.0);
  CHECK_FALSE(runStage(stage, clicksRow("u2", "http://x/b", 10.0)));
  CHECK(rowToJson(*out, p.sink.input) ==
        R"({"user_id":"u1","url":"HTTP://X/A","doubled":25.0})");
}

TEST_CASE("EXPLAIN text") {
  FlowFixture f;
  PhysicalPlan p = f.flow(kAcceptance);
  CHECK(p.slots() == 2);
  CHECK(p.explain() ==
        "Flow f INTO alerts (kafka, json)  checkpoint every 5 minutes\n"
        "Stage 0: 2 tasks\n"
        "  Scan clicks (kafka json, subscribe=clicks, partitions 0..1, watermark ts - 10 seconds)\n"
        "  Filter (amount > 10.0)  [append]\n"
        "  Project user_id, upper(url) AS url, (amount * 2.0) AS doubled  [append]\n"
        "  Sink alerts (kafka json, topic=alerts)\n"
        "Task slots: 2\n");

  PhysicalPlan q = f.query("SELECT user_id FROM clicks LIMIT 5");
  CHECK(q.sink.connector == "client");
  CHECK(q.explain() ==
        "Query (rows stream to the client)\n"
        "Stage 0: 2 tasks\n"
        "  Scan clicks (kafka json, subscribe=clicks, partitions 0..1, watermark ts - 10 seconds)\n"
        "  Project user_id  [append]\n"
        "  Sink client\n"
        "Task slots: 2\n");
}

TEST_CASE("EXPLAIN of a datagen flow with a qualifier-first struct") {
  PlannerFixture f;
  f.partitions = 1;
  f.ddl("CREATE SOURCE gen (id BIGINT, info STRUCT<id INT>) WITH (connector = 'datagen', "
        "rowsPerSecond = '100');"
        "CREATE SINK out WITH (connector = 'file', path = '/tmp/out.jsonl', format = 'json')");
  // `info.id` is the struct field; `gen.id` the relation's column.
  PhysicalPlan p = f.flow("CREATE FLOW g INTO out CHECKPOINT INTERVAL '90 seconds' AS "
                          "SELECT gen.id, info.id AS inner_id FROM gen");
  CHECK(p.explain() ==
        "Flow g INTO out (file, json)  checkpoint every 90 seconds\n"
        "Stage 0: 1 task\n"
        "  Scan gen (datagen, rowsPerSecond=100, partition 0)\n"
        "  Project id, info.id AS inner_id  [append]\n"
        "  Sink out (file json, path=/tmp/out.jsonl)\n"
        "Task slots: 1\n");
  Row row{Value::bigint(5), Value::structure({Value::integer(9)})};
  CHECK(p.stages[0].operators[0].as<ProjectSpec>().exprs[0]->eval(row).asInt() == 5);
  CHECK(p.stages[0].operators[0].as<ProjectSpec>().exprs[1]->eval(row).asInt() == 9);

  // When the alias and a struct column share a name, the relation wins (Spark).
  PhysicalPlan q = f.query("SELECT info.id FROM gen info");
  CHECK(q.sink.input.columns[0].type->id == TypeId::BigInt);
  CHECK(q.stages[0].operators[0].as<ProjectSpec>().exprs[0]->eval(row).asInt() == 5);
}

TEST_CASE("output column names") {
  FlowFixture f;
  PhysicalPlan p = f.flow(
      "CREATE FLOW f INTO alerts AS SELECT c.user_id, info.country, upper(url), "
      "amount + 1 AS a1, _offset FROM clicks c");
  CHECK(p.sink.input.toString() ==
        "(user_id STRING, country STRING, upper(url) STRING, a1 DOUBLE, _offset BIGINT)");

  std::string sql = "CREATE FLOW f INTO alerts AS SELECT user_id, url AS user_id FROM clicks";
  SqlError e = sqlErrorOf([&] { f.flow(sql); });
  CHECK(e.sqlstate() == "42701");
  CHECK(e.position() == sql.find("url AS"));
  CHECK_FALSE(e.hint().empty());
  // A live query may repeat names: rows go to the client as they are.
  CHECK(f.query("SELECT user_id, url AS user_id FROM clicks").sink.input.size() == 2);
}

TEST_CASE("subqueries in FROM are flattened into one scan") {
  FlowFixture f;
  PhysicalPlan p = f.flow(
      "CREATE FLOW f INTO alerts AS SELECT s.u, big FROM "
      "(SELECT upper(user_id) AS u, amount * 10 AS big FROM clicks WHERE amount > 1) s "
      "WHERE big > 100");
  REQUIRE(p.stages.size() == 1);
  REQUIRE(p.stages[0].operators.size() == 3);  // inner filter, outer filter, project
  CHECK(p.scans.at(0).name == "clicks");
  CHECK(p.sink.input.toString() == "(u STRING, big DOUBLE)");
  auto out = runStage(p.stages[0], clicksRow("ab", "x", 12.0));
  REQUIRE(out);
  CHECK((*out)[0].asString() == "AB");
  CHECK((*out)[1].asDouble() == 120.0);
  CHECK_FALSE(runStage(p.stages[0], clicksRow("ab", "x", 5.0)));   // outer filter
  CHECK_FALSE(runStage(p.stages[0], clicksRow("ab", "x", 0.5)));   // inner filter

  // Hidden columns do not leak through a subquery's *.
  std::string sql = "CREATE FLOW f INTO alerts AS SELECT _key FROM (SELECT * FROM clicks) s";
  SqlError e = sqlErrorOf([&] { f.flow(sql); });
  CHECK(e.sqlstate() == "42703");
  CHECK(e.position() == sql.find("_key"));
}

TEST_CASE("task counts follow maxPartitions and the partition count") {
  FlowFixture f;
  f.partitions = 8;
  f.ddl("CREATE SOURCE few (a INT) WITH (connector = 'kafka', subscribe = 't', format = 'json', "
        "maxPartitions = '3')");
  f.ddl("CREATE SOURCE many (a INT) WITH (connector = 'kafka', subscribe = 't', format = 'json', "
        "maxPartitions = '20')");
  CHECK(f.flow("CREATE FLOW a INTO alerts AS SELECT * FROM clicks").slots() == 8);
  PhysicalPlan few = f.flow("CREATE FLOW a INTO alerts AS SELECT * FROM few");
  CHECK(few.stages[0].tasks == 3);
  CHECK(few.slots() == 3);
  CHECK(few.scans.at(0).partitions == 8);
  CHECK(f.flow("CREATE FLOW a INTO alerts AS SELECT * FROM many").slots() == 8);
}

TEST_CASE("a source stage's task count reads 'maxPartitions' as CREATE SOURCE read it") {
  FlowFixture f;
  f.partitions = 8;
  // The parsed value counts, not the option's text, which planning no
  // longer reads.
  SourceDef def = sourceFrom(static_cast<const ast::CreateSource&>(*parseOne(
      "CREATE SOURCE capped (a INT) WITH (connector = 'kafka', subscribe = 't', format = 'json', "
      "maxPartitions = '6')")));
  REQUIRE(def.parsed->maxPartitions == 6);
  auto parsed = std::make_shared<SourceOptions>(*def.parsed);
  parsed->maxPartitions = 2;
  def.parsed = parsed;
  f.catalog.addSource(std::move(def), false, 0);
  PhysicalPlan plan = f.flow("CREATE FLOW a INTO alerts AS SELECT * FROM capped");
  CHECK(plan.stages[0].tasks == 2);
  CHECK(plan.scans.at(0).parsed->maxPartitions == 2);
}

TEST_CASE("which flows a cluster spreads over its nodes, partition by partition") {
  FlowFixture f;
  f.partitions = 4;
  // One stage, no state, one Kafka source of several partitions, at least once.
  CHECK(f.flow("CREATE FLOW a INTO alerts AS SELECT user_id FROM clicks WHERE amount > 1")
            .spreadsPartitions());
  CHECK_FALSE(f.flow("CREATE FLOW a INTO alerts AS SELECT user_id, count(*) AS n FROM clicks "
                     "GROUP BY user_id")
                  .spreadsPartitions());
  CHECK_FALSE(f.flow("CREATE FLOW a INTO alerts WITH ('delivery' = 'exactly-once') AS "
                     "SELECT user_id FROM clicks")
                  .spreadsPartitions());
  f.partitions = 1;
  CHECK_FALSE(
      f.flow("CREATE FLOW a INTO alerts AS SELECT user_id FROM clicks").spreadsPartitions());

  // The share one node reads: partition i belongs to slot (first + i) % slots.
  PartitionShare share{14, 16, {14, 1}, {}};
  CHECK(share.reads(0));        // slot 14
  CHECK_FALSE(share.reads(1));  // slot 15
  CHECK(share.reads(3));        // slot 1
  CHECK(share.reads(19));       // slot 1 again: partitions beyond the slots wrap
  CHECK(PartitionShare{}.reads(7));  // no share set: every partition
}

TEST_CASE("sink checks: raw needs value; json key option") {
  FlowFixture f;
  std::string sql = "CREATE FLOW f INTO rawout AS SELECT user_id FROM clicks";
  SqlError e = sqlErrorOf([&] { f.flow(sql); });
  CHECK(e.sqlstate() == "42703");
  CHECK(e.message().find("\"value\"") != std::string::npos);

  sql = "CREATE FLOW f INTO rawout AS SELECT amount AS value FROM clicks";
  e = sqlErrorOf([&] { f.flow(sql); });
  CHECK(e.sqlstate() == "42804");
  CHECK(e.position() == sql.find("amount AS value"));

  PhysicalPlan p = f.flow(
      "CREATE FLOW f INTO rawout AS SELECT user_id AS key, to_json(named_struct('u', user_id)) "
      "AS value, 'other' AS topic, _headers AS headers FROM clicks");
  CHECK(p.sink.format == "raw");
  CHECK(p.sink.keyColumn == 0);
  CHECK(p.sink.valueColumn == 1);
  CHECK(p.sink.topicColumn == 2);
  CHECK(p.sink.headersColumn == 3);

  sql = "CREATE FLOW f INTO rawout AS SELECT url AS value, amount AS key FROM clicks";
  e = sqlErrorOf([&] { f.flow(sql); });
  CHECK(e.sqlstate() == "42804");
  CHECK(e.position() == sql.find("amount AS key"));

  f.ddl("CREATE SINK keyed WITH (connector = 'kafka', topic = 'k', format = 'json', "
        "key = 'user_id')");
  p = f.flow("CREATE FLOW f INTO keyed AS SELECT url, user_id FROM clicks");
  CHECK(p.sink.keyColumn == 1);
  CHECK(p.explain().find("Sink keyed (kafka json, topic=k, key=user_id)") != std::string::npos);
  e = sqlErrorOf([&] { f.flow("CREATE FLOW f INTO keyed AS SELECT url FROM clicks"); });
  CHECK(e.sqlstate() == "42703");
}

TEST_CASE("missing sink and relation") {
  FlowFixture f;
  std::string sql = "CREATE FLOW f INTO nowhere AS SELECT * FROM clicks";
  SqlError e = sqlErrorOf([&] { f.flow(sql); });
  CHECK(e.sqlstate() == "42704");
  CHECK(e.message() == "sink \"nowhere\" does not exist");
  CHECK(e.position() == sql.find("nowhere"));

  sql = "CREATE FLOW f INTO alerts AS SELECT * FROM nothing";
  e = sqlErrorOf([&] { f.flow(sql); });
  CHECK(e.sqlstate() == "42P01");
  CHECK(e.position() == sql.find("nothing"));

  sql = "CREATE FLOW f INTO alerts AS SELECT * FROM alerts";
  e = sqlErrorOf([&] { f.flow(sql); });
  CHECK(e.sqlstate() == "42P01");
  CHECK(e.hint().find("is a sink") != std::string::npos);
}

TEST_CASE("checkpoint interval and flow options") {
  FlowFixture f;
  PhysicalPlan p = f.flow(
      "CREATE FLOW f INTO alerts TRIGGER REALTIME CHECKPOINT INTERVAL '30 seconds' "
      "WITH ('shuffle.partitions' = '8', 'delivery' = 'at-least-once') AS SELECT * FROM clicks");
  CHECK(p.checkpointIntervalMicros == 30LL * 1000 * 1000);
  CHECK(p.flowOptions.getString("shuffle.partitions") == "8");
  CHECK(p.explain().rfind("Flow f INTO alerts (kafka, json)  checkpoint every 30 seconds", 0) == 0);

  std::string sql =
      "CREATE FLOW f INTO alerts CHECKPOINT INTERVAL '100 milliseconds' AS SELECT * FROM clicks";
  SqlError e = sqlErrorOf([&] { f.flow(sql); });
  CHECK(e.sqlstate() == "22023");
  CHECK(e.position() == sql.find("'100 milliseconds'"));

  // Exactly-once output needs Kafka transactions: a Kafka sink is fine, a file sink is not.
  CHECK(f.flow("CREATE FLOW f INTO alerts WITH ('delivery' = 'exactly-once') AS SELECT * FROM clicks")
            .exactlyOnce);
  CHECK(!f.flow("CREATE FLOW f INTO alerts AS SELECT * FROM clicks").exactlyOnce);
  f.ddl("CREATE SINK files WITH (connector = 'file', path = '/tmp/out.jsonl', format = 'json')");
  sql = "CREATE FLOW f INTO files WITH ('delivery' = 'exactly-once') AS SELECT * FROM clicks";
  e = sqlErrorOf([&] { f.flow(sql); });
  CHECK(e.sqlstate() == "0A000");
  CHECK(e.position() == sql.find("'exactly-once'"));

  sql = "CREATE FLOW f INTO alerts WITH ('shufle.partitions' = '8') AS SELECT * FROM clicks";
  e = sqlErrorOf([&] { f.flow(sql); });
  CHECK(e.sqlstate() == "22023");
  CHECK(e.position() == sql.find("'shufle.partitions'"));
  CHECK(e.hint().find("shuffle.partitions") != std::string::npos);

  sql = "CREATE FLOW f INTO alerts WITH ('shuffle.partitions' = '0') AS SELECT * FROM clicks";
  e = sqlErrorOf([&] { f.flow(sql); });
  CHECK(e.sqlstate() == "22023");
}

TEST_CASE("constructs that are still refused are 0A000 at their position") {
  FlowFixture f;
  f.ddl("CREATE TABLE merchants (id BIGINT, name STRING)");
  struct Case {
    std::string sql;
    std::string at;
    std::string message;
  };
  const std::string head = "CREATE FLOW f INTO alerts AS ";
  std::vector<Case> cases = {
      {"SELECT user_id FROM clicks ORDER BY user_id", "user_id\n", "ORDER BY"},
      {"SELECT user_id FROM clicks LIMIT 10", "LIMIT", "LIMIT"},
      {"SELECT * FROM merchants", "merchants", "static table"},
      {"SELECT user_id, count(DISTINCT url) AS n FROM clicks GROUP BY window(ts, '1 minute'), "
       "user_id",
       "count(DISTINCT", "count(DISTINCT ...) in a windowed aggregation"},
  };
  for (auto& c : cases) {
    // Anchors ending with a newline marker are found from the end of the text.
    std::string sql = head + c.sql;
    size_t expected;
    if (!c.at.empty() && c.at.back() == '\n') {
      std::string anchor = c.at.substr(0, c.at.size() - 1);
      expected = sql.rfind(anchor);
    } else {
      expected = sql.find(c.at);
    }
    CAPTURE(sql);
    SqlError e = sqlErrorOf([&] { f.flow(sql); });
    CHECK(e.sqlstate() == "0A000");
    CHECK(e.message().find(c.message) != std::string::npos);
    CHECK(e.position() == expected);
  }
  // Aggregates in WHERE are a grouping error, as in PostgreSQL.
  std::string sql = head + "SELECT user_id FROM clicks WHERE sum(amount) > 1";
  SqlError e = sqlErrorOf([&] { f.flow(sql); });
  CHECK(e.sqlstate() == "42803");
  CHECK(e.position() == sql.find("sum("));
  // A window outside GROUP BY is a grouping error too.
  sql = head + "SELECT window(ts, '10 seconds') AS w FROM clicks";
  e = sqlErrorOf([&] { f.flow(sql); });
  CHECK(e.sqlstate() == "42803");
  CHECK(e.position() == sql.find("window("));
}

TEST_CASE("a plan carries the flow's dead-letter topics as CREATE FLOW read them") {
  FlowFixture f;
  PhysicalPlan p = f.flow(
      "CREATE FLOW g INTO alerts WITH ('on.error' = 'dead-letter', 'dead-letter.topic' = 'bad', "
      "'late.rows' = 'dead-letter', 'late.rows.topic' = 'late') AS SELECT window.start, user_id, "
      "count(*) AS n FROM clicks GROUP BY window(ts, '10 seconds'), user_id");
  CHECK(p.rowErrorsTopic.topic == "bad");
  CHECK(p.lateRowsTopic.topic == "late");
  // On the Kafka sink's cluster: no cluster of their own.
  CHECK(p.rowErrorsTopic.bootstrap.empty());
  CHECK(p.lateRowsTopic.bootstrap.empty());
  // The producer's options: the sink's kafka.* settings.
  CHECK(flowDeadLetterKafkaOptions(p, p.rowErrorsTopic).has("kafka.bootstrap.servers"));

  // Without 'dead-letter', none.
  p = f.flow(kAcceptance);
  CHECK(p.rowErrorsTopic.topic.empty());
  CHECK(p.lateRowsTopic.topic.empty());

  // A wrong value is refused by CREATE FLOW, at the option.
  const std::string sql =
      "CREATE FLOW h INTO alerts WITH ('on.error' = 'dead-letter', 'dead-letter.topic' = 'a b') "
      "AS SELECT user_id FROM clicks";
  SqlError e = sqlErrorOf([&] { f.flow(sql); });
  CHECK(e.sqlstate() == "22023");
  CHECK(e.position() == sql.find("'a b'"));
}

TEST_CASE("a materialized view's sink carries its settings as CREATE SINK would") {
  FlowFixture f;
  PhysicalPlan p = f.flow(
      "CREATE MATERIALIZED VIEW v AS SELECT user_id, count(*) AS n FROM clicks GROUP BY user_id");
  REQUIRE(p.sink.parsed);
  // Written like an upsert sink: a key's delete takes its row out.
  CHECK(p.sink.parsed->mode == SinkMode::Upsert);
  CHECK(sinkWritesRetractions(p.sink));
}

TEST_CASE("a plan carries the flow's 'on.error' and 'late.rows' and its connectors' answers") {
  FlowFixture f;
  PhysicalPlan p = f.flow(kAcceptance);
  CHECK(p.onError == RowErrorPolicy::Fail);
  CHECK_FALSE(p.lateRowsDeadLettered);
  REQUIRE(p.scans.size() == 1);
  CHECK(p.scans[0].traits.partitionedLog);
  CHECK(p.sink.traits.kafkaCluster);
  CHECK_FALSE(p.sink.traits.toClient);

  p = f.flow(
      "CREATE FLOW g INTO alerts WITH ('on.error' = 'Skip', 'late.rows' = 'dead-letter', "
      "'late.rows.topic' = 'late') AS SELECT window.start, user_id, count(*) AS n FROM clicks "
      "GROUP BY window(ts, '10 seconds'), user_id");
  CHECK(p.onError == RowErrorPolicy::Skip);
  CHECK(p.lateRowsDeadLettered);

  PhysicalPlan q = f.query("SELECT user_id FROM clicks");
  CHECK(q.sink.traits.toClient);
  CHECK(q.sink.traits.writesEveryChange);
  CHECK_FALSE(q.sink.traits.kafkaCluster);
}
