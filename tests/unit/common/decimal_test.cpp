// DECIMAL arithmetic (common/decimal.h) and DECIMAL expressions: Spark's
// result types, HALF_UP rounding, NULL on overflow, and exact text.
#include "common/decimal.h"

#include <doctest/doctest.h>

#include <limits>

#include "common/ansi_mode.h"
#include "common/functions/internal.h"
#include "expr_test_util.h"

using namespace rtsql;
using namespace rtsql::test;

namespace {

Value dec(std::string_view text, int p, int s) {
  auto v = decimal::parse(text, {p, s});
  REQUIRE(v.has_value());
  return Value::decimal(*v, p, s);
}

ExprPtr litDec(std::string_view text, int p, int s) {
  return makeLiteral(dec(text, p, s), DataType::decimal(p, s));
}

}  // namespace

TEST_CASE("decimal: result types follow Spark's rules") {
  auto eq = [](decimal::Type t, int p, int s) { return t.precision == p && t.scale == s; };
  CHECK(eq(decimal::addType({10, 2}, {5, 3}), 12, 3));
  CHECK(eq(decimal::mulType({10, 2}, {5, 3}), 16, 5));
  CHECK(eq(decimal::divType({10, 2}, {5, 3}), 19, 8));
  CHECK(eq(decimal::modType({10, 2}, {5, 3}), 5, 3));
  // Over 38 digits: integer digits kept, scale cut to no less than 6.
  CHECK(eq(decimal::mulType({38, 10}, {38, 10}), 38, 6));
  CHECK(eq(decimal::divType({38, 18}, {38, 18}), 38, 6));
  CHECK(eq(decimal::addType({38, 0}, {38, 0}), 38, 0));
  CHECK(eq(decimal::sumType({10, 2}), 20, 2));
  CHECK(eq(decimal::sumType({35, 2}), 38, 2));
  CHECK(eq(decimal::avgType({10, 2}), 14, 6));
  CHECK(eq(decimal::widerType({10, 2}, {20, 0}), 22, 2));
}

TEST_CASE("decimal: text, parsing and rounding") {
  CHECK(decimal::toString(-1250, 2) == "-12.50");
  CHECK(decimal::toString(5, 3) == "0.005");
  CHECK(decimal::toString(7, 0) == "7");
  CHECK(decimal::toString(decimal::pow10(38) - 1, 0) == std::string(38, '9'));
  CHECK(decimal::parse(" 1.005 ", {5, 2}) == Int128(101));  // HALF_UP
  CHECK(decimal::parse("-1.005", {5, 2}) == Int128(-101));
  CHECK(decimal::parse("1e3", {6, 2}) == Int128(100000));
  CHECK(decimal::parse("123.4", {4, 2}) == std::nullopt);  // 123.40 needs 5 digits
  CHECK(decimal::parse("abc", {10, 0}) == std::nullopt);
  CHECK(decimal::parse("1.2.3", {10, 0}) == std::nullopt);
  CHECK(decimal::parse("0.0000001", {10, 2}) == Int128(0));
  auto lit = decimal::parseLiteral("0.050");
  REQUIRE(lit);
  CHECK(lit->first == 50);
  CHECK(lit->second.precision == 3);
  CHECK(lit->second.scale == 3);
  CHECK(decimal::parseLiteral("1e3") == std::nullopt);
  CHECK(decimal::parseLiteral(std::string(39, '9')) == std::nullopt);
  CHECK(decimal::round(125, 2, 1, decimal::Rounding::HalfUp) == 13);
  CHECK(decimal::round(125, 2, 1, decimal::Rounding::HalfEven) == 12);
  CHECK(decimal::round(-121, 2, 0, decimal::Rounding::Floor) == -2);
  CHECK(decimal::round(121, 2, 0, decimal::Rounding::Ceiling) == 2);
  CHECK(decimal::round(1250, 0, -2, decimal::Rounding::HalfUp) == 1300);
  // Rounding away every digit, to as far as INT_MIN places, is zero (or the
  // unit, which fits no DECIMAL, for ceil), never an overflow.
  CHECK(decimal::round(-25, 1, std::numeric_limits<int>::min(), decimal::Rounding::HalfUp) == 0);
  CHECK(decimal::round(25, 1, -40, decimal::Rounding::Ceiling) == decimal::pow10(38));
  CHECK(decimal::toDouble(15626572, 2) == 156265.72);
  CHECK(decimal::fromDouble(0.1, {10, 5}) == Int128(10000));
  CHECK(decimal::fromDouble(std::numeric_limits<double>::infinity(), {10, 5}) == std::nullopt);
  CHECK(decimal::toBigEndianBytes(-1) == "\xff");
  CHECK(decimal::toBigEndianBytes(128) == std::string("\x00\x80", 2));
}

