#include <doctest/doctest.h>

#include <random>
#include <string>

#include "common/error.h"
#include "parser/parser.h"
#include "parser/string_literals.h"

using namespace rtsql;
using namespace rtsql::ast;

namespace {

// A compact, fully parenthesised spelling of a type / expression, so one string
// comparison checks a whole tree: kinds, operators, names and nesting.
std::string dump(const TypeName& t) {
  std::string s = t.name;
  if (!t.params.empty()) {
    s += "<";
    for (size_t i = 0; i < t.params.size(); ++i) s += (i ? "," : "") + dump(t.params[i]);
    s += ">";
  }
  if (!t.fields.empty()) {
    s += "<";
    for (size_t i = 0; i < t.fields.size(); ++i) {
      s += (i ? "," : "") + t.fields[i].first + " " + dump(t.fields[i].second);
    }
    s += ">";
  }
  if (!t.modifiers.empty()) {
    s += "(";
    for (size_t i = 0; i < t.modifiers.size(); ++i) s += (i ? "," : "") + std::to_string(t.modifiers[i]);
    s += ")";
  }
  return s;
}

std::string dump(const Expr& e);

// A subquery: its terms' select items, `|` between UNION ALL terms.
std::string dump(const Query& q) {
  std::string s;
  for (size_t t = 0; t < q.terms.size(); ++t) {
    if (t) s += " |";
    for (const auto& item : q.terms[t].items) s += (s.empty() ? "" : " ") + dump(*item.expr);
  }
  return s;
}

std::string dumpArgs(const Expr& e, size_t from = 0) {
  std::string s;
  for (size_t i = from; i < e.args.size(); ++i) s += " " + dump(*e.args[i]);
  return s;
}

std::string joinParts(const std::vector<std::string>& parts) {
  std::string s;
  for (size_t i = 0; i < parts.size(); ++i) s += (i ? "." : "") + parts[i];
  return s;
}

std::string dump(const Expr& e) {
  switch (e.kind) {
    case ExprKind::Literal:
      switch (e.literal.kind) {
        case LiteralKind::Null: return "NULL";
        case LiteralKind::Boolean: return e.literal.boolean ? "TRUE" : "FALSE";
        case LiteralKind::Integer: return e.literal.text;
        case LiteralKind::Decimal: return "dec:" + e.literal.text;
        case LiteralKind::String: return "'" + e.literal.text + "'";
        case LiteralKind::Interval:
          return "INTERVAL '" + e.literal.text + "'" + (e.literal.unit.empty() ? "" : " " + e.literal.unit);
        case LiteralKind::Timestamp: return "TIMESTAMP '" + e.literal.text + "'";
        case LiteralKind::Date: return "DATE '" + e.literal.text + "'";
        case LiteralKind::TimestampNtz: return "TIMESTAMP_NTZ '" + e.literal.text + "'";
        case LiteralKind::Binary: return "X'" + e.literal.text + "'";
      }
      return "?";
    case ExprKind::Column: return joinParts(e.parts);
    case ExprKind::Star: return e.parts.empty() ? "*" : joinParts(e.parts) + ".*";
    case ExprKind::Unary:
    case ExprKind::Binary: return "(" + e.op + dumpArgs(e) + ")";
    case ExprKind::Call: {
      std::string s = e.name + "(";
      if (e.star) s += "*";
      if (e.distinct) s += "DISTINCT ";
      std::string args = dumpArgs(e);
      if (!args.empty()) args.erase(0, 1);
      return s + args + ")";
    }
    case ExprKind::Case: {
      std::string s = "(CASE";
      if (e.hasOperand) s += " " + dump(*e.args[0]);
      for (auto& [w, t] : e.whens) s += " WHEN " + dump(*w) + " THEN " + dump(*t);
      if (e.elseExpr) s += " ELSE " + dump(*e.elseExpr);
      return s + ")";
    }
    case ExprKind::Cast: return "(CAST " + dump(*e.args[0]) + " " + dump(e.castType) + ")";
    case ExprKind::In: return std::string(e.negated ? "(NOT IN" : "(IN") + dumpArgs(e) + ")";
    case ExprKind::Between:
      return std::string(e.negated ? "(NOT BETWEEN" : "(BETWEEN") + dumpArgs(e) + ")";
    case ExprKind::Like: return std::string(e.negated ? "(NOT LIKE" : "(LIKE") + dumpArgs(e) + ")";
    case ExprKind::IsNull:
      return std::string(e.negated ? "(IS NOT NULL" : "(IS NULL") + dumpArgs(e) + ")";
    case ExprKind::Field: return "(. " + dump(*e.args[0]) + " " + e.name + ")";
    case ExprKind::Subscript: return "([]" + dumpArgs(e) + ")";
    case ExprKind::Subquery:
      return "(SUBQUERY " + dump(*e.subquery) + ")";
    case ExprKind::InSubquery:
      return std::string(e.negated ? "(NOT IN" : "(IN") + dumpArgs(e) + " (SUBQUERY " +
             dump(*e.subquery) + "))";
    case ExprKind::Exists:
      return "(EXISTS " + dump(*e.subquery) + ")";
  }
  return "?";
}

StatementPtr parseOne(std::string_view sql) {
  auto all = parseStatements(sql);
  REQUIRE(all.size() == 1);
  return std::move(all[0]);
}

template <typename T>
std::unique_ptr<T> parseAs(std::string_view sql) {
  StatementPtr s = parseOne(sql);
  auto* t = dynamic_cast<T*>(s.get());
  REQUIRE(t != nullptr);
  s.release();
  return std::unique_ptr<T>(t);
}

std::unique_ptr<Query> parseQuery(std::string_view sql) {
  return std::move(parseAs<SelectStatement>(sql)->query);
}

// The expression of `SELECT <expr>`.
std::string expr(std::string_view text) {
  std::string sql = "SELECT " + std::string(text);
  auto q = parseQuery(sql);
  REQUIRE(q->terms.size() == 1);
  REQUIRE(q->terms[0].items.size() == 1);
  return dump(*q->terms[0].items[0].expr);
}

SqlError parseError(std::string_view sql) {
  try {
    parseStatements(sql);
  } catch (const SqlError& e) {
    return e;
  }
  FAIL("expected a SqlError for: " << sql);
  return SqlError("", "");
}

}  // namespace

// ---------------------------------------------------------------- DDL

TEST_CASE("CREATE SOURCE with columns, watermark and options") {
  std::string sql =
      "CREATE SOURCE IF NOT EXISTS clicks (\n"
      "    user_id  STRING,\n"
      "    url      STRING,\n"
      "    amount   DOUBLE,\n"
      "    ts       TIMESTAMP,\n"
      "    WATERMARK FOR ts AS ts - INTERVAL '10' SECOND\n"
      ") WITH (\n"
      "    connector = 'kafka',\n"
      "    'kafka.bootstrap.servers' = '127.0.0.1:9092',   -- or 'embedded'\n"
      "    subscribe = 'clicks',\n"
      "    startingOffsets = 'latest',\n"
      "    maxPartitions = '8',\n"
      "    format = 'json'\n"
      ");";
  auto s = parseAs<CreateSource>(sql);
  CHECK(s->kind == StatementKind::CreateSource);
  CHECK(s->name == "clicks");
  CHECK(s->namePos == sql.find("clicks"));
  CHECK(s->ifNotExists);
  CHECK(s->hasColumnList);
  REQUIRE(s->columns.size() == 4);
  CHECK(s->columns[0].name == "user_id");
  CHECK(s->columns[0].type.name == "STRING");
  CHECK(s->columns[2].type.name == "DOUBLE");
  CHECK(s->columns[3].name == "ts");
  CHECK(s->columns[3].type.name == "TIMESTAMP");
  CHECK(s->columns[1].pos == sql.find("url"));
  REQUIRE(s->watermark.has_value());
  CHECK(s->watermark->column == "ts");
  CHECK(s->watermark->pos == sql.find("WATERMARK"));
  CHECK(dump(*s->watermark->expr) == "(- ts INTERVAL '10' SECOND)");
  REQUIRE(s->options.size() == 6);
  CHECK(s->options[0].key == "connector");
  CHECK(s->options[0].value == "kafka");
  CHECK(s->options[1].key == "kafka.bootstrap.servers");
  CHECK(s->options[1].value == "127.0.0.1:9092");
  CHECK(s->options[1].keyPos == sql.find("'kafka.bootstrap.servers'"));
  CHECK(s->options[1].valuePos == sql.find("'127.0.0.1:9092'"));
  CHECK(s->options[3].key == "startingOffsets");
  CHECK(s->options[4].value == "8");
  CHECK(s->options[5].key == "format");
  CHECK(s->pos == 0);
  CHECK(s->text == sql.substr(0, sql.size() - 1));  // without the ';'
}

