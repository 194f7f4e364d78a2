// Top-N plans: ROW_NUMBER() OVER (PARTITION BY ... ORDER BY ...) in a subquery
// whose rank the enclosing WHERE bounds becomes a TopN stage shuffled by the
// partition keys; the limit comes from `rn <= N`, `rn < N`, `rn = 1`; the rank
// column is computed only when the enclosing query reads it; the refusals
// (no bound, RANK(), too large, over an aggregation, OVER elsewhere) with
// their SQLSTATE and position.
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
      "SELECT * FROM (SELECT *, RANK() OVER (PARTITION BY user_id ORDER BY ts) AS rn FROM "
      "clicks) WHERE rn <= 3";
  e = err(sql);
  CHECK(e.sqlstate() == "0A000");
  CHECK(e.position() == sql.find("RANK"));

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

  sql =
      "SELECT * FROM (SELECT user_id, count(*) AS n, ROW_NUMBER() OVER (ORDER BY ts) AS rn "
      "FROM clicks GROUP BY user_id) WHERE rn <= 3";
  CHECK(err(sql).sqlstate() == "0A000");

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
