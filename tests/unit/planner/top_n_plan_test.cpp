// Top-N plans: ROW_NUMBER() OVER (PARTITION BY ... ORDER BY ...) in a subquery
// whose rank the enclosing WHERE bounds becomes a TopN stage shuffled by the
// partition keys; the limit comes from `rn <= N`, `rn < N`, `rn = 1`; the rank
// column is computed only when the enclosing query reads it; the refusals
// (no bound, NTILE(), too large, over a session window's updates, OVER
// elsewhere) with their SQLSTATE and position; the ranking of retracting rows:
// a GROUP BY in the same SELECT or below, a LEFT or FULL regular join.
#include <doctest/doctest.h>

#include "planner/planner.h"
#include "planner_fixture.h"

using namespace rtsql;
using namespace rtsql::testing;

namespace {

struct Fixture : PlannerFixture {
  Fixture() {
    partitions = 4;
    addClicksAndSinks(*this);
  }
};

// Into a sink that writes every change: a top-N retracts the rows it pushes out.
std::string head() {
  return "CREATE FLOW f INTO changes AS ";
}

const TopNSpec& topN(const PhysicalPlan& p) {
  REQUIRE(p.stages.size() == 2);
  REQUIRE(!p.stages[1].operators.empty());
  return p.stages[1].operators[0].as<TopNSpec>();
}

}  // namespace

TEST_CASE("ROW_NUMBER() <= N: a TopN stage shuffled by the partition keys") {
  Fixture f;
  PhysicalPlan p = f.query(
      "SELECT * FROM (SELECT user_id, url, amount, ROW_NUMBER() OVER (PARTITION BY user_id "
      "ORDER BY amount DESC, ts) AS rn FROM clicks) WHERE rn <= 3");
  const TopNSpec& t = topN(p);
  CHECK(t.limit == 3);
  CHECK(t.rankColumn);
  CHECK(t.descending == std::vector<bool>{true, false});
  CHECK(p.stages[1].tasks == 8);
  CHECK(p.sink.input.toString() == "(user_id STRING, url STRING, amount DOUBLE, rn BIGINT)");
  CHECK(p.explain() ==
        "Query (rows stream to the client)\n"
        "Stage 0: 4 tasks\n"
        "  Scan clicks (kafka json, subscribe=clicks, partitions 0..3, watermark ts - 10 seconds)\n"
        "  Project user_id, url, amount, ts  [append]\n"
        "  Shuffle by [user_id] to stage 1\n"
        "Stage 1: 8 tasks (shuffle by user_id from stage 0)\n"
        "  TopN keys=[user_id] order=[amount DESC, ts] limit=3 with rank  [retract by (user_id, "
        "rn); state: the top 3 rows per key, kept without bound]\n"
        "  Project user_id, url, amount, rn  [retract by (user_id, rn)]\n"
        "  Sink client\n"
        "Task slots: 12\n");
}

TEST_CASE("the limit: <=, <, = 1, reversed, the tighter of two; other conjuncts stay") {
  Fixture f;
  auto limitOf = [&](const std::string& where) {
    PhysicalPlan p = f.query(
        "SELECT user_id, url FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY "
        "ts DESC) AS rn FROM clicks) AS r WHERE " +
        where);
    return topN(p).limit;
  };
  CHECK(limitOf("rn <= 5") == 5);
  CHECK(limitOf("rn < 5") == 4);
  CHECK(limitOf("rn = 1") == 1);
  CHECK(limitOf("5 >= rn") == 5);
  CHECK(limitOf("r.rn <= 2") == 2);
  CHECK(limitOf("rn <= 7 AND rn < 3") == 2);
  CHECK(limitOf("url <> 'x' AND rn <= 2") == 2);

  // Not read outside the bound: no rank column, only membership changes.
  PhysicalPlan p = f.query(
      "SELECT user_id, url FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY "
      "ts DESC) AS rn FROM clicks) WHERE rn = 1 AND url <> 'x'");
  const TopNSpec& t = topN(p);
  CHECK_FALSE(t.rankColumn);
  CHECK(t.changelog.describe(t.output) == "retract by (user_id)");
  // The other conjunct filters after the TopN.
  CHECK(p.stages[1].operators[1].is<FilterSpec>());

  // rn = 3 keeps the top 3 and then only rank 3: the rank is read.
  p = f.query(
      "SELECT user_id FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY ts) AS rn "
      "FROM clicks) WHERE rn = 3");
  CHECK(topN(p).limit == 3);
  CHECK(topN(p).rankColumn);
}

