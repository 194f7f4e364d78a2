// rtsql_python_processor: the per-row cost of a Python stateful processor
// (CREATE PROCESSOR ... LANGUAGE PYTHON, TRANSFORM ... USING PROCESSOR) beside
// the same state update in C++ and in SQL, as the `python_processor` and
// `sql_processor` latency scenarios run it (docs/benchmarks.md, "Python
// processors").
//
// The update is a running count and sum of `amount` per user, emitted per row:
//
//   - PYTHON call: one ProcessorInstance::handleInputRows call with one row and
//     the key's value state (count, sum) handed in as pickled bytes and handed
//     back changed (the GIL, the row as a dict, the unpickle, the pickle, the
//     output tuple), as the Transform operator makes it, without the state store.
//   - C++ call: the same read-modify-write on bytes in C++: the key's (count,
//     sum) decoded from its encoded row in a hash map, updated, encoded back,
//     and an output row made.
//   - Transform operator and Aggregate operator: rows (ts_us, user_id, amount)
//     pushed through the operator a flow runs, on RocksDB state (StateStore),
//     1,000 users, an epoch end (state flush) every 50,000 rows: TRANSFORM with
//     the processor, and GROUP BY user_id with count(*), sum(amount) and
//     max(ts_us) in update mode (one output row per input row, the same values).
//
// The processor is bench/scenarios/processors/running_totals.py, the scenario's own.
//
// Each case prints the thread's CPU nanoseconds per row (CPU time, so that
// other processes on a shared machine do not count).
// Usage: rtsql_python_processor [rows] (default 200000).
#include "common/python/processor.h"

#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/expr.h"
#include "common/row_codec.h"
#include "executor/operators/aggregate.h"
#include "executor/operators/transform.h"
#include "executor/state/state_store.h"

using namespace rtsql;

