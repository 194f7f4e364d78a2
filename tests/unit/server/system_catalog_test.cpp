// The catalog as PostgreSQL shows it (server/system_catalog.h): the rows of
// pg_catalog's and information_schema's relations for a given rtsql catalog
// and session, the OIDs that stay the same for the same object, and the
// names the planner resolves.
#include <doctest/doctest.h>

#include <algorithm>

#include "common/expr.h"
#include "common/pg_session.h"
#include "planner/user_function.h"
#include "server/system_catalog.h"

using namespace rtsql;

namespace {

DataTypePtr type(TypeId id) { return DataType::of(id); }

// clicks (a source with a hidden metadata column), rates (a static table),
// out (a sink written by flow f), and the function twice(x INT).
void fill(Catalog& catalog) {
  SourceDef source;
  source.name = "clicks";
  source.connector = "kafka";
  source.format = "json";
  source.schema.columns = {{"user_id", type(TypeId::String), false},
                           {"amount", DataType::decimal(10, 2), false},
                           {"_key", type(TypeId::Binary), true}};
  catalog.addSource(source, false, 0);
  TableDef table;
  table.name = "rates";
  table.schema.columns = {{"currency", type(TypeId::String), false},
                          {"rate", type(TypeId::Double), false}};
  table.rows = std::make_shared<std::vector<Row>>();
  catalog.addTable(table, false, 0);
  SinkDef sink;
  sink.name = "out";
  sink.connector = "kafka";
  sink.format = "json";
  catalog.addSink(sink, false, 0);
  FlowDef flow;
  flow.name = "f";
  flow.sink = "out";
  catalog.addFlow(flow, false, 0);
  UserFunctionDef fn;
  fn.name = "twice";
  fn.params = {{"x", type(TypeId::Int)}};
  fn.returns = type(TypeId::Int);
  fn.bodyText = "x * 2";
  catalog.addFunction(fn, false, false, 0);
}

SessionView session() {
  SessionView v;
  v.user = "alice";
  v.database = "shop";
  v.backendPid = 4242;
  v.roles = {"admin", "alice"};
  v.superusers = {"admin"};
  v.settings = {{"application_name", "psql"}};
  return v;
}

const std::vector<Row>& rowsOf(const SystemRelation& r) { return *r.rows; }

int col(const SystemRelation& r, const char* name) {
  int i = r.columns.find(name);
  REQUIRE_MESSAGE(i >= 0, name);
  return i;
}

// The row of `relation` whose column `key` is the string `value`.
const Row* find(const SystemRelation& r, const char* key, const std::string& value) {
  const int k = col(r, key);
  for (const Row& row : rowsOf(r))
    if (!row[k].isNull() && row[k].type() == TypeId::String && row[k].asString() == value)
      return &row;
  return nullptr;
}

}  // namespace

TEST_CASE("pg_class: sources and tables are tables of public, sinks foreign tables, with stable OIDs") {
  Catalog catalog;
  fill(catalog);
  SystemCatalog sys(catalog, session());
  auto cls = sys.relation("pg_catalog", "pg_class");
  REQUIRE(cls);
  const Row* clicks = find(*cls, "relname", "clicks");
  const Row* rates = find(*cls, "relname", "rates");
  const Row* out = find(*cls, "relname", "out");
  REQUIRE(clicks);
  REQUIRE(rates);
  REQUIRE(out);
  CHECK((*clicks)[col(*cls, "relkind")].asString() == "r");
  CHECK((*rates)[col(*cls, "relkind")].asString() == "r");
  CHECK((*out)[col(*cls, "relkind")].asString() == "f");
  CHECK((*clicks)[col(*cls, "relnamespace")].asInt() == SystemCatalog::kPublicOid);
  CHECK((*clicks)[col(*cls, "relnatts")].asInt() == 2);  // the hidden _key is not counted
  CHECK((*clicks)[col(*cls, "relowner")].asInt() == SystemCatalog::kBootstrapRoleOid);
  const int64_t oid = (*clicks)[col(*cls, "oid")].asInt();
  CHECK(oid >= 16384);
  CHECK(oid <= 2147483647);
  // The catalog's own relations are there too, with PostgreSQL's OIDs.
  const Row* pgClass = find(*cls, "relname", "pg_class");
  REQUIRE(pgClass);
  CHECK((*pgClass)[col(*cls, "oid")].asInt() == 1259);
  CHECK((*pgClass)[col(*cls, "relnamespace")].asInt() == SystemCatalog::kPgCatalogOid);

  // The same object keeps its OID whatever else the catalog holds.
  Catalog other;
  SourceDef alone;
  alone.name = "clicks";
  alone.schema.columns = {{"x", type(TypeId::Int), false}};
  other.addSource(alone, false, 0);
  SystemCatalog sys2(other, session());
  CHECK(sys2.relationOid("clicks") == oid);
  CHECK(sys.relationOid("CLICKS") == oid);
  CHECK_FALSE(sys.relationOid("nope"));
}