TEST_CASE("CREATE SOURCE without a column list; option spellings") {
  auto s = parseAs<CreateSource>(
      "create source raw with (connector='kafka', kafka.bootstrap.servers = 'embedded', "
      "maxPartitions = 8, includeHeaders = true, on.error = skip, 'dead.letter.sink' = dl, "
      "offset = -1)");
  CHECK(s->name == "raw");
  CHECK_FALSE(s->ifNotExists);
  CHECK_FALSE(s->hasColumnList);
  CHECK(s->columns.empty());
  CHECK_FALSE(s->watermark.has_value());
  REQUIRE(s->options.size() == 7);
  CHECK(s->options[1].key == "kafka.bootstrap.servers");
  CHECK(s->options[1].value == "embedded");
  CHECK(s->options[2].value == "8");
  CHECK(s->options[3].value == "true");
  CHECK(s->options[4].key == "on.error");
  CHECK(s->options[4].value == "skip");
  CHECK(s->options[5].key == "dead.letter.sink");
  CHECK(s->options[5].value == "dl");
  CHECK(s->options[6].value == "-1");
}

TEST_CASE("column types: all spellings, nested types, NOT NULL") {
  auto s = parseAs<CreateTable>(
      "CREATE TABLE t (a string, b varchar(20), c text, d int, e integer, f bigint, g long, "
      "h smallint, i tinyint, j double, k float, l real, m boolean, n bool, o timestamp, "
      "p binary, q bytes, r date, s decimal(10, 2), "
      "u array<struct<key: string, value binary>>, v map<string, array<int>>, "
      "w STRUCT<start TIMESTAMP, `end` TIMESTAMP> NOT NULL)");
  std::vector<std::string> got;
  for (auto& c : s->columns) got.push_back(dump(c.type));
  std::vector<std::string> want = {
      "STRING",  "VARCHAR(20)", "TEXT",   "INT",     "INTEGER",   "BIGINT",  "LONG",
      "SMALLINT", "TINYINT",    "DOUBLE", "FLOAT",   "REAL",      "BOOLEAN", "BOOL",
      "TIMESTAMP", "BINARY",    "BYTES",  "DATE",    "DECIMAL(10,2)",
      "ARRAY<STRUCT<key STRING,value BINARY>>", "MAP<STRING,ARRAY<INT>>",
      "STRUCT<start TIMESTAMP,end TIMESTAMP>"};
  CHECK(got == want);
  CHECK(s->columns.back().notNull);
  CHECK_FALSE(s->columns.front().notNull);
}

TEST_CASE("CREATE TABLE with and without options, INSERT") {
  auto t = parseAs<CreateTable>(
      "CREATE TABLE merchants (id BIGINT, name STRING, risk DOUBLE)\n"
      "    WITH (connector = 'file', path = 'data/merchants.csv', format = 'csv', header = 'true')");
  CHECK(t->name == "merchants");
  REQUIRE(t->columns.size() == 3);
  CHECK(t->columns[1].name == "name");  // a non-reserved word as a column
  REQUIRE(t->options.size() == 4);
  CHECK(t->options[1].value == "data/merchants.csv");

  auto codes = parseAs<CreateTable>("CREATE TABLE codes (code STRING, label STRING)");
  CHECK(codes->options.empty());
  CHECK(codes->columns.size() == 2);

  std::string sql = "INSERT INTO codes VALUES ('A', 'alpha'), ('B', 'it''s'), (-1, NULL)";
  auto ins = parseAs<Insert>(sql);
  CHECK(ins->table == "codes");
  CHECK(ins->tablePos == 12);
  CHECK(ins->columns.empty());
  REQUIRE(ins->rows.size() == 3);
  CHECK(dump(*ins->rows[0][0]) == "'A'");
  CHECK(dump(*ins->rows[1][1]) == "'it's'");
  CHECK(dump(*ins->rows[2][0]) == "-1");
  CHECK(ins->rows[2][0]->pos == sql.find("-1"));
  CHECK(dump(*ins->rows[2][1]) == "NULL");

  auto ins2 = parseAs<Insert>("insert into codes (label, code) values ('x', 'y')");
  CHECK(ins2->columns == std::vector<std::string>{"label", "code"});
  CHECK(ins2->query == nullptr);
}

TEST_CASE("INSERT ... SELECT") {
  const std::string sql = "INSERT INTO clicks (user_id, amount) SELECT name, amt * 2 FROM users "
                          "WHERE amt > 1 UNION ALL SELECT 'x', 1.0";
  auto ins = parseAs<Insert>(sql);
  CHECK(ins->table == "clicks");
  CHECK(ins->columns == std::vector<std::string>{"user_id", "amount"});
  CHECK(ins->rows.empty());
  REQUIRE(ins->query != nullptr);
  CHECK(ins->query->pos == sql.find("SELECT"));
  REQUIRE(ins->query->terms.size() == 2);
  CHECK(ins->query->terms[0].from->name == "users");
  CHECK(ins->query->terms[1].from == nullptr);
  // VALUES and a query do not mix.
  CHECK_THROWS_AS(parseStatements("INSERT INTO t VALUES (1) SELECT 2"), SqlError);
}

TEST_CASE("CREATE SINK") {
  auto s = parseAs<CreateSink>(
      "CREATE SINK alerts WITH (\n connector = 'kafka',\n 'kafka.bootstrap.servers' = 'embedded',\n"
      " topic = 'alerts',\n format = 'json'            -- 'json' | 'raw'\n)");
  CHECK(s->name == "alerts");
  REQUIRE(s->options.size() == 4);
  CHECK(s->options[2].key == "topic");
  CHECK(s->options[2].value == "alerts");
  auto f = parseAs<CreateSink>(
      "CREATE SINK IF NOT EXISTS audit WITH (connector = 'file', path = '/var/lib/rtsql/audit.jsonl', "
      "format = 'json')");
  CHECK(f->ifNotExists);
  CHECK(f->options[1].value == "/var/lib/rtsql/audit.jsonl");
}

