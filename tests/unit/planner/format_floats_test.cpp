// Avro and protobuf floats in flows (planner/format_floats.h): a flow reads
// an avro or protobuf source's FLOAT columns as they are, and one recorded
// before such floats were FLOATs (its setting "off", as a restart gives it)
// reads them, and the FLOATs inside structs and arrays, as DOUBLEs.
#include <doctest/doctest.h>

#include "planner/format_floats.h"
#include "planner_fixture.h"

using namespace rtsql;
using rtsql::testing::PlannerFixture;

namespace {

void addSources(PlannerFixture& f) {
  // An avro source's columns come from its schema (the connector's, above
  // the planner): made here as a json source's, then called avro.
  auto stmt = rtsql::testing::parseOne(R"(
    CREATE SOURCE av (x FLOAT, s STRUCT<f FLOAT, n INT>, l ARRAY<FLOAT>, d DOUBLE) WITH (
      connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded', subscribe = 'av',
      format = 'json'))");
  SourceDef avro = rtsql::testing::sourceFrom(static_cast<const ast::CreateSource&>(*stmt));
  avro.format = "avro";
  f.catalog.addSource(std::move(avro), false, 0);
  f.ddl(R"(
    CREATE SOURCE js (x FLOAT) WITH (
      connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded', subscribe = 'js',
      format = 'json');
    CREATE SINK out WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded',
                          topic = 'out', format = 'json');
  )");
}

}  // namespace

TEST_CASE("format floats: a flow reads an avro source's floats as FLOAT") {
  PlannerFixture f;
  addSources(f);
  PhysicalPlan plan = f.flow("CREATE FLOW fresh INTO out AS SELECT x, s, l FROM av");
  REQUIRE(plan.scans.size() == 1);
  const Schema& scan = plan.scans[0].schema;
  CHECK(scan.columns[0].type->id == TypeId::Float);
  CHECK(scan.columns[1].type->toString() == "STRUCT<f: FLOAT, n: INT>");
  CHECK(scan.columns[2].type->toString() == "ARRAY<FLOAT>");
  f.ctx.session.set(kFormatFloatsSetting, "on");
  PhysicalPlan again = f.flow("CREATE FLOW fresh INTO out AS SELECT x FROM av");
  CHECK(again.scans[0].schema.columns[0].type->id == TypeId::Float);
}

TEST_CASE("format floats: a flow recorded before reads them as DOUBLE, nested ones too") {
  PlannerFixture f;
  addSources(f);
  f.ctx.session.set(kFormatFloatsSetting, "off");
  PhysicalPlan plan = f.flow("CREATE FLOW old INTO out AS SELECT x, s, l, d FROM av");
  REQUIRE(plan.scans.size() == 1);
  const Schema& scan = plan.scans[0].schema;
  CHECK(scan.columns[0].type->id == TypeId::Double);
  CHECK(scan.columns[1].type->toString() == "STRUCT<f: DOUBLE, n: INT>");
  CHECK(scan.columns[2].type->toString() == "ARRAY<DOUBLE>");
  CHECK(scan.columns[3].type->id == TypeId::Double);
  // The catalog's source is unchanged: bounded queries and new flows read FLOAT.
  CHECK(f.catalog.findSource("av")->schema.columns[0].type->id == TypeId::Float);
  // A json source's FLOAT was always one.
  PhysicalPlan json = f.flow("CREATE FLOW j INTO out AS SELECT x FROM js");
  CHECK(json.scans[0].schema.columns[0].type->id == TypeId::Float);
}