TEST_CASE("pg_attribute: columns numbered from 1 with PostgreSQL's types; hidden ones below 0") {
  Catalog catalog;
  fill(catalog);
  SystemCatalog sys(catalog, session());
  const int64_t clicks = *sys.relationOid("clicks");
  auto att = sys.relation("pg_catalog", "pg_attribute");
  REQUIRE(att);
  std::vector<std::tuple<std::string, int64_t, int64_t, int64_t>> seen;  // name, num, type, typmod
  for (const Row& r : rowsOf(*att)) {
    if (r[col(*att, "attrelid")].asInt() != clicks) continue;
    seen.emplace_back(r[col(*att, "attname")].asString(), r[col(*att, "attnum")].asInt(),
                      r[col(*att, "atttypid")].asInt(), r[col(*att, "atttypmod")].asInt());
  }
  REQUIRE(seen.size() == 3);
  CHECK(seen[0] == std::make_tuple(std::string("user_id"), 1, 25, -1));
  CHECK(seen[1] == std::make_tuple(std::string("amount"), 2, 1700, (10 << 16 | 2) + 4));
  CHECK(seen[2] == std::make_tuple(std::string("_key"), -1, 17, -1));
}

TEST_CASE("pg_namespace, pg_database, pg_roles and pg_user show the session") {
  Catalog catalog;
  SystemCatalog sys(catalog, session());
  auto ns = sys.relation("", "pg_namespace");  // unqualified: pg_catalog's
  REQUIRE(ns);
  CHECK(rowsOf(*ns).size() == 3);
  CHECK(find(*ns, "nspname", "public"));
  CHECK(find(*ns, "nspname", "information_schema"));
  auto db = sys.relation("pg_catalog", "pg_database");
  REQUIRE(db);
  REQUIRE(rowsOf(*db).size() == 1);
  CHECK(rowsOf(*db)[0][col(*db, "datname")].asString() == "shop");
  CHECK(rowsOf(*db)[0][col(*db, "encoding")].asInt() == 6);
  auto roles = sys.relation("pg_catalog", "pg_roles");
  REQUIRE(roles);
  REQUIRE(rowsOf(*roles).size() == 2);
  const Row* admin = find(*roles, "rolname", "admin");
  const Row* alice = find(*roles, "rolname", "alice");
  REQUIRE(admin);
  REQUIRE(alice);
  CHECK((*admin)[col(*roles, "oid")].asInt() == 10);
  CHECK((*admin)[col(*roles, "rolsuper")].asBool());
  CHECK_FALSE((*alice)[col(*roles, "rolsuper")].asBool());
  auto users = sys.relation("pg_catalog", "pg_user");
  REQUIRE(users);
  CHECK(find(*users, "usename", "alice"));
  CHECK(sys.user() == "alice");
  CHECK(sys.database() == "shop");
  CHECK(sys.backendPid() == 4242);
  // Without a users file the session's user is the one role.
  SessionView lone;
  lone.user = "bob";
  SystemCatalog sys2(catalog, lone);
  REQUIRE(sys2.roles().size() == 1);
  CHECK(sys2.roles()[0].name == "bob");
  CHECK(sys2.roles()[0].oid == 10);
}

TEST_CASE("pg_proc and information_schema.routines list the user functions") {
  Catalog catalog;
  fill(catalog);
  SystemCatalog sys(catalog, session());
  auto proc = sys.relation("pg_catalog", "pg_proc");
  REQUIRE(proc);
  const Row* twice = find(*proc, "proname", "twice");
  REQUIRE(twice);
  CHECK((*twice)[col(*proc, "pronargs")].asInt() == 1);
  CHECK((*twice)[col(*proc, "prorettype")].asInt() == 23);
  CHECK((*twice)[col(*proc, "prosrc")].asString() == "x * 2");
  CHECK((*twice)[col(*proc, "pronamespace")].asInt() == SystemCatalog::kPublicOid);
  REQUIRE(sys.routines().size() == 1);
  CHECK(sys.routines()[0].result == "integer");
  CHECK(sys.routines()[0].arguments == "x integer");
  auto routines = sys.relation("information_schema", "routines");
  REQUIRE(routines);
  const Row* r = find(*routines, "routine_name", "twice");
  REQUIRE(r);
  CHECK((*r)[col(*routines, "data_type")].asString() == "integer");
  CHECK((*r)[col(*routines, "routine_body")].asString() == "SQL");
}

