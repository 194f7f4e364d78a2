// rtsql_record_path: the CPU a record costs on a stage's own path, without a
// broker: decode the JSON bytes, run the stage's operators (planned from the
// same SQL as bench/scenarios/scenario.sh), encode the output row as the Kafka sink does,
// and count it as the source task and the sink operator do. Nothing is sent
// anywhere, so what it measures is the record path alone; run it under
// `valgrind --tool=callgrind` for instructions per record (deterministic), or
// plainly for CPU microseconds per record. See docs/benchmarks.md "Record path".
//
//   rtsql_record_path [stateless|broadcast_join|groupby_new_key] [--records N]
//                     [--size BYTES] [--reuse-rows] [--epoch E] [--budget MIB]
//
// groupby_new_key is query B of the Databricks shape (GROUP BY ts_us, pad:
// every record a new group whose key is about the record's size, one state
// write per record), planned as scenario.sh plans it with 4 shuffle
// partitions: the source stage's operators and its shuffle writer, then, on
// the same thread, each of the 4 shuffle tasks' Aggregate on a RocksDB state
// store (one table per task, the store's default 64 MiB budget) and the sink
// operator with its encoder. Each record gets a stamp of its own, so each is
// a new key. An epoch ends every --epoch records (default 10,000): the tasks
// flush their tables, as at a flow's epoch end (no checkpoint is taken).
// --budget sets the store's memory budget in MiB: with a smaller one the
// tables' caches evict sooner, as they do through most of a longer run.
//
// Records have the shape bench/scenarios/latency.cpp sends (200 bytes by default). As in
// the source task, each batch of records is decoded into fresh rows; with
// --reuse-rows the batch keeps its rows and the decoder refills them, which
// shows what a source that reuses its batch would save.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <deque>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "common/clock.h"
#include "connectors/format/codec.h"
#include "executor/connector_provider.h"
#include "executor/metrics/task_metrics.h"
#include "executor/operators/factory.h"
#include "executor/operators/sink.h"
#include "executor/shuffle.h"
#include "executor/state/state_store.h"
#include "parser/parser.h"
#include "planner/planner.h"

using namespace rtsql;

namespace {

// The same record as bench/scenarios/latency.cpp's makeRecord (keys 1000, merchants 10000).
std::string makeRecord(int64_t seq, int size) {
  char head[400];
  const int64_t eventId = seq;
  const int userId = static_cast<int>(eventId % 1000);
  const int merchantId = static_cast<int>((eventId * 7919) % 10000);
  const double amount = 10.5 + static_cast<double>(eventId % 1000) / 10.0;
  const int64_t tsUs = 1'700'000'000'000'000 + seq * 100;
  int n = std::snprintf(head, sizeof head,
                        "{\"ts_us\":%" PRId64 ",\"ts\":%" PRId64 ".%03d,\"seq\":%" PRId64
                        ",\"event_id\":%" PRId64
                        ",\"user_id\":\"user%d\",\"url\":\"https://example.com/p/%d\","
                        "\"amount\":%.2f,\"merchant_id\":%d,\"pad\":\"",
                        tsUs, tsUs / 1000, static_cast<int>(tsUs % 1000), seq, eventId, userId,
                        static_cast<int>(eventId % 97), amount, merchantId);
  std::string rec(head, static_cast<size_t>(n));
  int pad = size - n - 2;
  if (pad > 0) rec.append(static_cast<size_t>(pad), 'x');
  rec += "\"}";
  return rec;
}

// Encodes every row as the Kafka sink writer does, then drops it.
class EncodingWriter final : public SinkWriter {
 public:
  explicit EncodingWriter(const SinkSpec& sink) : encoder_(makeEncoder(sink)) {}
  void write(const Row& row, int64_t) override {
    encoder_->encode(row, rec_);
    bytes_ += rec_.value.size();
  }
  void flush(int) override {}
  int64_t deliveryErrors() const override { return 0; }
  std::string description() const override { return "encode only"; }
  uint64_t bytes() const { return bytes_; }