TEST_CASE("without PARTITION BY: a single global top-N in one task") {
  Fixture f;
  PhysicalPlan p =
      f.flow(head() +
             "SELECT url, amount FROM (SELECT url, amount, ROW_NUMBER() OVER "
             "(ORDER BY amount DESC) AS rn FROM clicks WHERE amount > 0) WHERE rn <= 10");
  const TopNSpec& t = topN(p);
  CHECK(t.partitionKeys.empty());
  CHECK(p.stages[1].tasks == 1);
  CHECK(t.changelog.state == "the top 10 rows for the whole stream");
  CHECK_FALSE(t.changelog.stateUnbounded);
}

TEST_CASE("top-N refusals") {
  Fixture f;
  auto err = [&](const std::string& sql) { return sqlErrorOf([&] { f.query(sql); }); };
  std::string sql =
      "SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY ts) AS rn FROM "
      "clicks)";
  SqlError e = err(sql);
  CHECK(e.sqlstate() == "0A000");
  CHECK(e.position() == sql.find("ROW_NUMBER"));
  CHECK(e.hint().find("rn <= 3") != std::string::npos);

  sql = "SELECT user_id, ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY ts) FROM clicks";
  e = err(sql);
  CHECK(e.sqlstate() == "0A000");
  CHECK(e.position() == sql.find("ROW_NUMBER"));

  sql =
      "SELECT * FROM (SELECT *, NTILE(2) OVER (PARTITION BY user_id ORDER BY ts) AS rn FROM "
      "clicks) WHERE rn <= 3";
  e = err(sql);
  CHECK(e.sqlstate() == "0A000");
  CHECK(e.position() == sql.find("NTILE"));
  CHECK(e.hint().find("bucket") != std::string::npos);

  sql =
      "SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY ts) AS rn FROM "
      "clicks) WHERE rn <= 10001";
  e = err(sql);
  CHECK(e.sqlstate() == "22023");
  CHECK(e.position() == sql.find("rn <= 10001"));
  CHECK(f.query("SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY ts) "
                "AS rn FROM clicks) WHERE rn <= 10000")
            .stages.size() == 2);

  sql =
      "SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY ts) AS rn FROM "
      "clicks) WHERE rn < 1";
  CHECK(err(sql).sqlstate() == "22023");

  // A grouped ranking query orders by what the groups have: ts is neither a
  // group key nor an aggregate.
  sql =
      "SELECT * FROM (SELECT user_id, count(*) AS n, ROW_NUMBER() OVER (ORDER BY ts) AS rn "
      "FROM clicks GROUP BY user_id) WHERE rn <= 3";
  e = err(sql);
  CHECK(e.sqlstate() == "42803");
  CHECK(e.position() == sql.find("ts)"));

  // A session window's updates do not say which row they replace.
  sql =
      "SELECT * FROM (SELECT user_id, count(*) AS n, ROW_NUMBER() OVER (PARTITION BY user_id "
      "ORDER BY count(*) DESC) AS rn FROM clicks GROUP BY user_id, session_window(ts, '1 minute')) "
      "WHERE rn <= 3";
  e = err(sql);
  CHECK(e.sqlstate() == "0A000");
  CHECK(e.position() == sql.find("ROW_NUMBER"));
  CHECK(e.hint().find("EMIT ON WINDOW CLOSE") != std::string::npos);

  sql =
      "SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY ts) AS rn FROM "
      "clicks) WHERE rn > 3";
  e = err(sql);
  CHECK(e.sqlstate() == "0A000");

  // OVER where it is not a ranking select item is refused by the expression binder.
  sql = "SELECT * FROM clicks WHERE ROW_NUMBER() OVER (ORDER BY ts) <= 3";
  CHECK(err(sql).sqlstate() == "0A000");
}

namespace {

struct Nexmark : PlannerFixture {
  Nexmark() {
    partitions = 4;
    ddl(R"(
      CREATE SOURCE auction (id BIGINT, item_name STRING, description STRING,
          initial_bid BIGINT, reserve BIGINT, date_time TIMESTAMP, expires TIMESTAMP,
          seller BIGINT, category BIGINT, extra STRING,
          WATERMARK FOR date_time AS date_time - INTERVAL '4' SECOND)
        WITH (connector = 'kafka', subscribe = 'auction', format = 'json');
      CREATE SOURCE bid (auction BIGINT, bidder BIGINT, price BIGINT, channel STRING,
          url STRING, date_time TIMESTAMP, extra STRING,
          WATERMARK FOR date_time AS date_time - INTERVAL '4' SECOND)
        WITH (connector = 'kafka', subscribe = 'bid', format = 'json');
    )");
  }
};

}  // namespace

