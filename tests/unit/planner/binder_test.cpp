// Binder: types, source schemas (hidden Kafka columns, the raw schema),
// watermarks, every expression kind evaluated on a sample row, name
// resolution errors at the offending name, and INSERT constants.
#include <doctest/doctest.h>

#include <cmath>

#include "common/ansi_mode.h"
#include "common/json.h"
#include "planner/planner.h"
#include "planner_fixture.h"

using namespace rtsql;
using namespace rtsql::testing;

namespace {

int64_t ts(const char* text) {
  int64_t micros = 0;
  REQUIRE(parseTimestamp(text, &micros));
  return micros;
}

// A clicks row: declared columns, then the hidden metadata columns.
Row clicksRow() {
  return Row{Value::string("u1"),
             Value::string("http://x/a"),
             Value::float64(12.5),
             Value::timestamp(ts("2024-05-01 10:00:00")),
             Value::structure({Value::string("NL"), Value::integer(1012)}),
             Value::array({Value::string("red"), Value::string("blue")}),
             Value::binary("k1"),
             Value::timestamp(ts("2024-05-01 10:00:01")),
             Value::integer(1),
             Value::bigint(42),
             Value::array({})};
}

struct ExprFixture : PlannerFixture {
  ExprFixture() { addClicksAndSinks(*this); }

  ExprPtr bound(const std::string& expr) {
    PhysicalPlan plan = query("SELECT " + expr + " FROM clicks");
    REQUIRE(plan.stages.at(0).operators.back().is<ProjectSpec>());
    const ProjectSpec& project = plan.stages.at(0).operators.back().as<ProjectSpec>();
    REQUIRE(project.exprs.size() == 1);
    return project.exprs[0];
  }
  Value eval(const std::string& expr) { return bound(expr)->eval(clicksRow()); }
};

ast::TypeName typeName(std::string name, size_t pos = 0) {
  ast::TypeName t;
  t.name = std::move(name);
  t.pos = pos;
  return t;
}

}  // namespace

TEST_CASE("bindType: scalars, arrays, structs, DECIMAL, MAP and unknown names") {
  CHECK(bindType(typeName("STRING"))->id == TypeId::String);
  CHECK(bindType(typeName("BIGINT"))->id == TypeId::BigInt);
  CHECK(bindType(typeName("DECIMAL"))->toString() == "DECIMAL(10,0)");
  ast::TypeName money = typeName("NUMERIC");
  money.modifiers = {12, 2};
  CHECK(bindType(money)->toString() == "DECIMAL(12,2)");
  money.modifiers = {39, 2};
  CHECK(sqlErrorOf([&] { bindType(money); }).sqlstate() == "22023");

  ast::TypeName arr = typeName("ARRAY");
  ast::TypeName st = typeName("STRUCT");
  st.fields.emplace_back("key", typeName("STRING"));
  st.fields.emplace_back("value", typeName("BINARY"));
  arr.params.push_back(st);
  DataTypePtr t = bindType(arr);
  CHECK(t->toString() == "ARRAY<STRUCT<key: STRING, value: BINARY>>");

  ast::TypeName map = typeName("MAP", 17);
  map.params.push_back(typeName("STRING"));
  map.params.push_back(typeName("INT"));
  CHECK(bindType(map)->toString() == "MAP<STRING, INT>");

  SqlError e = sqlErrorOf([&] { bindType(typeName("FOO", 9)); });
  CHECK(e.sqlstate() == "42704");
  CHECK(e.message() == "type \"foo\" does not exist");
  CHECK(e.position() == 9);
}

TEST_CASE("bindSourceSchema: kafka json gets hidden metadata columns in order") {
  PlannerFixture f;
  addClicksAndSinks(f);
  auto clicks = f.catalog.findSource("clicks");
  REQUIRE(clicks);
  const Schema& s = clicks->schema;
  REQUIRE(s.size() == 11);
  CHECK(s.columns[0].name == "user_id");
  CHECK_FALSE(s.columns[0].hidden);
  CHECK(s.columns[4].type->toString() == "STRUCT<country: STRING, zip: INT>");
  const char* hidden[] = {"_key", "_timestamp", "_partition", "_offset", "_headers"};
  TypeId types[] = {TypeId::Binary, TypeId::Timestamp, TypeId::Int, TypeId::BigInt, TypeId::Array};
  for (int i = 0; i < 5; ++i) {
    CHECK(s.columns[6 + i].name == hidden[i]);
    CHECK(s.columns[6 + i].hidden);
    CHECK(s.columns[6 + i].type->id == types[i]);
  }
  CHECK(s.columns[10].type->toString() == "ARRAY<STRUCT<key: STRING, value: BINARY>>");
}

