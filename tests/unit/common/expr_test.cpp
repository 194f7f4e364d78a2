#include <doctest/doctest.h>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "common/ansi_mode.h"
#include "common/json.h"
#include "expr_test_util.h"

using namespace rtsql;
using namespace rtsql::test;

TEST_CASE("expr: column refs and literals") {
  Row row{Value::bigint(5), Value::string("x")};
  auto c = col(1, TypeId::String, "url");
  CHECK(c->eval(row) == Value::string("x"));
  CHECK(c->toString() == "url");
  CHECK(col(0, TypeId::BigInt)->toString() == "#0");
  CHECK_FALSE(c->isConstant());
  auto l = litS("it's");
  CHECK(l->isConstant());
  CHECK(l->toString() == "'it''s'");
  // A literal is stored in its declared type.
  auto widened = makeLiteral(Value::integer(3), T(TypeId::BigInt));
  CHECK(widened->eval({}).type() == TypeId::BigInt);
}

TEST_CASE("expr: arithmetic types and values") {
  // The legacy mode's NULLs and wrapping (ANSI mode's errors: ansi_mode_test.cpp).
  AnsiModeScope legacy(false);
  auto e = makeCall("+", {litI(2), litI(3)}, 0);
  CHECK(e->type()->id == TypeId::Int);
  CHECK(e->eval({}) == Value::integer(5));
  CHECK(makeCall("+", {litI(2), litL(3)}, 0)->type()->id == TypeId::BigInt);
  CHECK(makeCall("*", {litI(2), litD(1.5)}, 0)->eval({}) == Value::float64(3.0));
  // Division is always DOUBLE, as in Spark.
  auto d = makeCall("/", {litI(7), litI(2)}, 0);
  CHECK(d->type()->id == TypeId::Double);
  CHECK(d->eval({}) == Value::float64(3.5));
  CHECK(call("/", {litI(1), litI(0)}).isNull());
  CHECK(call("/", {litD(1), litD(0)}).isNull());
  CHECK(call("%", {litI(7), litI(3)}) == Value::integer(1));
  CHECK(call("%", {litI(-7), litI(3)}) == Value::integer(-1));
  CHECK(call("%", {litI(7), litI(0)}).isNull());
  CHECK(call("%", {litD(7.5), litI(2)}) == Value::float64(1.5));
  CHECK(call("-", {litL(10), litI(3)}) == Value::bigint(7));
  CHECK(call("neg", {litI(4)}) == Value::integer(-4));
  CHECK(call("neg", {litD(1.5)}) == Value::float64(-1.5));
  // INT overflow wraps as in Spark's non-ANSI mode.
  CHECK(call("+", {litI(2147483647), litI(1)}) == Value::integer(-2147483647 - 1));
  // NULL in, NULL out; a bare NULL adapts to the other side.
  auto n = makeCall("+", {litI(1), nul()}, 0);
  CHECK(n->type()->id == TypeId::Int);
  CHECK(n->eval({}).isNull());
  Row row{Value(), Value::bigint(4)};
  CHECK(makeCall("*", {col(0, TypeId::BigInt), col(1, TypeId::BigInt)}, 0)->eval(row).isNull());
  CHECK(makeCall("+", {litI(1), litI(2)}, 0)->toString() == "(1 + 2)");
}

TEST_CASE("expr: timestamp and interval arithmetic") {
  int64_t t0;
  REQUIRE(parseTimestamp("2024-05-01 10:00:00", &t0));
  auto ts = lit(Value::timestamp(t0));
  auto iv = lit(Value::interval(parseInterval("10", "SECOND", 0)));
  auto plus = makeCall("+", {ts, iv}, 0);
  CHECK(plus->type()->id == TypeId::Timestamp);
  CHECK(formatTimestamp(plus->eval({}).asInt()) == "2024-05-01 10:00:10");
  CHECK(formatTimestamp(call("-", {ts, iv}).asInt()) == "2024-05-01 09:59:50");
  CHECK(formatTimestamp(call("+", {iv, ts}).asInt()) == "2024-05-01 10:00:10");
  auto diff = makeCall("-", {plus, ts}, 0);
  CHECK(diff->type()->id == TypeId::Interval);
  CHECK(diff->eval({}) == Value::interval(10000000));
  CHECK(call("*", {iv, litI(3)}) == Value::interval(30000000));
  CHECK(call("+", {ts, nulOf(TypeId::Interval)}).isNull());
}