TEST_CASE("Nexmark q18 and q19 as Flink SQL writes them; q9's ranking over a stream join") {
  Nexmark f;
  // q19: the 10 highest bids of each auction.
  PhysicalPlan p = f.query(
      "SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY auction ORDER BY price DESC) AS "
      "rank_number FROM bid) WHERE rank_number <= 10");
  CHECK(topN(p).limit == 10);
  CHECK(topN(p).rankColumn);
  CHECK(p.sink.input.toString() ==
        "(auction BIGINT, bidder BIGINT, price BIGINT, channel STRING, url STRING, date_time "
        "TIMESTAMP, extra STRING, rank_number BIGINT)");

  // q18: the last bid of each bidder on each auction.
  p = f.query(
      "SELECT auction, bidder, price, channel, url, date_time, extra FROM (SELECT *, ROW_NUMBER() "
      "OVER (PARTITION BY bidder, auction ORDER BY date_time DESC) AS rank_number FROM bid) WHERE "
      "rank_number <= 1");
  CHECK(topN(p).limit == 1);
  CHECK_FALSE(topN(p).rankColumn);
  CHECK(topN(p).describe() == "TopN keys=[bidder, auction] order=[date_time DESC] limit=1");
  CHECK(topN(p).changelog.describe(topN(p).output) == "retract by (bidder, auction)");

  // q9 ranks the bids joined to their auction; here with a constant time
  // bound, as rtsql's interval join needs one.
  p = f.query(
      "SELECT id, item_name, auction, bidder, price, bid_date_time FROM ("
      "SELECT A.*, B.auction, B.bidder, B.price, B.date_time AS bid_date_time, B.extra AS "
      "bid_extra, ROW_NUMBER() OVER (PARTITION BY A.id ORDER BY B.price DESC, B.date_time ASC) "
      "AS rownum FROM auction A JOIN bid B ON A.id = B.auction AND B.date_time BETWEEN "
      "A.date_time AND A.date_time + INTERVAL '10' SECOND) WHERE rownum <= 1");
  REQUIRE(p.stages.size() == 4);
  CHECK(p.stages[2].operators[0].is<StreamJoinSpec>());
  const TopNSpec& t = p.stages[3].operators[0].as<TopNSpec>();
  CHECK(t.limit == 1);
  CHECK(t.descending == std::vector<bool>{true, false});
  CHECK(p.sink.input.toString() ==
        "(id BIGINT, item_name STRING, auction BIGINT, bidder BIGINT, price BIGINT, "
        "bid_date_time TIMESTAMP)");
}

TEST_CASE("top-N over a GROUP BY in one flow: the aggregation's retractions ranked") {
  Fixture f;
  // The top 3 urls by total amount per user, the aggregate named in ORDER BY.
  PhysicalPlan p = f.query(
      "SELECT * FROM (SELECT user_id, url, sum(amount) AS total, ROW_NUMBER() OVER (PARTITION "
      "BY user_id ORDER BY sum(amount) DESC) AS rn FROM clicks GROUP BY user_id, url) WHERE rn "
      "<= 3");
  REQUIRE(p.stages.size() == 3);
  const AggregateSpec& agg = p.stages[1].operators[0].as<AggregateSpec>();
  CHECK(agg.changelog.mode == ChangelogMode::Retract);
  const TopNSpec& t = p.stages[2].operators[0].as<TopNSpec>();
  CHECK(t.input == ChangelogMode::Retract);
  CHECK(t.limit == 3);
  CHECK(t.descending == std::vector<bool>{true});
  // The order key is the selected total, computed once.
  CHECK(t.describe() == "TopN keys=[user_id] order=[total DESC] limit=3 with rank");
  CHECK(t.changelog.state.find("every row per key") != std::string::npos);
  CHECK(p.sink.input.toString() == "(user_id STRING, url STRING, total DOUBLE, rn BIGINT)");

  // An order key that is not selected is computed for the TopN only; HAVING
  // filters the groups first.
  p = f.query(
      "SELECT user_id, url, rn FROM (SELECT user_id, url, ROW_NUMBER() OVER (PARTITION BY "
      "user_id ORDER BY count(*) DESC, url) AS rn FROM clicks GROUP BY user_id, url HAVING "
      "count(*) > 1) WHERE rn <= 2");
  REQUIRE(p.stages.size() == 3);
  CHECK(p.stages[2].operators[0].as<TopNSpec>().describe() ==
        "TopN keys=[user_id] order=[count(*) DESC, url] limit=2 with rank");
  CHECK(p.sink.input.toString() == "(user_id STRING, url STRING, rn BIGINT)");

  // The same ranking over an aggregating subquery.
  p = f.query(
      "SELECT * FROM (SELECT user_id, url, total, ROW_NUMBER() OVER (PARTITION BY user_id ORDER "
      "BY total DESC) AS rn FROM (SELECT user_id, url, sum(amount) AS total FROM clicks GROUP BY "
      "user_id, url)) WHERE rn <= 3");
  REQUIRE(p.stages.size() == 3);
  CHECK(p.stages[2].operators[0].as<TopNSpec>().input == ChangelogMode::Retract);
}

