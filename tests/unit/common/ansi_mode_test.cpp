// ANSI mode (common/ansi_mode.h): the nodes bound in it raise Spark's error
// classes where the legacy mode answers NULL or wraps, the choice is made
// when a node is bound (a scope ended later changes nothing), try_ functions
// and try_cast answer NULL in both modes, and the types and texts Spark gives
// mixed arguments and dates past 9999.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "common/ansi_mode.h"
#include "common/try_cast.h"
#include "expr_test_util.h"

using namespace rtsql;
using namespace rtsql::test;

namespace {

// The error evaluating `e` raises: its SQLSTATE and message.
SqlError errorOf(const ExprPtr& e, const Row& row = {}) {
  return sqlErrorOf([&] { e->eval(row); });
}

ExprPtr litBin(const std::string& bytes) { return lit(Value::binary(bytes)); }

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

TEST_CASE("ansi mode: the functions Spark 4 raises for, and their legacy answers") {
  const Row row{Value::string("xx"), Value::date(19723), Value::float64(1e308),
                Value::string("not a url"), Value::binary("\xFF")};
  auto s = col(0, TypeId::String, "s");
  auto d = col(1, TypeId::Date, "d");
  auto big = col(2, TypeId::Double, "big");
  auto url = col(3, TypeId::String, "u");
  auto bin = col(4, TypeId::Binary, "b");
  struct Case {
    std::string fn;
    std::vector<ExprPtr> args;
    const char* sqlstate;
    const char* errorClass;
  };
  const std::vector<Case> cases = {
      {"next_day", {d, s}, "22009", "[ILLEGAL_DAY_OF_WEEK]"},
      {"to_timestamp_ntz", {s, litS("yyyy")}, "22007", "[CANNOT_PARSE_TIMESTAMP]"},
      {"add_months", {d, litI(2147483647)}, "22003", "[ARITHMETIC_OVERFLOW]"},
      {"ceil", {big}, "22003", "[ARITHMETIC_OVERFLOW]"},
      {"floor", {makeCall("neg", {big}, 0)}, "22003", "[ARITHMETIC_OVERFLOW]"},
      {"round", {litI(7), litI(-2147483647 - 1)}, "22003", "[ARITHMETIC_OVERFLOW]"},
      {"bround", {big, litI(-2147483647 - 1)}, "22003", "[ARITHMETIC_OVERFLOW]"},
      {"to_binary", {s}, "22018", "[CONVERSION_INVALID_INPUT]"},
      {"to_binary", {litS("YQ="), litS("base64")}, "22018", "[CONVERSION_INVALID_INPUT]"},
      {"unbase64", {litS("4")}, "22018", "[CONVERSION_INVALID_INPUT]"},
      {"encode", {litS("\xE6\x97\xA5"), litS("US-ASCII")}, "22000", "[MALFORMED_CHARACTER_CODING]"},
      {"decode", {bin, litS("UTF-8")}, "22000", "[MALFORMED_CHARACTER_CODING]"},
      {"decode", {litBin("abc"), litS("UTF-16")}, "22000", "[MALFORMED_CHARACTER_CODING]"},
      {"parse_url", {url, litS("HOST")}, "22P02", "[INVALID_URL]"},
      {"parse_url", {litS("%zz"), litS("QUERY"), litS("k")}, "22P02", "[INVALID_URL]"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.fn);
    ExprPtr ansi, legacy;
    {
      AnsiModeScope on(true);
      ansi = makeCall(c.fn, c.args, 0);
    }
    {
      AnsiModeScope off(false);
      legacy = makeCall(c.fn, c.args, 0);
    }
    SqlError e = errorOf(ansi, row);
    CHECK(e.sqlstate() == c.sqlstate);
    CHECK(e.message().starts_with(c.errorClass));
    CHECK_NOTHROW(legacy->eval(row));
  }
  AnsiModeScope on(true);
  // Values that are fine stay fine in ANSI mode.
  CHECK(makeCall("next_day", {d, litS("Monday")}, 0)->eval(row) == Value::date(19730));
  CHECK(makeCall("ceil", {litD(std::nan(""))}, 0)->eval(row) == Value::bigint(0));
  CHECK(makeCall("ceil", {litD(-9223372036854775808.0)}, 0)->eval(row) ==
        Value::bigint(INT64_MIN));
  CHECK(makeCall("round", {litD(2.5), litI(-400)}, 0)->eval(row) == Value::float64(0.0));
  CHECK(makeCall("to_binary", {litS("YR=="), litS("base64")}, 0)->eval(row) ==
        Value::binary("a"));
  CHECK(makeCall("unbase64", {litS("*Y*Q*")}, 0)->eval(row) == Value::binary("a"));
  CHECK(makeCall("parse_url", {litS(""), litS("HOST")}, 0)->eval(row).isNull());
  CHECK(makeCall("parse_url", {litS("%zz"), litS("HOST"), litS("k")}, 0)->eval(row).isNull());
  CHECK(makeCall("decode", {nul(), litS("bogus")}, 0)->eval(row).isNull());
  CHECK(makeCall("encode", {litS("a\xF0\x9F\x98\x80"), litS("utf-32")}, 0)->eval(row) ==
        Value::binary(std::string("\0\0\0a\0\x01\xF6\0", 8)));
  CHECK(makeCall("decode", {litBin(std::string("\xFF\xFE\0\0A\0\0\0", 8)), litS("UTF-32")}, 0)
            ->eval(row) == Value::string("A"));
  // An unknown character set raises in both modes, for a value only.
  CHECK(sqlErrorOf([] { makeCall("encode", {litS("a"), litS("utf8")}, 0); }).sqlstate() ==
        "22023");
  {
    AnsiModeScope off(false);
    CHECK(sqlErrorOf([] { makeCall("decode", {litBin("a"), litS("latin1")}, 0); }).sqlstate() ==
          "22023");
  }
}

TEST_CASE("ansi mode: try_cast answers NULL where CAST raises, in both modes") {
  for (bool mode : {true, false}) {
    CAPTURE(mode);
    AnsiModeScope scope(mode);
    const Row row{Value::string("1.9"), Value::bigint(9223372036854775807LL)};
    auto s = col(0, TypeId::String, "s");
    auto big = col(1, TypeId::BigInt, "b");
    CHECK(makeTryCast(s, T(TypeId::BigInt), 0)->eval(row).isNull());
    CHECK(makeTryCast(big, T(TypeId::Int), 0)->eval(row).isNull());
    CHECK(makeTryCast(litS(" 42 "), T(TypeId::Int), 0)->eval(row) == Value::integer(42));
    CHECK(makeTryCast(s, T(TypeId::Double), 0)->eval(row) == Value::float64(1.9));
    CHECK(makeTryCast(litS("x"), T(TypeId::Date), 0)->isConstant());
    CHECK(makeTryCast(litS("x"), T(TypeId::Date), 0)->eval(row).isNull());
    CHECK(sqlErrorOf([] { makeTryCast(nulOf(TypeId::Date), T(TypeId::Int), 0); }).sqlstate() ==
          "42804");
    // An array's elements each: ['1', 'x'] is [1, NULL].
    ExprPtr arr = makeCall("array", {litS("1"), litS("x")}, 0);
    Value a = makeTryCast(arr, DataType::arrayOf(T(TypeId::Int)), 0)->eval(row);
    REQUIRE(a.type() == TypeId::Array);
    CHECK(a.asList().at(0) == Value::integer(1));
    CHECK(a.asList().at(1).isNull());
  }
}

TEST_CASE("ansi mode: dates and years past 9999 and wrapped day numbers print as Spark's") {
  AnsiModeScope on(true);
  CHECK(Value::date(2932897).toString() == "+10000-01-01");
  CHECK(Value::date(-719893).toString() == "-0001-01-01");
  CHECK(Value::timestamp(253402300800000000LL).toString() == "+10000-01-01 00:00:00");
  CHECK(makeCall("date_add", {lit(Value::date(19782)), litI(2147483647)}, 0)->eval({})
            .toString() == "-5877587-08-19");
  CHECK(makeCall("from_unixtime", {litL(9223372036854775807LL)}, 0)->eval({}) ==
        Value::string("1969-12-31 23:59:59"));
}

TEST_CASE("ansi mode: Spark's types for mixed and NULL arguments") {
  {
    AnsiModeScope on(true);
    ExprPtr c = makeCall("coalesce", {litI(1), litS("a")}, 0);
    CHECK(c->type()->id == TypeId::BigInt);
    CHECK(c->eval({}) == Value::bigint(1));
    CHECK(makeCall("coalesce", {litB(true), litS("")}, 0)->type()->id == TypeId::Boolean);
    CHECK(makeCall("nvl", {litD(1.5), litS("a")}, 0)->type()->id == TypeId::Double);
    CHECK(errorOf(makeCall("coalesce", {nul(), litS("a"), litI(1)}, 0)).sqlstate() == "22018");
  }
  {
    AnsiModeScope off(false);
    CHECK(sqlErrorOf([] { makeCall("coalesce", {litI(1), litS("a")}, 0); }).sqlstate() ==
          "42804");
  }
  for (const char* fn : {"abs", "negative", "positive", "round", "bround"}) {
    CAPTURE(fn);
    CHECK(makeCall(fn, {nul()}, 0)->type()->id == TypeId::Double);
  }
  CHECK(makeCall("nullif", {nul(), litS("x")}, 0)->type()->id == TypeId::Null);
  CHECK(sqlErrorOf([] { makeCall("try_element_at", {nul(), litI(1)}, 0); }).sqlstate() ==
        "42804");
}