TEST_CASE("bindSourceSchema: raw has Spark's fixed Kafka schema") {
  PlannerFixture f;
  f.ddl("CREATE SOURCE r WITH (connector = 'kafka', subscribe = 't', format = 'raw')");
  f.ddl("CREATE SOURCE rh WITH (connector = 'kafka', subscribe = 't', format = 'raw', "
        "includeHeaders = 'true')");
  const Schema& s = f.catalog.findSource("r")->schema;
  CHECK(s.toString() == "(key BINARY, value BINARY, topic STRING, partition INT, offset BIGINT, "
                        "timestamp TIMESTAMP, timestampType INT)");
  const Schema& h = f.catalog.findSource("rh")->schema;
  REQUIRE(h.size() == 8);
  CHECK(h.columns[7].name == "headers");
  CHECK_FALSE(h.columns[7].hidden);
}

TEST_CASE("bindSourceSchema: errors") {
  PlannerFixture f;
  std::string sql = "CREATE SOURCE r (a INT) WITH (connector = 'kafka', format = 'raw')";
  SqlError e = sqlErrorOf([&] { f.ddl(sql); });
  CHECK(e.sqlstate() == "22023");
  CHECK(e.message() == "format 'raw' has a fixed schema");
  CHECK(e.position() == sql.find("a INT"));

  e = sqlErrorOf([&] { f.ddl("CREATE SOURCE j WITH (connector = 'kafka', format = 'json')"); });
  CHECK(e.sqlstate() == "22023");
  CHECK(e.message() == "format 'json' needs a column list");

  sql = "CREATE SOURCE d (a INT, b STRING, A BIGINT) WITH (connector = 'datagen')";
  e = sqlErrorOf([&] { f.ddl(sql); });
  CHECK(e.sqlstate() == "42701");
  CHECK(e.position() == sql.find("A BIGINT"));

  sql = "CREATE SOURCE m (a VARCHAR, b FOO) WITH (connector = 'datagen')";
  e = sqlErrorOf([&] { f.ddl(sql); });
  CHECK(e.sqlstate() == "42704");
  CHECK(e.message() == "type \"foo\" does not exist");
  CHECK(e.position() == sql.find("FOO"));

  sql = "CREATE SOURCE k (_key STRING) WITH (connector = 'kafka', format = 'json')";
  e = sqlErrorOf([&] { f.ddl(sql); });
  CHECK(e.sqlstate() == "42701");

  // datagen: declared columns only, nothing hidden.
  f.ddl("CREATE SOURCE g (id BIGINT, name STRING) WITH (connector = 'datagen')");
  CHECK(f.catalog.findSource("g")->schema.size() == 2);
}

TEST_CASE("bindWatermark") {
  PlannerFixture f;
  addClicksAndSinks(f);
  auto clicks = f.catalog.findSource("clicks");
  REQUIRE(clicks->watermark);
  CHECK(clicks->watermark->column == 3);
  CHECK(clicks->watermark->delayMicros == 10 * 1000 * 1000);

  f.ddl("CREATE SOURCE w0 (ts TIMESTAMP, WATERMARK FOR ts AS ts) WITH (connector = 'datagen')");
  REQUIRE(f.catalog.findSource("w0")->watermark);
  CHECK(f.catalog.findSource("w0")->watermark->delayMicros == 0);

  f.ddl("CREATE SOURCE w1 (x INT, ts TIMESTAMP, WATERMARK FOR ts AS ts - INTERVAL '1 minute') "
        "WITH (connector = 'datagen')");
  CHECK(f.catalog.findSource("w1")->watermark->column == 1);
  CHECK(f.catalog.findSource("w1")->watermark->delayMicros == 60LL * 1000 * 1000);

  std::string sql =
      "CREATE SOURCE bad (n BIGINT, WATERMARK FOR n AS n - INTERVAL '1' SECOND) "
      "WITH (connector = 'datagen')";
  SqlError e = sqlErrorOf([&] { f.ddl(sql); });
  CHECK(e.sqlstate() == "42804");

  sql = "CREATE SOURCE bad (ts TIMESTAMP, WATERMARK FOR nope AS nope) WITH (connector = 'datagen')";
  e = sqlErrorOf([&] { f.ddl(sql); });
  CHECK(e.sqlstate() == "42703");

  sql = "CREATE SOURCE bad (ts TIMESTAMP, WATERMARK FOR ts AS ts + INTERVAL '1' SECOND) "
        "WITH (connector = 'datagen')";
  e = sqlErrorOf([&] { f.ddl(sql); });
  CHECK(e.sqlstate() == "0A000");
  CHECK(e.position() == sql.find("ts + INTERVAL"));
}