TEST_CASE("CREATE FLOW with trigger, checkpoint interval, options and a join") {
  std::string sql =
      "CREATE FLOW fraud_alerts INTO alerts\n"
      "    TRIGGER REALTIME\n"
      "    CHECKPOINT INTERVAL '30 seconds'\n"
      "    WITH ('shuffle.partitions' = '8', 'delivery' = 'exactly-once')\n"
      "AS\n"
      "SELECT c.user_id, c.amount, m.name\n"
      "FROM clicks c JOIN merchants m ON c.merchant_id = m.id\n"
      "WHERE c.amount > 1000;";
  auto f = parseAs<CreateFlow>(sql);
  CHECK(f->name == "fraud_alerts");
  CHECK(f->namePos == 12);
  CHECK(f->sink == "alerts");
  CHECK(f->sinkPos == sql.find(" alerts") + 1);
  REQUIRE(f->checkpointInterval.has_value());
  CHECK(*f->checkpointInterval == "30 seconds");
  CHECK(f->checkpointIntervalPos == sql.find("'30 seconds'"));
  REQUIRE(f->options.size() == 2);
  CHECK(f->options[0].key == "shuffle.partitions");
  CHECK(f->options[1].value == "exactly-once");
  size_t qpos = sql.find("SELECT");
  CHECK(f->queryText == sql.substr(qpos, sql.size() - 1 - qpos));
  REQUIRE(f->query);
  CHECK(f->query->pos == qpos);
  const Select& s = f->query->terms.at(0);
  REQUIRE(s.items.size() == 3);
  CHECK(dump(*s.items[0].expr) == "c.user_id");
  CHECK(s.items[2].text == "m.name");
  REQUIRE(s.from);
  CHECK(s.from->kind == TableRef::Kind::Join);
  CHECK(s.from->joinType == JoinType::Inner);
  CHECK(s.from->left->name == "clicks");
  CHECK(s.from->left->alias == "c");
  CHECK(s.from->right->name == "merchants");
  CHECK(s.from->right->alias == "m");
  CHECK(dump(*s.from->on) == "(= c.merchant_id m.id)");
  CHECK(dump(*s.where) == "(> c.amount 1000)");

  auto g = parseAs<CreateFlow>("create flow f into s as select * from t");
  CHECK_FALSE(g->checkpointInterval.has_value());
  CHECK(g->options.empty());
  CHECK(g->queryText == "select * from t");

  CHECK(parseError("CREATE FLOW f INTO s TRIGGER REALTIME TRIGGER REALTIME AS SELECT 1").sqlstate() ==
        "42601");
}

TEST_CASE("DROP, STOP, START, DESCRIBE") {
  auto d = parseAs<Drop>("DROP FLOW IF EXISTS f");
  CHECK(d->object == ObjectKind::Flow);
  CHECK(d->ifExists);
  CHECK(d->name == "f");
  CHECK(d->namePos == 20);
  CHECK(parseAs<Drop>("drop source x")->object == ObjectKind::Source);
  CHECK(parseAs<Drop>("DROP SINK x")->object == ObjectKind::Sink);
  auto t = parseAs<Drop>("DROP TABLE IF EXISTS merchants");
  CHECK(t->object == ObjectKind::Table);
  CHECK(t->name == "merchants");
  CHECK_FALSE(parseAs<Drop>("DROP TABLE x")->ifExists);

  auto stop = parseOne("STOP FLOW fraud_alerts");
  CHECK(stop->kind == StatementKind::StopFlow);
  CHECK(dynamic_cast<FlowCommand&>(*stop).name == "fraud_alerts");
  auto start = parseOne("start flow f2");
  CHECK(start->kind == StatementKind::StartFlow);
  CHECK(dynamic_cast<FlowCommand&>(*start).namePos == 11);
  CHECK_FALSE(dynamic_cast<FlowCommand&>(*start).resetState);
  auto reset = parseOne("START FLOW f RESET STATE");
  CHECK(reset->kind == StatementKind::StartFlow);
  CHECK(dynamic_cast<FlowCommand&>(*reset).resetState);
  CHECK(dynamic_cast<FlowCommand&>(*reset).name == "f");
  CHECK_THROWS_AS(parseOne("STOP FLOW f RESET STATE"), SqlError);
  CHECK_THROWS_AS(parseOne("START FLOW f RESET"), SqlError);
  // The new words stay names.
  CHECK(dynamic_cast<FlowCommand&>(*parseOne("START FLOW state")).name == "state");
  CHECK(dynamic_cast<FlowCommand&>(*parseOne("START FLOW reset RESET STATE")).name == "reset");

  CHECK(parseAs<Describe>("DESCRIBE clicks")->name == "clicks");
  CHECK(parseAs<Describe>("desc source clicks")->name == "clicks");
  CHECK(parseAs<Describe>("DESCRIBE source")->name == "source");
}

TEST_CASE("SHOW statements") {
  CHECK(parseAs<Show>("SHOW SOURCES")->what == ShowKind::Sources);
  CHECK(parseAs<Show>("show sinks")->what == ShowKind::Sinks);
  CHECK(parseAs<Show>("SHOW TABLES")->what == ShowKind::Tables);
  CHECK(parseAs<Show>("SHOW FLOWS")->what == ShowKind::Flows);
  CHECK(parseAs<Show>("SHOW FUNCTIONS")->what == ShowKind::Functions);
  auto p = parseAs<Show>("SHOW PROGRESS fraud_alerts");
  CHECK(p->what == ShowKind::Progress);
  CHECK(p->name == "fraud_alerts");
  CHECK(p->namePos == 14);
  auto v = parseAs<Show>("SHOW 'shuffle.partitions'");
  CHECK(v->what == ShowKind::Variable);
  CHECK(v->name == "shuffle.partitions");
  CHECK(v->namePos == 5);
  auto b = parseAs<Show>("SHOW embedded_kafka");
  CHECK(b->what == ShowKind::Variable);
  CHECK(b->name == "embedded_kafka");
  CHECK(parseAs<Show>("SHOW shuffle.partitions")->name == "shuffle.partitions");
  // A word that is also a SHOW keyword elsewhere is still a variable here.
  CHECK(parseAs<Show>("SHOW progress")->what == ShowKind::Variable);
}

TEST_CASE("SET statements") {
  auto a = parseAs<Set>("SET 'shuffle.partitions' = '8'");
  CHECK(a->key == "shuffle.partitions");
  CHECK(a->value == "8");
  CHECK(a->keyPos == 4);
  auto b = parseAs<Set>("set shuffle.partitions = 8");
  CHECK(b->key == "shuffle.partitions");
  CHECK(b->value == "8");
  auto c = parseAs<Set>("SET delivery TO 'exactly-once'");
  CHECK(c->key == "delivery");
  CHECK(c->value == "exactly-once");
  CHECK(parseAs<Set>("SET x = true")->value == "true");
  CHECK(parseAs<Set>("SET x = on_error")->value == "on_error");
}

TEST_CASE("EXPLAIN") {
  std::string sql = "EXPLAIN CREATE FLOW f INTO s AS SELECT a FROM t";
  auto e = parseAs<Explain>(sql);
  REQUIRE(e->inner);
  CHECK(e->inner->kind == StatementKind::CreateFlow);
  CHECK(e->inner->pos == 8);
  CHECK(e->inner->text == "CREATE FLOW f INTO s AS SELECT a FROM t");
  CHECK(dynamic_cast<CreateFlow&>(*e->inner).queryText == "SELECT a FROM t");
  CHECK(e->text == sql);

  auto s = parseAs<Explain>("explain select 1");
  REQUIRE(s->inner);
  CHECK(s->inner->kind == StatementKind::Select);
  CHECK(s->inner->text == "select 1");
  CHECK(dynamic_cast<SelectStatement&>(*s->inner).query->terms.size() == 1);

  // EXPLAIN FLOW name reads a flow's plan: no statement inside.
  auto f = parseAs<Explain>("EXPLAIN FLOW \"My Flow\"");
  CHECK_FALSE(f->inner);
  CHECK(f->flowName == "My Flow");
  CHECK(f->flowNamePos == 13);
  CHECK(parseAs<Explain>("explain flow big_spenders")->flowName == "big_spenders");
  CHECK_THROWS_AS(parseOne("EXPLAIN FLOW"), SqlError);
  CHECK_THROWS_AS(parseOne("EXPLAIN FLOW a b"), SqlError);
}

// ---------------------------------------------------------------- scripts