TEST_CASE("top-N over a LEFT or FULL regular join reads its retractions") {
  Fixture f;
  f.ddl(R"(
    CREATE SOURCE users (user_id STRING, country STRING)
      WITH (connector = 'kafka', subscribe = 'users', format = 'json');
  )");
  for (const char* kind : {"LEFT", "FULL", "RIGHT"}) {
    CAPTURE(kind);
    PhysicalPlan p = f.query(std::string("SELECT * FROM (SELECT c.user_id, c.url, u.country, "
                                         "ROW_NUMBER() OVER (PARTITION BY u.country ORDER BY "
                                         "c.amount DESC) AS rn FROM clicks c ") +
                             kind + " JOIN users u ON c.user_id = u.user_id) WHERE rn <= 2");
    REQUIRE(p.stages.size() == 4);
    const StreamJoinSpec& j = p.stages[2].operators[0].as<StreamJoinSpec>();
    CHECK(j.changelog.mode == ChangelogMode::Retract);
    const TopNSpec& t = p.stages[3].operators[0].as<TopNSpec>();
    CHECK(t.input == ChangelogMode::Retract);
    CHECK(t.limit == 2);
  }
}

TEST_CASE("RANK() and DENSE_RANK() <= N: a TopN by the function, without a unique key") {
  Fixture f;
  PhysicalPlan p = f.query(
      "SELECT * FROM (SELECT user_id, url, amount, RANK() OVER (PARTITION BY user_id "
      "ORDER BY amount DESC) AS r FROM clicks) WHERE r <= 3");
  const TopNSpec& t = topN(p);
  CHECK(t.function == TopNSpec::Function::Rank);
  CHECK(t.limit == 3);
  CHECK(t.rankColumn);
  CHECK(t.describe() == "TopN keys=[user_id] order=[amount DESC] limit=3 by rank() with rank");
  CHECK(p.sink.input.toString() == "(user_id STRING, url STRING, amount DOUBLE, r BIGINT)");
  CHECK(p.output.mode == ChangelogMode::Retract);
  CHECK(!p.output.uniqueKey);  // tied rows share (user_id, r)

  p = f.query(
      "SELECT user_id, url FROM (SELECT *, dense_rank() OVER (PARTITION BY user_id "
      "ORDER BY ts) AS dr FROM clicks) WHERE dr = 1");
  CHECK(topN(p).function == TopNSpec::Function::DenseRank);
  CHECK(topN(p).describe() == "TopN keys=[user_id] order=[ts] limit=1 by dense_rank()");
  CHECK(!p.output.uniqueKey);  // a top-1 of DENSE_RANK keeps every tie

  auto err = [&](const std::string& sql) { return sqlErrorOf([&] { f.query(sql); }); };
  std::string sql =
      "SELECT * FROM (SELECT *, rank() OVER (PARTITION BY user_id) AS r FROM clicks) WHERE r <= 3";
  SqlError e = err(sql);
  CHECK(e.sqlstate() == "42601");
  CHECK(e.message().find("RANK() needs an ORDER BY") != std::string::npos);
  sql = "SELECT user_id, rank() OVER (ORDER BY ts) AS r FROM clicks";
  e = err(sql);
  CHECK(e.sqlstate() == "0A000");
  CHECK(e.position() == sql.find("rank"));
  CHECK(e.hint().find("WHERE r <= 3") != std::string::npos);
}
