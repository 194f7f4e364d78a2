// Vectorized Python functions (LANGUAGE PYTHON VECTORIZED): one call over the
// lists of a batch's arguments, the result's length and element types checked
// as data errors naming the function, and VectorizedBatch giving each row its
// result, calls inside calls included, with one Python call per function and
// batch.
#include <doctest/doctest.h>

#include "common/ansi_mode.h"
#include "../sql_error_of.h"
#include "common/python/function.h"
#include "common/python/vectorized_call.h"

using namespace rtsql;
using rtsql::testing::sqlErrorOf;

namespace {

DataTypePtr t(TypeId id) {
  return DataType::of(id);
}

std::shared_ptr<const PythonFunction> vectorized(const std::string& name,
                                                 std::vector<PythonFunction::Param> params,
                                                 DataTypePtr returns, const std::string& body) {
  return PythonFunction::compile(name, std::move(params), std::move(returns), body, 100, true);
}

// How many times the vectorized functions of this file were called: they
// count their calls in the sys module, which every function's module shares.
int64_t calls() {
  auto fn = PythonFunction::compile("calls", {}, t(TypeId::BigInt),
                                    "import sys\nreturn getattr(sys, 'rtsql_test_calls', 0)", 100);
  return fn->call(nullptr, 0).asInt();
}

constexpr const char* kCountedTwice =
    "import sys\n"
    "sys.rtsql_test_calls = getattr(sys, 'rtsql_test_calls', 0) + 1\n"
    "return [None if x is None else x * 2 for x in a]\n";

}  // namespace

TEST_CASE("a vectorized function takes one list per parameter and returns one value per row") {
  auto fn = vectorized("pair", {{"a", t(TypeId::BigInt)}, {"s", t(TypeId::String)}},
                       t(TypeId::String), "return ['%s:%s' % (x, y) for x, y in zip(a, s)]");
  CHECK(fn->vectorized());
  std::vector<std::vector<Value>> columns = {{Value::bigint(1), Value(), Value::bigint(3)},
                                             {Value::string("x"), Value::string("y"), Value()}};
  std::vector<Value> out = fn->callBatch(columns, 3);
  REQUIRE(out.size() == 3);
  CHECK(out[0] == Value::string("1:x"));
  CHECK(out[1] == Value::string("None:y"));
  CHECK(out[2] == Value::string("3:None"));
  // A tuple is a result too, and None is NULL.
  auto tup = vectorized("tup", {{"a", t(TypeId::Int)}}, t(TypeId::Int),
                        "return tuple(None if x is None else -x for x in a)");
  out = tup->callBatch({{Value::integer(4), Value()}}, 2);
  CHECK(out[0] == Value::integer(-4));
  CHECK(out[1].isNull());
}

TEST_CASE("a vectorized result of the wrong length or type is a data error naming the function") {
  auto shortFn = vectorized("short", {{"a", t(TypeId::BigInt)}}, t(TypeId::BigInt), "return a[1:]");
  std::vector<std::vector<Value>> columns = {
      {Value::bigint(1), Value::bigint(2), Value::bigint(3)}};
  SqlError e = sqlErrorOf([&] { shortFn->callBatch(columns, 3); });
  CHECK(e.sqlstate() == "22000");
  CHECK(e.message() ==
        "vectorized function short returned 2 values for a batch of 3 rows: expected 3, got 2");

  auto scalar =
      vectorized("scalar", {{"a", t(TypeId::BigInt)}}, t(TypeId::BigInt), "return len(a)");
  e = sqlErrorOf([&] { scalar->callBatch(columns, 3); });
  CHECK(e.sqlstate() == "22000");
  CHECK(e.message() ==
        "vectorized function scalar returned int, not a list of 3 values of type "
        "BIGINT");

  auto wrong =
      vectorized("wrong", {{"a", t(TypeId::BigInt)}}, t(TypeId::Int), "return [1, 'x', 3]");
  e = sqlErrorOf([&] { wrong->callBatch(columns, 3); });
  CHECK(e.sqlstate() == "22000");
  CHECK(e.message() == "function wrong returned str at result[1], which is not INT");

  auto big =
      vectorized("big", {{"a", t(TypeId::BigInt)}}, t(TypeId::Int), "return [2 ** 40] * len(a)");
  CHECK(sqlErrorOf([&] { big->callBatch(columns, 3); }).sqlstate() == "22003");
}