TEST_CASE("information_schema: schemata, tables and columns of public") {
  Catalog catalog;
  fill(catalog);
  SystemCatalog sys(catalog, session());
  auto schemata = sys.relation("information_schema", "schemata");
  REQUIRE(schemata);
  CHECK(find(*schemata, "schema_name", "public"));
  auto tables = sys.relation("information_schema", "TABLES");  // any case
  REQUIRE(tables);
  const Row* clicks = find(*tables, "table_name", "clicks");
  const Row* out = find(*tables, "table_name", "out");
  REQUIRE(clicks);
  REQUIRE(out);
  CHECK((*clicks)[col(*tables, "table_schema")].asString() == "public");
  CHECK((*clicks)[col(*tables, "table_type")].asString() == "BASE TABLE");
  CHECK((*clicks)[col(*tables, "table_catalog")].asString() == "shop");
  CHECK((*out)[col(*tables, "table_type")].asString() == "FOREIGN");
  auto columns = sys.relation("information_schema", "columns");
  REQUIRE(columns);
  std::vector<std::pair<std::string, std::string>> clicksColumns;
  for (const Row& row : rowsOf(*columns)) {
    if (row[col(*columns, "table_name")].asString() != "clicks") continue;
    clicksColumns.emplace_back(row[col(*columns, "column_name")].asString(),
                               row[col(*columns, "data_type")].asString());
    CHECK(row[col(*columns, "ordinal_position")].asInt() ==
          static_cast<int64_t>(clicksColumns.size()));
  }
  CHECK(clicksColumns == std::vector<std::pair<std::string, std::string>>{
                             {"user_id", "text"}, {"amount", "numeric"}});
  // information_schema's relations are not found unqualified.
  CHECK_FALSE(sys.relation("", "tables"));
  CHECK_FALSE(sys.relation("public", "pg_class"));
  CHECK_FALSE(sys.relation("pg_catalog", "nope"));
}

TEST_CASE("pg_description: each object's connector, and the flows that write a sink") {
  Catalog catalog;
  fill(catalog);
  SystemCatalog sys(catalog, session());
  auto desc = sys.relation("pg_catalog", "pg_description");
  REQUIRE(desc);
  const int64_t out = *sys.relationOid("out");
  const int64_t clicks = *sys.relationOid("clicks");
  std::map<int64_t, std::string> texts;
  for (const Row& r : rowsOf(*desc)) texts[r[col(*desc, "objoid")].asInt()] = r[col(*desc, "description")].asString();
  CHECK(texts[out] == "rtsql sink (kafka, json), written by flow f");
  CHECK(texts[clicks] == "rtsql source (kafka, json)");
}

TEST_CASE("every relation: rows as wide as its columns; pg_settings has the session's and PostgreSQL's") {
  Catalog catalog;
  fill(catalog);
  SystemCatalog sys(catalog, session());
  for (const std::string& qualified : SystemCatalog::relationNames()) {
    const size_t dot = qualified.find('.');
    auto rel = sys.relation(qualified.substr(0, dot), qualified.substr(dot + 1));  // throws when a row is off
    REQUIRE_MESSAGE(rel, qualified);
    CHECK(!rel->columns.columns.empty());
  }
  auto settings = sys.relation("pg_catalog", "pg_settings");
  REQUIRE(settings);
  const Row* app = find(*settings, "name", "application_name");
  const Row* num = find(*settings, "name", "server_version_num");
  REQUIRE(app);
  REQUIRE(num);
  CHECK((*app)[col(*settings, "setting")].asString() == "psql");
  CHECK((*num)[col(*settings, "setting")].asString() == "150000");
  auto type = sys.relation("pg_catalog", "pg_type");
  REQUIRE(type);
  const Row* int4 = find(*type, "typname", "int4");
  REQUIRE(int4);
  CHECK((*int4)[col(*type, "oid")].asInt() == 23);
  CHECK((*int4)[col(*type, "typarray")].asInt() == 1007);
}

