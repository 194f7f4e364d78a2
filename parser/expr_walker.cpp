// The AST walk (see expr_walker.h).
#include "parser/expr_walker.h"

// A kind of expression forEachChild() does not list would be skipped by every
// walk: make the compiler refuse it.
#pragma GCC diagnostic error "-Wswitch"

namespace rtsql::ast {

namespace {

void visitAll(const std::vector<ExprPtr>& exprs, const ExprVisitor& fn) {
  for (const ExprPtr& e : exprs) {
    if (e) fn(*e);
  }
}

}  // namespace

void forEachChild(const Expr& e, const ExprVisitor& fn) {
  switch (e.kind) {
    case ExprKind::Literal:
    case ExprKind::Column:
    case ExprKind::Star:
    case ExprKind::Subquery:  // its query is a clause, not a child
    case ExprKind::Exists:
      return;
    case ExprKind::Unary:
    case ExprKind::Binary:
    case ExprKind::Cast:
    case ExprKind::In:
    case ExprKind::Between:
    case ExprKind::Like:
    case ExprKind::IsNull:
    case ExprKind::Field:
    case ExprKind::Subscript:
    case ExprKind::InSubquery:  // args[0], the value looked up
      visitAll(e.args, fn);
      return;
    case ExprKind::Call:
      visitAll(e.args, fn);
      if (e.filter) fn(*e.filter);
      return;
    case ExprKind::Case:
      visitAll(e.args, fn);  // the operand, when there is one
      for (const auto& [when, then] : e.whens) {
        if (when) fn(*when);
        if (then) fn(*then);
      }
      if (e.elseExpr) fn(*e.elseExpr);
      return;
  }
}

void enumerate(const Expr& e, const ExprVisitor& fn) {
  fn(e);
  forEachChild(e, [&fn](const Expr& child) { enumerate(child, fn); });
}

const Expr* findNode(const Expr& e, const std::function<bool(const Expr&)>& pred) {
  if (pred(e)) return &e;
  const Expr* found = nullptr;
  forEachChild(e, [&](const Expr& child) {
    if (!found) found = findNode(child, pred);
  });
  return found;
}

namespace {

using TableVisitor = std::function<void(const TableRef&)>;

void enumerateQuery(const Query& q, const ExprVisitor& fn, const TableVisitor& onTable);

void enumerateAllIn(const Expr& e, const ExprVisitor& fn, const TableVisitor& onTable) {
  enumerate(e, [&](const Expr& n) {
    fn(n);
    if (n.over) {
      for (const ExprPtr& p : n.over->partitionBy) enumerateAllIn(*p, fn, onTable);
      for (const OrderItem& o : n.over->orderBy) enumerateAllIn(*o.expr, fn, onTable);
    }
    if (n.subquery) enumerateQuery(*n.subquery, fn, onTable);
  });
}

void enumerateTable(const TableRef& t, const ExprVisitor& fn, const TableVisitor& onTable) {
  if (onTable) onTable(t);
  if (t.subquery) enumerateQuery(*t.subquery, fn, onTable);
  if (t.left) enumerateTable(*t.left, fn, onTable);
  if (t.right) enumerateTable(*t.right, fn, onTable);
  if (t.on) enumerateAllIn(*t.on, fn, onTable);
  for (const ExprPtr& p : t.partitionBy) enumerateAllIn(*p, fn, onTable);
}

void enumerateQuery(const Query& q, const ExprVisitor& fn, const TableVisitor& onTable) {
  for (const Select& s : q.terms) {
    for (const SelectItem& item : s.items) {
      if (item.expr) enumerateAllIn(*item.expr, fn, onTable);
    }
    for (const ExprPtr& d : s.distinctOn) enumerateAllIn(*d, fn, onTable);
    if (s.from) enumerateTable(*s.from, fn, onTable);
    if (s.where) enumerateAllIn(*s.where, fn, onTable);
    for (const ExprPtr& g : s.groupBy) enumerateAllIn(*g, fn, onTable);
    if (s.having) enumerateAllIn(*s.having, fn, onTable);
  }
  for (const OrderItem& o : q.orderBy) enumerateAllIn(*o.expr, fn, onTable);
}

}  // namespace

void enumerateAll(const Expr& e, const ExprVisitor& fn) {
  enumerateAllIn(e, fn, nullptr);
}

void enumerate(const Query& q, const ExprVisitor& fn, const TableVisitor& onTable) {
  enumerateQuery(q, fn, onTable);
}

}  // namespace rtsql::ast
