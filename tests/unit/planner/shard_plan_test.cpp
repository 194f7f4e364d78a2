// Sharded flows' plans (planner/shard_plan.h): copies' names, the exchange
// that replaces the shuffle between the copies (a front stage per input of
// the stateful stage, a back stage reading the copy's partition), each
// copy's share of the source and exchange partitions, and EXPLAIN of a copy.
#include "planner/shard_plan.h"

#include <doctest/doctest.h>

#include <set>
#include <vector>

#include "planner_fixture.h"

using namespace rtsql;
using namespace rtsql::testing;

namespace {

struct Fixture : PlannerFixture {
  Fixture() {
    partitions = 4;
    addClicksAndSinks(*this);
    ddl(R"(
      CREATE SOURCE orders (oid BIGINT, ts TIMESTAMP, WATERMARK FOR ts AS ts - INTERVAL '5' SECOND)
        WITH (connector = 'kafka', subscribe = 'orders', format = 'json');
      CREATE SOURCE pays (pid BIGINT, oid BIGINT, ts TIMESTAMP, WATERMARK FOR ts AS ts)
        WITH (connector = 'kafka', subscribe = 'pays', format = 'json');
    )");
  }
};

const StageSpec* stageWithOutput(const PhysicalPlan& plan, StageOutput::Kind kind, int nth = 0) {
  for (const StageSpec& s : plan.stages) {
    if (s.output.kind == kind && nth-- == 0) return &s;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("a copy's name and the flow it belongs to") {
  CHECK(shardFlowName("cnt", 0) == "cnt");
  CHECK(shardFlowName("cnt", 12) == "cnt#12");
  CHECK(splitShardFlowName("cnt#12") == std::make_pair(std::string("cnt"), 12));
  CHECK(splitShardFlowName("a#b#3") == std::make_pair(std::string("a#b"), 3));
  for (const char* other :
       {"cnt", "cnt#", "#1", "cnt#0", "cnt#01", "cnt#64", "cnt#1x", "cnt#123"}) {
    CAPTURE(other);
    CHECK_FALSE(splitShardFlowName(other).has_value());
  }
}

TEST_CASE("the exchange: each copy's front writes it, its back reads the copy's partition") {
  Fixture f;
  f.ctx.session.set(kExchangeIdSetting, "abc123");
  PhysicalPlan whole = f.flow(
      "CREATE FLOW cnt INTO alerts WITH ('shards' = '3', 'shuffle.partitions' = '2') AS "
      "SELECT user_id, count(*) AS n FROM clicks GROUP BY user_id");
  REQUIRE(whole.shards == 3);
  CHECK(whole.exchangeId == "abc123");
  const int slotsBefore = whole.slots();
  REQUIRE(whole.stages[0].tasks == 4);  // one task per source partition

  PhysicalPlan plan = whole;
  addExchange(plan, "_rtsql-c-exchange-id-abc123", "127.0.0.1:9092");
  // No shuffle crosses between stages of a copy but the back's.
  REQUIRE(plan.stages.size() == 3);
  REQUIRE(plan.scans.size() == 2);
  const StageSpec* front = stageWithOutput(plan, StageOutput::Kind::Exchange);
  REQUIRE(front);
  CHECK(front->scan == 0);
  CHECK(front->output.keys.size() == 1);
  const ExchangeSpec& ex = front->output.exchange;
  CHECK(ex.topic == "_rtsql-c-exchange-id-abc123-0");
  CHECK(ex.bootstrap == "127.0.0.1:9092");
  CHECK(ex.partitions == 3);
  // A copy reads a third of the 4 partitions: 2 tasks are enough.
  CHECK(front->tasks == 2);
  CHECK(ex.producers == 3 * 2);  // every front task of every copy
  const StageSpec* back = stageWithOutput(plan, StageOutput::Kind::Shuffle);
  REQUIRE(back);
  CHECK(back->tasks == 1);
  const ScanSpec& scan = plan.scans.at(static_cast<size_t>(back->scan));
  CHECK(scan.exchange.topic == ex.topic);
  CHECK(scan.eventTimeColumn == -1);  // the watermark comes from the markers
  CHECK(scan.schema.size() == front->outputSchema.size());
  CHECK(back->output.targetStage == 1);  // into the aggregate, as the front shuffled before
  // A flow made before the copies kept their own rows: all go through the topic.
  CHECK_FALSE(ex.local);
  CHECK_FALSE(front->output.feeds(1));
  CHECK(plan.slots() == slotsBefore - 4 + 2 + 1);
  // Added once only.
  PhysicalPlan again = plan;
  addExchange(again, "other", "other:1");
  CHECK(again.stages.size() == 3);
  CHECK(again.stages[0].output.exchange.topic == ex.topic);

  // Copy 2 reads source partitions 2 (of 0..3) and exchange partition 2.
  PhysicalPlan copy = planForShard(plan, 2);
  CHECK(copy.flowName == "cnt#2");
  CHECK(copy.shard == 2);
  CHECK(copy.scans[0].share.reads(2));
  CHECK_FALSE(copy.scans[0].share.reads(0));
  CHECK_FALSE(copy.scans[0].share.reads(1));
  CHECK(copy.scans[0].share.reads(5));
  // Its partitions 2, 5, 8, ... are its first, second, third: spread over
  // its tasks in turn.
  CHECK(copy.scans[0].share.rank(2) == 0);
  CHECK(copy.scans[0].share.rank(5) == 1);
  CHECK(copy.scans[0].share.rank(8) == 2);
  CHECK(PartitionShare{}.rank(7) == 7);  // a share of everything
  CHECK(copy.scans[1].share.reads(2));
  CHECK_FALSE(copy.scans[1].share.reads(0));
  // From any copy's plan to another's.
  CHECK(planForShard(copy, 0).flowName == "cnt");
  CHECK(planForShard(copy, 1).scans[0].share.reads(4));

  const std::string text = copy.explain();
  CAPTURE(text);
  CHECK(text.find("partitions 2 of 0..3") != std::string::npos);
  CHECK(text.find("Exchange by [user_id] to _rtsql-c-exchange-id-abc123-0 (the partition of each "
                  "row's copy, of 3)") != std::string::npos);
  CHECK(text.find("Exchange _rtsql-c-exchange-id-abc123-0 (partition 2 of 3; watermark: the "
                  "slowest of " +
                  std::to_string(ex.producers) + " front tasks)") != std::string::npos);
}

TEST_CASE("a copy's front shuffles its own rows into the stateful stage, in process") {
  Fixture f;
  f.ctx.session.set(kExchangeIdSetting, "abc123");
  f.ctx.session.set(kExchangeLocalSetting, "1");
  PhysicalPlan plan = f.flow(
      "CREATE FLOW cnt INTO alerts WITH ('shards' = '3', 'shuffle.partitions' = '2') AS "
      "SELECT user_id, count(*) AS n FROM clicks GROUP BY user_id");
  CHECK(plan.exchangeLocal);
  addExchange(plan, "x", "b:1");
  const StageSpec* front = stageWithOutput(plan, StageOutput::Kind::Exchange);
  const StageSpec* back = stageWithOutput(plan, StageOutput::Kind::Shuffle);
  REQUIRE(front);
  REQUIRE(back);
  CHECK(front->output.exchange.local);
  const int stateful = back->output.targetStage;
  // Both feed the aggregate's one input: the front its own copy's rows, the
  // back the other copies'.
  CHECK(front->output.feeds(stateful));
  CHECK(front->output.targetInput == back->output.targetInput);
  CHECK(back->output.feeds(stateful));
  CHECK(plan.scans.at(static_cast<size_t>(back->scan)).exchange.local);
  PhysicalPlan copy = planForShard(plan, 1);
  const std::string text = copy.explain();
  CAPTURE(text);
  CHECK(text.find("Exchange by [user_id] to x-0 (the partition of each row's copy, of 3; this "
                  "copy's own rows in process to stage " +
                  std::to_string(stateful) + ")") != std::string::npos);
  CHECK(text.find("this copy's own rows, shuffle by user_id from stage " +
                  std::to_string(front->id) + "; shuffle by user_id from stage " +
                  std::to_string(back->id)) != std::string::npos);
  // The back waits for the other two copies' front tasks only.
  const int perCopy = front->output.exchange.producers / 3;
  CHECK(text.find("watermark: the slowest of " + std::to_string(2 * perCopy) +
                  " other copies' front tasks") != std::string::npos);

  // A join: each input's front feeds the join's input it fed before.
  PhysicalPlan pay = f.flow(
      "CREATE FLOW pay INTO alerts WITH ('shards' = '2') AS SELECT o.oid, p.pid FROM orders o "
      "JOIN pays p ON o.oid = p.oid AND p.ts BETWEEN o.ts AND o.ts + INTERVAL '10' SECOND");
  addExchange(pay, "y", "b:1");
  std::set<int> inputs;
  for (const StageSpec& s : pay.stages) {
    if (s.output.kind == StageOutput::Kind::Exchange) {
      CHECK(s.output.feeds(s.output.targetStage));
      inputs.insert(s.output.targetInput);
    }
  }
  CHECK(inputs == std::set<int>{0, 1});
}

TEST_CASE("a join exchanges each input through a topic of its own") {
  Fixture f;
  PhysicalPlan plan = f.flow(
      "CREATE FLOW pay INTO alerts WITH ('shards' = '2') AS SELECT o.oid, p.pid FROM orders o "
      "JOIN pays p ON o.oid = p.oid AND p.ts BETWEEN o.ts AND o.ts + INTERVAL '10' SECOND");
  addExchange(plan, "x", "b:1");
  const StageSpec* left = stageWithOutput(plan, StageOutput::Kind::Exchange, 0);
  const StageSpec* right = stageWithOutput(plan, StageOutput::Kind::Exchange, 1);
  REQUIRE(left);
  REQUIRE(right);
  CHECK(left->output.exchange.topic == "x-0");
  CHECK(right->output.exchange.topic == "x-1");
  // The backs feed the join's two inputs as the fronts did.
  std::set<int> inputs;
  for (const StageSpec& s : plan.stages) {
    if (s.output.kind == StageOutput::Kind::Shuffle) inputs.insert(s.output.targetInput);
  }
  CHECK(inputs == std::set<int>{0, 1});
}

TEST_CASE("a flow of one copy has no exchange") {
  Fixture f;
  PhysicalPlan plan =
      f.flow("CREATE FLOW c INTO alerts AS SELECT user_id, count(*) FROM clicks GROUP BY user_id");
  CHECK(plan.shards == 1);
  CHECK(plan.exchangeId.empty());
  const size_t stages = plan.stages.size();
  addExchange(plan, "x", "b:1");
  CHECK(plan.stages.size() == stages);
  CHECK_FALSE(stageWithOutput(plan, StageOutput::Kind::Exchange));
}

TEST_CASE("the slots CREATE FLOW records for a flow's copies or partitions") {
  CHECK(formatClusterSlots({3, 4, 10}) == "3,4,10");
  CHECK(parseClusterSlots("3,4,10") == std::vector<int>{3, 4, 10});
  CHECK(parseClusterSlots(formatClusterSlots({0, 15, 7, 0})) == std::vector<int>{0, 15, 7, 0});
  // Anything but a list of slots is no list: the pieces take consecutive slots.
  for (const char* bad : {"", ",", "3,", ",3", "3,,4", "3;4", "-1", "3, 4", "a", "1234567"}) {
    CAPTURE(bad);
    CHECK(parseClusterSlots(bad).empty());
  }

  // A flow planned with the setting carries the slots; without it, none.
  Fixture f;
  f.ctx.session.set(kExchangeIdSetting, "abc123");
  f.ctx.session.set(kClusterSlotsSetting, "5,2,9");
  const PhysicalPlan plan = f.flow(
      "CREATE FLOW cnt INTO alerts WITH ('shards' = '3') AS "
      "SELECT user_id, count(*) AS n FROM clicks GROUP BY user_id");
  CHECK(plan.clusterSlots == std::vector<int>{5, 2, 9});
  CHECK(planForShard(plan, 2).clusterSlots == plan.clusterSlots);
  Fixture g;
  CHECK(g.flow("CREATE FLOW cnt INTO alerts WITH ('shards' = '3') AS "
               "SELECT user_id, count(*) AS n FROM clicks GROUP BY user_id")
            .clusterSlots.empty());
}

TEST_CASE("a spread flow's partitions take the slots recorded for them, coming round") {
  PartitionShare share{4, 16, {9, 2}, {4, 9, 2}};
  // Partition i on order[i % 3]: 4, 9, 2, 4, 9, 2, ...
  CHECK(share.slotOf(0) == 4);
  CHECK(share.slotOf(1) == 9);
  CHECK(share.slotOf(5) == 2);
  CHECK_FALSE(share.reads(0));
  CHECK(share.reads(1));
  CHECK(share.reads(2));
  CHECK_FALSE(share.reads(3));
  CHECK(share.rank(4) == 2);  // partitions 1 and 2 come before it here
  // Without a recorded order: consecutive slots from the first.
  const PartitionShare consecutive{14, 16, {15, 0}, {}};
  CHECK(consecutive.slotOf(1) == 15);
  CHECK(consecutive.slotOf(2) == 0);
  CHECK(consecutive.reads(17));
  CHECK_FALSE(consecutive.reads(3));
}

TEST_CASE("'shards' counts a source's topics as it reads them, not the commas of 'subscribe'") {
  Fixture f;
  // The planner reads the topics split at CREATE SOURCE: a trailing comma
  // names no second topic, so the flow divides as one over a single topic.
  f.ddl("CREATE SOURCE one (user_id BIGINT) WITH (connector = 'kafka', subscribe = 'a,', "
        "format = 'json')");
  PhysicalPlan plan = f.flow(
      "CREATE FLOW cnt INTO alerts WITH ('shards' = '2') AS "
      "SELECT user_id, count(*) AS n FROM one GROUP BY user_id");
  CHECK(plan.shards == 2);
  f.ddl("CREATE SOURCE two (user_id BIGINT) WITH (connector = 'kafka', subscribe = 'a, b', "
        "format = 'json')");
  SqlError e = sqlErrorOf([&] {
    f.flow("CREATE FLOW cnt INTO alerts WITH ('shards' = '2') AS "
           "SELECT user_id, count(*) AS n FROM two GROUP BY user_id");
  });
  CHECK(e.sqlstate() == "0A000");
  CHECK(e.message().find("reads several topics") != std::string::npos);

  // The topics come from what CREATE SOURCE read, not from the option's text.
  SourceDef typed = sourceFrom(static_cast<const ast::CreateSource&>(*parseOne(
      "CREATE SOURCE typed (user_id BIGINT) WITH (connector = 'kafka', subscribe = 'a', "
      "format = 'json')")));
  auto parsed = std::make_shared<SourceOptions>(*typed.parsed);
  parsed->topics = {"a", "b"};
  typed.parsed = parsed;
  f.catalog.addSource(std::move(typed), false, 0);
  e = sqlErrorOf([&] {
    f.flow("CREATE FLOW cnt INTO alerts WITH ('shards' = '2') AS "
           "SELECT user_id, count(*) AS n FROM typed GROUP BY user_id");
  });
  CHECK(e.sqlstate() == "0A000");
}
