// The lambdas of the higher-order functions (common/lambda.h): their slots
// under threads and nesting, and what is left of them after an error.
#include <doctest/doctest.h>

#include <initializer_list>
#include <thread>
#include <vector>

#include "common/lambda.h"
#include "expr_test_util.h"

using namespace rtsql;
using namespace rtsql::test;

namespace {

ValueList ints(std::initializer_list<int> xs) {
  ValueList out;
  for (int x : xs) out.push_back(Value::integer(x));
  return out;
}

}  // namespace

TEST_CASE("lambdas: one tree evaluated by many threads keeps each thread's element") {
  // The slots are per thread: threads that share the tree never see each
  // other's elements.
  auto arrType = DataType::arrayOf(T(TypeId::Int));
  ExprPtr x = makeLambdaVariable(0, T(TypeId::Int), "x");
  ExprPtr e = makeCall("transform", {makeColumnRef(0, arrType, "arr"),
                                     makeLambda({0}, {"x"}, makeCall("+", {x, col(1, TypeId::Int)}, 0))},
                       0);
  CHECK(e->toString() == "transform(arr, x -> (x + #1))");
  std::vector<int> wrong(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      Row row{Value::array(ints({1, 2, 3})), Value::integer(t * 100)};
      for (int i = 0; i < 20000; ++i) {
        Value v = e->eval(row);
        const ValueList& items = v.asList();
        if (items.size() != 3 || items[0].asInt() != t * 100 + 1 || items[2].asInt() != t * 100 + 3)
          ++wrong[static_cast<size_t>(t)];
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int w : wrong) CHECK(w == 0);
}

TEST_CASE("lambdas: an inner call gives the outer lambda its element back") {
  // transform(arr, x -> aggregate(arr, 0, (acc, y) -> acc + y) * 10 + x): the
  // inner lambda's slots (1, 2) are not the outer one's (0), and x is read
  // after the inner call ends.
  auto arrType = DataType::arrayOf(T(TypeId::Int));
  ExprPtr arr = makeColumnRef(0, arrType, "arr");
  ExprPtr acc = makeLambdaVariable(1, T(TypeId::Int), "acc");
  ExprPtr y = makeLambdaVariable(2, T(TypeId::Int), "y");
  ExprPtr inner = makeCall("aggregate", {arr, litI(0), makeLambda({1, 2}, {"acc", "y"}, makeCall("+", {acc, y}, 0))}, 0);
  ExprPtr x = makeLambdaVariable(0, T(TypeId::Int), "x");
  ExprPtr body = makeCall("+", {makeCall("*", {inner, litI(10)}, 0), x}, 0);
  ExprPtr e = makeCall("transform", {arr, makeLambda({0}, {"x"}, body)}, 0);
  Value v = evalAll(e, Row{Value::array(ints({1, 2}))});
  REQUIRE(v.asList().size() == 2);
  CHECK(v.asList()[0].asInt() == 31);
  CHECK(v.asList()[1].asInt() == 32);
  // Outside any call a variable reads NULL: the slots were given back.
  CHECK(x->eval(Row{}).isNull());
  CHECK(acc->eval(Row{}).isNull());
}

TEST_CASE("lambdas: a comparator that fails leaves no slot pointing at its array") {
  auto arrType = DataType::arrayOf(T(TypeId::Int));
  ExprPtr l = makeLambdaVariable(0, T(TypeId::Int), "l");
  ExprPtr r = makeLambdaVariable(1, T(TypeId::Int), "r");
  ExprPtr e = makeCall("array_sort", {makeColumnRef(0, arrType, "arr"), makeLambda({0, 1}, {"l", "r"}, nulOf(TypeId::Int))}, 0);
  SqlError err = sqlErrorOf([&] { e->eval(Row{Value::array(ints({2, 1}))}); });
  CHECK(std::string(err.sqlstate()) == "22000");
  CHECK(l->eval(Row{}).isNull());
  CHECK(r->eval(Row{}).isNull());
  // One element or none never calls the comparator.
  CHECK(e->eval(Row{Value::array(ints({7}))}).asList().size() == 1);
}

TEST_CASE("lambdas: the arguments each function takes") {
  auto arrType = DataType::arrayOf(T(TypeId::Int));
  std::vector<ExprPtr> before{makeColumnRef(0, arrType, "arr")};
  CHECK(lambdaParameterTypes("transform", before, 1, 2, 0).at(1)->id == TypeId::Int);  // the index
  CHECK(std::string(sqlErrorOf([&] { lambdaParameterTypes("transform", before, 1, 3, 0); }).sqlstate()) ==
        "42804");
  CHECK(std::string(sqlErrorOf([&] { lambdaParameterTypes("upper", before, 1, 1, 0); }).sqlstate()) == "42804");
  CHECK(std::string(sqlErrorOf([&] { lambdaParameterTypes("no_such", before, 1, 1, 0); }).sqlstate()) ==
        "42883");
  // An untyped NULL is no array, as in Spark.
  std::vector<ExprPtr> null{nul()};
  CHECK(std::string(sqlErrorOf([&] { lambdaParameterTypes("filter", null, 1, 1, 0); }).sqlstate()) == "42804");
  // A lambda where a value is due, and a value where a lambda is.
  ExprPtr x = makeLambdaVariable(0, T(TypeId::Int), "x");
  CHECK(std::string(sqlErrorOf([&] { makeCall("transform", {before[0], litI(1)}, 0); }).sqlstate()) == "42804");
  CHECK(std::string(sqlErrorOf([&] {
          makeCall("zip_with", {before[0], makeLambda({0}, {"x"}, x), makeLambda({0}, {"x"}, x)}, 0);
        }).sqlstate()) == "42804");
}