TEST_CASE("scripts: several statements, empty statements, positions and texts") {
  std::string sql = ";; SHOW FLOWS ;\n\n-- comment\nSELECT 1;;\n  DESCRIBE x  ;";
  auto all = parseStatements(sql);
  REQUIRE(all.size() == 3);
  CHECK(all[0]->kind == StatementKind::Show);
  CHECK(all[0]->pos == 3);
  CHECK(all[0]->text == "SHOW FLOWS");
  CHECK(all[1]->kind == StatementKind::Select);
  CHECK(all[1]->pos == sql.find("SELECT"));
  CHECK(all[1]->text == "SELECT 1");
  CHECK(all[2]->text == "DESCRIBE x");
  CHECK(parseStatements("").empty());
  CHECK(parseStatements(" ; -- nothing\n ; /* at all */").empty());
  CHECK(parseStatements("SHOW FLOWS").size() == 1);  // trailing ';' optional
}

TEST_CASE("positions are byte offsets even after multi-byte characters") {
  std::string sql = "SELECT '\u00e9\u00e9\u00e9' AS \"caf\u00e9\", x FROM t";
  auto q = parseQuery(sql);
  const Select& s = q->terms[0];
  CHECK(s.items[0].alias == "caf\u00e9");
  CHECK(dump(*s.items[0].expr) == "'\u00e9\u00e9\u00e9'");
  CHECK(s.items[1].expr->pos == sql.find(", x") + 2);
  CHECK(s.from->pos == sql.find("t", sql.find("FROM")));
  CHECK(s.items[0].expr->endPos == sql.find(" AS"));
}

// ---------------------------------------------------------------- queries

TEST_CASE("select items, aliases and texts") {
  std::string sql = "SELECT a, b AS bee, c cee, count(*), t.*, *, x + 1 AS `end` FROM t";
  auto q = parseQuery(sql);
  const Select& s = q->terms[0];
  REQUIRE(s.items.size() == 7);
  CHECK(s.items[0].alias.empty());
  CHECK(s.items[1].alias == "bee");
  CHECK(s.items[2].alias == "cee");
  CHECK(dump(*s.items[3].expr) == "count(*)");
  CHECK(s.items[3].text == "count(*)");
  CHECK(dump(*s.items[4].expr) == "t.*");
  CHECK(s.items[4].expr->kind == ExprKind::Star);
  CHECK(dump(*s.items[5].expr) == "*");
  CHECK(s.items[6].alias == "end");
  CHECK(s.items[6].text == "x + 1");
  CHECK(s.items[6].expr->pos == sql.find("x + 1"));
  CHECK(s.items[6].expr->endPos == sql.find("x + 1") + 5);
  CHECK(parseQuery("SELECT a AS end FROM t")->terms[0].items[0].alias == "end");
  CHECK_FALSE(q->limit.has_value());
}

TEST_CASE("SELECT without FROM, DISTINCT, DISTINCT ON ... WITHIN WATERMARK") {
  auto q = parseQuery("SELECT 1 + 1");
  CHECK(q->terms[0].from == nullptr);

  auto d = parseQuery("SELECT DISTINCT a FROM t");
  CHECK(d->terms[0].distinct);
  CHECK(d->terms[0].distinctOn.empty());

  auto on = parseQuery("SELECT DISTINCT ON (event_id) * FROM clicks");
  const Select& s = on->terms[0];
  CHECK_FALSE(s.distinct);
  REQUIRE(s.distinctOn.size() == 1);
  CHECK(dump(*s.distinctOn[0]) == "event_id");
  CHECK_FALSE(s.withinWatermark);
  CHECK(dump(*s.items[0].expr) == "*");

  auto w = parseQuery("select distinct on (a, b.c) within watermark a, b from clicks");
  CHECK(w->terms[0].withinWatermark);
  CHECK(w->terms[0].distinctOn.size() == 2);
  CHECK(w->terms[0].items.size() == 2);
}

TEST_CASE("hints") {
  std::string sql = "SELECT /*+ BROADCAST(m) */ c.a FROM clicks c JOIN merchants m ON c.id = m.id";
  auto q = parseQuery(sql);
  const Select& s = q->terms[0];
  REQUIRE(s.hints.size() == 1);
  CHECK(s.hints[0].name == "BROADCAST");
  CHECK(s.hints[0].args == std::vector<std::string>{"m"});
  CHECK(s.hints[0].pos == sql.find("BROADCAST"));
  CHECK(s.items.size() == 1);

  auto two = parseQuery("select /*+ broadcast(a, \"B\"), MAPJOIN(c) */ 1");
  REQUIRE(two->terms[0].hints.size() == 2);
  CHECK(two->terms[0].hints[0].name == "BROADCAST");
  CHECK(two->terms[0].hints[0].args == std::vector<std::string>{"a", "B"});
  CHECK(two->terms[0].hints[1].name == "MAPJOIN");

  // A plain comment is not a hint; a hint elsewhere is ignored like a comment.
  CHECK(parseQuery("SELECT /* BROADCAST(m) */ 1")->terms[0].hints.empty());
  CHECK(parseQuery("SELECT 1 /*+ BROADCAST(m) */ FROM t")->terms[0].hints.empty());
  CHECK(parseError("SELECT /*+ BROADCAST(m */ 1").sqlstate() == "42601");
}

TEST_CASE("joins of every type, subqueries and comma joins") {
  auto q = parseQuery(
      "SELECT * FROM a LEFT JOIN b ON a.x = b.x LEFT OUTER JOIN c ON TRUE RIGHT JOIN d ON 1 = 1 "
      "FULL OUTER JOIN e ON a.y = e.y CROSS JOIN f INNER JOIN g ON g.z = a.z");
  const TableRef* t = q->terms[0].from.get();
  std::vector<JoinType> types;
  while (t->kind == TableRef::Kind::Join) {
    types.push_back(t->joinType);
    if (t->joinType == JoinType::Cross) CHECK(t->on == nullptr);
    else CHECK(t->on != nullptr);
    t = t->left.get();
  }
  CHECK(t->name == "a");
  std::vector<JoinType> want = {JoinType::Inner, JoinType::Cross, JoinType::Full,
                                JoinType::Right, JoinType::Left, JoinType::Left};
  CHECK(types == want);

  auto sub = parseQuery("SELECT s.n FROM (SELECT a AS n FROM t WHERE a > 0) AS s");
  const TableRef& r = *sub->terms[0].from;
  CHECK(r.kind == TableRef::Kind::Subquery);
  CHECK(r.alias == "s");
  REQUIRE(r.subquery);
  CHECK(r.subquery->terms[0].items[0].alias == "n");
  CHECK(parseQuery("SELECT * FROM (SELECT 1) x")->terms[0].from->alias == "x");

  auto comma = parseQuery("SELECT * FROM a, b");
  CHECK(comma->terms[0].from->kind == TableRef::Kind::Join);
  CHECK(comma->terms[0].from->joinType == JoinType::Cross);

  auto stream = parseQuery(
      "SELECT * FROM a JOIN b ON a.id = b.id AND b.ts BETWEEN a.ts AND a.ts + INTERVAL '1' MINUTE");
  CHECK(dump(*stream->terms[0].from->on) ==
        "(AND (= a.id b.id) (BETWEEN b.ts a.ts (+ a.ts INTERVAL '1' MINUTE)))");
}

