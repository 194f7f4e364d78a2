// rtsql_regex_functions: the per-call cost of the regular-expression functions
// on typical short inputs, as a flow's WHERE or SELECT pays it per record.
//
// Each case binds a call with a literal pattern (compiled once, as in a flow),
// evaluates it on one row a fixed number of times and prints the thread's CPU
// nanoseconds per call (CPU time, so that other processes on a shared machine
// do not count). Usage: rtsql_regex_functions [iterations] (default 1000000).
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/expr.h"

using namespace rtsql;

namespace {

ExprPtr str(const std::string& s) { return makeLiteral(Value::string(s), DataType::of(TypeId::String)); }

double threadCpuNanos() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

struct Case {
  const char* name;
  ExprPtr expr;
};

}  // namespace

int main(int argc, char** argv) {
  const long iterations = argc > 1 ? std::atol(argv[1]) : 1000000;
  ExprPtr input = makeColumnRef(0, DataType::of(TypeId::String), "s");
  const std::vector<Case> cases = {
      {"regexp_like(s, '^[a-z0-9.]+@[a-z]+\\.com$')", makeCall("regexp_like", {input, str("^[a-z0-9.]+@[a-z]+\\.com$")}, 0)},
      {"regexp_like(s, 'error')", makeCall("regexp_like", {input, str("error")}, 0)},
      {"regexp_extract(s, '@([a-z]+)', 1)", makeCall("regexp_extract", {input, str("@([a-z]+)"), makeLiteral(Value::integer(1), DataType::of(TypeId::Int))}, 0)},
      {"regexp_replace(s, '[0-9]', '#')", makeCall("regexp_replace", {input, str("[0-9]"), str("#")}, 0)},
      {"split(s, '[@.]')", makeCall("split", {input, str("[@.]")}, 0)},
  };
  const Row row{Value::string("jane.doe42@example.com")};
  for (const auto& c : cases) {
    size_t sink = 0;
    const double start = threadCpuNanos();
    for (long i = 0; i < iterations; ++i) sink += c.expr->eval(row).isNull() ? 0 : 1;
    const double ns = threadCpuNanos() - start;
    std::printf("%-45s %8.1f ns/call (%zu)\n", c.name, ns / static_cast<double>(iterations), sink);
  }
  return 0;
}