TEST_CASE("an exception in a vectorized function is a data error with the traceback") {
  auto fn =
      vectorized("inv", {{"a", t(TypeId::BigInt)}}, t(TypeId::Double), "return [1 / x for x in a]");
  std::vector<std::vector<Value>> columns = {{Value::bigint(2), Value::bigint(0)}};
  SqlError e = sqlErrorOf([&] { fn->callBatch(columns, 2); });
  CHECK(e.sqlstate() == "22000");
  CHECK(e.message() ==
        "function inv raised ZeroDivisionError: division by zero (at line 1 in inv; line 1 in "
        "<listcomp>)");
  CHECK(e.detail().find("ZeroDivisionError: division by zero") != std::string::npos);
  columns[0][1] = Value::bigint(4);
  std::vector<Value> out = fn->callBatch(columns, 2);
  CHECK(out[1] == Value::float64(0.25));
}

TEST_CASE("a batch calls each vectorized function once and gives each row its result") {
  auto twice = vectorized("twice", {{"a", t(TypeId::BigInt)}}, t(TypeId::BigInt), kCountedTwice);
  auto plus =
      vectorized("plus", {{"a", t(TypeId::BigInt)}, {"b", t(TypeId::BigInt)}}, t(TypeId::BigInt),
                 "return [None if x is None or y is None else x + y for x, y in zip(a, b)]");
  ExprPtr col = makeColumnRef(0, t(TypeId::BigInt), "n");
  ExprPtr inner = makePythonCall(twice, {col}, 7);
  // plus(twice(n), n): the inner call's results are the outer call's argument.
  ExprPtr outer = makePythonCall(plus, {inner, col}, 3);
  CHECK(outer->toString() == "plus(twice(n), n)");

  std::vector<VectorizedCall> found = vectorizedCallsIn(*outer);
  REQUIRE(found.size() == 2);
  CHECK(found[0].node == inner.get());
  CHECK(found[0].function == "twice");
  CHECK(found[0].pos == 7);
  CHECK(found[1].node == outer.get());
  CHECK(vectorizedCallsIn(*col).empty());

  // The calls become columns 1 (twice) and 2 (plus, reading column 1).
  VectorizedColumns columns = vectorizedColumns({outer}, 1);
  REQUIRE(columns.calls.size() == 2);
  CHECK(columns.calls[1]->toString() == "plus(twice(n), n)");
  CHECK(columns.exprs.front()->toString() == "plus(twice(n), n)");
  CHECK(columnRefIndex(*columns.exprs.front()) == 2);

  std::vector<Row> rows = {{Value::bigint(1)}, {Value()}, {Value::bigint(10)}};
  VectorizedBatch batch(columns.calls, 1);
  const int64_t before = calls();
  batch.appendResults(rows);
  CHECK(calls() == before + 1);
  const Value expected[] = {Value::bigint(3), Value(), Value::bigint(30)};
  for (size_t i = 0; i < rows.size(); ++i) {
    REQUIRE(rows[i].size() == 3);
    CHECK(columns.exprs.front()->eval(rows[i]) == expected[i]);
    CHECK(rows[i][1] == (i == 1 ? Value() : Value::bigint(rows[i][0].asInt() * 2)));
  }
  CHECK(calls() == before + 1);
  // Outside a batch a call is a batch of one row.
  CHECK(outer->eval(rows[2]) == Value::bigint(30));
  CHECK(calls() == before + 2);
}

