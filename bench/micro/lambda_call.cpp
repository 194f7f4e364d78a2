// rtsql_lambda_call: the per-row cost of a lambda, as a flow's SELECT pays it
// per record, beside a plain function: `x + 1` over an INT column, then the
// same body as the lambda of transform, filter, exists and aggregate over an
// ARRAY<INT> column of 8 elements, and array_contains / array_max (no lambda)
// over the same array.
//
// Prints the thread's CPU nanoseconds per evaluation and per element (CPU
// time, so that other processes on a shared machine do not count).
// Usage: rtsql_lambda_call [iterations] (default 1000000).
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/expr.h"
#include "common/lambda.h"

using namespace rtsql;

namespace {

double threadCpuNanos() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

struct Case {
  std::string name;
  ExprPtr expr;
  size_t elements;
};

ExprPtr intLit(int v) { return makeLiteral(Value::integer(v), DataType::of(TypeId::Int)); }

// `name(arr, x -> body(x))` bound as the binder binds it: slot 0 for x.
template <typename Body>
ExprPtr lambdaCall(const std::string& name, std::vector<ExprPtr> before, Body body) {
  ExprPtr x = makeLambdaVariable(0, DataType::of(TypeId::Int), "x");
  before.push_back(makeLambda({0}, {"x"}, body(x)));
  return makeCall(name, std::move(before), 0);
}

}  // namespace

int main(int argc, char** argv) {
  const long iterations = argc > 1 ? std::atol(argv[1]) : 1000000;
  const DataTypePtr intType = DataType::of(TypeId::Int);
  ExprPtr n = makeColumnRef(0, intType, "n");
  ExprPtr arr = makeColumnRef(1, DataType::arrayOf(intType), "arr");
  ValueList items;
  for (int i = 0; i < 8; ++i) items.push_back(Value::integer(i));
  Row row{Value::integer(41), Value::array(items)};

  auto plus1 = [](const ExprPtr& x) { return makeCall("+", {x, intLit(1)}, 0); };
  std::vector<Case> cases;
  cases.push_back({"n + 1 (plain function)", makeCall("+", {n, intLit(1)}, 0), 1});
  cases.push_back({"transform(arr, x -> x + 1)", lambdaCall("transform", {arr}, plus1), 8});
  cases.push_back({"filter(arr, x -> x > 3)",
                   lambdaCall("filter", {arr}, [](const ExprPtr& x) { return makeCall(">", {x, intLit(3)}, 0); }),
                   8});
  cases.push_back({"exists(arr, x -> x = 7)",
                   lambdaCall("exists", {arr}, [](const ExprPtr& x) { return makeCall("=", {x, intLit(7)}, 0); }),
                   8});
  {
    ExprPtr acc = makeLambdaVariable(0, intType, "acc"), x = makeLambdaVariable(1, intType, "x");
    ExprPtr merge = makeLambda({0, 1}, {"acc", "x"}, makeCall("+", {acc, x}, 0));
    cases.push_back({"aggregate(arr, 0, (acc, x) -> acc + x)", makeCall("aggregate", {arr, intLit(0), merge}, 0), 8});
  }
  cases.push_back({"array_contains(arr, 7) (no lambda)", makeCall("array_contains", {arr, intLit(7)}, 0), 8});
  cases.push_back({"array_max(arr) (no lambda)", makeCall("array_max", {arr}, 0), 8});
  for (const auto& c : cases) {
    size_t sink = 0;
    const double start = threadCpuNanos();
    for (long i = 0; i < iterations; ++i) sink += c.expr->eval(row).isNull() ? 0 : 1;
    const double ns = threadCpuNanos() - start;
    const double perRow = ns / static_cast<double>(iterations);
    std::printf("%-42s %8.1f ns/row %6.1f ns/element  %s (%zu)\n", c.name.c_str(), perRow,
                perRow / static_cast<double>(c.elements), c.expr->eval(row).toString().c_str(), sink);
  }
  return 0;
}
