// What a sink can write against the changelog of the flow's query
// (planner/sink_changelog.h): a query that retracts rows needs an upsert or
// debezium-json sink, upsert needs a unique key, 'mode' = 'append' takes only
// append-only queries; and the key such sinks write under.
#include "planner/sink_changelog.h"

#include <doctest/doctest.h>

#include "planner/planner.h"
#include "planner_fixture.h"

using namespace rtsql;
using namespace rtsql::testing;

namespace {

struct Fixture : PlannerFixture {
  Fixture() {
    addClicksAndSinks(*this);
    ddl(R"(
      CREATE SINK cdc WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
                            topic = 'cdc', format = 'debezium-json');
      CREATE SINK latest WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
                               topic = 'latest', mode = 'upsert');
      CREATE SINK inserts WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
                                topic = 'inserts', mode = 'append');
      CREATE SINK cdcfile WITH (connector = 'file', path = '/tmp/cdc.jsonl',
                                format = 'debezium-json');
      CREATE SINK nothing WITH (connector = 'blackhole');
    )");
  }
};

const char* kGroupBy = "SELECT user_id, count(*) AS n FROM clicks GROUP BY user_id";

}  // namespace

TEST_CASE("today's flows plan as before: append and updates into a json sink") {
  Fixture f;
  PhysicalPlan append = f.flow("CREATE FLOW a INTO alerts AS SELECT user_id, url FROM clicks");
  CHECK(append.output.mode == ChangelogMode::Append);
  CHECK(append.sink.keyColumn == -1);
  PhysicalPlan updates = f.flow(std::string("CREATE FLOW g INTO alerts AS ") + kGroupBy);
  CHECK(updates.output.mode == ChangelogMode::Updates);
  CHECK(updates.sink.keyColumn == 0);
  CHECK(updates.sink.keyColumns == std::vector<int>{0});
}

TEST_CASE("a GROUP BY into a debezium-json sink retracts, keyed by its group") {
  Fixture f;
  for (const char* sink : {"cdc", "cdcfile"}) {
    PhysicalPlan p = f.flow(std::string("CREATE FLOW g INTO ") + sink + " AS " + kGroupBy);
    CHECK(p.output.mode == ChangelogMode::Retract);
    CHECK(p.sink.format == "debezium-json");
    CHECK(p.sink.keyColumns == std::vector<int>{0});
  }
  // The key follows the group column wherever the select list puts it.
  PhysicalPlan moved = f.flow(
      "CREATE FLOW g INTO cdc AS SELECT count(*) AS n, user_id FROM clicks GROUP BY user_id");
  CHECK(moved.sink.keyColumn == 1);
}

TEST_CASE("upsert keys by the flow's unique key and needs no retractions") {
  Fixture f;
  PhysicalPlan p = f.flow(std::string("CREATE FLOW g INTO latest AS ") + kGroupBy);
  // The new row replaces the old under its key: updates are enough.
  CHECK(p.output.mode == ChangelogMode::Updates);
  CHECK(p.sink.keyColumn == 0);
  PhysicalPlan two = f.flow(
      "CREATE FLOW g INTO latest AS SELECT url, count(*) AS n, user_id FROM clicks "
      "GROUP BY user_id, url");
  CHECK(two.sink.keyColumns == std::vector<int>{2, 0});
  CHECK(two.sink.keyColumn == -1);
  // A global aggregate's one row: the empty key.
  PhysicalPlan global = f.flow("CREATE FLOW g INTO latest AS SELECT count(*) AS n FROM clicks");
  CHECK(global.sink.keyColumns.empty());
  CHECK(global.sink.keyColumn == -1);
}

TEST_CASE("upsert keys a window's rows by its start and the other group keys") {
  Fixture f;
  PhysicalPlan p = f.flow(
      "CREATE FLOW w INTO latest AS SELECT window.start AS minute, user_id, count(*) AS n "
      "FROM clicks GROUP BY window(ts, '1 minute'), user_id");
  CHECK(p.output.mode == ChangelogMode::Updates);
  CHECK(p.sink.keyColumns == std::vector<int>{1, 0});
}