TEST_CASE("bindExpression: every expression kind, evaluated") {
  ExprFixture f;
  CHECK(f.eval("user_id").asString() == "u1");
  CHECK(f.eval("clicks.url").asString() == "http://x/a");
  CHECK(f.eval("amount * 2").asDouble() == 25.0);
  CHECK(f.eval("-amount").asDouble() == -12.5);
  CHECK(f.eval("+amount").asDouble() == 12.5);
  CHECK(f.eval("1 + 2").asInt() == 3);
  CHECK(f.bound("1 + 2")->isConstant());  // folded
  CHECK(f.bound("1")->type()->id == TypeId::Int);
  CHECK(f.bound("3000000000")->type()->id == TypeId::BigInt);
  CHECK(f.bound("1.5")->type()->toString() == "DECIMAL(2,1)");
  CHECK(f.eval("'it''s'").asString() == "it's");
  CHECK(f.eval("NULL").isNull());
  CHECK(f.eval("true").asBool());
  CHECK(f.eval("INTERVAL '10' SECOND").asInt() == 10 * 1000 * 1000);
  CHECK(f.eval("TIMESTAMP '2024-05-01 10:00:00'").asInt() == ts("2024-05-01 10:00:00"));
  CHECK(f.eval("ts + INTERVAL '1' SECOND").asInt() == ts("2024-05-01 10:00:01"));
  CHECK(f.eval("amount > 10 AND user_id = 'u1'").asBool());
  CHECK(f.eval("amount < 10 OR user_id <> 'u1'").asBool() == false);
  CHECK(f.eval("NOT (amount > 10)").asBool() == false);
  CHECK(f.eval("upper(user_id)").asString() == "U1");
  CHECK(f.eval("concat(user_id, '-', url)").asString() == "u1-http://x/a");
  CHECK(f.eval("CASE WHEN amount > 100 THEN 'big' WHEN amount > 10 THEN 'mid' ELSE 'small' END")
            .asString() == "mid");
  CHECK(f.eval("CASE user_id WHEN 'u1' THEN 1 ELSE 2 END").asInt() == 1);
  CHECK(f.eval("CAST(amount AS INT)").asInt() == 12);
  CHECK(f.eval("CAST('7' AS BIGINT)").asInt() == 7);
  CHECK(f.eval("user_id IN ('u0', 'u1')").asBool());
  CHECK(f.eval("user_id NOT IN ('u0', 'u1')").asBool() == false);
  CHECK(f.eval("amount BETWEEN 10 AND 20").asBool());
  CHECK(f.eval("amount NOT BETWEEN 10 AND 20").asBool() == false);
  CHECK(f.eval("url LIKE 'http://%'").asBool());
  CHECK(f.eval("url NOT LIKE 'http://%'").asBool() == false);
  CHECK(f.eval("user_id IS NULL").asBool() == false);
  CHECK(f.eval("user_id IS NOT NULL").asBool());
  CHECK(f.eval("info.country").asString() == "NL");            // struct field by column
  CHECK(f.eval("clicks.info.zip").asInt() == 1012);             // qualifier, then field
  CHECK(f.eval("named_struct('a', 1).a").asInt() == 1);          // field of an expression
  CHECK(f.eval("tags[1]").asString() == "blue");                // 0-based subscript
  CHECK(sqlErrorOf([&] { f.eval("tags[5]"); }).sqlstate() == "22003");  // ANSI mode
  {
    AnsiModeScope legacy(false);
    CHECK(f.eval("tags[5]").isNull());
  }
  CHECK(f.eval("_offset").asInt() == 42);                        // hidden, by name
  CHECK(f.eval("coalesce(NULL, user_id)").asString() == "u1");
}