TEST_CASE("decimal: operations round HALF_UP and give nullopt on overflow") {
  CHECK(decimal::add(150, 2, 25, 1, {5, 2}) == Int128(400));
  CHECK(decimal::add(decimal::pow10(4) - 1, 0, 1, 0, {4, 0}) == std::nullopt);
  CHECK(decimal::div(1, 0, 3, 0, {13, 6}) == Int128(333333));
  CHECK(decimal::div(2, 0, 3, 0, {13, 6}) == Int128(666667));
  CHECK(decimal::div(1, 0, 0, 0, {13, 6}) == std::nullopt);
  CHECK(decimal::mod(-75, 1, 20, 1, {2, 1}) == Int128(-15));
  // A product wider than 128 bits, rounded back into 38 digits.
  Int128 a = decimal::pow10(21) + 1;  // 1000.000000000000000001 at scale 18
  auto r = decimal::mul(a, 18, a, 18, {38, 6});
  REQUIRE(r);
  CHECK(decimal::toString(*r, 6) == "1000000.000000");
  // A dividend too wide to scale in 128 bits goes through the long division.
  auto q = decimal::div(decimal::pow10(37), 0, 30, 0, {38, 2});
  REQUIRE(q);
  CHECK(decimal::toString(*q, 2) == "333333333333333333333333333333333333.33");
  CHECK(decimal::compare(150, 2, 15, 1) == 0);
  CHECK(decimal::compare(-1, 0, decimal::pow10(37), 38) < 0);
}

TEST_CASE("decimal: a Value keeps its precision and scale without growing") {
  Value small = dec("12.50", 4, 2);
  Value wide = dec("12345678901234567890.5", 38, 1);
  CHECK(small.toString() == "12.50");
  CHECK(wide.toString() == "12345678901234567890.5");
  CHECK(wide.decimalPrecision() == 38);
  CHECK(small.compare(Value::float64(12.5)) == 0);
  CHECK(small.compare(Value::integer(12)) > 0);
  CHECK(small.compare(dec("12.5", 3, 1)) == 0);
  CHECK(small.hash() == dec("12.5", 3, 1).hash());
  CHECK(dec("3.00", 3, 2).hash() == Value::integer(3).hash());
}

TEST_CASE("decimal: expressions type and compute as Spark's") {
  // The legacy mode's NULLs (ANSI mode's errors: ansi_mode_test.cpp).
  AnsiModeScope legacy(false);
  // 0.1 + 0.2 is exact, unlike DOUBLE's 0.30000000000000004.
  auto sum = makeCall("+", {litDec("0.1", 1, 1), litDec("0.2", 1, 1)}, 0);
  CHECK(sum->type()->toString() == "DECIMAL(2,1)");
  CHECK(evalAll(sum, {}).toString() == "0.3");
  // An integer literal takes its own digits (DECIMAL(1, 0)), a column INT's ten.
  auto withInt = makeCall("*", {litDec("1.50", 3, 2), litI(3)}, 0);
  CHECK(withInt->type()->toString() == "DECIMAL(5,2)");
  CHECK(evalAll(withInt, {}).toString() == "4.50");
  auto withColumn = makeCall("*", {litDec("1.50", 3, 2), col(0, TypeId::Int)}, 0);
  CHECK(withColumn->type()->toString() == "DECIMAL(14,2)");
  CHECK(evalAll(withColumn, {Value::integer(-2)}).toString() == "-3.00");
  auto quotient = makeCall("/", {litDec("1", 1, 0), litDec("3", 1, 0)}, 0);
  CHECK(quotient->type()->toString() == "DECIMAL(7,6)");
  CHECK(evalAll(quotient, {}).toString() == "0.333333");
  auto withDouble = makeCall("+", {litDec("1.5", 2, 1), litD(1.0)}, 0);
  CHECK(withDouble->type()->id == TypeId::Double);
  CHECK(evalAll(makeCall("/", {litDec("1", 1, 0), litDec("0", 1, 0)}, 0), {}).isNull());
  auto overflow = makeCall("+", {litDec("99999999999999999999999999999999999999", 38, 0), litI(1)}, 0);
  CHECK(evalAll(overflow, {}).isNull());
  CHECK(evalAll(makeCall("<", {litDec("1.5", 2, 1), litI(2)}, 0), {}).asBool());
  CHECK(evalAll(makeCall("=", {litDec("1.50", 3, 2), litDec("1.5", 2, 1)}, 0), {}).asBool());
  CHECK(evalAll(makeCall("neg", {litDec("1.5", 2, 1)}, 0), {}).toString() == "-1.5");
}