TEST_CASE("expr: type errors carry SQLSTATE, position and hint") {
  auto e = sqlErrorOf([] { makeCall("=", {litS("a"), litI(1)}, 17); });
  CHECK(e.sqlstate() == "42804");
  CHECK(e.position() == 17);
  CHECK(e.message() == "cannot compare STRING with INT");
  CHECK(e.hint().find("CAST") != std::string::npos);
  auto a = sqlErrorOf([] { makeCall("+", {litS("a"), litI(1)}, 4); });
  CHECK(a.sqlstate() == "42804");
  CHECK(a.position() == 4);
  CHECK(a.message() == "operator does not exist: STRING + INT");
  auto b = sqlErrorOf([] { makeAnd(litI(1), litB(true), 9); });
  CHECK(b.sqlstate() == "42804");
  CHECK(b.position() == 9);
  auto c = sqlErrorOf([] { makeCast(makeLiteral(Value::array({Value::integer(1)}), DataType::arrayOf(T(TypeId::Int))), T(TypeId::Int), 2); });
  CHECK(c.sqlstate() == "42804");
  CHECK(c.message() == "cannot cast type ARRAY<INT> to INT");
}

TEST_CASE("expr: comparisons") {
  CHECK(call("=", {litI(1), litL(1)}) == Value::boolean(true));
  CHECK(call("<", {litI(1), litD(1.5)}) == Value::boolean(true));
  CHECK(call(">=", {litS("b"), litS("a")}) == Value::boolean(true));
  CHECK(call("<>", {litS("a"), litS("a")}) == Value::boolean(false));
  CHECK(call("!=", {litD(2), litI(3)}) == Value::boolean(true));
  CHECK(call("=", {litI(1), nul()}).isNull());
  CHECK(call("<=>", {nul(), nul()}) == Value::boolean(true));
  CHECK(call("<=>", {litI(1), nul()}) == Value::boolean(false));
  // A string meets a timestamp as a timestamp.
  int64_t t0;
  REQUIRE(parseTimestamp("2024-05-01 10:00:00", &t0));
  CHECK(call(">", {lit(Value::timestamp(t0)), litS("2024-05-01")}) == Value::boolean(true));
  CHECK(call("=", {lit(Value::boolean(true)), litB(true)}) == Value::boolean(true));
}

TEST_CASE("expr: three-valued logic") {
  auto T_ = litB(true), F_ = litB(false), N_ = nul();
  auto And = [](ExprPtr a, ExprPtr b) { return makeAnd(a, b, 0)->eval({}); };
  auto Or = [](ExprPtr a, ExprPtr b) { return makeOr(a, b, 0)->eval({}); };
  CHECK(And(T_, T_) == Value::boolean(true));
  CHECK(And(T_, F_) == Value::boolean(false));
  CHECK(And(N_, F_) == Value::boolean(false));
  CHECK(And(F_, N_) == Value::boolean(false));
  CHECK(And(N_, T_).isNull());
  CHECK(And(T_, N_).isNull());
  CHECK(Or(N_, T_) == Value::boolean(true));
  CHECK(Or(T_, N_) == Value::boolean(true));
  CHECK(Or(N_, F_).isNull());
  CHECK(Or(F_, F_) == Value::boolean(false));
  CHECK(makeNot(T_, 0)->eval({}) == Value::boolean(false));
  CHECK(makeNot(N_, 0)->eval({}).isNull());
  CHECK(makeIsNull(N_, false)->eval({}) == Value::boolean(true));
  CHECK(makeIsNull(litI(1), false)->eval({}) == Value::boolean(false));
  CHECK(makeIsNull(litI(1), true)->eval({}) == Value::boolean(true));
}