TEST_CASE("GROUP BY windows, HAVING, EMIT ON WINDOW CLOSE") {
  auto q = parseQuery(
      "SELECT window.start, window.end, user_id, count(*) AS n FROM clicks "
      "GROUP BY window(ts, '10 seconds'), user_id HAVING count(*) > 2 EMIT ON WINDOW CLOSE");
  const Select& s = q->terms[0];
  CHECK(dump(*s.items[0].expr) == "window.start");
  CHECK(dump(*s.items[1].expr) == "window.end");
  REQUIRE(s.groupBy.size() == 2);
  CHECK(dump(*s.groupBy[0]) == "window(ts '10 seconds')");
  CHECK(dump(*s.groupBy[1]) == "user_id");
  CHECK(dump(*s.having) == "(> count(*) 2)");
  CHECK(s.emitOnWindowClose);
  CHECK(s.where == nullptr);

  auto sw = parseQuery("SELECT count(*) FROM t WHERE a = 1 GROUP BY session_window(ts, '5 minutes')");
  CHECK(dump(*sw->terms[0].groupBy.at(0)) == "session_window(ts '5 minutes')");
  CHECK(dump(*sw->terms[0].where) == "(= a 1)");
  CHECK_FALSE(sw->terms[0].emitOnWindowClose);
  auto sl = parseQuery("SELECT 1 FROM t GROUP BY window(ts, '1 minute', '10 seconds')");
  CHECK(dump(*sl->terms[0].groupBy.at(0)) == "window(ts '1 minute' '10 seconds')");
}

TEST_CASE("UNION ALL, ORDER BY, LIMIT") {
  auto q = parseQuery("SELECT a FROM x UNION ALL SELECT b FROM y UNION ALL (SELECT c FROM z) "
                      "ORDER BY a DESC, 2 LIMIT 10");
  REQUIRE(q->terms.size() == 3);
  CHECK(q->terms[2].from->name == "z");
  REQUIRE(q->orderBy.size() == 2);
  CHECK(q->orderBy[0].descending);
  CHECK_FALSE(q->orderBy[1].descending);
  REQUIRE(q->limit.has_value());
  CHECK(*q->limit == 10);
  CHECK(*parseQuery("(SELECT a FROM t LIMIT 3)")->limit == 3);

  // UNION without ALL: SELECT DISTINCT * over the UNION ALL of the terms up
  // to it (left-associative), then the terms after it.
  auto u = parseQuery("SELECT a FROM x UNION SELECT b FROM y UNION ALL SELECT c FROM z");
  REQUIRE(u->terms.size() == 2);
  CHECK(u->terms[0].distinct);
  REQUIRE(u->terms[0].from);
  CHECK(u->terms[0].from->kind == ast::TableRef::Kind::Subquery);
  CHECK(u->terms[0].from->subquery->terms.size() == 2);
  CHECK(u->terms[0].items[0].expr->kind == ast::ExprKind::Star);
  CHECK(!u->terms[1].distinct);
  auto all = parseQuery("SELECT a FROM x UNION ALL SELECT b FROM y UNION SELECT c FROM z");
  REQUIRE(all->terms.size() == 1);
  CHECK(all->terms[0].from->subquery->terms.size() == 3);
  CHECK(parseError("SELECT 1 LIMIT 99999999999999999999999").sqlstate() == "22003");
}

// ---------------------------------------------------------------- expressions

TEST_CASE("literals") {
  CHECK(expr("42") == "42");
  CHECK(expr("-42") == "-42");
  CHECK(expr("- 42") == "-42");
  CHECK(expr("-9223372036854775808") == "-9223372036854775808");
  CHECK(expr("1.5") == "dec:1.5");
  CHECK(expr("1.5e3") == "dec:1.5e3");
  CHECK(expr(".5") == "dec:.5");
  CHECK(expr("2E-3") == "dec:2E-3");
  CHECK(expr("'it''s'") == "'it's'");
  CHECK(expr("''") == "''");
  CHECK(expr("'a\\nb'") == "'a\nb'");  // Spark's backslash escapes
  CHECK(expr("TRUE") == "TRUE");
  CHECK(expr("false") == "FALSE");
  CHECK(expr("null") == "NULL");
  CHECK(expr("INTERVAL '10' SECOND") == "INTERVAL '10' SECOND");
  CHECK(expr("INTERVAL '10 seconds'") == "INTERVAL '10 seconds'");
  CHECK(expr("interval '5' minutes") == "INTERVAL '5' MINUTE");
  CHECK(expr("INTERVAL 2 HOURS") == "INTERVAL '2' HOUR");
  CHECK(expr("INTERVAL '1' DAY") == "INTERVAL '1' DAY");
  CHECK(expr("INTERVAL '3' MILLISECONDS") == "INTERVAL '3' MILLISECOND");
  CHECK(expr("INTERVAL '3' microsecond") == "INTERVAL '3' MICROSECOND");
  CHECK(expr("TIMESTAMP '2024-01-01 00:00:00'") == "TIMESTAMP '2024-01-01 00:00:00'");
  CHECK(expr("DATE '2024-02-29'") == "DATE '2024-02-29'");
  CHECK(expr("date '2024-02-29'") == "DATE '2024-02-29'");
  // `date` is still a name: a column and a function.
  CHECK(expr("date") == "date");
  CHECK(expr("date(ts)") == "date(ts)");
}

// The text of the string literal `SELECT <text>` gives.
std::string stringValue(std::string_view text) {
  auto q = parseQuery("SELECT " + std::string(text));
  const auto& e = *q->terms[0].items[0].expr;
  REQUIRE(e.kind == ExprKind::Literal);
  return e.literal.text;
}

TEST_CASE("string literals read backslash escapes as Spark does") {
  CHECK(stringValue(R"('\\d+')") == R"(\d+)");  // the regex \d+ a Spark query writes
  CHECK(stringValue(R"('\d')") == "d");        // an unknown escape is the character
  CHECK(stringValue(R"('a\tb\nc\rd\be')") == "a\tb\nc\rd\be");
  CHECK(stringValue(R"('it\'s')") == "it's");
  CHECK(stringValue(R"('say \"hi\"')") == "say \"hi\"");
  CHECK(stringValue(R"('it''s')") == "it's");  // PostgreSQL's doubled quote too
  CHECK(stringValue(R"('\u00e9\U0001F600')") == "é😀");
  CHECK(stringValue(R"('\uD83D\uDE00')") == "😀");  // a UTF-16 pair is one character
  CHECK(stringValue(R"('\uD83D')") == "\uFFFD");
  CHECK(stringValue(R"('\u00zz')") == "u00zz");  // not four hex digits: u as itself
  CHECK(stringValue(R"('\101\0')") == std::string("A\0", 2));  // octal, and \0
  CHECK(stringValue(R"('\Z')") == "\x1a");
  CHECK(stringValue(R"('50\% a\_b')") == R"(50\% a\_b)");  // LIKE's escapes stay
  // E'...' keeps PostgreSQL's escapes; '\\' ends with a backslash.
  CHECK(stringValue(R"(E'\x41\f')") == "A\f");
  CHECK(stringValue(R"('C:\\')") == "C:\\");
  CHECK(parseError(R"(SELECT 'C:\')").sqlstate() == "42601");  // the quote is escaped
}

TEST_CASE("keepBackslashesAsWritten doubles the backslashes of plain string literals only") {
  CHECK(keepBackslashesAsWritten("SELECT 1") == "SELECT 1");
  CHECK(keepBackslashesAsWritten(R"(SELECT '\d', 'C:\')") == R"(SELECT '\\d', 'C:\\')");
  CHECK(keepBackslashesAsWritten(R"(SELECT 'it''s\n')") == R"(SELECT 'it''s\\n')");
  CHECK(keepBackslashesAsWritten(R"(SELECT E'a\'b', e'\n' FROM "x\y" -- '\d)") ==
        R"(SELECT E'a\'b', e'\n' FROM "x\y" -- '\d)");
  CHECK(keepBackslashesAsWritten(R"(SELECT CASE'\d' /* '\d' */ $$ '\d' $$)") ==
        R"(SELECT CASE'\\d' /* '\d' */ $$ '\d' $$)");
  // Read back, each literal is what was written.
  for (std::string_view written : {R"(\d+)", R"(C:\)", R"(a\'b)", R"(\\)", R"(\u00e9)"}) {
    INFO(written);
    std::string sql = "'" + std::string(written) + "'";
    if (written == R"(a\'b)") continue;  // a quote ends the literal in the old reading
    CHECK(stringValue(keepBackslashesAsWritten(sql)) == written);
  }
}