namespace {

constexpr int kUsers = 1000;
constexpr long kEpochRows = 50000;

// The processor of the `python_processor` scenario, from its one home.
std::string runningTotalsBody() {
  const std::string path = std::string(RTSQL_BENCH_DIR) + "/processors/running_totals.py";
  std::ifstream in(path);
  if (!in) {
    std::fprintf(stderr, "cannot read %s\n", path.c_str());
    std::exit(1);
  }
  std::ostringstream body;
  body << in.rdbuf();
  return body.str();
}

double threadCpuNanos() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

DataTypePtr bigint() {
  return DataType::of(TypeId::BigInt);
}
DataTypePtr float64() {
  return DataType::of(TypeId::Double);
}
DataTypePtr str() {
  return DataType::of(TypeId::String);
}

std::vector<std::string> userNames() {
  std::vector<std::string> users;
  for (int u = 0; u < kUsers; ++u) users.push_back("user-" + std::to_string(u));
  return users;
}

double amountOf(long i) {
  return 11.0 + static_cast<double>(i % 90);
}

// Sums the `total` column (user_id, n, total, ts_us) of what reaches it, so
// that nothing is optimized away.
class SumSink final : public Operator {
 public:
  void push(Row& row, const RecordContext&) override { sum += row[2].asDouble(); }
  std::string name() const override { return "SumSink"; }
  double sum = 0;
};

Schema returnsSchema() {
  Schema s;
  s.columns = {{"n", bigint()}, {"total", float64()}, {"ts_us", bigint()}};
  return s;
}

// One handleInputRows call per row, the state kept in a map between calls as
// the Transform operator's table would keep it.
double pythonCalls(const std::shared_ptr<const PythonProcessor>& processor, long rows,
                   double& check) {
  const std::vector<std::string> users = userNames();
  ProcessorInstance instance(processor, {});
  Schema inputSchema;
  inputSchema.columns = {{"ts_us", bigint()}, {"user_id", str()}, {"amount", float64()}};
  const std::vector<DataTypePtr> keyTypes{str()};
  std::unordered_map<std::string, std::string> state;
  std::vector<Row> input(1);
  std::vector<ProcessorStateEntry> entries;
  ProcessorInstance::Result result;
  const double start = threadCpuNanos();
  for (long i = 0; i < rows; ++i) {
    const std::string& user = users[i % kUsers];
    input[0] = Row{Value::bigint(i), Value::string(user), Value::float64(amountOf(i))};
    entries.clear();
    auto it = state.find(user);
    if (it != state.end()) entries.emplace_back("acc", it->second);
    result = {};
    instance.handleInputRows(Row{Value::string(user)}, keyTypes, input, inputSchema, entries, {}, 0,
                             std::nullopt, std::nullopt, result);
    for (ProcessorStateChange& change : result.changes) {
      if (change.bytes) state[user] = std::move(*change.bytes);
    }
    check += result.rows.back()[1].asDouble();
  }
  return (threadCpuNanos() - start) / static_cast<double>(rows);
}

// The same read-modify-write in C++: (count, sum) as an encoded row per user.
double cppCalls(long rows, double& check) {
  const std::vector<std::string> users = userNames();
  const std::vector<DataTypePtr> types{bigint(), float64()};  // (count, sum)
  std::unordered_map<std::string, std::string> state;
  const double start = threadCpuNanos();
  for (long i = 0; i < rows; ++i) {
    Row in{Value::bigint(i), Value::string(users[i % kUsers]), Value::float64(amountOf(i))};
    std::string& bytes = state[in[1].asString()];
    int64_t n = 0;
    double total = 0;
    if (!bytes.empty()) {
      Row acc = decodeRow(bytes, types);
      n = acc[0].asInt();
      total = acc[1].asDouble();
    }
    n += 1;
    total += in[2].asDouble();
    bytes.clear();
    encodeRow(bytes, Row{Value::bigint(n), Value::float64(total)});
    Row out{in[1], Value::bigint(n), Value::float64(total), in[0]};
    check += out[2].asDouble();
  }
  return (threadCpuNanos() - start) / static_cast<double>(rows);
}

struct Store {
  std::unique_ptr<StateStore> store;
  Store() {
    StateStoreOptions o;
    o.path = (std::filesystem::temp_directory_path() /
              ("rtsql-python-processor-" + std::to_string(::getpid())))
                 .string();
    o.destroyOnClose = true;
    store = StateStore::open(o);
  }
};

// Pushes `rows` rows (ts_us, user_id, amount, user_id) through `op`, ending an epoch
// every kEpochRows rows, and returns CPU nanoseconds per row.
double runOperator(Operator& op, long rows) {
  const std::vector<std::string> users = userNames();
  Row row;
  RecordContext ctx;
  const double start = threadCpuNanos();
  for (long i = 0; i < rows; ++i) {
    const std::string& user = users[i % kUsers];
    row = Row{Value::bigint(i), Value::string(user), Value::float64(amountOf(i)),
              Value::string(user)};
    op.push(row, ctx);
    if ((i + 1) % kEpochRows == 0) op.onEpochEnd();
  }
  op.onEpochEnd();
  return (threadCpuNanos() - start) / static_cast<double>(rows);
}

// The operator `make` builds on a fresh RocksDB table, warmed up, then timed
// over `rows` rows (runOperator).
template <typename Make>
double operatorCase(Make make, long rows, double& check) {
  Store s;
  OperatorPtr op = make(*s.store);
  SumSink sink;
  op->setNext(&sink);
  runOperator(*op, rows / 10);  // warm up
  const double ns = runOperator(*op, rows);
  check += sink.sum;
  return ns;
}

TransformSpec transformSpec(const std::shared_ptr<const PythonProcessor>& processor) {
  TransformSpec spec;
  spec.id = 1;
  spec.processor = processor;
  spec.inputColumns = 3;
  spec.inputSchema.columns = {{"ts_us", bigint()}, {"user_id", str()}, {"amount", float64()}};
  spec.partitionKeys = {makeColumnRef(3, str(), "user_id")};
  spec.output.columns = {{"user_id", str()}};
  for (const Column& c : processor->returns().columns) spec.output.columns.push_back(c);
  return spec;
}

AggregateCall aggregateCall(AggregateFunction function, ExprPtr arg, DataTypePtr type) {
  AggregateCall c;
  c.function = function;
  c.arg = std::move(arg);
  c.resultType = std::move(type);
  return c;
}

// GROUP BY user_id with count(*), sum(amount), max(ts_us).
AggregateSpec aggregateSpec() {
  AggregateSpec spec;
  spec.id = 2;
  spec.groupKeys = {makeColumnRef(1, str(), "user_id")};
  spec.aggregates = {
      aggregateCall(AggregateFunction::CountStar, nullptr, bigint()),
      aggregateCall(AggregateFunction::Sum, makeColumnRef(2, float64(), "amount"), float64()),
      aggregateCall(AggregateFunction::Max, makeColumnRef(0, bigint(), "ts_us"), bigint())};
  spec.output.columns = {
      {"user_id", str()}, {"n", bigint()}, {"total", float64()}, {"ts_us", bigint()}};
  return spec;
}

}  // namespace

int main(int argc, char** argv) {
  const long rows = argc > 1 ? std::atol(argv[1]) : 200000;
  auto processor =
      PythonProcessor::compile("running_totals", returnsSchema(), runningTotalsBody(), 0);
  double check = 0;

  pythonCalls(processor, rows / 10, check);  // warm up
  std::printf("%-52s %8.1f ns/row\n", "PYTHON processor call (value state get + update)",
              pythonCalls(processor, rows, check));
  cppCalls(rows / 10, check);
  std::printf("%-52s %8.1f ns/row\n", "C++    same update on encoded bytes", cppCalls(rows, check));
  const TransformSpec transform = transformSpec(processor);
  std::printf(
      "%-52s %8.1f ns/row\n", "TRANSFORM operator, RocksDB state",
      operatorCase(
          [&](StateStore& store) { return makeTransform(transform, store.table(transform.id, 0)); },
          rows, check));
  const AggregateSpec aggregate = aggregateSpec();
  std::printf(
      "%-52s %8.1f ns/row\n", "GROUP BY count(*), sum, max, RocksDB state",
      operatorCase(
          [&](StateStore& store) { return makeAggregate(aggregate, store.table(aggregate.id, 0)); },
          rows, check));
  std::printf("(%d users, %ld rows per case; check %.0f)\n", kUsers, rows, check);
  return 0;
}