TEST_CASE("decimal: CAST to and from every scalar type, NULL on overflow") {
  // The legacy mode's NULLs (ANSI mode's errors: ansi_mode_test.cpp).
  AnsiModeScope legacy(false);
  auto cast = [](ExprPtr e, DataTypePtr t) { return evalAll(makeCast(std::move(e), std::move(t), 0), {}); };
  auto d52 = DataType::decimal(5, 2);
  CHECK(cast(litS("123.456"), d52).toString() == "123.46");
  CHECK(cast(litS("1234.5"), d52).isNull());
  CHECK(cast(litS("x"), d52).isNull());
  CHECK(cast(litI(7), d52).toString() == "7.00");
  CHECK(cast(litD(0.125), d52).toString() == "0.13");
  CHECK(cast(litB(true), d52).toString() == "1.00");
  CHECK(cast(litDec("-12.5", 3, 1), T(TypeId::Int)).asInt() == -12);
  CHECK(cast(litDec("12.5", 3, 1), T(TypeId::Double)).asDouble() == 12.5);
  CHECK(cast(litDec("12.5", 3, 1), T(TypeId::String)).asString() == "12.5");
  CHECK(cast(litDec("0", 1, 0), T(TypeId::Boolean)).asBool() == false);
  CHECK(cast(litDec("1.5", 2, 1), T(TypeId::Timestamp)).asInt() == 1500000);
  CHECK(cast(litDec("123.45", 5, 2), DataType::decimal(4, 1)).toString() == "123.5");
  CHECK(cast(litDec("123.45", 5, 2), DataType::decimal(3, 1)).isNull());
  CHECK(call("typeof", {litDec("1.5", 2, 1)}).asString() == "decimal(2,1)");
}

TEST_CASE("decimal: round, bround, floor, ceil and abs keep a DECIMAL exact") {
  auto r = makeCall("round", {litDec("2.345", 4, 3), litI(2)}, 0);
  CHECK(r->type()->toString() == "DECIMAL(4,2)");
  CHECK(evalAll(r, {}).toString() == "2.35");
  CHECK(evalAll(makeCall("bround", {litDec("2.345", 4, 3), litI(2)}, 0), {}).toString() == "2.34");
  CHECK(evalAll(makeCall("round", {litDec("-2.5", 2, 1)}, 0), {}).toString() == "-3");
  CHECK(evalAll(makeCall("round", {litDec("1250", 4, 0), litI(-2)}, 0), {}).toString() == "1300");
  auto f = makeCall("floor", {litDec("-1.5", 2, 1)}, 0);
  CHECK(f->type()->toString() == "DECIMAL(2,0)");
  CHECK(evalAll(f, {}).toString() == "-2");
  CHECK(evalAll(makeCall("ceil", {litDec("1.2", 2, 1)}, 0), {}).toString() == "2");
  CHECK(makeCall("floor", {litDec("7", 5, 0)}, 0)->type()->toString() == "DECIMAL(5,0)");
  auto a = makeCall("abs", {litDec("-1.50", 3, 2)}, 0);
  CHECK(a->type()->toString() == "DECIMAL(3,2)");
  CHECK(evalAll(a, {}).toString() == "1.50");
  // Functions without a DECIMAL form compute in DOUBLE rather than fail.
  CHECK(evalAll(makeCall("sqrt", {litDec("2.25", 3, 2)}, 0), {}).asDouble() == 1.5);
  // Spark's round raises where Java's BigDecimal.setScale does: the digits
  // to drop do not fit an int.
  auto far = makeCall("round", {litDec("-2.5", 2, 1), litI(std::numeric_limits<int>::min())}, 0);
  CHECK(sqlErrorOf([&] { far->eval({}); }).sqlstate() == "22003");
  auto none = makeLiteral(Value(), DataType::decimal(2, 1));
  CHECK(evalAll(makeCall("round", {none, litI(std::numeric_limits<int>::min())}, 0), {}).isNull());
  CHECK(evalAll(makeCall("round", {litDec("-2.5", 2, 1), litI(-100)}, 0), {}).toString() == "0");
}