TEST_CASE("expr: IN with NULL semantics") {
  auto in = [](ExprPtr e, std::vector<ExprPtr> l, bool neg = false) { return makeIn(e, l, neg, 0)->eval({}); };
  CHECK(in(litI(2), {litI(1), litL(2)}) == Value::boolean(true));
  CHECK(in(litI(3), {litI(1), litI(2)}) == Value::boolean(false));
  CHECK(in(litI(3), {litI(1), nul()}).isNull());
  CHECK(in(litI(1), {litI(1), nul()}) == Value::boolean(true));
  CHECK(in(nul(), {litI(1)}).isNull());
  CHECK(in(litI(3), {litI(1), litI(2)}, true) == Value::boolean(true));
  CHECK(in(litI(3), {litI(1), nul()}, true).isNull());
  CHECK(in(litS("b"), {litS("a"), litS("b")}) == Value::boolean(true));
  // Non-constant list members are evaluated per row.
  Row row{Value::integer(5), Value::integer(5)};
  CHECK(makeIn(col(0, TypeId::Int), {litI(1), col(1, TypeId::Int)}, false, 0)->eval(row) == Value::boolean(true));
  auto e = sqlErrorOf([] { makeIn(litS("a"), {litI(1)}, false, 3); });
  CHECK(e.sqlstate() == "42804");
  CHECK(e.position() == 3);
}

TEST_CASE("expr: BETWEEN") {
  auto b = [](ExprPtr e, ExprPtr lo, ExprPtr hi, bool neg = false) { return makeBetween(e, lo, hi, neg, 0)->eval({}); };
  CHECK(b(litI(5), litI(1), litI(10)) == Value::boolean(true));
  CHECK(b(litI(1), litI(1), litD(1.0)) == Value::boolean(true));
  CHECK(b(litI(0), litI(1), litI(10)) == Value::boolean(false));
  CHECK(b(litI(0), litI(1), litI(10), true) == Value::boolean(true));
  CHECK(b(nul(), litI(1), litI(10)).isNull());
  CHECK(b(litI(5), nul(), litI(10)).isNull());
  CHECK(b(litI(50), nul(), litI(10)) == Value::boolean(false));
}

TEST_CASE("expr: LIKE") {
  auto like = [](const std::string& s, const std::string& p) { return makeLike(litS(s), litS(p), false, 0)->eval({}); };
  CHECK(like("hello", "hello") == Value::boolean(true));
  CHECK(like("hello", "h%") == Value::boolean(true));
  CHECK(like("hello", "%llo") == Value::boolean(true));
  CHECK(like("hello", "%ll%") == Value::boolean(true));
  CHECK(like("hello", "h_llo") == Value::boolean(true));
  CHECK(like("hello", "h_lo") == Value::boolean(false));
  CHECK(like("hello", "%x%") == Value::boolean(false));
  CHECK(like("hello", "%") == Value::boolean(true));
  CHECK(like("", "%") == Value::boolean(true));
  CHECK(like("", "_") == Value::boolean(false));
  CHECK(like("abcabc", "%b_c") == Value::boolean(false));
  CHECK(like("abcabx", "a%b_") == Value::boolean(true));
  CHECK(like("aaa", "a%a%a") == Value::boolean(true));
  CHECK(like("aa", "a%a%a") == Value::boolean(false));
  CHECK(like("ab", "%abc") == Value::boolean(false));
  CHECK(like("abc", "ab%bc") == Value::boolean(false));  // segments may not overlap
  CHECK(like("abbc", "ab%bc") == Value::boolean(true));
  CHECK(like("xcheckoutx", "%check%out%") == Value::boolean(true));
  CHECK(like("xoutcheckx", "%check%out%") == Value::boolean(false));
  CHECK(like("caf\xc3\xa9", "caf_") == Value::boolean(true));  // _ is one character
  CHECK(like("100%", "100\\%") == Value::boolean(true));
  CHECK(like("1000", "100\\%") == Value::boolean(false));
  CHECK(like("a_b", "a\\_b") == Value::boolean(true));
  CHECK(like("axb", "a\\_b") == Value::boolean(false));
  CHECK(makeLike(litS("x"), litS("x"), true, 0)->eval({}) == Value::boolean(false));
  CHECK(makeLike(nul(), litS("x"), false, 0)->eval({}).isNull());
  CHECK(makeLike(litS("x"), nul(), false, 0)->eval({}).isNull());
  // A pattern computed per row.
  Row row{Value::string("abc"), Value::string("a%")};
  CHECK(makeLike(col(0, TypeId::String), col(1, TypeId::String), false, 0)->eval(row) == Value::boolean(true));
}