TEST_CASE("bindExpression: a number with a point is a DECIMAL, as Spark reads it") {
  ExprFixture f;
  auto typeOf = [&](const std::string& e) { return f.bound(e)->type()->toString(); };
  // The digits are the precision, those after the point the scale.
  CHECK(typeOf("1.5") == "DECIMAL(2,1)");
  CHECK(typeOf("123.456") == "DECIMAL(6,3)");
  CHECK(typeOf("0.05") == "DECIMAL(2,2)");
  CHECK(typeOf(".5") == "DECIMAL(1,1)");
  CHECK(typeOf("5.") == "DECIMAL(1,0)");
  CHECK(typeOf("1.5BD") == "DECIMAL(2,1)");
  CHECK(f.eval("1.50").toString() == "1.50");
  // -0.0 is a DECIMAL zero, which has no sign.
  CHECK(typeOf("-0.0") == "DECIMAL(1,1)");
  CHECK(f.eval("CAST(-0.0 AS DOUBLE)").asDouble() == 0.0);
  CHECK(!std::signbit(f.eval("CAST(-0.0 AS DOUBLE)").asDouble()));
  // An exponent or the suffix D makes a DOUBLE.
  CHECK(typeOf("1e3") == "DOUBLE");
  CHECK(typeOf("1.5e0") == "DOUBLE");
  CHECK(typeOf("1.5D") == "DOUBLE");
  CHECK(typeOf("2d") == "DOUBLE");
  CHECK(f.eval("-1.5D").asDouble() == -1.5);
  // An integer too large for BIGINT is a DECIMAL of its digits.
  CHECK(typeOf("9223372036854775808") == "DECIMAL(19,0)");
  CHECK(typeOf("-9223372036854775809") == "DECIMAL(19,0)");
  CHECK(typeOf("-9223372036854775808") == "BIGINT");
  // More than 38 digits fit no DECIMAL.
  SqlError e = sqlErrorOf([&] { f.bound("1." + std::string(38, '0')); });
  CHECK(e.sqlstate() == "22003");
  CHECK(e.position() == std::string("SELECT ").size());
  CHECK(sqlErrorOf([&] { f.bound(std::string(39, '9')); }).sqlstate() == "22003");
  // Arithmetic follows Spark's DECIMAL rules; an integer literal is as many
  // digits as it has, a DOUBLE makes it DOUBLE.
  CHECK(typeOf("1.5 * 2") == "DECIMAL(4,1)");
  CHECK(typeOf("1.5 / 3") == "DECIMAL(7,6)");
  CHECK(f.eval("1.5 / 3").toString() == "0.500000");
  CHECK(typeOf("0.1 + 0.2") == "DECIMAL(2,1)");
  CHECK(f.eval("0.1 + 0.2").toString() == "0.3");
  CHECK(typeOf("amount * 1.1") == "DOUBLE");
  CHECK(typeOf("info.zip * 1.1") == "DECIMAL(13,1)");
  CHECK(f.eval("info.zip * 1.1").toString() == "1113.2");
  // A DOUBLE column compared with a decimal literal compares DOUBLEs: the
  // literal is converted once, when the statement is bound, not per record.
  ExprPtr cmp = f.bound("amount > 1.5");
  std::vector<const Expr*> sides;
  cmp->forEachChild([&](const Expr& c) { sides.push_back(&c); });
  REQUIRE(sides.size() == 2);
  CHECK(sides[1]->type()->id == TypeId::Double);
  CHECK(sides[1]->isConstant());
  int grandchildren = 0;
  sides[1]->forEachChild([&](const Expr&) { ++grandchildren; });
  CHECK(grandchildren == 0);
  CHECK(f.eval("amount > 12.4").asBool());
  CHECK(!f.eval("amount > 12.5").asBool());
}