TEST_CASE("a vectorized call is found under every kind of expression node") {
  // The legacy mode's NULLs (ANSI mode's errors: ansi_mode_test.cpp).
  AnsiModeScope legacy(false);
  auto twice = vectorized("twice", {{"a", t(TypeId::BigInt)}}, t(TypeId::BigInt), kCountedTwice);
  auto label = vectorized("label", {{"a", t(TypeId::BigInt)}}, t(TypeId::String),
                          "return [None if x is None else 'n%d' % x for x in a]");
  ExprPtr n = makeColumnRef(0, t(TypeId::BigInt), "n");
  ExprPtr one = makeLiteral(Value::bigint(1), t(TypeId::BigInt));
  auto call = [&] { return makePythonCall(twice, {n}, 1); };
  auto text = [&] { return makePythonCall(label, {n}, 1); };
  auto isTrue = [&] { return makeCall("=", {call(), one}, 1); };

  const std::vector<std::pair<std::string, ExprPtr>> cases = {
      {"arithmetic", makeCall("+", {one, call()}, 1)},
      {"negation", makeCall("neg", {call()}, 1)},
      {"comparison", isTrue()},
      {"AND", makeAnd(makeLiteral(Value::boolean(true), t(TypeId::Boolean)), isTrue(), 1)},
      {"OR", makeOr(makeLiteral(Value::boolean(false), t(TypeId::Boolean)), isTrue(), 1)},
      {"NOT", makeNot(isTrue(), 1)},
      {"IS NULL", makeIsNull(call(), false)},
      {"IN (value)", makeIn(call(), {one}, false, 1)},
      {"IN (list)", makeIn(n, {one, call()}, false, 1)},
      {"BETWEEN", makeBetween(n, one, call(), false, 1)},
      {"LIKE", makeLike(makeLiteral(Value::string("n2"), t(TypeId::String)), text(), false, 1)},
      {"CASE operand", makeCase(call(), {{one, one}}, nullptr, 1)},
      {"CASE WHEN", makeCase(nullptr, {{isTrue(), one}}, nullptr, 1)},
      {"CASE THEN",
       makeCase(nullptr, {{makeLiteral(Value::boolean(true), t(TypeId::Boolean)), call()}}, nullptr,
                1)},
      {"CASE ELSE",
       makeCase(nullptr, {{makeLiteral(Value::boolean(false), t(TypeId::Boolean)), one}}, call(),
                1)},
      {"CAST", makeCast(call(), t(TypeId::String), 1)},
      {"subscript", makeSubscript(makeCall("array", {call()}, 1), one, 1)},
      {"field access",
       makeFieldAccess(makeCall("named_struct",
                                {makeLiteral(Value::string("f"), t(TypeId::String)), call()}, 1),
                       "f", 1)},
      {"function call", makeCall("coalesce", {call(), one}, 1)},
      {"Python call", makePythonCall(twice, {makeCall("abs", {call()}, 1)}, 1)},
  };
  for (const auto& c : cases) {
    // Not a structured binding: clang 14 cannot capture one in CAPTURE's lambda.
    const std::string& kind = c.first;
    CAPTURE(kind);
    std::vector<VectorizedCall> found = vectorizedCallsIn(*c.second);
    REQUIRE(!found.empty());
    CHECK((found.front().function == "twice" || found.front().function == "label"));
  }
  // The outer call of `twice(abs(twice(n)))` comes after the inner one.
  std::vector<VectorizedCall> nested = vectorizedCallsIn(*cases.back().second);
  REQUIRE(nested.size() == 2);
  CHECK(nested[1].node == cases.back().second.get());
  // A node shared by two parents is listed once.
  ExprPtr shared = call();
  CHECK(vectorizedCallsIn(*makeCall("+", {shared, shared}, 1)).size() == 1);

  // Under every kind of node the calls become the columns a batch appends:
  // the rewritten expression reads them and gives what the calls give, and
  // reads as written.
  const std::vector<Row> inputs = {{Value::bigint(1)}, {Value()}, {Value::bigint(3)}};
  for (const auto& c : cases) {
    const std::string& kind = c.first;
    CAPTURE(kind);
    VectorizedColumns columns = vectorizedColumns({c.second}, 1);
    REQUIRE(columns.exprs.size() == 1);
    CHECK(vectorizedCallsIn(*columns.exprs.front()).empty());
    CHECK(columns.exprs.front()->toString() == c.second->toString());
    std::vector<Row> rows = inputs;
    VectorizedBatch(columns.calls, 1).appendResults(rows);
    for (size_t i = 0; i < rows.size(); ++i) {
      CHECK(columns.exprs.front()->eval(rows[i]) == c.second->eval(inputs[i]));
    }
  }
}
