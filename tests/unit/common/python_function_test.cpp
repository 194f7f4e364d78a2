// Python functions run by the embedded CPython: the interpreter starting only
// with the first function, the values each SQL type becomes in Python and back,
// a syntax error placed in the statement, an exception or a wrong result as a
// data error of the row, and calls from many threads at once.
#include "common/python/function.h"

#include <doctest/doctest.h>

#include <atomic>
#include <thread>

#include "../sql_error_of.h"

using namespace rtsql;
using rtsql::testing::sqlErrorOf;

namespace {

std::shared_ptr<const PythonFunction> compile(const std::string& name,
                                              std::vector<PythonFunction::Param> params,
                                              DataTypePtr returns, const std::string& body,
                                              size_t bodyPos = 100) {
  return PythonFunction::compile(name, std::move(params), std::move(returns), body, bodyPos);
}

DataTypePtr t(TypeId id) {
  return DataType::of(id);
}

// A one-parameter function that returns its argument unchanged.
Value roundTrip(const DataTypePtr& type, const Value& v) {
  auto fn = compile("same", {{"x", type}}, type, "return x");
  return fn->call(&v, 1);
}

// What Python sees: repr() of the argument.
std::string pythonRepr(const DataTypePtr& type, const Value& v) {
  auto fn = compile("show", {{"x", type}}, t(TypeId::String), "return repr(x)");
  return fn->call(&v, 1).asString();
}

}  // namespace

// First in the file: each test file runs in a process of its own.
TEST_CASE("the interpreter starts with the first Python function, not before") {
  CHECK_FALSE(pythonStarted());
  auto fn = compile("inc", {{"a", t(TypeId::BigInt)}}, t(TypeId::BigInt), "return a + 1");
  CHECK(pythonStarted());
  Value arg = Value::bigint(41);
  CHECK(fn->call(&arg, 1) == Value::bigint(42));
}

TEST_CASE("each SQL type has its Python value, and comes back unchanged") {
  CHECK(pythonRepr(t(TypeId::BigInt), Value()) == "None");
  CHECK(pythonRepr(t(TypeId::Boolean), Value::boolean(true)) == "True");
  CHECK(pythonRepr(t(TypeId::Int), Value::integer(-7)) == "-7");
  CHECK(pythonRepr(t(TypeId::Double), Value::float64(0.25)) == "0.25");
  CHECK(pythonRepr(t(TypeId::String), Value::string("héllo")) == "'héllo'");
  CHECK(pythonRepr(t(TypeId::Binary), Value::binary(std::string("\x00\xff", 2))) ==
        "b'\\x00\\xff'");
  // 2024-03-01 12:34:56.789 UTC = 1709296496789000 microseconds.
  CHECK(pythonRepr(t(TypeId::Timestamp), Value::timestamp(1709296496789000)) ==
        "datetime.datetime(2024, 3, 1, 12, 34, 56, 789000, tzinfo=datetime.timezone.utc)");
  CHECK(pythonRepr(t(TypeId::Timestamp), Value::timestamp(-1)) ==
        "datetime.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=datetime.timezone.utc)");
  CHECK(pythonRepr(t(TypeId::Interval), Value::interval(90061000001)) ==
        "datetime.timedelta(days=1, seconds=3661, microseconds=1)");
  const DataTypePtr ints = DataType::arrayOf(t(TypeId::Int));
  CHECK(pythonRepr(ints, Value::array({Value::integer(1), Value(), Value::integer(3)})) ==
        "[1, None, 3]");
  const DataTypePtr pair = DataType::structOf({{"k", t(TypeId::String)}, {"n", ints}});
  CHECK(pythonRepr(pair, Value::structure({Value::string("a"), Value::array({})})) ==
        "{'k': 'a', 'n': []}");

  for (const auto& c : std::vector<std::pair<DataTypePtr, Value>>{
           {t(TypeId::Boolean), Value::boolean(false)},
           {t(TypeId::Int), Value::integer(INT32_MIN)},
           {t(TypeId::BigInt), Value::bigint(INT64_MAX)},
           {t(TypeId::Double), Value::float64(-1.5e300)},
           {t(TypeId::String), Value::string("")},
           {t(TypeId::Binary), Value::binary("ab")},
           {t(TypeId::Timestamp), Value::timestamp(-62135596800000000)},  // 0001-01-01
           {t(TypeId::Interval), Value::interval(-1)},
           {ints, Value::array({Value(), Value::integer(2)})},
           {pair, Value::structure({Value(), Value::array({Value::integer(5)})})},
       }) {
    const std::string name = c.first->toString();
    CAPTURE(name);
    CHECK(roundTrip(c.first, c.second) == c.second);
    CHECK(roundTrip(c.first, Value()).isNull());
  }
}