TEST_CASE("bindExpression: hand-built AST against a schema") {
  Schema schema;
  schema.columns.push_back(Column{"a", DataType::of(TypeId::Int), false});
  schema.columns.push_back(Column{"b", DataType::of(TypeId::String), false});
  ast::Expr add;
  add.kind = ast::ExprKind::Binary;
  add.op = "+";
  auto col = std::make_unique<ast::Expr>();
  col->kind = ast::ExprKind::Column;
  col->parts = {"A"};
  auto lit = std::make_unique<ast::Expr>();
  lit->kind = ast::ExprKind::Literal;
  lit->literal.kind = ast::LiteralKind::Integer;
  lit->literal.text = "5";
  add.args.push_back(std::move(col));
  add.args.push_back(std::move(lit));
  ExprPtr e = bindExpression(add, schema);
  CHECK(e->type()->id == TypeId::Int);
  CHECK(e->eval(Row{Value::integer(2), Value::string("x")}).asInt() == 7);
  CHECK_FALSE(e->isConstant());

  ast::Expr missing;
  missing.kind = ast::ExprKind::Column;
  missing.parts = {"zz"};
  missing.pos = 33;
  SqlError err = sqlErrorOf([&] { bindExpression(missing, schema); });
  CHECK(err.sqlstate() == "42703");
  CHECK(err.position() == 33);
  CHECK(err.hint() == "available columns: a, b");
}

TEST_CASE("bindExpression: name errors point at the name") {
  ExprFixture f;
  std::string sql = "SELECT user_id, amout FROM clicks";
  SqlError e = sqlErrorOf([&] { f.query(sql); });
  CHECK(e.sqlstate() == "42703");
  CHECK(e.message() == "column \"amout\" does not exist");
  CHECK(e.position() == sql.find("amout"));
  CHECK(e.hint() == "perhaps you meant \"amount\"");

  sql = "SELECT xyzzy FROM clicks";
  e = sqlErrorOf([&] { f.query(sql); });
  CHECK(e.sqlstate() == "42703");
  CHECK(e.hint() == "available columns: user_id, url, amount, ts, info, ...");

  sql = "SELECT c.nope FROM clicks c";
  e = sqlErrorOf([&] { f.query(sql); });
  CHECK(e.sqlstate() == "42703");
  CHECK(e.message() == "column \"c.nope\" does not exist");
  CHECK(e.position() == sql.find("c.nope"));

  sql = "SELECT info.nope FROM clicks";
  e = sqlErrorOf([&] { f.query(sql); });
  CHECK(e.sqlstate() == "42703");

  sql = "SELECT user_id FROM clickz";
  e = sqlErrorOf([&] { f.query(sql); });
  CHECK(e.sqlstate() == "42P01");
  CHECK(e.message() == "relation \"clickz\" does not exist");
  CHECK(e.position() == sql.find("clickz"));
  CHECK(e.hint() == "perhaps you meant \"clicks\"");

  sql = "SELECT user_id, nosuch(url) FROM clicks";
  e = sqlErrorOf([&] { f.query(sql); });
  CHECK(e.sqlstate() == "42883");
  CHECK(e.position() == sql.find("nosuch"));

  sql = "SELECT user_id FROM clicks WHERE amount AND true";
  e = sqlErrorOf([&] { f.query(sql); });
  CHECK(e.sqlstate() == "42804");

  sql = "SELECT user_id FROM clicks WHERE amount + 1";
  e = sqlErrorOf([&] { f.query(sql); });
  CHECK(e.sqlstate() == "42804");
  CHECK(e.message() == "argument of WHERE must be type BOOLEAN, not type DOUBLE");
  CHECK(e.position() == sql.find("amount + 1"));

  sql = "SELECT CAST(amount AS FOO) FROM clicks";
  e = sqlErrorOf([&] { f.query(sql); });
  CHECK(e.sqlstate() == "42704");
  CHECK(e.position() == sql.find("FOO"));

  sql = "SELECT TIMESTAMP 'not a time' FROM clicks";
  e = sqlErrorOf([&] { f.query(sql); });
  CHECK(e.sqlstate() == "22007");

  sql = "SELECT a FROM (SELECT user_id AS a, url AS a FROM clicks) s";
  e = sqlErrorOf([&] { f.query(sql); });
  CHECK(e.sqlstate() == "42702");
}

