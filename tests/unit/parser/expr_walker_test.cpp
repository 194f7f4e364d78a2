// The AST walk: every kind of expression reports all the expressions it holds,
// and the walks over a tree and over a query reach every node.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "parser/expr_walker.h"
#include "parser/parser.h"

using namespace rtsql;
using namespace rtsql::ast;

// A kind without a sample below would go unchecked: make the compiler refuse it.
#pragma GCC diagnostic error "-Wswitch"

namespace {

// SELECT-list expressions of each kind, filling every child slot the kind
// has. A switch without a default, so a new kind must bring its samples; an
// int past the last kind returns none, which ends the loop in the tests.
std::vector<std::string> samples(ExprKind kind) {
  switch (kind) {
    case ExprKind::Literal: return {"1", "'text'", "NULL"};
    case ExprKind::Column: return {"a", "t.a"};
    case ExprKind::Star: return {"*", "t.*"};
    case ExprKind::Unary: return {"-a", "NOT a"};
    case ExprKind::Binary: return {"a + b", "a AND b"};
    case ExprKind::Call:
      return {"f()", "f(a, b, c)", "count(*)", "sum(a) FILTER (WHERE b > 0)",
              "sum(a) OVER (PARTITION BY b ORDER BY c)"};
    case ExprKind::Case:
      return {"CASE a WHEN 1 THEN 2 WHEN 3 THEN 4 ELSE 5 END", "CASE WHEN a THEN 1 END"};
    case ExprKind::Cast: return {"CAST(a AS INT)"};
    case ExprKind::In: return {"a IN (1, 2, 3)", "a NOT IN (b)"};
    case ExprKind::Between: return {"a BETWEEN 1 AND b"};
    case ExprKind::Like: return {"a LIKE 'x%'"};
    case ExprKind::IsNull: return {"a IS NOT NULL"};
    case ExprKind::Field: return {"f(a).x"};
    case ExprKind::Subscript: return {"a[1]"};
    case ExprKind::Subquery: return {"(SELECT max(b) FROM u)"};
    case ExprKind::InSubquery: return {"a IN (SELECT b FROM u)"};
    case ExprKind::Exists: return {"EXISTS (SELECT b FROM u)"};
  }
  return {};
}

ExprKind kindAt(int i) { return static_cast<ExprKind>(i); }

std::unique_ptr<Query> parseQuery(const std::string& sql) {
  std::vector<StatementPtr> stmts = parseStatements(sql);
  REQUIRE(stmts.size() == 1);
  REQUIRE(stmts[0]->kind == StatementKind::Select);
  return std::move(static_cast<SelectStatement&>(*stmts[0]).query);
}

// Every field of ast::Expr that holds an expression, read field by field. A
// new such field belongs here and in forEachChild().
std::vector<const Expr*> slots(const Expr& e) {
  std::vector<const Expr*> out;
  for (const ExprPtr& a : e.args) {
    if (a) out.push_back(a.get());
  }
  for (const auto& [w, t] : e.whens) {
    out.push_back(w.get());
    out.push_back(t.get());
  }
  if (e.elseExpr) out.push_back(e.elseExpr.get());
  if (e.filter) out.push_back(e.filter.get());
  return out;
}

std::vector<const Expr*> children(const Expr& e) {
  std::vector<const Expr*> out;
  forEachChild(e, [&](const Expr& c) { out.push_back(&c); });
  return out;
}

size_t countBySlots(const Expr& e) {
  size_t n = 1;
  for (const Expr* c : slots(e)) n += countBySlots(*c);
  return n;
}

}  // namespace

TEST_CASE("every kind of expression reports all its children, in order") {
  int kinds = 0;
  for (int i = 0; !samples(kindAt(i)).empty(); ++i, ++kinds) {
    for (const std::string& text : samples(kindAt(i))) {
      CAPTURE(text);
      auto q = parseQuery("SELECT " + text + " FROM t");
      const Expr& e = *q->terms[0].items[0].expr;
      CHECK(static_cast<int>(e.kind) == i);
      CHECK(children(e) == slots(e));
    }
  }
  CHECK(kinds == static_cast<int>(ExprKind::Exists) + 1);
}

TEST_CASE("the samples fill the child slots they are meant to") {
  auto q = parseQuery(
      "SELECT CASE a WHEN 1 THEN 2 ELSE 3 END, sum(a) FILTER (WHERE b > 0), a BETWEEN 1 AND b "
      "FROM t");
  CHECK(children(*q->terms[0].items[0].expr).size() == 4);  // operand, WHEN, THEN, ELSE
  CHECK(children(*q->terms[0].items[1].expr).size() == 2);  // argument, FILTER
  CHECK(children(*q->terms[0].items[2].expr).size() == 3);
}

TEST_CASE("enumerate visits every node of a tree once, parents first, not into clauses") {
  auto q = parseQuery(
      "SELECT CASE WHEN upper(a) LIKE 'x%' THEN -b ELSE c[1] END + sum(d) OVER (PARTITION BY e) "
      "+ (SELECT max(z) FROM u) FROM t");
  const Expr& e = *q->terms[0].items[0].expr;
  std::vector<const Expr*> seen;
  enumerate(e, [&](const Expr& n) { seen.push_back(&n); });
  REQUIRE(!seen.empty());
  CHECK(seen.front() == &e);
  CHECK(seen.size() == countBySlots(e));
  for (const Expr* n : seen) {
    CHECK(!(n->kind == ExprKind::Column && n->parts[0] == "e"));  // inside OVER
    CHECK(!(n->kind == ExprKind::Column && n->parts[0] == "z"));  // inside the subquery
  }
  const Expr* neg = findNode(e, [](const Expr& n) { return n.kind == ExprKind::Unary; });
  REQUIRE(neg != nullptr);
  CHECK(neg->op == "-");
  CHECK(findNode(e, [](const Expr& n) { return n.kind == ExprKind::Exists; }) == nullptr);
}

TEST_CASE("enumerateAll and the walk over a query go into OVER, subqueries and FROM") {
  auto q = parseQuery(
      "SELECT sum(a) OVER (PARTITION BY p ORDER BY o), (SELECT max(s) FROM u WHERE w > 0) "
      "FROM TRANSFORM(t PARTITION BY k USING PROCESSOR proc) AS x "
      "JOIN (SELECT j FROM v) AS y ON x.on1 = y.j "
      "WHERE wh IN (SELECT i FROM v2) GROUP BY g HAVING h > 0 ORDER BY ob");
  std::vector<std::string> columns;
  std::vector<std::string> tables;
  enumerate(
      *q,
      [&](const Expr& n) {
        if (n.kind == ExprKind::Column) columns.push_back(n.parts.back());
      },
      [&](const TableRef& t) {
        if (t.kind == TableRef::Kind::Named) tables.push_back(t.name);
        if (t.kind == TableRef::Kind::Transform) tables.push_back("transform " + t.processor);
      });
  for (const char* name : {"a", "p", "o", "s", "w", "k", "j", "on1", "wh", "i", "g", "h", "ob"}) {
    CAPTURE(name);
    CHECK(std::find(columns.begin(), columns.end(), name) != columns.end());
  }
  CHECK(tables == std::vector<std::string>{"u", "transform proc", "t", "v", "v2"});

  std::vector<std::string> all;
  enumerateAll(*q->terms[0].items[0].expr, [&](const Expr& n) {
    if (n.kind == ExprKind::Column) all.push_back(n.parts.back());
  });
  std::sort(all.begin(), all.end());
  CHECK(all == std::vector<std::string>{"a", "o", "p"});
}
