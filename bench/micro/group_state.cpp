// The state path of a GROUP BY whose every record is a new group (query B of
// the Databricks shape: GROUP BY ts_us, pad with records of about 1.2 KB), in
// one process without a broker or a network: records made in memory go
// through the Aggregate operator on a RocksDB state store as a task drives it,
// in polls of --batch records, with an epoch end every --epoch records (at
// 10,000 records/s of event time, the default checkpoint interval of 5 s)
// followed by a checkpoint taken on another thread while the task goes on
// with its writes held, as the flow's epoch coordinator does. As the
// coordinator's interval, the --epoch records count from the checkpoint
// before being taken (the task let go of its writes): a checkpoint slower
// than an epoch delays the next barrier rather than the task waiting for it
// at its barrier. The two last checkpoints are kept, older ones removed.
//
// Every --report groups it prints the task thread's CPU per poll P50 / P99 /
// max (the epoch-end flush is in its poll, as the records behind a barrier
// wait for it), the longest poll in wall clock (supporting only: it measures
// the machine's load too), the task thread's CPU per record and the
// process's (RocksDB's background threads included), and RocksDB's own
// figures since the last line: microseconds writes were stalled, stalls by
// cause, flushes, compactions, level-0 files, memtable bytes. A stall shows
// as stall microseconds and a max that grows with the state. Run it under
// `valgrind --tool=callgrind` at two sizes for instructions per record that do
// not depend on the machine's load. See docs/benchmarks.md ("The state path
// of a new key per record").
//
//   rtsql_group_state [--groups N] [--size BYTES] [--tasks T] [--batch B]
//                     [--epoch E] [--report R] [--dir DIR]
//
// Defaults: 1,000,000 groups, 1,200-byte keys, 1 task, polls of 100 records,
// an epoch every 50,000 records, a line every 250,000 groups, the store under
// the temporary directory (removed at the end). With --tasks T the records
// go round robin to T tables of one store (the shuffle's T partitions, here
// on one thread), which share its memory budget.
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/expr.h"
#include "executor/operators/aggregate.h"
#include "executor/state/state_store.h"
#include "planner/operator_spec.h"

using namespace rtsql;