TEST_CASE("decimal: sign, pmod, try_ arithmetic, nullifzero and zeroifnull keep a DECIMAL") {
  auto typeAndText = [](const ExprPtr& e) {
    return e->type()->toString() + " " + evalAll(e, {}).toString();
  };
  CHECK(typeAndText(makeCall("negative", {litDec("1.5", 2, 1)}, 0)) == "DECIMAL(2,1) -1.5");
  CHECK(typeAndText(makeCall("positive", {litDec("-2.5", 2, 1)}, 0)) == "DECIMAL(2,1) -2.5");
  // pmod: the type of %, the remainder made positive.
  CHECK(typeAndText(makeCall("pmod", {litDec("-7.5", 2, 1), litI(2)}, 0)) == "DECIMAL(2,1) 0.5");
  CHECK(typeAndText(makeCall("pmod", {litDec("7.5", 2, 1), litI(-2)}, 0)) == "DECIMAL(2,1) 1.5");
  CHECK(typeAndText(makeCall("pmod", {litDec("-7.25", 3, 2), litDec("-2.5", 2, 1)}, 0)) ==
        "DECIMAL(3,2) -2.25");
  CHECK(sqlErrorOf([&] { makeCall("pmod", {litDec("1.5", 2, 1), litI(0)}, 0)->eval({}); })
            .sqlstate() == "22012");
  // The try_ functions: the operator's DECIMAL, NULL instead of an error.
  CHECK(typeAndText(makeCall("try_add", {litDec("0.125", 3, 3), litI(-13)}, 0)) ==
        "DECIMAL(6,3) -12.875");
  CHECK(typeAndText(makeCall("try_multiply", {litI(255), litDec("-2.5", 2, 1)}, 0)) ==
        "DECIMAL(6,1) -637.5");
  CHECK(typeAndText(makeCall("try_subtract", {litDec("1.5", 2, 1), litDec("0.25", 2, 2)}, 0)) ==
        "DECIMAL(4,2) 1.25");
  CHECK(typeAndText(makeCall("try_divide", {litDec("1.5", 2, 1), litI(3)}, 0)) ==
        "DECIMAL(7,6) 0.500000");
  CHECK(evalAll(makeCall("try_divide", {litDec("1.5", 2, 1), litI(0)}, 0), {}).isNull());
  auto big = litDec(std::string(38, '9'), 38, 0);
  CHECK(evalAll(makeCall("try_multiply", {big, litI(10)}, 0), {}).isNull());
  // A DOUBLE beside a DECIMAL is still DOUBLE arithmetic.
  CHECK(makeCall("try_add", {litDec("1.5", 2, 1), litD(1)}, 0)->type()->id == TypeId::Double);
  // nullif keeps its first argument's type; coalesce widens with the INT 0.
  CHECK(typeAndText(makeCall("nullifzero", {litDec("1.5", 2, 1)}, 0)) == "DECIMAL(2,1) 1.5");
  CHECK(evalAll(makeCall("nullifzero", {litDec("0.0", 1, 1)}, 0), {}).isNull());
  CHECK(typeAndText(makeCall("zeroifnull", {litDec("-2.5", 2, 1)}, 0)) == "DECIMAL(11,1) -2.5");
  CHECK(typeAndText(makeCall("zeroifnull", {makeLiteral(Value(), DataType::decimal(2, 1))}, 0)) ==
        "DECIMAL(11,1) 0.0");
}

TEST_CASE("decimal: types widen with integers and each other as Spark's") {
  CHECK(widerNumericType(*DataType::decimal(5, 2), *T(TypeId::Int))->toString() == "DECIMAL(12,2)");
  CHECK(widerNumericType(*DataType::decimal(5, 2), *T(TypeId::BigInt))->toString() == "DECIMAL(22,2)");
  CHECK(widerNumericType(*DataType::decimal(5, 2), *T(TypeId::Double))->id == TypeId::Double);
  auto c = makeCall("coalesce", {nulOf(TypeId::Int), litDec("1.25", 3, 2)}, 0);
  CHECK(evalAll(c, {}).toString() == "1.25");
}

