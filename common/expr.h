// Bound expressions: the form in which the planner hands expressions to the
// executor. The binder resolves names to column indexes and functions to
// implementations once, at plan time; per record, eval() only walks this tree.
// Everything here is immutable after construction and safe to evaluate from
// many task threads at once (per-call scratch state lives on the stack).
//
// The binder builds trees with the make* factories below; they do the type
// checking (implicit numeric widening, NULL literals adapting to their context)
// and throw SqlError with the given position on a mismatch (42804) or an
// unknown function (42883).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/error.h"
#include "common/value.h"

namespace rtsql {

class Expr;
using ExprPtr = std::shared_ptr<const Expr>;

class Expr {
 public:
  explicit Expr(DataTypePtr type) : type_(std::move(type)) {}
  virtual ~Expr() = default;

  virtual Value eval(const Row& row) const = 0;
  // The same value as eval(), without a copy where the value already exists: a
  // column reference returns the row's own Value, a literal its constant, a
  // field or element access the item inside its struct or array. Any other node
  // computes into `scratch` and returns it. The reference is valid while `row`,
  // `scratch` and this expression are unchanged. Filters, projections, join keys,
  // comparisons and function arguments read through it, so a string column they
  // look at is not copied per record.
  virtual const Value& evalRef(const Row& row, Value& scratch) const {
    scratch = eval(row);
    return scratch;
  }
  // eval() into `out`, reusing its storage: a string column's text is copied
  // into `out`'s buffer rather than into a new one. `out` must not be part of
  // `row`.
  void evalInto(const Row& row, Value& out) const {
    Value scratch;
    const Value& v = evalRef(row, scratch);
    if (&v == &scratch) {
      out = std::move(scratch);
    } else {
      out = v;
    }
  }
  // SQL-like text for EXPLAIN: `upper(url)`, `(amount * 2)`, `#3` for inputs.
  virtual std::string toString() const = 0;
  // True when the value does not depend on the row (literals and functions of them
  // that are deterministic); lets the binder fold constants.
  virtual bool isConstant() const { return false; }
  // Calls `fn` on each direct child, in the order eval() reads them. Plan-time
  // walks over a tree (the Python calls an operator holds, say) go through it.
  // Pure, so that a new kind of node says which children it has (a leaf says
  // none) rather than hiding them from every walk.
  virtual void forEachChild(const std::function<void(const Expr&)>& fn) const = 0;
  // This node over `children` (as many as forEachChild() visits, in its
  // order), all else the same: plan-time rewrites build a new tree through it
  // rather than changing a node another plan may share.
  virtual ExprPtr withChildren(std::vector<ExprPtr> children) const = 0;

  const DataTypePtr& type() const { return type_; }

 private:
  DataTypePtr type_;
};

// Factories. `pos` is the position reported in errors (SqlError::npos for none).
ExprPtr makeColumnRef(int index, DataTypePtr type, std::string name);
ExprPtr makeLiteral(Value value, DataTypePtr type);
// Functions and operators by name. Operators use their symbol: + - * / % = <> < <=
// > >= || and the unary "neg". Names are case-insensitive. Covers the function
// list of SQL.md (abs ... array) plus coalesce, nullif, if, greatest, least.
ExprPtr makeCall(const std::string& name, std::vector<ExprPtr> args, size_t pos);
ExprPtr makeAnd(ExprPtr l, ExprPtr r, size_t pos);
ExprPtr makeOr(ExprPtr l, ExprPtr r, size_t pos);
ExprPtr makeNot(ExprPtr e, size_t pos);
ExprPtr makeIsNull(ExprPtr e, bool negated);
ExprPtr makeIn(ExprPtr e, std::vector<ExprPtr> list, bool negated, size_t pos);
ExprPtr makeBetween(ExprPtr e, ExprPtr lo, ExprPtr hi, bool negated, size_t pos);
ExprPtr makeLike(ExprPtr e, ExprPtr pattern, bool negated, size_t pos);
// CASE [operand] WHEN .. THEN .. [ELSE ..] END; operand may be null.
ExprPtr makeCase(ExprPtr operand, std::vector<std::pair<ExprPtr, ExprPtr>> whens,
                 ExprPtr elseExpr, size_t pos);
// Explicit CAST; throws 42804 for casts that can never succeed (e.g. ARRAY to INT).
ExprPtr makeCast(ExprPtr e, DataTypePtr target, size_t pos);
// Struct field access `e.name` (case-insensitive); 42703 when there is no such field.
ExprPtr makeFieldAccess(ExprPtr e, const std::string& field, size_t pos);
// Array subscript `e[i]`, 0-based as in Spark; NULL when out of range.
ExprPtr makeSubscript(ExprPtr e, ExprPtr index, size_t pos);

// True when `name` is an aggregate function (count sum min max avg); the
// binder uses it to reject aggregates where they cannot run.
bool isAggregateFunction(const std::string& name);

// Every function a query can call by name: the scalar functions makeCall()
// knows, aliases included, and the aggregates; sorted, lower case, without
// operators. SHOW FUNCTIONS lists them.
std::vector<std::string> functionNames();

// The input column `e` reads unchanged when it is a plain column reference,
// else -1: lets the planner follow a column through projections.
int columnRefIndex(const Expr& e);

// `e` with each node for which `replace` returns an expression replaced by it
// (its children are then not visited), the nodes above it rebuilt through
// Expr::withChildren(); `e` itself when nothing was replaced.
ExprPtr replaceNodes(const ExprPtr& e, const std::function<ExprPtr(const Expr&)>& replace);

// Casts a value at run time with Spark's non-ANSI semantics (a failed string
// parse gives NULL). Used by CAST and by decoders.
Value castValue(const Value& v, const DataType& target);
// The same with Spark's ANSI semantics (common/ansi_mode.h): text that does
// not parse raises CAST_INVALID_INPUT (22018), a value that does not fit
// CAST_OVERFLOW or NUMERIC_VALUE_OUT_OF_RANGE (22003).
Value castValueAnsi(const Value& v, const DataType& target);

// Parses interval text as SQL writes it: ('10', "SECOND"), ('10 seconds', ""),
// ('1 minute 30 seconds', ""). Returns microseconds; throws SqlError 22P02.
int64_t parseInterval(const std::string& text, const std::string& unit, size_t pos);
// Parses the text of Spark's day-time range literals, INTERVAL '1 02:03:04.5'
// DAY TO SECOND, '02:03' HOUR TO MINUTE, '3 04' DAY TO HOUR ...: `from` and
// `to` are DAY, HOUR, MINUTE or SECOND, from the larger. A leading sign
// applies to the whole; every field after the first is bounded (hours 0-23,
// minutes and seconds 0-59). Returns microseconds; throws SqlError 22P02.
int64_t parseDayTimeRange(const std::string& text, const std::string& from, const std::string& to,
                          size_t pos);

}  // namespace rtsql