TEST_CASE("results convert to the declared type, or fail the row") {
  auto returning = [](const DataTypePtr& type, const std::string& body) {
    return compile("r", {}, type, body)->call(nullptr, 0);
  };
  CHECK(returning(t(TypeId::Double), "return 3") == Value::float64(3.0));
  CHECK(returning(t(TypeId::Binary), "return bytearray(b'x')") == Value::binary("x"));
  CHECK(returning(DataType::arrayOf(t(TypeId::BigInt)), "return (1, 2)") ==
        Value::array({Value::bigint(1), Value::bigint(2)}));
  // A struct's missing keys are NULL.
  CHECK(returning(DataType::structOf({{"a", t(TypeId::Int)}, {"b", t(TypeId::Int)}}),
                  "return {'b': 2}") == Value::structure({Value(), Value::integer(2)}));
  // An aware datetime is its UTC instant; a naive one is read as UTC; a date is
  // its midnight.
  CHECK(returning(t(TypeId::Timestamp),
                  "import datetime\nreturn datetime.datetime(1970, 1, 1, 1, "
                  "tzinfo=datetime.timezone(datetime.timedelta(hours=1)))") == Value::timestamp(0));
  CHECK(returning(t(TypeId::Timestamp), "import datetime\nreturn datetime.datetime(1970, 1, 2)") ==
        Value::timestamp(86400000000));
  CHECK(returning(t(TypeId::Timestamp), "import datetime\nreturn datetime.date(1970, 1, 2)") ==
        Value::timestamp(86400000000));

  SqlError wrong = sqlErrorOf([&] { returning(t(TypeId::Int), "return True"); });
  CHECK(wrong.sqlstate() == "22000");
  CHECK(wrong.message() == "function r returned bool, which is not INT");
  wrong = sqlErrorOf([&] { returning(DataType::arrayOf(t(TypeId::Int)), "return [1, 'a']"); });
  CHECK(wrong.message() == "function r returned str at result[1], which is not INT");
  SqlError range = sqlErrorOf([&] { returning(t(TypeId::Int), "return 2 ** 31"); });
  CHECK(range.sqlstate() == "22003");
  range = sqlErrorOf([&] { returning(t(TypeId::BigInt), "return -2 ** 64"); });
  CHECK(range.sqlstate() == "22003");
  // A timestamp Python's datetime cannot hold fails the row as it is passed.
  auto fn = compile("y", {{"t", t(TypeId::Timestamp)}}, t(TypeId::Int), "return t.year");
  Value far = Value::timestamp(-62135596800000001);
  CHECK(sqlErrorOf([&] { fn->call(&far, 1); }).sqlstate() == "22000");
}

TEST_CASE("an exception is a data error of the row with the traceback's last lines") {
  auto fn = compile("ratio", {{"a", t(TypeId::Int)}, {"b", t(TypeId::Int)}}, t(TypeId::Double),
                    "\n    def inner(x):\n        return a / x\n    return inner(b)\n");
  Value args[] = {Value::integer(1), Value::integer(4)};
  CHECK(fn->call(args, 2) == Value::float64(0.25));
  args[1] = Value::integer(0);
  SqlError e = sqlErrorOf([&] { fn->call(args, 2); });
  CHECK(e.sqlstate() == "22000");
  CHECK(e.message() ==
        "function ratio raised ZeroDivisionError: division by zero (at line 3 in ratio; line 2 "
        "in inner)");
  CHECK(e.detail() ==
        "Traceback (most recent call last):\n"
        "  the body, line 3, in ratio\n"
        "    return inner(b)\n"
        "  the body, line 2, in inner\n"
        "    return a / x\n"
        "ZeroDivisionError: division by zero");
  // The function still works after an exception.
  args[1] = Value::integer(2);
  CHECK(fn->call(args, 2) == Value::float64(0.5));
}

TEST_CASE("a body that does not compile is 42P13 at its place in the statement") {
  // Body offset 100 in the statement; line 2 starts at 1 + 4 (indent) in the
  // body text "\n    x = 1\n    y = (\n": Python points at the open '('.
  const std::string body = "\n    x = 1\n    y = (\n";
  SqlError e = sqlErrorOf([&] { compile("bad", {}, t(TypeId::Int), body); });
  CHECK(e.sqlstate() == "42P13");
  CHECK(e.message().find("Python function bad does not compile: SyntaxError") == 0);
  CHECK(e.message().find("(line 2 of the body)") != std::string::npos);
  CHECK(e.position() == 100 + body.find('('));
  // A first line on the $$ line, the rest indented: both are taken out of
  // their indentation.
  auto ok = compile("two", {{"a", t(TypeId::Int)}}, t(TypeId::Int),
                    " if a is None:\n        return 0\n    return a + 1 ");
  Value none;
  CHECK(ok->call(&none, 1) == Value::integer(0));

  SqlError kw = sqlErrorOf([&] {
    PythonFunction::compile("k", {{"lambda", t(TypeId::Int), 17}}, t(TypeId::Int), "return 1", 40);
  });
  CHECK(kw.sqlstate() == "42P13");
  CHECK(kw.position() == 17);
  CHECK(kw.message() == "parameter name 'lambda' is a Python keyword");

  SqlError empty = sqlErrorOf([&] { compile("e", {}, t(TypeId::Int), "  \n  ", 7); });
  CHECK(empty.sqlstate() == "42P13");
  CHECK(empty.position() == 7);
}

TEST_CASE("many threads call Python functions at once") {
  auto fn = compile("sq", {{"a", t(TypeId::BigInt)}}, t(TypeId::BigInt), "return a * a");
  constexpr int kThreads = 4, kCalls = 2000;
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      for (int n = 0; n < kCalls; ++n) {
        Value a = Value::bigint(i * kCalls + n);
        if (fn->call(&a, 1) != Value::bigint(a.asInt() * a.asInt())) ++wrong;
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(wrong == 0);
}