 private:
  std::unique_ptr<RecordEncoder> encoder_;
  EncodedRecord rec_;
  uint64_t bytes_ = 0;
};

PhysicalPlan planScenario(const std::string& scenario, Catalog& catalog) {
  const std::string ddl = R"(
CREATE SOURCE clicks (ts_us BIGINT, seq BIGINT, user_id STRING, url STRING, amount DOUBLE,
                      merchant_id BIGINT, pad STRING)
WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded', subscribe = 'in', format = 'json');
CREATE SINK out WITH (connector = 'kafka', 'kafka.bootstrap.servers' = 'embedded', topic = 'out',
                      format = 'json');
CREATE TABLE merchants (id BIGINT, name STRING, category STRING, risk DOUBLE)
WITH (connector = 'file', path = '/dev/null', format = 'csv');
)";
  for (auto& stmt : parseStatements(ddl)) {
    if (stmt->kind == ast::StatementKind::CreateSource) {
      auto& s = static_cast<ast::CreateSource&>(*stmt);
      SourceDef def;
      def.name = s.name;
      def.options = bindOptions(s.options);
      def.connector = "kafka";
      def.format = "json";
      def.schema = bindKafkaRecordSchema(s, def.format, false);
      def.traits.partitionedLog = true;  // as KafkaConnector says
      def.sql = s.text;
      catalog.addSource(std::move(def), false, 0);
    } else if (stmt->kind == ast::StatementKind::CreateSink) {
      auto& s = static_cast<ast::CreateSink&>(*stmt);
      SinkDef def;
      def.name = s.name;
      def.options = bindOptions(s.options);
      def.connector = "kafka";
      def.format = "json";
      def.traits.kafkaCluster = true;
      catalog.addSink(std::move(def), false, 0);
    } else if (stmt->kind == ast::StatementKind::CreateTable) {
      auto& s = static_cast<ast::CreateTable&>(*stmt);
      TableDef def;
      def.name = s.name;
      def.schema = bindTableSchema(s);
      def.options = bindOptions(s.options);
      // The merchants scenario.sh writes: ids 0..9999.
      auto rows = std::make_shared<std::vector<Row>>();
      char name[32];
      for (int i = 0; i < 10000; ++i) {
        std::snprintf(name, sizeof name, "merchant-%05d", i);
        rows->push_back({Value::bigint(i), Value::string(name),
                         Value::string("cat" + std::to_string(i % 17)),
                         Value::float64((i % 100) / 100.0)});
      }
      def.rows = std::move(rows);
      catalog.addTable(std::move(def), false, 0);
    }
  }
  std::string query =
      scenario == "broadcast_join"
          ? "SELECT c.ts_us, c.user_id, m.name FROM clicks c JOIN merchants m "
            "ON c.merchant_id = m.id"
      : scenario == "groupby_new_key"
          ? "SELECT ts_us, pad, count(*) AS n FROM clicks GROUP BY ts_us, pad"
          : "SELECT ts_us, user_id, upper(url) AS url, amount * 2 AS doubled "
            "FROM clicks WHERE amount > 10";
  // bench/scenarios/scenario.sh runs query B with 4 shuffle partitions.
  const std::string with =
      scenario == "groupby_new_key" ? "WITH ('shuffle.partitions' = '4') " : "";
  auto stmts = parseStatements("CREATE FLOW f INTO out " + with + "AS " + query);
  PlanContext ctx;
  ctx.catalog = &catalog;
  ctx.sourcePartitions = [](const SourceDef&) { return 1; };
  return planFlow(static_cast<const ast::CreateFlow&>(*stmts.at(0)), ctx);
}

// Writes `v` as exactly `digits` decimal digits at `at` (the stamp of a
// record of the pool, rewritten in place so that every record is a new key).
void putDigits(char* at, int64_t v, int digits) {
  for (int i = digits - 1; i >= 0; --i) {
    at[i] = static_cast<char>('0' + v % 10);
    v /= 10;
  }
}

double cpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
  std::string scenario = "stateless";
  long records = 200000;
  int size = 200;
  long epochEvery = 10000;
  int64_t budgetMiB = StateStoreOptions().cacheBytes >> 20;
  bool reuseRows = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--records" && i + 1 < argc) {
      records = std::atol(argv[++i]);
    } else if (a == "--size" && i + 1 < argc) {
      size = std::atoi(argv[++i]);
    } else if (a == "--epoch" && i + 1 < argc) {
      epochEvery = std::max(1L, std::atol(argv[++i]));
    } else if (a == "--budget" && i + 1 < argc) {
      budgetMiB = std::max(1L, std::atol(argv[++i]));
    } else if (a == "--reuse-rows") {
      reuseRows = true;
    } else if (a == "stateless" || a == "broadcast_join" || a == "groupby_new_key") {
      scenario = a;
    } else {
      std::fprintf(stderr,
                   "usage: rtsql_record_path [stateless|broadcast_join|groupby_new_key] "
                   "[--records N] [--size BYTES] [--reuse-rows] [--epoch E] [--budget MIB]\n");
      return 2;
    }
  }

  Catalog catalog;
  PhysicalPlan plan = planScenario(scenario, catalog);
  const bool shuffled = scenario == "groupby_new_key";
  if (plan.stages.size() != (shuffled ? 2u : 1u) ||
      (shuffled && plan.stages[0].output.kind != StageOutput::Kind::Shuffle)) {
    std::fprintf(stderr, "rtsql_record_path: expected a %s plan:\n%s\n",
                 shuffled ? "source stage and a shuffle stage" : "single-stage",
                 plan.explain().c_str());
    return 1;
  }
  const ScanSpec& scan = plan.scans.at(0);
  std::unique_ptr<RecordDecoder> decoder = makeDecoder(scan.format, scan.schema, scan.options);

  // A shuffled plan's state store, removed at the end.
  std::unique_ptr<StateStore> store;
  if (shuffled) {
    StateStoreOptions so;
    so.path = (std::filesystem::temp_directory_path() /
               ("rtsql-record-path-" + std::to_string(::getpid())))
                  .string();
    so.destroyOnClose = true;
    so.cacheBytes = budgetMiB << 20;
    store = StateStore::open(so);
  }

  // The first stage's operators, then the sink operator or the shuffle
  // writer into each shuffle task's queue, as the flow runtime chains them;
  // each shuffle task's operators end in a sink operator.
  EncodingWriter writer(plan.sink);
  TaskMetricsSlot metrics;
  std::atomic<bool> stopping{false};
  const int shuffleTasks = shuffled ? plan.stages[1].tasks : 0;
  std::vector<std::unique_ptr<ShuffleQueue>> queues;
  std::vector<ShuffleQueue*> targets;
  for (int t = 0; t < shuffleTasks; ++t) {
    queues.push_back(std::make_unique<ShuffleQueue>(1 << 20));
    targets.push_back(queues.back().get());
  }
  auto chain = [&](const StageSpec& stage, int task, OperatorPtr last) {
    std::vector<OperatorPtr> ops;
    for (const OperatorSpec& spec : stage.operators)
      ops.push_back(makeOperator(spec, store.get(), task));
    ops.push_back(std::move(last));
    for (size_t i = 0; i + 1 < ops.size(); ++i) ops[i]->setNext(ops[i + 1].get());
    ops.front()->takeInputRows();  // as the flow runtime says to a task's first operator
    return ops;
  };
  ShuffleWriter* shuffleOut = nullptr;
  std::vector<OperatorPtr> ops;
  if (shuffled) {
    auto out = std::make_unique<ShuffleWriter>(plan.stages[0].output.keys, targets, 0, 0, stopping);
    shuffleOut = out.get();
    ops = chain(plan.stages[0], 0, std::move(out));
  } else {
    ops = chain(plan.stages[0], 0, std::make_unique<SinkOperator>(writer, metrics));
  }
  std::vector<std::vector<OperatorPtr>> shuffleOps;
  for (int t = 0; t < shuffleTasks; ++t)
    shuffleOps.push_back(chain(plan.stages[1], t, std::make_unique<SinkOperator>(writer, metrics)));
  Operator* head = ops.front().get();

  // A pool of distinct records, cycled, so the payloads vary as on the wire.
  // In groupby_new_key each record's stamp (ts_us, the group key's first
  // column) is rewritten in place before it is read: every record a new key.
  std::vector<std::string> pool;
  for (int i = 0; i < 1024; ++i) pool.push_back(makeRecord(i, size));
  constexpr size_t kStampAt = 9;  // {"ts_us":<16 digits>
  constexpr int kStampDigits = 16;

  // The source task's loop (executor/flow_source_task.cpp): batches
  // of decoded records, each counted, its queuing latency recorded, then pushed.
  // The shuffle tasks' loop (executor/flow_shuffle_task.cpp) takes what the
  // source task's batch gave each of them.
  constexpr size_t kBatch = 512;
  std::vector<SourceRecord> batch;
  batch.reserve(kBatch);
  std::deque<ShuffleMessage> inbox;
  std::string error;
  const double cpu0 = cpuSeconds();
  long done = 0;
  long nextEpoch = epochEvery;
  while (done < records) {
    if (!reuseRows) batch.clear();
    size_t used = 0;
    const int64_t readMicros = nowMicros();
    for (size_t i = 0; i < kBatch && done + static_cast<long>(i) < records; ++i) {
      const long seq = done + static_cast<long>(i);
      std::string& bytes = pool[static_cast<size_t>(seq) % pool.size()];
      if (shuffled) putDigits(bytes.data() + kStampAt, 1'700'000'000'000'000 + seq * 100, kStampDigits);
      RecordView view;
      view.value = bytes.data();
      view.valueLen = bytes.size();
      view.topic = "in";
      view.offset = seq;
      view.timestampMicros = readMicros - 1000;
      SourceRecord& rec = used < batch.size() ? batch[used] : batch.emplace_back();
      ++used;
      if (!decoder->decode(view, rec.row, error)) {
        std::fprintf(stderr, "rtsql_record_path: decode failed: %s\n", error.c_str());
        return 1;
      }
      rec.timestampMicros = view.timestampMicros;
      rec.readMicros = readMicros;
    }
    EpochMetrics& m = metrics.current();
    if (shuffleOut) shuffleOut->beginBatch();
    for (size_t i = 0; i < used; ++i) {
      SourceRecord& rec = batch[i];
      addOwned<uint64_t>(m.inputRows);
      m.sourceQueuingLatency.record(rec.readMicros - rec.timestampMicros);
      RecordContext ctx{rec.timestampMicros, rec.readMicros};
      head->push(rec.row, ctx);
    }
    if (shuffleOut) shuffleOut->endBatch();
    done += static_cast<long>(used);
    for (size_t t = 0; t < queues.size(); ++t) {
      if (!queues[t]->popAll(inbox, 0)) continue;
      Operator* taskHead = shuffleOps[t].front().get();
      for (ShuffleMessage& msg : inbox) taskHead->push(msg.row, msg.ctx);
      taskHead->onBatchEnd();
      inbox.clear();
    }
    if (shuffled && done >= nextEpoch) {
      for (auto& task : shuffleOps) task.front()->onEpochEnd();
      nextEpoch += epochEvery;
    }
  }
  const double cpu = cpuSeconds() - cpu0;
  const uint64_t out = metrics.current().outputRows.load();
  std::printf("%s%s: %ld records, %" PRIu64
              " rows out, %.1f output bytes/row, %.3f us CPU per record\n",
              scenario.c_str(), reuseRows ? " (rows reused)" : "", records, out,
              out ? static_cast<double>(writer.bytes()) / static_cast<double>(out) : 0.0,
              cpu * 1e6 / static_cast<double>(records));
  shuffleOps.clear();
  store.reset();
  return out == static_cast<uint64_t>(records) ? 0 : 1;
}
