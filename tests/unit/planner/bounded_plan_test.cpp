// Planning bounded queries (planBoundedQuery): a name the lookup answers is a
// scan of connector "bounded" with the relation's schema, through the same
// operators as a flow's; aggregations spell out their retractions; ORDER BY
// and OFFSET are a bounded query's only, and FOR OFFSETS BETWEEN is checked
// at its bounds.
#include <doctest/doctest.h>

#include "planner/planner.h"
#include "planner_fixture.h"

using namespace rtsql;
using namespace rtsql::testing;

namespace {

// A finite relation that is never opened: planning needs only its schema.
class FixedRelation final : public BoundedRelation {
 public:
  explicit FixedRelation(Schema schema) : schema_(std::move(schema)) {}
  const Schema& schema() const override { return schema_; }
  std::unique_ptr<RowSource> open() const override { return nullptr; }

 private:
  Schema schema_;
};

struct BoundedFixture : PlannerFixture {
  BoundedFixture() {
    addClicksAndSinks(*this);
    ddl("CREATE TABLE sales (region STRING, amount BIGINT)");
  }

  // Plans `sql` with the tables as bounded relations; ctx itself plans flows
  // and live queries.
  PhysicalPlan bounded(const std::string& sql) {
    auto stmt = parseOne(sql);
    REQUIRE(stmt->kind == ast::StatementKind::Select);
    PlanContext boundedCtx = ctx;
    boundedCtx.boundedRelation =
        [this](const std::string& name) -> std::shared_ptr<const BoundedRelation> {
      if (Catalog::TablePtr t = catalog.findTable(name)) {
        return std::make_shared<FixedRelation>(t->schema);
      }
      return nullptr;
    };
    return planBoundedQuery(*static_cast<const ast::SelectStatement&>(*stmt).query, boundedCtx);
  }
};

}  // namespace

TEST_CASE("a bounded relation is a scan of connector bounded through a flow's operators") {
  BoundedFixture f;
  PhysicalPlan plan =
      f.bounded("SELECT region, count(*) AS n FROM sales WHERE amount > 1 GROUP BY region "
                "ORDER BY n DESC LIMIT 3 OFFSET 1");
  REQUIRE(plan.scans.size() == 1);
  CHECK(plan.scans[0].connector == kBoundedConnector);
  CHECK(plan.scans[0].name == "sales");
  CHECK(plan.scans[0].schema.size() == 2);
  CHECK(plan.stages.size() == 2);  // the scan's stage, the aggregate's
  CHECK(plan.output.mode == ChangelogMode::Retract);
  CHECK(plan.sink.input.columns.size() == 2);
}

TEST_CASE("a count whose group key is not selected still retracts its rows") {
  BoundedFixture f;
  PhysicalPlan plan = f.bounded("SELECT count(*) AS n FROM sales GROUP BY region");
  CHECK(plan.output.mode == ChangelogMode::Retract);
}

TEST_CASE("ORDER BY and OFFSET belong to a bounded query") {
  BoundedFixture f;
  SqlError order = sqlErrorOf([&] { f.query("SELECT user_id FROM clicks ORDER BY user_id"); });
  CHECK(order.sqlstate() == std::string("0A000"));
  const std::string sql = "SELECT user_id FROM clicks LIMIT 1 OFFSET 2";
  SqlError offset = sqlErrorOf([&] { f.query(sql); });
  CHECK(offset.sqlstate() == std::string("0A000"));
  CHECK(offset.position() == sql.find("2"));
}

TEST_CASE("FOR OFFSETS BETWEEN: its bounds, and only in a bounded query") {
  BoundedFixture f;
  PhysicalPlan plan =
      f.bounded("SELECT user_id FROM clicks FOR OFFSETS BETWEEN 'earliest' AND 'latest'");
  REQUIRE(plan.scans.size() == 1);
  CHECK(plan.scans[0].connector == "kafka");
  const std::string now = "SELECT user_id FROM clicks FOR OFFSETS BETWEEN 'earliest' AND 'now'";
  SqlError to = sqlErrorOf([&] { f.bounded(now); });
  CHECK(to.sqlstate() == std::string("22023"));
  CHECK(to.position() == now.find("'now'"));
  SqlError table = sqlErrorOf(
      [&] { f.bounded("SELECT region FROM sales FOR OFFSETS BETWEEN 'earliest' AND 'latest'"); });
  CHECK(table.sqlstate() == std::string("42809"));
  SqlError flow = sqlErrorOf([&] {
    f.flow("CREATE FLOW x INTO alerts AS SELECT user_id FROM clicks FOR OFFSETS BETWEEN "
           "'earliest' AND 'latest'");
  });
  CHECK(flow.sqlstate() == std::string("0A000"));
}