TEST_CASE("a filter over a GROUP BY into upsert makes the aggregation retract") {
  Fixture f;
  // HAVING may drop a key's new row: only a delete takes its old row out.
  const std::string having = std::string(kGroupBy) + " HAVING count(*) < 3";
  PhysicalPlan p = f.flow("CREATE FLOW g INTO latest AS " + having);
  CHECK(p.output.mode == ChangelogMode::Retract);
  CHECK(p.sink.keyColumn == 0);
  // The same filter over a subquery's GROUP BY.
  PhysicalPlan sub = f.flow("CREATE FLOW g INTO latest AS SELECT * FROM (" + std::string(kGroupBy) +
                            ") WHERE n > 1");
  CHECK(sub.output.mode == ChangelogMode::Retract);
  // Into a sink that keeps Spark's update mode nothing changes.
  PhysicalPlan spark = f.flow("CREATE FLOW g INTO alerts AS " + having);
  CHECK(spark.output.mode == ChangelogMode::Updates);
}

TEST_CASE("upsert refuses a flow without a unique key") {
  Fixture f;
  std::string sql = "CREATE FLOW a INTO latest AS SELECT user_id, url FROM clicks";
  SqlError e = sqlErrorOf([&] { f.flow(sql); });
  CHECK(e.sqlstate() == "0A000");
  CHECK(e.position() == sql.find("SELECT"));
  CHECK(e.hint().find("debezium-json") != std::string::npos);
}

TEST_CASE("'mode' = 'append' refuses a query that updates its rows") {
  Fixture f;
  CHECK(f.flow("CREATE FLOW a INTO inserts AS SELECT user_id FROM clicks").output.mode ==
        ChangelogMode::Append);
  std::string sql = std::string("CREATE FLOW g INTO inserts AS ") + kGroupBy;
  SqlError e = sqlErrorOf([&] { f.flow(sql); });
  CHECK(e.sqlstate() == "0A000");
  CHECK(e.position() == sql.find("SELECT"));
}

TEST_CASE("a retracting changelog into a sink that writes only latest rows is refused") {
  Fixture f;
  // A query that retracts rows: the plan of a GROUP BY with its output made
  // retract, as an aggregation over a changing input emits.
  PhysicalPlan p = f.flow(std::string("CREATE FLOW g INTO alerts AS ") + kGroupBy);
  p.output.mode = ChangelogMode::Retract;
  SqlError e = sqlErrorOf([&] { checkSinkChangelog(p, 29); });
  CHECK(e.sqlstate() == "0A000");
  CHECK(e.position() == 29);
  CHECK(e.message().find("\"alerts\"") != std::string::npos);
  CHECK(e.hint().find("'mode' = 'upsert'") != std::string::npos);
  CHECK(e.hint().find("format = 'debezium-json'") != std::string::npos);

  // The ways out take it, and so does a blackhole.
  for (const char* sink : {"latest", "cdc", "cdcfile", "nothing"}) {
    PhysicalPlan q = f.flow(std::string("CREATE FLOW g INTO ") + sink + " AS " + kGroupBy);
    q.output.mode = ChangelogMode::Retract;
    CHECK_NOTHROW(checkSinkChangelog(q, 0));
  }
  // Updates without the old row stay as they are in the default mode.
  p.output.mode = ChangelogMode::Updates;
  CHECK_NOTHROW(checkSinkChangelog(p, 0));
}

TEST_CASE("sinkWritesRetractions and sinkTakesRetractions") {
  Fixture f;
  auto plan = [&](const char* sink) {
    return f.flow(std::string("CREATE FLOW g INTO ") + sink + " AS " + kGroupBy);
  };
  CHECK_FALSE(sinkWritesRetractions(plan("alerts").sink));
  CHECK(sinkWritesRetractions(plan("latest").sink));
  CHECK(sinkWritesRetractions(plan("cdc").sink));
  // Only debezium-json needs the old rows.
  CHECK_FALSE(sinkTakesRetractions(plan("latest")));
  CHECK(sinkTakesRetractions(plan("cdc")));
  CHECK(sinkMode(f.flow("CREATE FLOW a INTO inserts AS SELECT url FROM clicks").sink.options) ==
        SinkMode::Append);
  CHECK(sinkMode(plan("alerts").sink.options) == SinkMode::Update);
}