TEST_CASE("writtenPosition maps a position in the rewritten text back to the text as written") {
  const std::string written = R"(SELECT 'a\b\', nope, E'\n' FROM t)";
  const std::string parsed = keepBackslashesAsWritten(written);
  REQUIRE(parsed == R"(SELECT 'a\\b\\', nope, E'\n' FROM t)");
  // Every byte of the text as written, found where it went.
  for (size_t i = 0, at = 0; i < written.size(); ++i, ++at) {
    INFO(i);
    CHECK(parsed[at] == written[i]);
    CHECK(writtenPosition(written, at) == i);
    // The backslash added after a written one is that one's.
    if (written[i] == '\\' && i < written.find(',')) CHECK(writtenPosition(written, ++at) == i);
  }
  CHECK(writtenPosition(written, parsed.find("nope")) == written.find("nope"));
  CHECK(writtenPosition(written, parsed.size()) == written.size());
  CHECK(writtenPosition("SELECT nope", 7) == 7);  // no backslash: as it is
}

TEST_CASE("column references, keywords as names, quoting") {
  CHECK(expr("a") == "a");
  CHECK(expr("t.a") == "t.a");
  CHECK(expr("t.a.b") == "t.a.b");
  CHECK(expr("\"Weird Name\"") == "Weird Name");
  CHECK(expr("`headers-map`") == "headers-map");
  CHECK(expr("\"a\"\"b\"") == "a\"b");
  CHECK(expr("`a``b`") == "a`b");
  for (const char* w : {"timestamp", "key", "value", "topic", "partition", "offset", "window",
                        "start", "name", "type", "source", "sink", "flow", "progress", "interval",
                        "watermark", "table", "values", "second", "map", "array", "struct", "date",
                        "if", "set", "show", "to", "desc", "asc", "within", "close", "trigger"}) {
    CAPTURE(w);
    CHECK(expr(w) == w);
  }
  auto q = parseQuery("SELECT key, value, timestamp, partition, offset FROM raw WHERE topic = 'x'");
  CHECK(q->terms[0].items.size() == 5);
  CHECK(dump(*q->terms[0].items[2].expr) == "timestamp");
  CHECK(dump(*q->terms[0].where) == "(= topic 'x')");
}

TEST_CASE("operator precedence") {
  CHECK(expr("1 + 2 * 3") == "(+ 1 (* 2 3))");
  CHECK(expr("(1 + 2) * 3") == "(* (+ 1 2) 3)");
  CHECK(expr("1 - 2 - 3") == "(- (- 1 2) 3)");
  CHECK(expr("a / b % c") == "(% (/ a b) c)");
  CHECK(expr("-a * b") == "(* (- a) b)");
  CHECK(expr("a || b || c") == "(|| (|| a b) c)");
  CHECK(expr("a + 1 || 'x'") == "(|| (+ a 1) 'x')");
  CHECK(expr("a = 1 OR b = 2 AND c = 3") == "(OR (= a 1) (AND (= b 2) (= c 3)))");
  CHECK(expr("NOT a = 1 AND b") == "(AND (NOT (= a 1)) b)");
  CHECK(expr("a + 1 > b * 2") == "(> (+ a 1) (* b 2))");
  CHECK(expr("a == 1") == "(= a 1)");
  CHECK(expr("a != 1") == "(<> a 1)");
  CHECK(expr("a <> 1") == "(<> a 1)");
  CHECK(expr("a <= 1") == "(<= a 1)");
  CHECK(expr("a >= 1") == "(>= a 1)");
  CHECK(expr("a < 1") == "(< a 1)");
}

// Spark's order: unary ~ with unary minus; * / %; + - ||; &; ^; |; comparison.
TEST_CASE("bitwise operator precedence") {
  CHECK(expr("a & b | c") == "(| (& a b) c)");
  CHECK(expr("a | b & c") == "(| a (& b c))");
  CHECK(expr("a ^ b & c") == "(^ a (& b c))");
  CHECK(expr("a | b ^ c") == "(| a (^ b c))");
  CHECK(expr("a & b & c") == "(& (& a b) c)");
  CHECK(expr("a + 1 & b * 2") == "(& (+ a 1) (* b 2))");
  CHECK(expr("a & 1 = 1") == "(= (& a 1) 1)");
  CHECK(expr("a | b > c ^ d") == "(> (| a b) (^ c d))");
  CHECK(expr("~a") == "(~ a)");
  CHECK(expr("~a + b") == "(+ (~ a) b)");
  CHECK(expr("-~a") == "(- (~ a))");
  CHECK(expr("~a & ~b") == "(& (~ a) (~ b))");
  // pgjdbc's getIndexInfo: `::` binds before &.
  CHECK(expr("i.indoption[n] & 1::smallint") == expr("(i.indoption[n]) & (1::smallint)"));
  // || stays one token, string concatenation; binary ~ stays a regex match.
  CHECK(expr("a || b | c") == "(| (|| a b) c)");
  CHECK(expr("a | b || c") == "(| a (|| b c))");
  CHECK(expr("a ~ 'x'") == "rlike(a 'x')");
  CHECK(expr("a ~ ~b") == "rlike(a (~ b))");
  CHECK_THROWS(expr("a |"));
  CHECK_THROWS(expr("a & & b"));
}

TEST_CASE("predicates") {
  CHECK(expr("a IN (1, 2, 3)") == "(IN a 1 2 3)");
  CHECK(expr("a NOT IN ('x')") == "(NOT IN a 'x')");
  CHECK(expr("a BETWEEN 1 AND 2 + 3") == "(BETWEEN a 1 (+ 2 3))");
  CHECK(expr("a NOT BETWEEN 1 AND 2 AND b") == "(AND (NOT BETWEEN a 1 2) b)");
  CHECK(expr("url LIKE '%x%'") == "(LIKE url '%x%')");
  CHECK(expr("url NOT LIKE 'a_'") == "(NOT LIKE url 'a_')");
  // x RLIKE p and x REGEXP p are rlike(x, p); the words stay usable as names.
  CHECK(expr("url RLIKE '^a.*'") == "rlike(url '^a.*')");
  CHECK(expr("url not regexp 'b' AND c") == "(AND (NOT rlike(url 'b')) c)");
  CHECK(expr("rlike(a, 'x') OR regexp(a, 'y')") == "(OR rlike(a 'x') regexp(a 'y'))");
  CHECK(expr("rlike RLIKE regexp") == "rlike(rlike regexp)");
  CHECK(expr("like(a, 'x%') AND a LIKE ('y')") == "(AND like(a 'x%') (LIKE a 'y'))");
  CHECK(expr("a IS NULL") == "(IS NULL a)");
  CHECK(expr("a.b IS NOT NULL OR c") == "(OR (IS NOT NULL a.b) c)");
}

