// rtsql_decimal_arith: the per-row cost of DECIMAL arithmetic beside DOUBLE
// and BIGINT, as a flow's SELECT pays it per record: `price * qty + fee` and
// `a / b` over column references, bound as the binder binds them.
//
// Prints the thread's CPU nanoseconds per evaluation (CPU time, so that other
// processes on a shared machine do not count).
// Usage: rtsql_decimal_arith [iterations] (default 1000000).
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/expr.h"

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
  Row row;
};

// `price * qty + fee` and `price / qty` over columns of type `t`, with the
// row's values given as text and cast to `t`.
void addCases(std::vector<Case>& cases, const std::string& label, const DataTypePtr& t) {
  ExprPtr price = makeColumnRef(0, t, "price"), qty = makeColumnRef(1, t, "qty"),
          fee = makeColumnRef(2, t, "fee");
  Row row{castValue(Value::string("1234.56"), *t), castValue(Value::string("3"), *t),
          castValue(Value::string("0.99"), *t)};
  cases.push_back({label + " price * qty + fee", makeCall("+", {makeCall("*", {price, qty}, 0), fee}, 0), row});
  cases.push_back({label + " price / qty", makeCall("/", {price, qty}, 0), row});
  cases.push_back({label + " price > fee", makeCall(">", {price, fee}, 0), row});
}

}  // namespace

int main(int argc, char** argv) {
  const long iterations = argc > 1 ? std::atol(argv[1]) : 1000000;
  std::vector<Case> cases;
  addCases(cases, "DOUBLE        ", DataType::of(TypeId::Double));
  addCases(cases, "BIGINT        ", DataType::of(TypeId::BigInt));
  addCases(cases, "DECIMAL(10,2) ", DataType::decimal(10, 2));
  addCases(cases, "DECIMAL(38,18)", DataType::decimal(38, 18));
  for (const auto& c : cases) {
    size_t sink = 0;
    const double start = threadCpuNanos();
    for (long i = 0; i < iterations; ++i) sink += c.expr->eval(c.row).isNull() ? 0 : 1;
    const double ns = threadCpuNanos() - start;
    std::printf("%-40s %8.1f ns/row  %s (%zu)\n", c.name.c_str(), ns / static_cast<double>(iterations),
                c.expr->eval(c.row).toString().c_str(), sink);
  }
  return 0;
}
