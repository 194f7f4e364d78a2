// rtsql_python_function: the per-call cost of a Python function beside the same
// function in SQL, as a flow's SELECT pays it per record.
//
// `f(a BIGINT) RETURNS BIGINT`: in SQL (`AS a + 1`) the planner inlines the
// body, so a call costs what the expression `a + 1` costs; in Python (`AS $$
// return a + 1 $$`) each call takes the GIL, converts the argument, calls the
// def and converts the result back. Each case evaluates the call on one row a
// fixed number of times and prints the thread's CPU nanoseconds per call (CPU
// time, so that other processes on a shared machine do not count); the last
// case calls from two threads at once and prints the wall time per call, which
// shows what they pay waiting for each other's GIL.
//
// Then the vectorized form (`LANGUAGE PYTHON VECTORIZED AS $$ return [x + 1
// for x in a] $$`) beside the scalar one, as a flow's stage runs them: rows
// pushed through the operators (VectorizedBatch -> Project for the vectorized
// call, Project for the scalar one) with onBatchEnd() after every B rows, B =
// 1, 16 and 256 (a poll that brings B records); it prints CPU nanoseconds per
// row, the batching step's copy of each row included.
// Usage: rtsql_python_function [iterations] (default 1000000).
#include "common/python/function.h"
#include "common/python/vectorized_call.h"

#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "common/expr.h"
#include "executor/operators/project.h"
#include "executor/operators/vectorized_batch.h"

using namespace rtsql;

namespace {

double threadCpuNanos() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

// The end of the bench's stage: sums the rows' second column.
class SumSink final : public Operator {
 public:
  void push(Row& row, const RecordContext&) override { sum += row[1].asInt(); }
  std::string name() const override { return "SumSink"; }
  long sum = 0;
};

// Pushes `rows` rows through `head`, ending a batch every `batch` rows, and
// returns the CPU nanoseconds per row.
double runStage(Operator& head, long rows, long batch) {
  Row row{Value::bigint(0)};
  RecordContext ctx;
  const double start = threadCpuNanos();
  for (long i = 0; i < rows; ++i) {
    row.resize(1);
    row[0] = Value::bigint(i);
    head.push(row, ctx);
    if ((i + 1) % batch == 0) head.onBatchEnd();
  }
  head.onBatchEnd();
  return (threadCpuNanos() - start) / static_cast<double>(rows);
}

long run(const ExprPtr& e, long iterations) {
  Row row{Value::bigint(41)};
  long sink = 0;
  for (long i = 0; i < iterations; ++i) {
    row[0] = Value::bigint(i);
    sink += e->eval(row).asInt();
  }
  return sink;
}

}  // namespace

int main(int argc, char** argv) {
  const long iterations = argc > 1 ? std::atol(argv[1]) : 1000000;
  const DataTypePtr bigint = DataType::of(TypeId::BigInt);
  ExprPtr a = makeColumnRef(0, bigint, "a");
  ExprPtr sql = makeCall("+", {a, makeLiteral(Value::bigint(1), bigint)}, 0);
  auto fn = PythonFunction::compile("f", {{"a", bigint}}, bigint, "return a + 1", 0);
  ExprPtr python = makePythonCall(fn, {a});

  for (const auto& [name, expr] :
       {std::pair{"SQL      a + 1 (inlined)", sql}, std::pair{"PYTHON   return a + 1", python}}) {
    run(expr, iterations / 10);  // warm up
    const double start = threadCpuNanos();
    const long sink = run(expr, iterations);
    const double ns = threadCpuNanos() - start;
    std::printf("%-40s %8.1f ns/call (%ld)\n", name, ns / static_cast<double>(iterations), sink);
  }

  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) threads.emplace_back([&] { run(python, iterations); });
  for (auto& t : threads) t.join();
  const double wall =
      std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
  std::printf("%-40s %8.1f ns/call (wall, 2 threads)\n", "PYTHON   return a + 1, 2 threads",
              wall / static_cast<double>(2 * iterations));

  // Through the operators of a stage, per row.
  auto vfn =
      PythonFunction::compile("fv", {{"a", bigint}}, bigint, "return [x + 1 for x in a]", 0, true);
  ExprPtr vectorized = makePythonCall(vfn, {a});
  for (long batch : {1L, 16L, 256L}) {
    for (const auto& [name, call] : {std::pair{"PYTHON   scalar, per row", python},
                                     std::pair{"PYTHON   vectorized, per batch", vectorized}}) {
      // The vectorized call as the planner rewrites it: the batch appends its
      // column after the row's one, and the Project reads that column.
      VectorizedColumns columns = vectorizedColumns({a, call}, 1);
      ProjectSpec project;
      project.exprs = call == vectorized ? columns.exprs : std::vector<ExprPtr>{a, call};
      OperatorPtr projectOp = makeProject(project);
      SumSink sink;
      projectOp->setNext(&sink);
      OperatorPtr batchOp;
      Operator* head = projectOp.get();
      if (call == vectorized) {
        VectorizedBatchSpec spec;
        spec.calls = columns.calls;
        spec.inputColumns = 1;
        batchOp = makeVectorizedBatch(spec);
        batchOp->setNext(projectOp.get());
        head = batchOp.get();
      }
      runStage(*head, iterations / 10, batch);  // warm up
      const double ns = runStage(*head, iterations, batch);
      std::printf("%-32s B=%-4ld %8.1f ns/row (%ld)\n", name, batch, ns, sink.sum);
    }
  }
  return 0;
}
