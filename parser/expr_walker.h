// The one walk over the AST's expressions. Code that looks through an
// expression tree (does it hold an aggregate? which functions does it call?
// where is the column an error points at?) goes through the functions here
// rather than naming the fields that hold children, so every walk sees the
// same children and a new kind of node is taught to all of them at once.
//
// Adding a kind of expression: give it a case in forEachChild()
// (expr_walker.cpp, where a switch that misses a kind does not compile) that
// visits each expression it holds, and a sample in
// tests/unit/parser/expr_walker_test.cpp, which checks that every kind reports
// all its children.
//
// An expression's children are the expressions it is computed from: operands,
// arguments, CASE's WHEN/THEN/ELSE arms, an aggregate's FILTER condition. Two
// clauses a node refers to are not its children, because they are planned apart
// from it: a call's OVER (...) window (by the binders of OVER) and a subquery's
// query (as a join). enumerate() stays out of them; enumerateAll() and the walk
// over a query go into them.
#pragma once

#include <functional>

#include "parser/ast.h"

namespace rtsql::ast {

using ExprVisitor = std::function<void(const Expr&)>;

// Calls `fn` on each direct child of `e`, in the order they are written.
void forEachChild(const Expr& e, const ExprVisitor& fn);

// Calls `fn` on `e` and on every expression below it, a node before its
// children, without entering OVER clauses or subqueries.
void enumerate(const Expr& e, const ExprVisitor& fn);

// The first node of enumerate(e) for which `pred` holds, or null.
const Expr* findNode(const Expr& e, const std::function<bool(const Expr&)>& pred);

// Calls `fn` on `e` and on every expression below it, the expressions of its
// calls' OVER clauses and of its subqueries included.
void enumerateAll(const Expr& e, const ExprVisitor& fn);

// Calls `fn` on every expression of `q` as enumerateAll() does: the SELECT
// list, DISTINCT ON, FROM (join conditions, TRANSFORM's PARTITION BY, subqueries
// in FROM), WHERE, GROUP BY, HAVING and ORDER BY of every term. `onTable`, when
// given, is called on every table reference of the query and of its
// subqueries, an outer one before those inside it.
void enumerate(const Query& q, const ExprVisitor& fn,
               const std::function<void(const TableRef&)>& onTable = nullptr);

}  // namespace rtsql::ast