TEST_CASE("expr: CASE") {
  auto searched = makeCase(nullptr, {{makeCall(">", {litI(1), litI(2)}, 0), litS("a")}, {litB(true), litS("b")}},
                           litS("c"), 0);
  CHECK(searched->eval({}) == Value::string("b"));
  auto simple = makeCase(litI(2), {{litI(1), litI(10)}, {litL(2), litD(2.5)}}, nullptr, 0);
  CHECK(simple->type()->id == TypeId::Double);
  CHECK(simple->eval({}) == Value::float64(2.5));
  CHECK(makeCase(litI(3), {{litI(1), litI(10)}}, nullptr, 0)->eval({}).isNull());
  CHECK(makeCase(nul(), {{nul(), litI(10)}}, litI(0), 0)->eval({}) == Value::integer(0));
  CHECK(makeCase(nullptr, {{nul(), litI(1)}}, litI(2), 0)->eval({}) == Value::integer(2));
  auto e = sqlErrorOf([] { makeCase(nullptr, {{litB(true), litS("a")}}, litI(1), 12); });
  CHECK(e.sqlstate() == "42804");
  CHECK(e.position() == 12);
}

TEST_CASE("expr: CAST") {
  auto cast = [](Value v, TypeId t) { return castValue(v, *DataType::of(t)); };
  CHECK(cast(Value::string(" 42 "), TypeId::Int) == Value::integer(42));
  CHECK(cast(Value::string("1.9"), TypeId::BigInt) == Value::bigint(1));
  CHECK(cast(Value::string("abc"), TypeId::Int).isNull());
  CHECK(cast(Value::string("99999999999"), TypeId::Int).isNull());
  CHECK(cast(Value::string("99999999999"), TypeId::BigInt) == Value::bigint(99999999999LL));
  CHECK(cast(Value::string("2.5e3"), TypeId::Double) == Value::float64(2500));
  CHECK(cast(Value::string("NaN"), TypeId::Double).asDouble() != cast(Value::string("NaN"), TypeId::Double).asDouble());
  CHECK(cast(Value::string("-Infinity"), TypeId::Double) == Value::float64(-HUGE_VAL));
  CHECK(cast(Value::string("x1"), TypeId::Double).isNull());
  CHECK(cast(Value::float64(3.99), TypeId::Int) == Value::integer(3));
  CHECK(cast(Value::float64(-3.99), TypeId::BigInt) == Value::bigint(-3));
  CHECK(cast(Value::float64(1e30), TypeId::Int) == Value::integer(2147483647));
  CHECK(cast(Value::bigint(4294967297LL), TypeId::Int) == Value::integer(1));
  CHECK(cast(Value::integer(7), TypeId::String) == Value::string("7"));
  CHECK(cast(Value::float64(1), TypeId::String) == Value::string("1.0"));
  CHECK(cast(Value::boolean(true), TypeId::String) == Value::string("true"));
  CHECK(cast(Value::string("TRUE"), TypeId::Boolean) == Value::boolean(true));
  CHECK(cast(Value::string("no"), TypeId::Boolean) == Value::boolean(false));
  CHECK(cast(Value::string("maybe"), TypeId::Boolean).isNull());
  CHECK(cast(Value::integer(0), TypeId::Boolean) == Value::boolean(false));
  CHECK(cast(Value::boolean(true), TypeId::Int) == Value::integer(1));
  int64_t t0;
  REQUIRE(parseTimestamp("2024-05-01 10:00:00.5", &t0));
  CHECK(cast(Value::string("2024-05-01 10:00:00.5"), TypeId::Timestamp) == Value::timestamp(t0));
  CHECK(cast(Value::string("not a time"), TypeId::Timestamp).isNull());
  CHECK(cast(Value::timestamp(t0), TypeId::BigInt) == Value::bigint(1714557600));
  CHECK(cast(Value::timestamp(-1), TypeId::BigInt) == Value::bigint(-1));  // floor, as Spark
  CHECK(cast(Value::bigint(1714557600), TypeId::Timestamp) == Value::timestamp(1714557600000000LL));
  CHECK(cast(Value::float64(1.5), TypeId::Timestamp) == Value::timestamp(1500000));
  CHECK(cast(Value::timestamp(t0), TypeId::String) == Value::string("2024-05-01 10:00:00.5"));
  CHECK(cast(Value::timestamp(1500000), TypeId::Double) == Value::float64(1.5));
  CHECK(cast(Value::string("hi"), TypeId::Binary) == Value::binary("hi"));
  CHECK(cast(Value::binary("hi"), TypeId::String) == Value::string("hi"));
  CHECK(cast(Value::integer(1), TypeId::Binary) == Value::binary(std::string("\0\0\0\1", 4)));
  CHECK(cast(Value::string("1 minute"), TypeId::Interval) == Value::interval(60000000));
  CHECK(cast(Value(), TypeId::Int).isNull());
  // Arrays and structs cast element-wise.
  auto arr = castValue(Value::array({Value::string("1"), Value::string("x")}), *DataType::arrayOf(T(TypeId::Int)));
  CHECK(arr.toString() == "[1, null]");
  CHECK(cast(Value::array({Value::integer(1)}), TypeId::String) == Value::string("[1]"));
  // The CAST node.
  auto c = makeCast(litS("12"), T(TypeId::BigInt), 0);
  CHECK(c->type()->id == TypeId::BigInt);
  CHECK(c->eval({}) == Value::bigint(12));
  // A cast of a constant is done once, when the expression is built.
  CHECK(c->isConstant());
  CHECK(c->toString() == "12");
  auto onColumn = makeCast(makeColumnRef(0, T(TypeId::String), "s"), T(TypeId::BigInt), 0);
  CHECK(onColumn->toString().find("CAST(") == 0);
  CHECK(onColumn->eval({Value::string("7")}) == Value::bigint(7));
  CHECK(makeCast(nul(), T(TypeId::String), 0)->eval({}).isNull());
}

