// CREATE FUNCTION, DROP FUNCTION, SHOW [USER] FUNCTIONS and DESCRIBE FUNCTION
// as the parser sees them.
#include <doctest/doctest.h>

#include <string>

#include "../sql_error_of.h"
#include "common/error.h"
#include "parser/parser.h"

using namespace rtsql;
using namespace rtsql::ast;

namespace {

template <typename T>
std::unique_ptr<T> parseOneAs(std::string_view sql) {
  auto stmts = parseStatements(sql);
  REQUIRE(stmts.size() == 1);
  auto* p = dynamic_cast<T*>(stmts[0].get());
  REQUIRE(p != nullptr);
  stmts[0].release();
  return std::unique_ptr<T>(p);
}

}  // namespace

TEST_CASE("CREATE FUNCTION: name, parameters, return type and body") {
  const std::string sql =
      "CREATE FUNCTION add_tax(amount DOUBLE, rate INT) RETURNS DOUBLE AS amount * (1 + rate / "
      "100)";
  auto f = parseOneAs<CreateFunction>(sql);
  CHECK(f->kind == StatementKind::CreateFunction);
  CHECK(f->name == "add_tax");
  CHECK(f->namePos == 16);
  CHECK_FALSE(f->orReplace);
  CHECK_FALSE(f->ifNotExists);
  REQUIRE(f->params.size() == 2);
  CHECK(f->params[0].name == "amount");
  CHECK(f->params[0].type.name == "DOUBLE");
  CHECK(f->params[0].pos == 24);
  CHECK(f->params[1].name == "rate");
  CHECK(f->params[1].type.name == "INT");
  CHECK(f->returns.name == "DOUBLE");
  REQUIRE(f->body != nullptr);
  CHECK(f->body->kind == ExprKind::Binary);
  CHECK(f->body->op == "*");
  CHECK(f->body->pos == sql.find("amount *"));
  CHECK(f->bodyText == "amount * (1 + rate / 100)");
  CHECK(f->text == sql);
}

TEST_CASE("CREATE FUNCTION: OR REPLACE, IF NOT EXISTS, no parameters, nested types") {
  auto r = parseOneAs<CreateFunction>("create or replace function f() returns string as 'x'");
  CHECK(r->orReplace);
  CHECK(r->params.empty());
  CHECK(r->returns.name == "STRING");
  CHECK(r->body->kind == ExprKind::Literal);

  auto n = parseOneAs<CreateFunction>(
      "CREATE FUNCTION IF NOT EXISTS first_tag(tags ARRAY<STRING>) RETURNS STRING AS tags[0]");
  CHECK(n->ifNotExists);
  CHECK(n->params[0].type.name == "ARRAY");
  CHECK(n->body->kind == ExprKind::Subscript);

  // Non-reserved words stay names: a parameter called `returns`, the
  // built-in replace() in a body.
  auto w = parseOneAs<CreateFunction>(
      "CREATE FUNCTION clean(returns STRING) RETURNS STRING AS replace(returns, 'a', 'b')");
  CHECK(w->params[0].name == "returns");
  CHECK(w->body->kind == ExprKind::Call);
  CHECK(w->body->name == "replace");

  SqlError both = testing::sqlErrorOf(
      [] { parseStatements("CREATE OR REPLACE FUNCTION IF NOT EXISTS f() RETURNS INT AS 1"); });
  CHECK(both.sqlstate() == "42601");
  CHECK(both.position() == 27);
  CHECK_FALSE(both.hint().empty());

  SqlError noReturns =
      testing::sqlErrorOf([] { parseStatements("CREATE FUNCTION f(a INT) AS a + 1"); });
  CHECK(noReturns.sqlstate() == "42601");
  CHECK(noReturns.position() == 25);
}