TEST_CASE("subqueries in expressions") {
  CHECK(expr("a IN (SELECT b FROM t)") == "(IN a (SUBQUERY b))");
  CHECK(expr("a NOT IN (SELECT b FROM t WHERE c > 1)") == "(NOT IN a (SUBQUERY b))");
  CHECK(expr("a IN (SELECT b FROM t UNION ALL SELECT c FROM u)") == "(IN a (SUBQUERY b | c))");
  CHECK(expr("(SELECT max(b) FROM t)") == "(SUBQUERY max(b))");
  CHECK(expr("a > (SELECT max(b) FROM t) + 1") == "(> a (+ (SUBQUERY max(b)) 1))");
  CHECK(expr("EXISTS (SELECT 1 FROM t)") == "(EXISTS 1)");
  CHECK(expr("NOT EXISTS (SELECT b FROM t)") == "(NOT (EXISTS b))");
  // A parenthesised query inside the parentheses is still the subquery.
  CHECK(expr("a IN ((SELECT b FROM t))") == "(IN a (SUBQUERY b))");
  // What parsed before still parses the same: lists and parenthesised values.
  CHECK(expr("a IN (1, 2)") == "(IN a 1 2)");
  CHECK(expr("a IN ((1), (2 + 3))") == "(IN a 1 (+ 2 3))");
  CHECK(expr("(a + 1) * 2") == "(* (+ a 1) 2)");
  CHECK(expr("((a))") == "a");

  auto q = parseQuery(
      "SELECT * FROM s WHERE x IN (SELECT y FROM t WHERE z = 1) AND v > (SELECT "
      "avg(w) FROM u)");
  const Select& s = q->terms[0];
  REQUIRE(s.where != nullptr);
  CHECK(dump(*s.where) == "(AND (IN x (SUBQUERY y)) (> v (SUBQUERY avg(w))))");
  const Expr& in = *s.where->args[0];
  REQUIRE(in.subquery != nullptr);
  CHECK(in.pos == 22);  // the IN predicate starts at its left operand
  CHECK(in.subquery->pos == 28);
  REQUIRE(in.subquery->terms.size() == 1);
  CHECK(in.subquery->terms[0].where != nullptr);
  const Expr& scalar = *s.where->args[1]->args[1];
  CHECK(scalar.kind == ExprKind::Subquery);
  CHECK(scalar.pos == 65);  // the opening parenthesis

  // FROM a, b WHERE ...: the conditions with a subquery stay in WHERE, the
  // others are the join's ON.
  q = parseQuery("SELECT * FROM a, b WHERE a.k = b.k AND a.x IN (SELECT y FROM t) AND a.v > 1");
  REQUIRE(q->terms[0].from != nullptr);
  REQUIRE(q->terms[0].from->on != nullptr);
  CHECK(q->terms[0].from->joinType == JoinType::Inner);
  CHECK(dump(*q->terms[0].from->on) == "(AND (= a.k b.k) (> a.v 1))");
  REQUIRE(q->terms[0].where != nullptr);
  CHECK(dump(*q->terms[0].where) == "(IN a.x (SUBQUERY y))");
  q = parseQuery("SELECT * FROM a, b WHERE a.x IN (SELECT y FROM t)");
  CHECK(q->terms[0].from->joinType == JoinType::Cross);
  CHECK(q->terms[0].from->on == nullptr);
  REQUIRE(q->terms[0].where != nullptr);
  CHECK(dump(*q->terms[0].where) == "(IN a.x (SUBQUERY y))");

  // A subquery must be a query: a bare expression list is not one.
  CHECK_THROWS_AS(parseQuery("SELECT a IN (SELECT) FROM t"), SqlError);
  CHECK_THROWS_AS(parseQuery("SELECT EXISTS (1) FROM t"), SqlError);
}

TEST_CASE("lambdas: a call of -> with the parameters' names and the body") {
  auto q = parseQuery("SELECT transform(a, x -> x + 1), aggregate(a, 0, (acc, y) -> acc + y) FROM t");
  const Expr& t = *q->terms[0].items[0].expr;
  REQUIRE(t.args.size() == 2);
  const Expr& l = *t.args[1];
  CHECK(l.kind == ExprKind::Call);
  CHECK(l.name == "->");
  CHECK(l.parts == std::vector<std::string>{"x"});
  REQUIRE(l.args.size() == 1);
  CHECK(dump(*l.args[0]) == "(+ x 1)");
  const Expr& a = *q->terms[0].items[1].expr;
  REQUIRE(a.args.size() == 3);
  CHECK(a.args[2]->parts == std::vector<std::string>{"acc", "y"});
  // exists() over an array is a call; EXISTS over a query, in parentheses or
  // not, the subquery test; EXISTS over anything else still no expression.
  CHECK(expr("exists(a, x -> x > 1)").rfind("exists(", 0) == 0);
  CHECK(expr("EXISTS ((SELECT 1 FROM t))") == "(EXISTS 1)");
  CHECK_THROWS_AS(parseQuery("SELECT EXISTS (a) FROM t"), SqlError);
  // Names of the higher-order functions stay column names.
  CHECK(expr("filter + transform") == "(+ filter transform)");
  CHECK(expr("a - -1") == "(- a -1)");
}

TEST_CASE("CASE, CAST, calls, field access and subscripts") {
  CHECK(expr("CASE WHEN a > 1 THEN 'big' WHEN a > 0 THEN 'small' ELSE 'none' END") ==
        "(CASE WHEN (> a 1) THEN 'big' WHEN (> a 0) THEN 'small' ELSE 'none')");
  CHECK(expr("case a when 1 then 'one' end") == "(CASE a WHEN 1 THEN 'one')");
  CHECK(expr("CAST(a AS BIGINT)") == "(CAST a BIGINT)");
  CHECK(expr("cast(a as decimal(10,2))") == "(CAST a DECIMAL(10,2))");
  CHECK(expr("CAST(value AS STRING)") == "(CAST value STRING)");
  CHECK(expr("a::int") == "(CAST a INT)");
  CHECK(expr("COUNT(DISTINCT user_id)") == "count(DISTINCT user_id)");
  CHECK(expr("Upper(a)") == "upper(a)");
  CHECK(expr("now()") == "now()");
  CHECK(expr("coalesce(a, b, 'x')") == "coalesce(a b 'x')");
  CHECK(expr("if(a > 1, 'x', 'y')") == "if((> a 1) 'x' 'y')");
  CHECK(expr("left(s, 2)") == "left(s 2)");
  CHECK(expr("current_timestamp") == "current_timestamp()");
  CHECK(expr("\"current_timestamp\"") == "current_timestamp");
  CHECK(expr("to_json(struct(*))") == "to_json(struct(*))");
  CHECK(expr("named_struct('a', 1, 'b', x)") == "named_struct('a' 1 'b' x)");
  CHECK(expr("headers[0]") == "([] headers 0)");
  CHECK(expr("headers[0].key") == "(. ([] headers 0) key)");
  CHECK(expr("(a).b") == "(. a b)");
  CHECK(expr("f(x).a.b") == "(. (. f(x) a) b)");
  CHECK(expr("a.b[1 + 1]") == "([] a.b (+ 1 1))");
  CHECK(expr("get_json_object(CAST(value AS STRING), '$.a')") ==
        "get_json_object((CAST value STRING) '$.a')");
}

// ---------------------------------------------------------------- errors

TEST_CASE("syntax errors name the token, the place and what was expected") {
  std::string sql = "SELECT a FROM t WHERE a = 1 GRUOP BY a";
  SqlError e = parseError(sql);
  CHECK(e.sqlstate() == "42601");
  CHECK(e.position() == sql.find("GRUOP"));
  std::string msg = e.message();
  CHECK(msg.starts_with("syntax error at or near \"GRUOP\" (line 1, column 29): expected"));
  CHECK(msg.find("GROUP") != std::string::npos);
  CHECK(msg.find("K_") == std::string::npos);

  SqlError multi = parseError("SHOW FLOWS;\nSELECT a\nFROM t t2 t3");
  CHECK(multi.position() == std::string("SHOW FLOWS;\nSELECT a\nFROM t t2 ").size());
  CHECK(std::string(multi.message()).find("\"t3\" (line 3, column 11)") != std::string::npos);

  SqlError end = parseError("SELECT a FROM\n");
  CHECK(end.sqlstate() == "42601");
  CHECK(end.position() == 14);
  CHECK(std::string(end.message()).starts_with("syntax error at end of input (line 2, column 1): expected"));
  CHECK(std::string(end.message()).find("identifier") != std::string::npos);

  SqlError kw = parseError("CREATE SOURCE");
  CHECK(std::string(kw.message()).find("expected") != std::string::npos);

  SqlError nul = parseError("SELECT a FROM t WHERE a IS NOT 5");
  CHECK(nul.position() == 31);
  CHECK(std::string(nul.message()).find("expected one of DISTINCT, NULL") != std::string::npos);

  SqlError bad = parseError("SELEC 1");
  CHECK(bad.position() == 0);
  CHECK(std::string(bad.message()).find("SELECT") != std::string::npos);
}

