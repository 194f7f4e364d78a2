// The executor's per-record paths without Kafka, JSON or a network: records
// made in memory go through one operator on RocksDB state (dedup, the stream
// join) or through the shuffle between two threads, with a watermark every
// 10 records and an epoch end (state flush) every 50,000: at 10,000 records/s
// of event time, the default checkpoint interval of 5 s. Prints CPU microseconds per record; run
// under `valgrind --tool=callgrind` for instruction counts that do not depend on the machine's
// load. See docs/benchmarks.md ("Executor hot paths").
//
//   rtsql_executor_hot_paths dedup|stream_join|regular_join|shuffle [RECORDS]
//
// regular_join is the stream join's workload without the time bound: every
// row stays in state (a regular join), so the state grows with the records.
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/expr.h"
#include "executor/operators/dedup.h"
#include "executor/operators/stream_join.h"
#include "executor/shuffle.h"
#include "executor/state/state_store.h"

using namespace rtsql;

namespace {

constexpr int64_t kMicrosPerRecord = 100;  // 10,000 records/s of event time
constexpr int64_t kDelayMicros = 1000000;  // the watermark delay

double cpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

// Counts what reaches it.
class Count final : public Operator {
 public:
  void push(Row&, const RecordContext&) override { ++rows; }
  std::string name() const override { return "Count"; }
  uint64_t rows = 0;
};

DataTypePtr bigint() {
  return DataType::of(TypeId::BigInt);
}
DataTypePtr str() {
  return DataType::of(TypeId::String);
}
DataTypePtr ts() {
  return DataType::of(TypeId::Timestamp);
}

// (ts, event_id, user_id, url, pad): about the benchmark's records.
Row record(int64_t time, int64_t id) {
  return Row{Value::timestamp(time), Value::bigint(id),
             Value::string("user-" + std::to_string(id % 1000)),
             Value::string("https://example.com/p/" + std::to_string(id % 977)),
             Value::string(std::string(120, 'x'))};
}

struct Store {
  std::unique_ptr<StateStore> store;
  Store() {
    StateStoreOptions o;
    o.path =
        (std::filesystem::temp_directory_path() / ("rtsql-hot-paths-" + std::to_string(::getpid())))
            .string();
    o.destroyOnClose = true;
    store = StateStore::open(o);
  }
};

// Drives `op` like a task: a watermark every 10 records, an epoch end every
// 50,000. `push` feeds record i.
template <typename Push>
void drive(Operator& op, int64_t n, Push push) {
  for (int64_t i = 0; i < n; ++i) {
    push(i);
    if (i % 10 == 9) op.onWatermark(i * kMicrosPerRecord - kDelayMicros);
    if (i % 50000 == 49999) op.onEpochEnd();
  }
}

uint64_t runDedup(int64_t n) {
  Store s;
  DedupSpec spec;
  spec.id = 1;
  spec.dedupKeys = {makeColumnRef(1, bigint(), "event_id")};
  spec.withinWatermark = true;
  spec.eventTime = makeColumnRef(0, ts(), "ts");
  OperatorPtr op = makeDedup(spec, s.store->table(1, 0));
  Count out;
  op->setNext(&out);
  drive(*op, n, [&](int64_t i) {
    // One record in five repeats the event of 51 records earlier (an
    // original: 51 is no multiple of 5).
    const int64_t id = i % 5 == 4 && i >= 51 ? i - 51 : i;
    Row r = record(id * kMicrosPerRecord, id);
    op->push(r, RecordContext{});
  });
  return out.rows;
}

uint64_t runStreamJoin(int64_t n, bool regular = false) {
  Store s;
  StreamJoinSpec spec;
  spec.unbounded = regular;
  spec.id = 2;
  for (const char* side : {"c", "i"}) {
    spec.output.columns.push_back({std::string(side) + ".ts", ts()});
    spec.output.columns.push_back({"event_id", bigint()});
    spec.output.columns.push_back({"user_id", str()});
    spec.output.columns.push_back({"url", str()});
    spec.output.columns.push_back({"pad", str()});
  }
  spec.leftKeys = {makeColumnRef(1, bigint(), "event_id")};
  spec.rightKeys = {makeColumnRef(1, bigint(), "event_id")};
  spec.leftTime = makeColumnRef(0, ts(), "ts");
  spec.rightTime = makeColumnRef(0, ts(), "ts");
  spec.lowerBoundMicros = -5000000;  // the impression within 5 s before the click
  spec.upperBoundMicros = 0;
  spec.leftWidth = 5;
  spec.rightWidth = 5;
  OperatorPtr op = makeStreamJoin(spec, s.store->table(2, 0));
  Count out;
  op->setNext(&out);
  // Record 2k is the impression of event k, record 2k + 1 its click.
  drive(*op, n, [&](int64_t i) {
    Row r = record(i * kMicrosPerRecord, i / 2);
    if (i % 2 == 0) {
      op->pushRight(r, RecordContext{});
    } else {
      op->push(r, RecordContext{});
    }
  });
  return out.rows;
}

uint64_t runShuffle(int64_t n) {
  constexpr size_t kTargets = 4;
  std::vector<std::unique_ptr<ShuffleQueue>> queues;
  std::vector<ShuffleQueue*> targets;
  for (size_t t = 0; t < kTargets; ++t) {
    queues.push_back(std::make_unique<ShuffleQueue>(8192));
    targets.push_back(queues.back().get());
  }
  std::atomic<bool> stopping{false};
  ShuffleWriter writer({makeColumnRef(2, str(), "user_id")}, targets, 0, 0, stopping);
  std::atomic<uint64_t> received{0};
  std::vector<std::thread> consumers;
  for (size_t t = 0; t < kTargets; ++t) {
    consumers.emplace_back([&, t] {
      std::deque<ShuffleMessage> inbox;
      while (!stopping.load()) {
        if (!queues[t]->popAll(inbox, 5)) continue;
        received.fetch_add(inbox.size());
        inbox.clear();
      }
    });
  }
  // Polls of 8 records, as a source handing over what arrived together.
  for (int64_t i = 0; i < n; i += 8) {
#ifndef RTSQL_SHUFFLE_WITHOUT_BATCHES
    writer.beginBatch();
#endif
    for (int64_t j = i; j < i + 8 && j < n; ++j) {
      Row r = record(j * kMicrosPerRecord, j);
      writer.push(r, RecordContext{});
    }
#ifndef RTSQL_SHUFFLE_WITHOUT_BATCHES
    writer.endBatch();
#endif
  }
  while (received.load() < static_cast<uint64_t>(n)) std::this_thread::yield();
  stopping = true;
  for (auto& q : queues) q->wakeAll();
  for (auto& c : consumers) c.join();
  return received.load();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s dedup|stream_join|regular_join|shuffle [RECORDS]\n", argv[0]);
    return 2;
  }
  const std::string what = argv[1];
  const int64_t n = argc > 2 ? std::atoll(argv[2]) : 200000;
  const double c0 = cpuSeconds();
  uint64_t out;
  if (what == "dedup") {
    out = runDedup(n);
  } else if (what == "stream_join") {
    out = runStreamJoin(n);
  } else if (what == "regular_join") {
    out = runStreamJoin(n, true);
  } else if (what == "shuffle") {
    out = runShuffle(n);
  } else {
    std::fprintf(stderr, "unknown: %s\n", what.c_str());
    return 2;
  }
  const double cpu = cpuSeconds() - c0;
  std::printf("%s: %lld records, %llu out, %.3f s CPU, %.2f us CPU per record\n", what.c_str(),
              static_cast<long long>(n), static_cast<unsigned long long>(out), cpu,
              cpu * 1e6 / static_cast<double>(n));
  return 0;
}
