// Catalog: one namespace for every kind of object, missing-object errors by
// kind, and drops refused while a flow uses the object.
#include <doctest/doctest.h>

#include "planner/catalog.h"
#include "../sql_error_of.h"

using namespace rtsql;

namespace {

using testing::sqlErrorOf;

SourceDef source(const std::string& name) {
  SourceDef d;
  d.name = name;
  d.connector = "kafka";
  d.format = "json";
  return d;
}
SinkDef sink(const std::string& name) {
  SinkDef d;
  d.name = name;
  d.connector = "kafka";
  d.format = "json";
  return d;
}
TableDef table(const std::string& name) {
  TableDef d;
  d.name = name;
  return d;
}
FlowDef flow(const std::string& name, const std::string& sinkName) {
  FlowDef d;
  d.name = name;
  d.sink = sinkName;
  return d;
}

}  // namespace

TEST_CASE("catalog: add and find, case-insensitively") {
  Catalog c;
  CHECK(c.addSource(source("Clicks"), false, 0));
  CHECK(c.addSink(sink("alerts"), false, 0));
  CHECK(c.addTable(table("codes"), false, 0));
  REQUIRE(c.findSource("clicks"));
  CHECK(c.findSource("CLICKS")->name == "Clicks");
  CHECK(c.findSink("ALERTS"));
  CHECK(c.findTable("Codes"));
  CHECK_FALSE(c.findSource("alerts"));
  CHECK_FALSE(c.findFlow("clicks"));
  CHECK(c.sources().size() == 1);
  CHECK(c.sinks().size() == 1);
  CHECK(c.tables().size() == 1);
}

TEST_CASE("catalog: duplicate names across kinds are 42710 naming the existing kind") {
  Catalog c;
  c.addSource(source("clicks"), false, 0);
  SqlError e = sqlErrorOf([&] { c.addSink(sink("CLICKS"), false, 12); });
  CHECK(e.sqlstate() == "42710");
  CHECK(e.message() == "source \"clicks\" already exists");
  CHECK(e.position() == 12);

  e = sqlErrorOf([&] { c.addSource(source("clicks"), false, 7); });
  CHECK(e.sqlstate() == "42710");
  CHECK(e.position() == 7);

  c.addSink(sink("alerts"), false, 0);
  e = sqlErrorOf([&] { c.addFlow(flow("alerts", "alerts"), false, 3); });
  CHECK(e.message() == "sink \"alerts\" already exists");
}

TEST_CASE("catalog: IF NOT EXISTS skips the same kind only") {
  Catalog c;
  c.addSource(source("clicks"), false, 0);
  CHECK_FALSE(c.addSource(source("clicks"), true, 0));
  // A sink of that name would be a different object than the one asked for.
  SqlError e = sqlErrorOf([&] { c.addSink(sink("clicks"), true, 4); });
  CHECK(e.sqlstate() == "42710");
  CHECK(c.sinks().empty());
}

TEST_CASE("catalog: dropping missing objects") {
  Catalog c;
  SqlError e = sqlErrorOf([&] { c.dropSource("nope", false, 11); });
  CHECK(e.sqlstate() == "42P01");
  CHECK(e.message() == "relation \"nope\" does not exist");
  CHECK(e.position() == 11);
  e = sqlErrorOf([&] { c.dropTable("nope", false, 0); });
  CHECK(e.sqlstate() == "42P01");
  e = sqlErrorOf([&] { c.dropSink("nope", false, 5); });
  CHECK(e.sqlstate() == "42704");
  CHECK(e.message() == "sink \"nope\" does not exist");
  CHECK(e.position() == 5);
  e = sqlErrorOf([&] { c.dropFlow("nope", false, 0); });
  CHECK(e.sqlstate() == "42704");
  CHECK(e.message() == "flow \"nope\" does not exist");
  CHECK_FALSE(c.dropSource("nope", true, 0));
  CHECK_FALSE(c.dropFlow("nope", true, 0));

  // Dropping with the wrong kind says what the name is.
  c.addSink(sink("alerts"), false, 0);
  e = sqlErrorOf([&] { c.dropSource("alerts", false, 0); });
  CHECK(e.sqlstate() == "42P01");
  CHECK(e.hint().find("is a sink") != std::string::npos);
  CHECK(c.findSink("alerts"));
}

TEST_CASE("catalog: objects a flow uses cannot be dropped until the flow is") {
  Catalog c;
  c.addSource(source("clicks"), false, 0);
  c.addTable(table("merchants"), false, 0);
  c.addSink(sink("alerts"), false, 0);
  c.addFlow(flow("f", "alerts"), false, 0);
  c.setFlowInputs("f", {"Clicks", "merchants"});

  SqlError e = sqlErrorOf([&] { c.dropSource("clicks", false, 11); });
  CHECK(e.sqlstate() == "55006");
  CHECK(e.message() == "cannot drop source \"clicks\": flow \"f\" reads it");
  CHECK(e.hint() == "DROP FLOW f first");
  CHECK(e.position() == 11);

  e = sqlErrorOf([&] { c.dropTable("merchants", false, 0); });
  CHECK(e.sqlstate() == "55006");
  CHECK(e.message() == "cannot drop table \"merchants\": flow \"f\" reads it");

  e = sqlErrorOf([&] { c.dropSink("alerts", false, 0); });
  CHECK(e.sqlstate() == "55006");
  CHECK(e.message() == "cannot drop sink \"alerts\": flow \"f\" writes to it");
  CHECK(e.hint() == "DROP FLOW f first");

  CHECK(c.dropFlow("F", false, 0));
  CHECK(c.dropSource("clicks", false, 0));
  CHECK(c.dropTable("merchants", false, 0));
  CHECK(c.dropSink("alerts", false, 0));
  CHECK(c.sources().empty());
  CHECK(c.flows().empty());
  // The name is free again for any kind.
  CHECK(c.addSink(sink("clicks"), false, 0));
}

TEST_CASE("catalog: table rows are replaced as a whole") {
  Catalog c;
  c.addTable(table("codes"), false, 0);
  auto before = c.findTable("codes");
  auto rows = std::make_shared<const std::vector<Row>>(
      std::vector<Row>{{Value::string("A"), Value::string("alpha")}});
  c.setTableRows("codes", rows);
  auto after = c.findTable("codes");
  REQUIRE(after->rows);
  CHECK(after->rows->size() == 1);
  CHECK((*after->rows)[0][1].asString() == "alpha");
  // Definitions are immutable: an old reader keeps its snapshot.
  CHECK_FALSE(before->rows);
  CHECK_THROWS_AS(c.setTableRows("nope", rows), SqlError);
}

TEST_CASE("catalog: lists come back sorted by name") {
  Catalog c;
  c.addSource(source("b"), false, 0);
  c.addSource(source("a"), false, 0);
  c.addSource(source("C"), false, 0);
  auto list = c.sources();
  REQUIRE(list.size() == 3);
  CHECK(list[0]->name == "a");
  CHECK(list[1]->name == "b");
  CHECK(list[2]->name == "C");
}