TEST_CASE("expr: struct field access and array subscript") {
  // An index out of range is NULL in the legacy mode (ansi_mode_test.cpp).
  AnsiModeScope legacy(false);
  auto st = DataType::structOf({{"start", T(TypeId::Timestamp)}, {"end", T(TypeId::Timestamp)}});
  Row row{Value::structure({Value::timestamp(1), Value::timestamp(2)}),
          Value::array({Value::integer(10), Value::integer(20)}), Value()};
  auto s = makeColumnRef(0, st, "window");
  auto end = makeFieldAccess(s, "END", 0);
  CHECK(end->type()->id == TypeId::Timestamp);
  CHECK(end->eval(row) == Value::timestamp(2));
  CHECK(end->toString() == "window.end");
  auto missing = sqlErrorOf([&] { makeFieldAccess(s, "middle", 8); });
  CHECK(missing.sqlstate() == "42703");
  CHECK(missing.position() == 8);
  CHECK(missing.hint() == "available fields: start, end");
  CHECK(sqlErrorOf([] { makeFieldAccess(litI(1), "x", 0); }).sqlstate() == "42804");
  auto arr = makeColumnRef(1, DataType::arrayOf(T(TypeId::Int)), "xs");
  CHECK(makeSubscript(arr, litI(0), 0)->eval(row) == Value::integer(10));
  CHECK(makeSubscript(arr, litI(1), 0)->eval(row) == Value::integer(20));
  CHECK(makeSubscript(arr, litI(2), 0)->eval(row).isNull());
  CHECK(makeSubscript(arr, litI(-1), 0)->eval(row).isNull());
  CHECK(makeSubscript(arr, nul(), 0)->eval(row).isNull());
  auto nullArr = makeColumnRef(2, DataType::arrayOf(T(TypeId::Int)), "n");
  CHECK(makeSubscript(nullArr, litI(0), 0)->eval(row).isNull());
  CHECK(sqlErrorOf([&] { makeSubscript(arr, litS("a"), 0); }).sqlstate() == "42804");
}