TEST_CASE("the expected list stays short and readable") {
  SqlError e = parseError("SELECT a FROM t WHERE");
  std::string msg = e.message();
  CHECK(msg.find(", ...") != std::string::npos);
  std::string list = msg.substr(msg.find("expected one of "));
  size_t commas = 0;
  for (char c : list) commas += c == ',';
  CHECK(commas == 10);  // ten names and the "..."
  CHECK(msg.find("ERROR_CHAR") == std::string::npos);
  CHECK(msg.find("IDENTIFIER") == std::string::npos);
}

TEST_CASE("lexical errors") {
  SqlError s = parseError("SELECT 'abc");
  CHECK(s.sqlstate() == "42601");
  CHECK(s.position() == 7);
  CHECK(std::string(s.message()).starts_with("unterminated quoted string"));
  SqlError q = parseError("SELECT \"abc FROM t");
  CHECK(q.position() == 7);
  CHECK(std::string(q.message()).starts_with("unterminated quoted identifier"));
  SqlError c = parseError("SELECT 1 /* open");
  CHECK(c.position() == 9);
  CHECK(std::string(c.message()).starts_with("unterminated /* comment"));
  SqlError odd = parseError("SELECT a # b");
  CHECK(odd.position() == 9);
  CHECK(std::string(odd.message()).starts_with("syntax error at or near \"#\""));
  SqlError utf = parseError("SELECT '\xff'");
  CHECK(utf.sqlstate() == "22021");
  CHECK(utf.position() == 8);
  CHECK(parseError("SELECT \"\"").sqlstate() == "42601");  // zero-length name
  CHECK(parseError("SELECT a + * FROM t").sqlstate() == "42601");
}

TEST_CASE("nesting limits: too deep is 54001, never a crash") {
  std::string ok = "SELECT " + std::string(100, '(') + "1" + std::string(100, ')');
  CHECK(expr(ok.substr(7)) == "1");

  std::string deep = "SELECT " + std::string(100000, '(') + "1" + std::string(100000, ')');
  SqlError e = parseError(deep);
  CHECK(e.sqlstate() == "54001");
  CHECK(e.position() == 7 + 200);

  std::string minus = "SELECT 1";
  for (int i = 0; i < 50000; ++i) minus += " - -1";
  CHECK(parseError(minus).sqlstate() == "54001");  // long chains are bounded too

  std::string nots = "SELECT ";
  for (int i = 0; i < 5000; ++i) nots += "NOT ";
  nots += "TRUE";
  CHECK(parseError(nots).sqlstate() == "54001");

  std::string cases = "SELECT ";
  for (int i = 0; i < 5000; ++i) cases += "CASE WHEN TRUE THEN ";
  CHECK(parseError(cases).sqlstate() == "54001");

  std::string subs = "SELECT a";
  for (int i = 0; i < 5000; ++i) subs += "[0]";
  CHECK(parseError(subs).sqlstate() == "54001");

  // A long flat list of alternatives, as generated SQL has, is fine.
  std::string ors = "SELECT * FROM t WHERE a = 0";
  for (int i = 1; i < 300; ++i) ors += " OR a = " + std::to_string(i);
  CHECK(parseStatements(ors).size() == 1);
}

TEST_CASE("garbage never crashes: random bytes, random tokens, truncations") {
  std::mt19937 rng(12345);
  int errors = 0;
  auto tryParse = [&](const std::string& s) {
    try {
      parseStatements(s);
    } catch (const SqlError& e) {
      ++errors;
      CHECK(!e.sqlstate().empty());
      if (e.hasPosition()) CHECK(e.position() <= s.size());
    }
  };
  for (int i = 0; i < 300; ++i) {
    std::string s(rng() % 64, '\0');
    for (char& c : s) c = static_cast<char>(rng() % 256);
    tryParse(s);
  }
  const std::vector<std::string> words = {
      "SELECT", "FROM",  "WHERE", "(",     ")",      ",",      "a",     "1",      "'x'",
      "GROUP",  "BY",    "CASE",  "WHEN",  "THEN",   "END",    "AND",   "NOT",    "IN",
      "JOIN",   "ON",    ".",     "*",     "+",      "-",      "[",     "]",      ";",
      "CREATE", "FLOW",  "INTO",  "AS",    "WITH",   "=",      "/*+",   "*/",     "INTERVAL",
      "SOURCE", "EMIT",  "WINDOW", "DISTINCT", "UNION", "ALL", "LIMIT", "\"q\"", "`b`", "::"};
  for (int i = 0; i < 2000; ++i) {
    std::string s;
    size_t n = rng() % 30;
    for (size_t k = 0; k < n; ++k) s += words[rng() % words.size()] + " ";
    tryParse(s);
  }
  const std::string full =
      "CREATE FLOW f INTO s TRIGGER REALTIME CHECKPOINT INTERVAL '30 seconds' WITH ('a' = 'b') AS "
      "SELECT /*+ BROADCAST(m) */ DISTINCT ON (k) WITHIN WATERMARK c.a, CAST(x AS ARRAY<INT>) AS y, "
      "CASE WHEN a IN (1, 2) THEN 'x' ELSE NULL END FROM c JOIN m ON c.id = m.id AND c.ts "
      "BETWEEN m.ts AND m.ts + INTERVAL '1' MINUTE WHERE a LIKE 'x%' GROUP BY window(ts, '1 "
      "minute') HAVING count(*) > 1 EMIT ON WINDOW CLOSE";
  CHECK(parseStatements(full).size() == 1);
  for (size_t cut = 0; cut < full.size(); ++cut) tryParse(full.substr(0, cut));
  CHECK(errors > 0);
}

TEST_CASE("parser: FROM a, b, c WHERE ... is inner joins, each relation joined after one an equality ties it to") {
  // psql's \d name: c and c2 share no equality; i ties to c, and c2 to i.
  auto q = parseQuery(
      "SELECT c2.relname FROM pg_catalog.pg_class c, pg_catalog.pg_class c2, pg_catalog.pg_index i "
      "WHERE c.oid = '16384' AND c.oid = i.indrelid AND i.indexrelid = c2.oid");
  const TableRef& top = *q->terms[0].from;
  REQUIRE(top.kind == TableRef::Kind::Join);
  CHECK(top.joinType == JoinType::Inner);
  CHECK(top.right->alias == "c2");
  REQUIRE(top.on != nullptr);
  CHECK(dump(*top.on) == "(= i.indexrelid c2.oid)");
  const TableRef& inner = *top.left;
  CHECK(inner.joinType == JoinType::Inner);
  CHECK(inner.left->alias == "c");
  CHECK(inner.right->alias == "i");
  CHECK(dump(*inner.on) == "(AND (= c.oid '16384') (= c.oid i.indrelid))");
  CHECK(q->terms[0].where == nullptr);

  // An unqualified * keeps the written order; a condition on a column
  // without its relation's name goes to the last join.
  q = parseQuery("SELECT * FROM a, b, c WHERE a.k = c.k AND v > 1 AND a.k = b.k");
  const TableRef& last = *q->terms[0].from;
  CHECK(last.right->name == "c");
  CHECK(dump(*last.on) == "(AND (= a.k c.k) (> v 1))");
  CHECK(last.left->right->name == "b");
  CHECK(dump(*last.left->on) == "(= a.k b.k)");
}