TEST_CASE("star expansion leaves hidden columns out") {
  ExprFixture f;
  PhysicalPlan p = f.query("SELECT * FROM clicks");
  const Schema& out = p.sink.input;
  REQUIRE(out.size() == 6);
  CHECK(out.columns[0].name == "user_id");
  CHECK(out.columns[5].name == "tags");

  p = f.query("SELECT c.*, _key FROM clicks c");
  REQUIRE(p.sink.input.size() == 7);
  CHECK(p.sink.input.columns[6].name == "_key");
  CHECK(p.stages[0].operators.back().as<ProjectSpec>().exprs[6]->eval(clicksRow()).asString() == "k1");

  std::string sql = "SELECT x.* FROM clicks c";
  SqlError e = sqlErrorOf([&] { f.query(sql); });
  CHECK(e.sqlstate() == "42P01");
  CHECK(e.position() == sql.find("x.*"));
}

TEST_CASE("a select list is limited to 1664 entries, as in PostgreSQL") {
  ExprFixture f;
  // Entries separated by ", ": the n-th (0-based) starts at prefix + n * stride.
  auto selectList = [](size_t n, const std::string& item) {
    std::string list;
    for (size_t i = 0; i < n; ++i) list += (i == 0 ? "" : ", ") + item;
    return list;
  };
  CHECK(f.query("SELECT " + selectList(kMaxSelectListEntries, "amount") + " FROM clicks")
            .sink.input.size() == kMaxSelectListEntries);

  const std::string sql = "SELECT " + selectList(40000, "amount") + " FROM clicks";
  SqlError e = sqlErrorOf([&] { f.query(sql); });
  CHECK(e.sqlstate() == "54011");
  CHECK(e.message() == "target lists can have at most 1664 entries");
  CHECK(e.position() == 7 + kMaxSelectListEntries * 8);  // "amount, " per entry

  // `*` counts every column it expands to; grouped lists are limited too.
  e = sqlErrorOf([&] { f.query("SELECT " + selectList(278, "*") + " FROM clicks"); });
  CHECK(e.sqlstate() == "54011");
  e = sqlErrorOf([&] {
    f.query("SELECT " + selectList(1700, "count(*)") + " FROM clicks GROUP BY user_id");
  });
  CHECK(e.sqlstate() == "54011");
  e = sqlErrorOf([&] {
    f.flow("CREATE FLOW w INTO alerts TRIGGER REALTIME AS SELECT " + selectList(2000, "amount") +
           " FROM clicks");
  });
  CHECK(e.sqlstate() == "54011");
}

TEST_CASE("evalConstant for INSERT VALUES") {
  auto value = [](const std::string& sqlValue, TypeId target) {
    auto stmt = parseOne("INSERT INTO t VALUES (" + sqlValue + ")");
    auto& ins = static_cast<ast::Insert&>(*stmt);
    return evalConstant(*ins.rows.at(0).at(0), DataType::of(target));
  };
  CHECK(value("'A'", TypeId::String).asString() == "A");
  CHECK(value("5", TypeId::BigInt).type() == TypeId::BigInt);
  CHECK(value("5", TypeId::BigInt).asInt() == 5);
  CHECK(value("2.5", TypeId::Double).asDouble() == 2.5);
  CHECK(value("-3", TypeId::Double).asDouble() == -3.0);
  CHECK(value("NULL", TypeId::Int).isNull());
  CHECK(value("1 + 2", TypeId::Int).asInt() == 3);
  CHECK(value("'2024-05-01 10:00:00'", TypeId::Timestamp).asInt() == ts("2024-05-01 10:00:00"));

  std::string sql = "INSERT INTO t VALUES (1, 'x')";
  auto stmt = parseOne(sql);
  auto& ins = static_cast<ast::Insert&>(*stmt);
  SqlError e = sqlErrorOf([&] { evalConstant(*ins.rows[0][1], DataType::of(TypeId::Int)); });
  CHECK(e.sqlstate() == "42804");
  CHECK(e.position() == sql.find("'x'"));

  e = sqlErrorOf([&] { value("x", TypeId::Int); });
  CHECK(e.sqlstate() == "42703");
  e = sqlErrorOf([&] { value("rand()", TypeId::Double); });
  CHECK(e.sqlstate() == "42804");
  e = sqlErrorOf([&] { value("3000000000", TypeId::Int); });
  CHECK(e.sqlstate() == "22003");
  e = sqlErrorOf([&] { value("'yesterday'", TypeId::Timestamp); });
  CHECK(e.sqlstate() == "22007");
}