TEST_CASE("expr: intervals") {
  CHECK(parseInterval("10", "SECOND", 0) == 10000000);
  CHECK(parseInterval("10", "seconds", 0) == 10000000);
  CHECK(parseInterval("10 seconds", "", 0) == 10000000);
  CHECK(parseInterval("1 second", "", 0) == 1000000);
  CHECK(parseInterval("1 minute 30 seconds", "", 0) == 90000000);
  CHECK(parseInterval("500 milliseconds", "", 0) == 500000);
  CHECK(parseInterval("500ms", "", 0) == 500000);
  CHECK(parseInterval("2 h", "", 0) == 7200000000LL);
  CHECK(parseInterval("5 m", "", 0) == 300000000LL);
  CHECK(parseInterval("1d", "", 0) == 86400000000LL);
  CHECK(parseInterval("3 s", "", 0) == 3000000);
  CHECK(parseInterval("5 minutes", "", 0) == 300000000LL);
  CHECK(parseInterval("1.5", "MINUTE", 0) == 90000000);
  CHECK(parseInterval("-10", "SECOND", 0) == -10000000);
  CHECK(parseInterval("1 hour", "", 0) == 3600000000LL);
  for (const char* bad : {"", "abc", "10 fortnights", "10 20 seconds", "seconds"}) {
    auto e = sqlErrorOf([&] { parseInterval(bad, "", 21); });
    CHECK(e.sqlstate() == "22P02");
    CHECK(e.position() == 21);
  }
  CHECK(sqlErrorOf([] { parseInterval("x", "SECOND", 0); }).sqlstate() == "22P02");
}

TEST_CASE("expr: unknown functions and aggregates") {
  auto e = sqlErrorOf([] { makeCall("foo", {litS("a")}, 5); });
  CHECK(e.sqlstate() == "42883");
  CHECK(e.message() == "function foo(STRING) does not exist");
  CHECK(e.position() == 5);
  auto close = sqlErrorOf([] { makeCall("uper", {litS("a")}, 0); });
  CHECK(close.hint().find("upper") != std::string::npos);
  auto agg = sqlErrorOf([] { makeCall("SUM", {litI(1)}, 2); });
  CHECK(agg.sqlstate() == "0A000");
  CHECK(agg.message() == "aggregate functions are not supported in this context");
  CHECK(isAggregateFunction("count"));
  CHECK(isAggregateFunction("AVG"));
  CHECK_FALSE(isAggregateFunction("abs"));
  auto arity = sqlErrorOf([] { makeCall("substr", {litS("a")}, 6); });
  CHECK(arity.sqlstate() == "42804");
  CHECK(arity.position() == 6);
  CHECK(arity.message() == "function substr takes 2 to 3 arguments, got 1");
  auto type = sqlErrorOf([] { makeCall("sqrt", {litS("4")}, 7); });
  CHECK(type.sqlstate() == "42804");
  CHECK(type.position() == 7);
  CHECK(type.hint() == "use CAST(... AS DOUBLE) to convert it");
}

TEST_CASE("expr: constness") {
  CHECK(makeCall("upper", {litS("a")}, 0)->isConstant());
  CHECK_FALSE(makeCall("upper", {col(0, TypeId::String)}, 0)->isConstant());
  CHECK_FALSE(makeCall("rand", {}, 0)->isConstant());
  CHECK_FALSE(makeCall("now", {}, 0)->isConstant());
  CHECK_FALSE(makeCall("current_timestamp", {}, 0)->isConstant());
  CHECK(makeCall("+", {litI(1), litI(2)}, 0)->isConstant());
  CHECK(makeCall("upper", {col(0, TypeId::String, "url")}, 0)->toString() == "upper(url)");
}

