// ANSI mode (common/ansi_mode.h): the nodes bound in it raise Spark's error
// classes where the legacy mode answers NULL or wraps, the choice is made
// when a node is bound (a scope ended later changes nothing), and try_
// functions answer NULL in both modes.
#include <doctest/doctest.h>

#include <string>

#include "common/ansi_mode.h"
#include "expr_test_util.h"

using namespace rtsql;
using namespace rtsql::test;

namespace {

// The error evaluating `e` raises: its SQLSTATE and message.
SqlError errorOf(const ExprPtr& e, const Row& row = {}) {
  return sqlErrorOf([&] { e->eval(row); });
}

}  // namespace

TEST_CASE("ansi mode: each error class with its SQLSTATE, the value and a hint") {
  AnsiModeScope on(true);
  const Row row{Value::string("abc"), Value::integer(2147483647), Value::integer(0),
                Value::bigint(9223372036854775807LL)};
  auto s = col(0, TypeId::String, "s");
  auto i = col(1, TypeId::Int, "i");
  auto zero = col(2, TypeId::Int, "z");
  auto big = col(3, TypeId::BigInt, "b");

  SqlError e = errorOf(makeCast(s, T(TypeId::Int), 0), row);
  CHECK(e.sqlstate() == "22018");
  CHECK(e.message() ==
        "[CAST_INVALID_INPUT] the value 'abc' of the type STRING cannot be cast to INT because it "
        "is malformed");
  CHECK(e.hint().find("SET ansi_mode = off") != std::string::npos);
  CHECK(errorOf(makeCast(s, T(TypeId::Date), 0), row).sqlstate() == "22018");
  CHECK(errorOf(makeCast(s, T(TypeId::Double), 0), row).sqlstate() == "22018");
  CHECK(errorOf(makeCast(s, T(TypeId::Boolean), 0), row).sqlstate() == "22018");

  e = errorOf(makeCast(big, T(TypeId::Int), 0), row);
  CHECK(e.sqlstate() == "22003");
  CHECK(e.message().starts_with("[CAST_OVERFLOW] the value 9223372036854775807L"));

  e = errorOf(makeCall("+", {i, litI(1)}, 0), row);
  CHECK(e.sqlstate() == "22003");
  CHECK(e.message() == "[ARITHMETIC_OVERFLOW] INT overflow: 2147483647 + 1");
  CHECK(e.hint().find("try_add") != std::string::npos);
  CHECK(errorOf(makeCall("*", {big, litL(2)}, 0), row).message().starts_with("[ARITHMETIC_OVERFLOW]"));
  e = errorOf(makeCall("neg", {col(0, TypeId::Int)}, 0), Row{Value::integer(-2147483647 - 1)});
  CHECK(e.message() == "[ARITHMETIC_OVERFLOW] INT overflow: - -2147483648");

  e = errorOf(makeCall("/", {i, zero}, 0), row);
  CHECK(e.sqlstate() == "22012");
  CHECK(e.message().starts_with("[DIVIDE_BY_ZERO]"));
  CHECK(errorOf(makeCall("%", {i, zero}, 0), row).message().starts_with("[REMAINDER_BY_ZERO]"));
  CHECK(errorOf(makeCall("pmod", {i, zero}, 0), row).message().starts_with("[REMAINDER_BY_ZERO]"));

  auto arr = makeCall("array", {litI(1), litI(2)}, 0);
  CHECK(errorOf(makeSubscript(arr, zero, 0), Row{Value(), Value(), Value::integer(5)})
            .message()
            .starts_with("[INVALID_ARRAY_INDEX]"));
  e = errorOf(makeCall("element_at", {arr, makeCall("+", {zero, litI(3)}, 0)}, 0), row);
  CHECK(e.sqlstate() == "22003");
  CHECK(e.message().starts_with("[INVALID_ARRAY_INDEX_IN_ELEMENT_AT] the index 3"));
  CHECK(errorOf(makeCall("element_at", {arr, zero}, 0), row)
            .message()
            .starts_with("[INVALID_INDEX_OF_ZERO]"));

  e = errorOf(makeCall("to_timestamp", {s, litS("yyyy-MM-dd")}, 0), row);
  CHECK(e.sqlstate() == "22007");
  CHECK(e.message().starts_with("[CANNOT_PARSE_TIMESTAMP]"));
  e = errorOf(makeCall("make_date", {litI(2023), litI(2), makeCall("+", {zero, litI(29)}, 0)}, 0),
              row);
  CHECK(e.sqlstate() == "22023");
  CHECK(e.message().starts_with("[DATETIME_FIELD_OUT_OF_BOUNDS]"));
}

TEST_CASE("ansi mode: the legacy mode answers NULL or wraps where ANSI mode raises") {
  AnsiModeScope off(false);
  const Row row{Value::string("abc"), Value::integer(2147483647), Value::integer(0)};
  auto s = col(0, TypeId::String, "s");
  auto i = col(1, TypeId::Int, "i");
  auto zero = col(2, TypeId::Int, "z");
  CHECK(makeCast(s, T(TypeId::Int), 0)->eval(row).isNull());
  CHECK(makeCall("+", {i, litI(1)}, 0)->eval(row) == Value::integer(-2147483647 - 1));
  CHECK(makeCall("/", {i, zero}, 0)->eval(row).isNull());
  CHECK(makeCall("%", {i, zero}, 0)->eval(row).isNull());
  CHECK(makeCall("element_at", {makeCall("array", {litI(1)}, 0), zero}, 0)->eval(row).isNull());
  CHECK(makeCall("to_timestamp", {s, litS("yyyy-MM-dd")}, 0)->eval(row).isNull());
}

TEST_CASE("ansi mode: fixed when bound; try_ functions answer NULL in both modes") {
  const Row row{Value::integer(2147483647), Value::integer(0)};
  auto i = col(0, TypeId::Int, "i");
  auto zero = col(1, TypeId::Int, "z");
  ExprPtr legacy;
  {
    AnsiModeScope off(false);
    legacy = makeCall("+", {i, litI(1)}, 0);
  }
  // Evaluated where the mode is on, the node keeps the mode it was bound in.
  AnsiModeScope on(true);
  CHECK(legacy->eval(row) == Value::integer(-2147483647 - 1));
  CHECK(makeCall("try_add", {i, litI(1)}, 0)->eval(row).isNull());
  CHECK(makeCall("try_divide", {i, zero}, 0)->eval(row).isNull());
  CHECK(makeCall("try_to_timestamp", {litS("x"), litS("yyyy")}, 0)->eval(row).isNull());
  CHECK(makeCall("try_element_at", {makeCall("array", {litI(1)}, 0), litI(5)}, 0)->eval(row).isNull());
  // A constant that raises is left to run time rather than failing the bind.
  ExprPtr c = makeCast(litS("x"), T(TypeId::Int), 0);
  CHECK(errorOf(c).sqlstate() == "22018");
}