TEST_CASE("DROP FUNCTION, SHOW [USER] FUNCTIONS, DESCRIBE FUNCTION") {
  auto d = parseOneAs<Drop>("DROP FUNCTION IF EXISTS add_tax");
  CHECK(d->object == ObjectKind::Function);
  CHECK(d->ifExists);
  CHECK(d->name == "add_tax");
  CHECK(d->namePos == 24);
  CHECK(parseOneAs<Drop>("drop function f")->object == ObjectKind::Function);

  CHECK(parseOneAs<Show>("SHOW FUNCTIONS")->what == ShowKind::Functions);
  CHECK(parseOneAs<Show>("show user functions")->what == ShowKind::UserFunctions);

  auto desc = parseOneAs<Describe>("DESCRIBE FUNCTION add_tax");
  CHECK(desc->function);
  CHECK(desc->name == "add_tax");
  CHECK_FALSE(parseOneAs<Describe>("DESCRIBE add_tax")->function);

  // Calls of functions named like the new keywords still parse.
  auto q = parseOneAs<SelectStatement>("SELECT replace(a, 'x', 'y') AS function FROM t");
  CHECK(q->query->terms[0].items[0].alias == "function");
}

TEST_CASE("CREATE FUNCTION ... LANGUAGE PYTHON AS $$code$$") {
  const std::string sql =
      "CREATE FUNCTION f(a INT) RETURNS INT LANGUAGE PYTHON AS $$\n  s = 'it''s; $x'\n  return a "
      "$$";
  auto f = parseOneAs<CreateFunction>(sql);
  CHECK(f->language == "python");
  CHECK(f->languagePos == sql.find("PYTHON"));
  CHECK(f->dollarQuoted);
  CHECK(f->body == nullptr);
  // The text between the $$ as it is: quotes, ';' and '$' are the code's.
  CHECK(f->bodyText == "\n  s = 'it''s; $x'\n  return a ");
  CHECK(f->codePos == sql.find("$$") + 2);

  auto sqlFn = parseOneAs<CreateFunction>("create function g(a INT) returns INT language sql as a");
  CHECK(sqlFn->language == "sql");
  CHECK_FALSE(sqlFn->dollarQuoted);
  CHECK(parseOneAs<CreateFunction>("CREATE FUNCTION g(a INT) RETURNS INT AS a")->language == "sql");
  // LANGUAGE stays a name elsewhere.
  auto q = parseOneAs<SelectStatement>("SELECT language FROM t");
  CHECK(q->query->terms[0].items.size() == 1);

  SqlError open = testing::sqlErrorOf(
      [] { parseStatements("CREATE FUNCTION f() RETURNS INT LANGUAGE PYTHON AS $$ return 1"); });
  CHECK(open.sqlstate() == "42601");
  CHECK(open.message().find("unterminated dollar-quoted string") == 0);
  CHECK(open.position() == 51);
}

TEST_CASE("CREATE FUNCTION ... LANGUAGE PYTHON VECTORIZED, and vectorized as a name") {
  const std::string sql =
      "CREATE FUNCTION v(a BIGINT) RETURNS BIGINT LANGUAGE PYTHON VECTORIZED AS $$ return a $$";
  auto f = parseOneAs<CreateFunction>(sql);
  CHECK(f->language == "python");
  CHECK(f->vectorized);
  CHECK(f->vectorizedPos == sql.find("VECTORIZED"));
  CHECK(f->dollarQuoted);
  CHECK(f->bodyText == " return a ");
  auto scalar = parseOneAs<CreateFunction>(
      "CREATE FUNCTION s(a BIGINT) RETURNS BIGINT LANGUAGE PYTHON AS $$ return a $$");
  CHECK_FALSE(scalar->vectorized);
  // The keyword is not reserved: a column or a function may be named so.
  CHECK(parseStatements("SELECT vectorized FROM s").size() == 1);
  auto named = parseOneAs<CreateFunction>(
      "CREATE FUNCTION vectorized(vectorized INT) RETURNS INT AS vectorized + 1");
  CHECK(named->name == "vectorized");
  CHECK_FALSE(named->vectorized);
}