TEST_CASE("expr: evalRef and evalInto give eval's value for every node kind") {
  auto inner = DataType::structOf({{"name", T(TypeId::String)}, {"n", T(TypeId::Int)}});
  auto outer =
      DataType::structOf({{"inner", inner}, {"tags", DataType::arrayOf(T(TypeId::String))}});
  Row row{Value::string("https://example.com/a/rather/long/path"),
          Value(),
          Value::bigint(7),
          Value::float64(2.5),
          Value::boolean(true),
          Value::structure(
              {Value::structure({Value::string("inner-name-longer-than-sso"), Value::integer(3)}),
               Value::array({Value::string("x"), Value(), Value::string("zzz")})}),
          Value::array({Value::structure({Value::string("first"), Value::integer(1)}), Value()})};
  auto s = col(0, TypeId::String, "s");
  auto sNull = col(1, TypeId::String, "n");
  auto i = col(2, TypeId::BigInt, "i");
  auto d = col(3, TypeId::Double, "d");
  auto b = col(4, TypeId::Boolean, "b");
  auto o = makeColumnRef(5, outer, "o");
  auto arr = makeColumnRef(6, DataType::arrayOf(inner), "arr");
  auto oNull = makeColumnRef(1, outer, "onull");
  std::vector<ExprPtr> exprs{
      s, sNull, i, d, b, o, arr, col(99, TypeId::String, "past_the_end"), litS("literal"), nul(),
      makeCall("+", {i, litI(1)}, 0), makeCall("*", {d, litI(2)}, 0),
      makeCall("-", {i, nulOf(TypeId::BigInt)}, 0), makeCall("neg", {i}, 0),
      makeCall("=", {s, litS("x")}, 0), makeCall("<", {s, sNull}, 0),
      makeCall(">", {d, litI(1)}, 0), makeAnd(b, makeCall(">", {i, litI(100)}, 0), 0),
      makeOr(b, makeIsNull(sNull, false), 0), makeNot(b, 0), makeIsNull(s, true),
      makeIsNull(sNull, false), makeIn(s, {litS("a"), s}, false, 0),
      makeIn(i, {litI(1), nul()}, true, 0), makeBetween(i, litI(1), litI(10), false, 0),
      makeBetween(i, nul(), litI(10), true, 0), makeLike(s, litS("https://%"), false, 0),
      makeLike(sNull, litS("%"), false, 0),
      makeCase(nullptr, {{makeCall(">", {i, litI(5)}, 0), s}}, litS("else"), 0),
      makeCase(i, {{litI(7), makeFieldAccess(makeFieldAccess(o, "inner", 0), "name", 0)}}, nullptr,
               0),
      makeCase(i, {{litI(8), s}}, nullptr, 0), makeCast(i, T(TypeId::String), 0),
      makeFieldAccess(o, "inner", 0), makeFieldAccess(makeFieldAccess(o, "inner", 0), "name", 0),
      makeFieldAccess(oNull, "tags", 0), makeFieldAccess(makeSubscript(arr, litI(0), 0), "name", 0),
      makeFieldAccess(makeSubscript(arr, litI(1), 0), "name", 0),
      makeSubscript(makeFieldAccess(o, "tags", 0), litI(2), 0),
      makeSubscript(makeFieldAccess(o, "tags", 0), litI(1), 0),
      makeSubscript(makeFieldAccess(o, "tags", 0), nul(), 0),
      // Fields of computed (not row-held) structs and arrays.
      makeFieldAccess(makeCall("named_struct", {litS("k"), makeCall("upper", {s}, 0)}, 0), "k", 0),
      makeSubscript(makeCall("array", {makeCall("upper", {s}, 0), s}, 0), litI(0), 0),
      makeCall("upper", {s}, 0), makeCall("upper", {sNull}, 0),
      makeCall("concat", {s, litS("!")}, 0), makeCall("substring", {s, litI(2), litI(3)}, 0),
      makeCall("coalesce", {sNull, s}, 0)};
  for (const auto& e : exprs) evalAll(e, row);

  // Reads that need no copy point into the row or the expression.
  Value scratch;
  CHECK(&s->evalRef(row, scratch) == &row[0]);
  const Value& name =
      makeFieldAccess(makeFieldAccess(o, "inner", 0), "name", 0)->evalRef(row, scratch);
  CHECK(&name == &row[5].asList()[0].asList()[0]);
  auto literal = litS("constant");
  CHECK(&literal->evalRef(row, scratch) == &literal->evalRef({}, scratch));
  CHECK(scratch.isNull());
}