namespace {

constexpr int64_t kMicrosPerRecord = 100;  // 10,000 records/s of event time

double seconds(clockid_t clock) {
  timespec t{};
  clock_gettime(clock, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9;
}

// Counts what reaches it.
class Count final : public Operator {
 public:
  void push(Row&, const RecordContext&) override { ++rows; }
  std::string name() const override { return "Count"; }
  uint64_t rows = 0;
};

// SELECT ts_us, pad, count(*) AS n ... GROUP BY ts_us, pad.
AggregateSpec groupByNewKey() {
  AggregateSpec spec;
  spec.id = 1;
  auto bigint = DataType::of(TypeId::BigInt);
  auto str = DataType::of(TypeId::String);
  spec.groupKeys = {makeColumnRef(0, bigint, "ts_us"), makeColumnRef(1, str, "pad")};
  AggregateCall count;
  count.function = AggregateFunction::CountStar;
  count.resultType = bigint;
  spec.aggregates = {count};
  spec.output.columns = {{"ts_us", bigint}, {"pad", str}, {"n", bigint}};
  return spec;
}

// Takes the checkpoints: the flow's epoch coordinator, on its own thread.
class Checkpointer {
 public:
  Checkpointer(StateStore& store, std::string dir) : store_(store), dir_(std::move(dir)) {
    thread_ = std::thread([this] { run(); });
  }
  ~Checkpointer() {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  void request(uint64_t epoch) {
    {
      std::lock_guard lock(mu_);
      requested_ = epoch;
    }
    cv_.notify_all();
  }
  uint64_t done() const { return done_.load(std::memory_order_acquire); }
  double longestMs() const { return longestMs_; }

 private:
  void run() {
    std::unique_lock lock(mu_);
    for (;;) {
      cv_.wait(lock, [&] { return stopping_ || requested_ > done_.load(); });
      if (stopping_) return;
      const uint64_t epoch = requested_;
      lock.unlock();
      const std::string dir = dir_ + "/" + std::to_string(epoch);
      const double t0 = seconds(CLOCK_MONOTONIC);
      store_.snapshot(dir);
      longestMs_ = std::max(longestMs_, (seconds(CLOCK_MONOTONIC) - t0) * 1e3);
      kept_.push_back(dir);
      while (kept_.size() > 2) {
        std::filesystem::remove_all(kept_.front());
        kept_.pop_front();
      }
      lock.lock();
      done_.store(epoch, std::memory_order_release);
      cv_.notify_all();
    }
  }

  StateStore& store_;
  std::string dir_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  uint64_t requested_ = 0;
  std::atomic<uint64_t> done_{0};
  std::deque<std::string> kept_;
  double longestMs_ = 0;
  std::thread thread_;
};

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
}

uint64_t delta(const std::map<std::string, uint64_t>& now,
               const std::map<std::string, uint64_t>& before, const char* name) {
  auto a = now.find(name);
  if (a == now.end()) return 0;
  auto b = before.find(name);
  return a->second - (b == before.end() ? 0 : b->second);
}

uint64_t at(const std::map<std::string, uint64_t>& m, const char* name) {
  auto i = m.find(name);
  return i == m.end() ? 0 : i->second;
}

}  // namespace

int main(int argc, char** argv) {
  int64_t groups = 1000000, size = 1200, tasks = 1, batch = 100, epochEvery = 50000,
          report = 250000;
  std::string dir;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) {
      std::fprintf(stderr, "%s: %s needs a value\n", argv[0], a.c_str());
      return 2;
    }
    const char* v = argv[++i];
    if (a == "--groups") groups = std::atoll(v);
    else if (a == "--size") size = std::atoll(v);
    else if (a == "--tasks") tasks = std::max<int64_t>(1, std::atoll(v));
    else if (a == "--batch") batch = std::max<int64_t>(1, std::atoll(v));
    else if (a == "--epoch") epochEvery = std::max<int64_t>(1, std::atoll(v));
    else if (a == "--report") report = std::max<int64_t>(1, std::atoll(v));
    else if (a == "--dir") dir = v;
    else {
      std::fprintf(stderr, "%s: unknown argument %s\n", argv[0], a.c_str());
      return 2;
    }
  }
  const bool ownDir = dir.empty();
  if (ownDir)
    dir = (std::filesystem::temp_directory_path() /
           ("rtsql-group-state-" + std::to_string(getpid())))
              .string();
  std::filesystem::remove_all(dir);

  StateStoreOptions so;
  so.path = dir + "/state";
  so.statistics = true;
  std::unique_ptr<StateStore> store = StateStore::open(so);
  const AggregateSpec spec = groupByNewKey();
  std::vector<OperatorPtr> ops;
  Count out;
  for (int64_t t = 0; t < tasks; ++t) {
    ops.push_back(makeAggregate(spec, store->table(spec.id, static_cast<int>(t))));
    ops.back()->setNext(&out);
  }
  std::filesystem::create_directories(dir + "/checkpoints");
  auto checkpointer = std::make_unique<Checkpointer>(*store, dir + "/checkpoints");

  // The pad: random letters (as datagen's), a different window of them per
  // record, after the record's number so that no two are equal.
  std::string letters(1 << 16, ' ');
  uint64_t x = 88172645463325252ull;
  for (char& c : letters) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    c = static_cast<char>('a' + x % 26);
  }
  const size_t padSize = static_cast<size_t>(std::max<int64_t>(16, size - 12));

  std::printf(
      "group_state: %lld groups of %lld-byte keys, %lld task(s), polls of %lld, an epoch every "
      "%lld\n",
      static_cast<long long>(groups), static_cast<long long>(size), static_cast<long long>(tasks),
      static_cast<long long>(batch), static_cast<long long>(epochEvery));
  std::printf(
      "  groups | poll P50 / P99 / max ms CPU | task us/rec | process us/rec | stall ms | "
      "stalls (L0 slow/stop, memtable) | flushes | compactions (s) | L0 files | memtables MB | "
      "cache MB\n");

  uint64_t epoch = 0;
  bool held = false;
  // Records since the last checkpoint was taken: the next barrier comes
  // --epoch records after it.
  int64_t sinceCommit = 0;
  std::vector<double> polls;
  auto statsBefore = store->engineStats();
  double task0 = seconds(CLOCK_THREAD_CPUTIME_ID), proc0 = seconds(CLOCK_PROCESS_CPUTIME_ID);
  const double taskStart = task0, procStart = proc0;
  int64_t lineStart = 0;
  double worstPoll = 0;
  // The longest epoch-end flush (CPU), poll that began by letting go of
  // the held writes (CPU) and poll (wall clock), per line.
  double flushMs = 0, releaseMs = 0, worstWall = 0;
  std::vector<double> allPolls;
  Row row;
  for (int64_t i = 0; i < groups;) {
    const double p0 = seconds(CLOCK_MONOTONIC), c0 = seconds(CLOCK_THREAD_CPUTIME_ID);
    // The checkpoint is taken: the task lets its writes go (between polls, as
    // a task sees the coordinator's commit).
    bool released = false;
    if (held && checkpointer->done() >= epoch) {
      for (int64_t t = 0; t < tasks; ++t) store->holdWrites(spec.id, static_cast<int>(t), false);
      held = false;
      released = true;
    }
    const int64_t end = std::min(groups, i + batch);
    for (; i < end; ++i) {
      std::string pad = std::to_string(i);
      pad.push_back('-');
      pad.append(letters, static_cast<size_t>(i * 7919) % (letters.size() - padSize), padSize);
      row = Row{Value::bigint(1'700'000'000'000'000 + i * kMicrosPerRecord),
                Value::string(std::move(pad))};
      ops[static_cast<size_t>(i % tasks)]->push(row, RecordContext{});
      if (!held && ++sinceCommit >= epochEvery) {
        // The barrier: every task flushes and holds; the checkpoint follows.
        sinceCommit = 0;
        const double b1 = seconds(CLOCK_THREAD_CPUTIME_ID);
        for (auto& op : ops) op->onEpochEnd();
        flushMs = std::max(flushMs, (seconds(CLOCK_THREAD_CPUTIME_ID) - b1) * 1e3);
        for (int64_t t = 0; t < tasks; ++t) store->holdWrites(spec.id, static_cast<int>(t), true);
        held = true;
        checkpointer->request(++epoch);
      }
    }
    const double ms = (seconds(CLOCK_THREAD_CPUTIME_ID) - c0) * 1e3;
    polls.push_back(ms);
    allPolls.push_back(ms);
    worstPoll = std::max(worstPoll, ms);
    if (released) releaseMs = std::max(releaseMs, ms);
    worstWall = std::max(worstWall, (seconds(CLOCK_MONOTONIC) - p0) * 1e3);
    if (i - lineStart >= report || i == groups) {
      const auto now = store->engineStats();
      const double task1 = seconds(CLOCK_THREAD_CPUTIME_ID);
      const double proc1 = seconds(CLOCK_PROCESS_CPUTIME_ID);
      const double n = static_cast<double>(i - lineStart);
      // RocksDB's counters since the last line.
      auto d = [&](const char* name) {
        return static_cast<unsigned long long>(delta(now, statsBefore, name));
      };
      std::printf(
          "  %lld | %.2f / %.2f / %.1f | %.1f | %.1f | %.1f | %llu / %llu, %llu | %llu | "
          "%llu (%.1f) | %llu | %.0f | %.0f\n",
          static_cast<long long>(i), percentile(polls, 0.5), percentile(polls, 0.99),
          *std::max_element(polls.begin(), polls.end()), (task1 - task0) * 1e6 / n,
          (proc1 - proc0) * 1e6 / n, static_cast<double>(d("stall-micros")) / 1e3,
          d("io_stalls.level0_slowdown") + d("io_stalls.slowdown_for_pending_compaction_bytes"),
          d("io_stalls.level0_numfiles") + d("io_stalls.stop_for_pending_compaction_bytes"),
          d("io_stalls.memtable_compaction") + d("io_stalls.memtable_slowdown"), d("flushes"),
          d("compactions"), static_cast<double>(d("compaction-micros")) / 1e6,
          static_cast<unsigned long long>(at(now, "num-files-at-level0")),
          static_cast<double>(at(now, "cur-size-all-mem-tables")) / 1e6,
          static_cast<double>(at(now, "cache-bytes")) / 1e6);
      std::printf("      epoch end: flush max %.1f ms CPU; poll after a hold ends max %.1f ms CPU;"
                  " poll max %.1f ms wall clock; longest checkpoint so far %.1f ms wall clock\n",
                  flushMs, releaseMs, worstWall, checkpointer->longestMs());
      flushMs = releaseMs = worstWall = 0;
      std::fflush(stdout);
      statsBefore = now;
      task0 = task1;
      proc0 = proc1;
      polls.clear();
      lineStart = i;
    }
  }
  checkpointer.reset();
  const auto last = store->engineStats();
  const double taskCpu = seconds(CLOCK_THREAD_CPUTIME_ID) - taskStart;
  const double procCpu = seconds(CLOCK_PROCESS_CPUTIME_ID) - procStart;
  std::printf(
      "group_state: %llu rows out; poll P50 / P99 / max %.2f / %.2f / %.1f ms; task %.2f us CPU "
      "per record, process %.2f; stalled %.1f ms; %llu flushes, %llu compactions; %.0f MB in SST "
      "files\n",
      static_cast<unsigned long long>(out.rows), percentile(allPolls, 0.5),
      percentile(allPolls, 0.99), worstPoll, taskCpu * 1e6 / static_cast<double>(groups),
      procCpu * 1e6 / static_cast<double>(groups),
      static_cast<double>(at(last, "stall-micros")) / 1e3,
      static_cast<unsigned long long>(at(last, "flushes")),
      static_cast<unsigned long long>(at(last, "compactions")),
      static_cast<double>(at(last, "total-sst-files-size")) / 1e6);
  ops.clear();
  store.reset();
  if (ownDir) std::filesystem::remove_all(dir);
  return 0;
}
