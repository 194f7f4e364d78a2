// The VectorizedBatch operator: it holds the rows of a task's batch and passes
// them on, in order and each with its own RecordContext, when the batch ends,
// before a watermark or an epoch end, or at its row bound, after one call of
// each vectorized function over them; a failed call leaves nothing behind.
#include "executor/operators/vectorized_batch.h"

#include <doctest/doctest.h>

#include "../sql_error_of.h"
#include "capture_operator.h"
#include "common/python/function.h"
#include "common/python/vectorized_call.h"
#include "executor/operators/project.h"

using namespace rtsql;
using namespace rtsql::testing;

namespace {

DataTypePtr t(TypeId id) {
  return DataType::of(id);
}

int64_t calls() {
  auto fn = PythonFunction::compile("calls", {}, t(TypeId::BigInt),
                                    "import sys\nreturn getattr(sys, 'rtsql_test_calls', 0)", 100);
  return fn->call(nullptr, 0).asInt();
}

// VectorizedBatch [vtwice(n)] -> Project [n, #1] -> Capture.
struct Chain {
  ExprPtr call;
  OperatorPtr batch;
  OperatorPtr project;
  Capture capture;

  explicit Chain(const std::string& body =
                     "import sys\n"
                     "sys.rtsql_test_calls = getattr(sys, 'rtsql_test_calls', 0) + 1\n"
                     "return [None if x is None else x * 2 for x in a]\n") {
    auto fn = PythonFunction::compile("vtwice", {{"a", t(TypeId::BigInt)}}, t(TypeId::BigInt), body,
                                      100, true);
    ExprPtr col = makeColumnRef(0, t(TypeId::BigInt), "n");
    call = makePythonCall(fn, {col}, 0);
    // As the planner places them: the batch appends the call's column, the
    // Project reads it.
    VectorizedColumns columns = vectorizedColumns({col, call}, 1);
    ProjectSpec p;
    p.exprs = columns.exprs;
    VectorizedBatchSpec b;
    b.calls = columns.calls;
    b.inputColumns = 1;
    batch = makeVectorizedBatch(b);
    project = makeProject(p);
    batch->setNext(project.get());
    project->setNext(&capture);
  }

  void push(int64_t n, int64_t ts) {
    Row row = {Value::bigint(n)};
    RecordContext ctx;
    ctx.sourceTimestampMicros = ts;
    ctx.readMicros = ts + 1;
    batch->push(row, ctx);
  }
};

}  // namespace

TEST_CASE("the rows of a batch pass on at its end, in order, after one Python call") {
  Chain c;
  const int64_t before = calls();
  c.push(1, 100);
  c.push(2, 200);
  c.push(3, 300);
  CHECK(c.capture.rows.empty());
  c.batch->onBatchEnd();
  CHECK(calls() == before + 1);
  REQUIRE(c.capture.rows.size() == 3);
  for (int64_t i = 0; i < 3; ++i) {
    CHECK(c.capture.rows[i] == Row{Value::bigint(i + 1), Value::bigint(2 * (i + 1))});
    CHECK(c.capture.contexts[i].sourceTimestampMicros == 100 * (i + 1));
    CHECK(c.capture.contexts[i].readMicros == 100 * (i + 1) + 1);
  }
  CHECK(c.batch->stats().rowsIn == 3);
  CHECK(c.batch->stats().rowsOut == 3);
  // An empty batch calls nothing.
  c.batch->onBatchEnd();
  CHECK(calls() == before + 1);
}

TEST_CASE("a watermark or an epoch end passes the held rows on first") {
  Chain c;
  c.push(5, 1);
  c.push(6, 2);
  c.batch->onWatermark(1000);
  CHECK(c.capture.rows.size() == 2);
  CHECK(c.capture.watermarks == std::vector<int64_t>{1000});
  c.push(7, 3);
  CHECK(c.capture.rows.size() == 2);
  c.batch->onEpochEnd();
  REQUIRE(c.capture.rows.size() == 3);
  CHECK(c.capture.rows[2] == Row{Value::bigint(7), Value::bigint(14)});
  CHECK(c.capture.epochs == 1);
}

TEST_CASE("a batch is cut at its row bound") {
  Chain c;
  const int64_t before = calls();
  const auto bound = static_cast<int64_t>(VectorizedBatchSpec::kMaxVectorizedBatchRows);
  for (int64_t i = 0; i < bound; ++i) c.push(i, i);
  CHECK(c.capture.rows.size() == static_cast<size_t>(bound));
  CHECK(calls() == before + 1);
  c.push(bound, bound);
  CHECK(c.capture.rows.size() == static_cast<size_t>(bound));
  c.batch->onBatchEnd();
  REQUIRE(c.capture.rows.size() == static_cast<size_t>(bound) + 1);
  CHECK(c.capture.rows.back() == Row{Value::bigint(bound), Value::bigint(2 * bound)});
}

TEST_CASE("a failed call is a data error, and the batch's rows are not passed on") {
  Chain c("return [10 // x for x in a]");
  c.push(5, 1);
  c.push(0, 2);
  SqlError e = sqlErrorOf([&] { c.batch->onBatchEnd(); });
  CHECK(e.sqlstate() == "22000");
  CHECK(e.message().find("function vtwice raised ZeroDivisionError") == 0);
  CHECK(c.capture.rows.empty());
  // Nothing is left held: the next batch holds only its own rows.
  c.push(2, 3);
  c.batch->onBatchEnd();
  REQUIRE(c.capture.rows.size() == 1);
  CHECK(c.capture.rows[0] == Row{Value::bigint(2), Value::bigint(5)});
}