TEST_CASE("functionNames: every callable name once, sorted, no operators") {
  std::vector<std::string> names = functionNames();
  CHECK(std::is_sorted(names.begin(), names.end()));
  CHECK(std::adjacent_find(names.begin(), names.end()) == names.end());
  for (const char* expected : {"upper", "lpad", "datediff", "regexp_replace", "count", "avg"}) {
    CHECK(std::find(names.begin(), names.end(), expected) != names.end());
  }
  for (const std::string& n : names) {
    CHECK(std::isalpha(static_cast<unsigned char>(n[0])));
    // Each scalar name is one makeCall() resolves (the aggregates are refused
    // outside GROUP BY with 0A000, not 42883).
    if (isAggregateFunction(n)) continue;
    std::string state;
    try {
      makeCall(n, {}, 0);
    } catch (const SqlError& e) {
      state = e.sqlstate();
    }
    CHECK_MESSAGE(state != "42883", n);
  }
}

TEST_CASE("columnRefIndex: plain column references only") {
  ExprPtr c = makeColumnRef(3, DataType::of(TypeId::BigInt), "x");
  CHECK(columnRefIndex(*c) == 3);
  CHECK(columnRefIndex(*makeLiteral(Value::bigint(1), DataType::of(TypeId::BigInt))) == -1);
  CHECK(columnRefIndex(*makeCall("abs", {c}, 0)) == -1);
}

TEST_CASE("expr: every kind of node reports its children, in the order it reads them") {
  auto children = [](const ExprPtr& e) {
    std::vector<const Expr*> out;
    e->forEachChild([&](const Expr& c) { out.push_back(&c); });
    return out;
  };
  auto a = col(0, TypeId::Int, "a");
  auto b = col(1, TypeId::Int, "b");
  auto c = col(2, TypeId::Int, "c");
  auto s = col(3, TypeId::String, "s");
  auto p = col(4, TypeId::Boolean, "p");
  auto q = col(5, TypeId::Boolean, "q");
  CHECK(children(a).empty());
  CHECK(children(litI(1)).empty());
  using V = std::vector<const Expr*>;
  CHECK(children(makeCall("+", {a, b}, 0)) == V{a.get(), b.get()});
  CHECK(children(makeCall("neg", {a}, 0)) == V{a.get()});
  CHECK(children(makeCall("<", {a, b}, 0)) == V{a.get(), b.get()});
  CHECK(children(makeAnd(p, q, 0)) == V{p.get(), q.get()});
  CHECK(children(makeOr(p, q, 0)) == V{p.get(), q.get()});
  CHECK(children(makeNot(p, 0)) == V{p.get()});
  CHECK(children(makeIsNull(a, false)) == V{a.get()});
  CHECK(children(makeIn(a, {b, c}, false, 0)) == V{a.get(), b.get(), c.get()});
  CHECK(children(makeBetween(a, b, c, false, 0)) == V{a.get(), b.get(), c.get()});
  CHECK(children(makeLike(s, litS("x%"), false, 0)).size() == 2);
  CHECK(children(makeLike(s, litS("x%"), false, 0)).front() == s.get());
  CHECK(children(makeCase(a, {{b, c}}, a, 0)) == V{a.get(), b.get(), c.get(), a.get()});
  CHECK(children(makeCast(a, T(TypeId::BigInt), 0)) == V{a.get()});
  CHECK(children(makeCall("upper", {s}, 0)) == V{s.get()});
  CHECK(children(makeCall("coalesce", {a, b, c}, 0)) == V{a.get(), b.get(), c.get()});
  auto arr = makeCall("array", {a, b}, 0);
  CHECK(children(makeSubscript(arr, litI(0), 0)).front() == arr.get());
  auto st = makeCall("named_struct", {litS("x"), a}, 0);
  CHECK(children(makeFieldAccess(st, "x", 0)) == V{st.get()});
}
