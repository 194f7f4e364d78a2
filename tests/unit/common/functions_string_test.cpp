// String functions added for Spark compatibility: UTF-8 handling, the size
// limit on growing results and the interrupt check on long loops.
#include <doctest/doctest.h>

#include <atomic>

#include "common/interrupt.h"
#include "expr_test_util.h"

using namespace rtsql;
using namespace rtsql::test;

TEST_CASE("functions: lpad and rpad count characters and cut to length") {
  CHECK(callS("lpad", {litS("hi"), litI(5), litS("??")}) == "???hi");
  CHECK(callS("rpad", {litS("hi"), litI(6), litS("ab")}) == "hiabab");
  // A multi-byte pad is repeated by characters, partly at the end.
  CHECK(callS("lpad", {litS("x"), litI(4), litS("éü")}) == "éüéx");
  CHECK(callS("rpad", {litS("日本"), litI(1), litS("x")}) == "日");
  CHECK(callS("lpad", {litS("abc"), litI(2)}) == "ab");
  CHECK(callS("lpad", {litS("abc"), litI(5), litS("")}) == "abc");
  CHECK(call("lpad", {nul(), litI(5)}).isNull());
  CHECK(call("rpad", {litS("a"), nul(), litS("x")}).isNull());
  // The size is checked before anything is built.
  CHECK(sqlErrorOf([] {
          call("lpad", {litS("a"), litL(int64_t{1} << 40), litS("xy")});
        }).sqlstate() == "54000");
  CHECK(sqlErrorOf([] {
          call("repeat", {litS("abc"), litL(int64_t{1} << 62)});
        }).sqlstate() == "54000");
  CHECK(sqlErrorOf([] { call("space", {litL(int64_t{1} << 40)}); }).sqlstate() == "54000");
}

TEST_CASE("functions: reverse, initcap and translate work on characters") {
  CHECK(callS("reverse", {litS("añb€c𝄞")}) == "𝄞c€bña");
  CHECK(callS("reverse", {litS("")}).empty());
  // A stray byte is kept as one unit rather than corrupting its neighbours.
  CHECK(callS("reverse", {litS(std::string("a\xff") + "é")}) == std::string("é\xff") + "a");
  CHECK(callS("initcap", {litS("ÉCOLE  normale sUPÉRIEURE")}) == "École  Normale Supérieure");
  CHECK(callS("initcap", {litS("привет мир")}) == "Привет Мир");
  CHECK(callS("translate", {litS("añb"), litS("ñ"), litS("n")}) == "anb");
  CHECK(callS("translate", {litS("abc"), litS("aa"), litS("xy")}) ==
        "xbc");  // the first mapping wins
  CHECK(callS("translate", {litS("abc"), litS("a"), litS("𝄞")}) == "𝄞bc");
}

TEST_CASE("functions: levenshtein counts characters and stops for an interrupt") {
  CHECK(call("levenshtein", {litS("kitten"), litS("sitting")}) == Value::integer(3));
  CHECK(call("levenshtein", {litS("日本語"), litS("日本")}) == Value::integer(1));
  CHECK(call("levenshtein", {litS(""), litS("")}) == Value::integer(0));
  CHECK(call("levenshtein", {litS("abc"), litS("")}) == Value::integer(3));
  CHECK(call("levenshtein", {litS("flaw"), litS("lawn"), litI(1)}) == Value::integer(-1));
  CHECK(call("levenshtein", {litS("flaw"), litS("lawn"), litI(2)}) == Value::integer(2));
  CHECK(call("levenshtein", {litS("a"), nul()}).isNull());
  // Two long values cost the product of their lengths: the check stops it.
  Row row{Value::string(std::string(5000, 'a')), Value::string(std::string(5000, 'b'))};
  auto e = makeCall("levenshtein", {col(0, TypeId::String), col(1, TypeId::String)}, 0);
  std::atomic<bool> stop{true};
  InterruptScope scope(
      [](const void* flag) { return static_cast<const std::atomic<bool>*>(flag)->load(); }, &stop);
  CHECK(sqlErrorOf([&] { e->eval(row); }).sqlstate() == "57014");
  stop = false;
  CHECK(e->eval(row) == Value::integer(5000));
}

TEST_CASE("functions: substring_index and split_part with overlapping delimiters") {
  CHECK(callS("substring_index", {litS("a.b.c.d"), litS("."), litI(3)}) == "a.b.c");
  CHECK(callS("substring_index", {litS("a.b.c.d"), litS("."), litI(-3)}) == "b.c.d");
  CHECK(callS("substring_index", {litS("aaaa"), litS("aa"), litI(2)}) == "a");
  CHECK(callS("substring_index", {litS("aaaa"), litS("aa"), litI(-2)}) == "a");
  CHECK(callS("substring_index", {litS("é|ü|ö"), litS("|"), litI(-1)}) == "ö");
  CHECK(callS("split_part", {litS("a||b||c"), litS("||"), litI(-2)}) == "b");
  CHECK(callS("split_part", {litS(""), litS(","), litI(1)}).empty());
  CHECK(sqlErrorOf([] {
          call("split_part", {litS("a"), litS(","), litI(0)});
        }).sqlstate() == "22023");
}

TEST_CASE("functions: format_string follows Java's Formatter") {
  auto fmt = [](const std::string& f, std::vector<ExprPtr> args) {
    args.insert(args.begin(), litS(f));
    return callS("format_string", args);
  };
  CHECK(fmt("%08.3f", {litD(-3.14159)}) == "-003.142");
  CHECK(fmt("%+d %+d", {litI(5), litI(-5)}) == "+5 -5");
  CHECK(fmt("[%6s][%-6s]", {litS("ab"), litS("ab")}) == "[    ab][ab    ]");
  CHECK(fmt("%.2s", {litS("héllo")}) == "hé");
  CHECK(fmt("%x", {litI(-1)}) == "ffffffff");
  CHECK(fmt("%x", {litL(-1)}) == "ffffffffffffffff");
  CHECK(fmt("%,.2f", {litD(1234567.891)}) == "1,234,567.89");
  CHECK(fmt("%e", {litD(12345.678)}) == "1.234568e+04");
  CHECK(fmt("%S", {litS("abc")}) == "ABC");
  CHECK(fmt("%s %s", {litD(1.0), litB(true)}) == "1.0 true");
  CHECK(sqlErrorOf([&] { fmt("%s %s", {litS("a")}); }).sqlstate() == "22023");
  CHECK(sqlErrorOf([&] { fmt("%q", {litS("a")}); }).sqlstate() == "22023");
  CHECK(sqlErrorOf([&] { fmt("%999999999s", {litS("a")}); }).sqlstate() == "54000");
}