TEST_CASE("the session's functions read the SystemCatalog installed for the statement") {
  Catalog catalog;
  fill(catalog);
  SystemCatalog sys(catalog, session());
  auto text = [](const std::string& s) { return makeLiteral(Value::string(s), DataType::of(TypeId::String)); };
  auto oid = [](int64_t v) { return makeLiteral(Value::bigint(v), DataType::of(TypeId::BigInt)); };
  auto eval = [](const std::string& fn, std::vector<ExprPtr> args) {
    return makeCall(fn, std::move(args), 0)->eval(Row{});
  };
  {
    PgSessionScope scope(&sys);
    CHECK(eval("current_user", {}).asString() == "alice");
    CHECK(eval("current_database", {}).asString() == "shop");
    CHECK(eval("pg_backend_pid", {}).asInt() == 4242);
    CHECK(eval("pg_get_userbyid", {oid(10)}).asString() == "admin");
    const int64_t clicks = *sys.relationOid("clicks");
    CHECK(eval("regclass", {text("clicks")}).asInt() == clicks);
    CHECK(eval("regclass", {oid(clicks)}).asString() == "clicks");
    CHECK(eval("obj_description", {oid(clicks), text("pg_class")}).asString() ==
          "rtsql source (kafka, json)");
    CHECK(eval("pg_get_function_arguments", {oid(sys.routines()[0].oid)}).asString() == "x integer");
    CHECK(eval("to_regclass", {text("clicks")}).asInt() == clicks);
  }
  // Outside the scope the session is a default one, without the catalog's objects.
  CHECK(eval("current_user", {}).asString() == "rtsql");
  CHECK(eval("to_regclass", {text("clicks")}).isNull());
  CHECK(eval("pg_get_userbyid", {oid(10)}).asString() == "unknown (OID=10)");
}

TEST_CASE("a sink is a foreign table of its connector's server; a materialized view is relkind m") {
  Catalog catalog;
  fill(catalog);
  FlowDef view;
  view.name = "totals";
  view.sink = "totals";
  view.materializedView = true;
  catalog.addFlow(view, false, 0);
  SessionView s = session();
  s.viewLayout = [](const std::string& name) -> std::optional<std::pair<Schema, std::vector<int>>> {
    if (name != "totals") return std::nullopt;
    Schema schema;
    schema.columns = {{"user_id", type(TypeId::String), false}, {"n", type(TypeId::BigInt), false}};
    return std::make_pair(std::move(schema), std::vector<int>{0});
  };
  SystemCatalog sys(catalog, s);
  auto cls = sys.relation("pg_catalog", "pg_class");
  REQUIRE(cls);
  const Row* totals = find(*cls, "relname", "totals");
  REQUIRE(totals);
  CHECK((*totals)[col(*cls, "relkind")].asString() == "m");
  const int64_t viewOid = (*totals)[col(*cls, "oid")].asInt();
  auto att = sys.relation("pg_catalog", "pg_attribute");
  REQUIRE(att);
  std::vector<std::string> columns;
  for (const Row& row : rowsOf(*att)) {
    if (row[col(*att, "attrelid")].asInt() == viewOid) {
      columns.push_back(row[col(*att, "attname")].asString());
    }
  }
  CHECK(columns == std::vector<std::string>{"user_id", "n"});

  // psql's \d of a foreign table joins pg_foreign_table with pg_foreign_server
  // and prints nothing unless that gives one row.
  const int64_t outOid = (*find(*cls, "relname", "out"))[col(*cls, "oid")].asInt();
  auto servers = sys.relation("pg_catalog", "pg_foreign_server");
  auto tables = sys.relation("pg_catalog", "pg_foreign_table");
  REQUIRE(servers);
  REQUIRE(tables);
  const Row* kafka = find(*servers, "srvname", "kafka");
  REQUIRE(kafka);
  REQUIRE(rowsOf(*tables).size() == 1);
  const Row& out = rowsOf(*tables)[0];
  CHECK(out[col(*tables, "ftrelid")].asInt() == outOid);
  CHECK(out[col(*tables, "ftserver")].asInt() == (*kafka)[col(*servers, "oid")].asInt());
  const ValueList& options = out[col(*tables, "ftoptions")].asList();
  REQUIRE(options.size() == 1);
  CHECK(options[0].asString() == "format=json");
}
