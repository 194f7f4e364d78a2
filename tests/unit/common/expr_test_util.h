// Small builders shared by the common layer's expression and function tests:
// literals, column references and a one-call evaluator.
#pragma once

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "common/expr.h"
#include "../sql_error_of.h"

namespace rtsql::test {

inline DataTypePtr T(TypeId id) { return DataType::of(id); }
inline ExprPtr lit(Value v) { return makeLiteral(v, DataType::of(v.type())); }
inline ExprPtr litS(const std::string& s) { return lit(Value::string(s)); }
inline ExprPtr litI(int32_t v) { return lit(Value::integer(v)); }
inline ExprPtr litL(int64_t v) { return lit(Value::bigint(v)); }
inline ExprPtr litD(double v) { return lit(Value::float64(v)); }
inline ExprPtr litB(bool v) { return lit(Value::boolean(v)); }
inline ExprPtr nul() { return makeLiteral(Value(), T(TypeId::Null)); }
inline ExprPtr nulOf(TypeId t) { return makeLiteral(Value(), T(t)); }
inline ExprPtr col(int i, TypeId t, const std::string& name = "") { return makeColumnRef(i, T(t), name); }

// Same type and value (NULL equals NULL here).
inline bool sameValue(const Value& a, const Value& b) {
  return a.type() == b.type() && a.compare(b) == 0;
}

// e->eval(row), after checking that the other ways of evaluating give the same
// value: evalRef, and evalInto over a slot holding another record's string.
// A function of the clock or of chance (now(), rand()) may give another value
// on each call: when a second eval() differs from the first, only the types
// are compared. Clock functions never go back, so when the two evals agree
// the calls between them saw the same value.
inline Value evalAll(const ExprPtr& e, const Row& row) {
  Value v = e->eval(row);
  Value scratch;
  Value ref = e->evalRef(row, scratch);
  Value slot = Value::string("a previous record's text, longer than a short string");
  e->evalInto(row, slot);
  const bool repeatable = sameValue(e->eval(row), v);
  CHECK_MESSAGE((repeatable ? sameValue(ref, v) : ref.type() == v.type()), e->toString());
  CHECK_MESSAGE((repeatable ? sameValue(slot, v) : slot.type() == v.type()), e->toString());
  return v;
}

inline Value call(const std::string& fn, std::vector<ExprPtr> args, const Row& row = {}) {
  return evalAll(makeCall(fn, std::move(args), 0), row);
}
inline std::string callS(const std::string& fn, std::vector<ExprPtr> args, const Row& row = {}) {
  Value v = call(fn, std::move(args), row);
  REQUIRE_FALSE(v.isNull());
  return v.asString();
}

using testing::sqlErrorOf;

}  // namespace rtsql::test
