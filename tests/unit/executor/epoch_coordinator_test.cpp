// The order of an epoch: the coordinator asks the tasks to end it, the last
// task's report completes it, the checkpoint is written (and an exactly-once
// sink's transaction committed), and only then may sources commit its offsets.
// Tasks are played by the test thread.
#include "executor/epoch_coordinator.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "common/error.h"
#include "executor/state/state_store.h"
#include "executor/state_copy.h"
#include "tests/unit/executor/state_test_util.h"

using namespace rtsql;

namespace {

constexpr int64_t kMs = 1000;

template <typename F>
bool waitFor(F pred, int ms = 10'000) {
  for (int i = 0; i < ms / 2; ++i) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return pred();
}

// A coordinator with its thread, failing the way the runtime does: the flow
// stops at once.
struct Flow {
  Flow()
      : epochs(stopping, [this](const std::string& reason, const std::string& sqlstate) {
          failure = reason;
          failureCode = sqlstate;
          stopping = true;
          epochs.wake();
        }) {}
  ~Flow() { stop(); }

  void start(int tasks, EpochCoordinator::Durability d = {}, int64_t intervalMicros = 5 * kMs) {
    epochs.beginRun(tasks, intervalMicros, d, [] { return int64_t{4242}; });
    thread = std::thread([this] { epochs.run(); });
  }
  void stop() {
    stopping = true;
    epochs.wake();
    if (thread.joinable()) thread.join();
  }

  std::atomic<bool> stopping{false};
  std::string failure, failureCode;
  EpochCoordinator epochs;
  std::thread thread;
};

// Task `task` of stage `stage` reports the epoch, with its barrier offset
// when it is a source (offset >= 0).
void report(EpochCoordinator& c, int stage, int task, int64_t offset) {
  EpochSummary r;
  r.taskWatermarks.push_back({stage, task, 1000 + task});
  if (offset >= 0) r.positions.push_back({0, "t", task, offset});
  r.metrics.inputRows = 10;
  c.report(r);
}

class FakeTransaction : public SinkTransaction {
 public:
  int64_t recover() override { return -1; }
  void begin() override { calls.push_back("begin"); }
  void commit(uint64_t epoch) override {
    if (failCommit) throw SqlError(sqlstate::kConnectionFailure, "broker gone");
    calls.push_back("commit " + std::to_string(epoch));
  }
  void add(const std::string& topic, int, std::string_view key, const std::string*) override {
    if (failAdd) throw SqlError(sqlstate::kConnectionFailure, "queue full");
    calls.push_back("add " + topic + (key == "ckpt" ? " ckpt" : ""));
  }
  std::vector<std::string> calls;
  bool failCommit = false;
  bool failAdd = false;
};

// A RocksDB state store that records what changed between snapshots, as a
// flow with a state copy has.
std::unique_ptr<StateStore> recordingStore(const std::string& path) {
  StateStoreOptions so;
  so.path = path;
  so.recordChanges = true;
  return StateStore::open(so);
}

// A state copy that says where each write went: into the transaction it is
// given, or (none given) a write of its own, noted in `calls`.
class CopyInto : public StateCopy {
 public:
  explicit CopyInto(std::vector<std::string>& calls) : calls_(calls) {}
  Contents read() override { return {}; }
  std::optional<CheckpointInfo> newestCheckpoint() override { return std::nullopt; }
  void write(const CheckpointInfo& info, const std::vector<StateChange>& changes,
             SinkTransaction* within) override {
    if (!within) {
      calls_.push_back("own write of epoch " + std::to_string(info.epoch));
      return;
    }
    for (const StateChange& c : changes) within->add("copy", 0, c.key, c.value ? &*c.value : nullptr);
    within->add("copy", 0, "ckpt", nullptr);
  }
  void checkWithin(SinkTransaction&) override {}
  void clear() override {}
  void close() override {}
  void destroy() override {}
  std::unique_ptr<Follower> follow(int64_t) override {
    throw std::logic_error("an epoch's writes have no follower");
  }

 private:
  std::vector<std::string>& calls_;
};

std::string scratchDir(const char* name) {
  auto p = std::filesystem::temp_directory_path() /
           (std::string("rtsql_epochs_test_") + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(p);
  return p.string();
}

}  // namespace

TEST_CASE("an epoch completes with the last task's report, and is committable only then") {
  Flow f;
  f.start(2);
  CHECK(f.epochs.epoch() == 0);
  REQUIRE(waitFor([&] { return f.epochs.endRequested(0); }));
  CHECK_FALSE(f.epochs.endRequested(1));  // one epoch at a time
  CHECK_FALSE(f.epochs.finalEpoch());
  report(f.epochs, 0, 0, 5);
  CHECK(f.epochs.epoch() == 0);
  CHECK(f.epochs.committable() == 0);
  report(f.epochs, 1, 0, -1);
  CHECK(f.epochs.epoch() == 1);
  REQUIRE(waitFor([&] { return f.epochs.committable() == 1; }));
  // The finished epoch holds both reports and the flow's watermark.
  f.epochs.read([&](const EpochCoordinator::View& v) {
    REQUIRE(v.last != nullptr);
    CHECK(v.last->id == 0);
    CHECK(v.last->taskWatermarks.size() == 2);
    CHECK(v.last->positions.size() == 1);
    CHECK(v.last->metrics.inputRows.load() == 20);
    CHECK(v.last->watermark == 4242);
    REQUIRE(v.pending != nullptr);
    CHECK(v.pending->id == 1);
    CHECK(v.pending->startMicros == v.last->endMicros);
  });
  // The next epoch is asked for after the interval.
  CHECK(waitFor([&] { return f.epochs.endRequested(1); }));
  CHECK_FALSE(f.epochs.lastCheckpoint().has_value());  // no checkpoints kept
}

TEST_CASE("the checkpoint is written before the epoch is committable, with the barrier offsets") {
  const std::string root = scratchDir("ckpt");
  CheckpointDir dir(root, 3);
  FakeTransaction tx;
  Flow f;
  f.start(1, {&dir, nullptr, &tx});
  REQUIRE(waitFor([&] { return f.epochs.endRequested(0); }));
  report(f.epochs, 0, 0, 17);
  REQUIRE(waitFor([&] { return f.epochs.committable() == 1; }));
  // Committable implies durable: the checkpoint is on disk, the output committed.
  std::optional<CheckpointInfo> cp = f.epochs.lastCheckpoint();
  REQUIRE(cp.has_value());
  CHECK(cp->epoch == 0);
  CHECK(cp->watermark == 4242);
  REQUIRE(cp->positions.size() == 1);
  CHECK(cp->positions[0].offset == 17);
  REQUIRE(dir.latest().has_value());
  CHECK(dir.latest()->epoch == 0);
  CHECK(tx.calls == std::vector<std::string>{"commit 0", "begin"});
  f.stop();
  std::filesystem::remove_all(root);
}

TEST_CASE("finish ends the epoch in progress as the final one and returns once it is durable") {
  FakeTransaction tx;
  const std::string root = scratchDir("final");
  CheckpointDir dir(root, 3);
  Flow f;
  f.start(1, {&dir, nullptr, &tx}, 3'600'000 * kMs);  // no epoch ends on its own
  std::atomic<bool> finished{false};
  std::thread stopper([&] {
    f.epochs.finish(60'000 * kMs);
    finished = true;
  });
  REQUIRE(waitFor([&] { return f.epochs.endRequested(0); }));
  CHECK(f.epochs.finalEpoch());
  CHECK_FALSE(finished);
  report(f.epochs, 0, 0, 3);
  stopper.join();
  CHECK(f.epochs.committable() == 1);
  // The last epoch's transaction is committed and no other opened.
  CHECK(tx.calls == std::vector<std::string>{"commit 0"});
  f.thread.join();  // the coordinator is done
  CHECK(f.failure.empty());
  std::filesystem::remove_all(root);
}

TEST_CASE("a checkpoint that cannot be written fails the flow and commits nothing") {
  // A checkpoint root below a regular file cannot be created.
  const std::string file = scratchDir("file");
  {
    std::FILE* fp = std::fopen(file.c_str(), "w");
    REQUIRE(fp);
    std::fclose(fp);
  }
  CheckpointDir dir(file + "/ckpt", 3);
  Flow f;
  f.start(1, {&dir, nullptr, nullptr});
  REQUIRE(waitFor([&] { return f.epochs.endRequested(0); }));
  report(f.epochs, 0, 0, 1);
  REQUIRE(waitFor([&] { return f.stopping.load(); }));
  f.thread.join();
  CHECK(f.failure.find("cannot write the checkpoint of epoch 0") != std::string::npos);
  CHECK(f.failureCode == "58030");
  CHECK(f.epochs.committable() == 0);
  CHECK_FALSE(f.epochs.lastCheckpoint().has_value());
  std::filesystem::remove(file);
}

TEST_CASE("an output transaction that cannot commit fails the flow and commits no offsets") {
  const std::string root = scratchDir("tx");
  CheckpointDir dir(root, 3);
  FakeTransaction tx;
  tx.failCommit = true;
  Flow f;
  f.start(1, {&dir, nullptr, &tx});
  REQUIRE(waitFor([&] { return f.epochs.endRequested(0); }));
  report(f.epochs, 0, 0, 1);
  REQUIRE(waitFor([&] { return f.stopping.load(); }));
  f.thread.join();
  CHECK(f.failure.find("cannot commit the output of epoch 0: broker gone") != std::string::npos);
  CHECK(f.epochs.committable() == 0);
  std::filesystem::remove_all(root);
}

TEST_CASE("with exactly-once output the state copy rides the epoch's transaction, before its commit") {
  testing::TempDir tmp("epochs_copy");
  auto store = recordingStore(tmp.sub("state"));
  {
    auto t = store->table(1, 0);
    t->put("a", "1");
    t->put("b", "2");
    t->flush();
  }
  CheckpointDir dir(tmp.sub("ckpt"), 3);
  FakeTransaction tx;
  StateCopyKeeper keeper(std::make_shared<CopyInto>(tx.calls));
  Flow f;
  f.start(1, {&dir, store.get(), &tx, &keeper});
  REQUIRE(waitFor([&] { return f.epochs.endRequested(0); }));
  report(f.epochs, 0, 0, 1);
  REQUIRE(waitFor([&] { return f.epochs.committable() == 1; }));
  // Both entries and the checkpoint record are in the transaction that
  // commits the epoch's rows: a reader sees the copy of epoch 0 exactly when
  // it sees its output.
  CHECK(tx.calls ==
        std::vector<std::string>{"add copy", "add copy", "add copy ckpt", "commit 0", "begin"});
  f.stop();
}

TEST_CASE("a state copy that cannot join the transaction fails the flow and commits nothing") {
  testing::TempDir tmp("epochs_copy_fail");
  auto store = recordingStore(tmp.sub("state"));
  CheckpointDir dir(tmp.sub("ckpt"), 3);
  FakeTransaction tx;
  tx.failAdd = true;
  StateCopyKeeper keeper(std::make_shared<CopyInto>(tx.calls));
  Flow f;
  f.start(1, {&dir, store.get(), &tx, &keeper});
  REQUIRE(waitFor([&] { return f.epochs.endRequested(0); }));
  report(f.epochs, 0, 0, 1);
  REQUIRE(waitFor([&] { return f.stopping.load(); }));
  f.thread.join();
  CHECK(f.failure.find("cannot commit the output of epoch 0: its state copy: queue full") !=
        std::string::npos);
  CHECK(tx.calls.empty());
  CHECK(f.epochs.committable() == 0);
}

TEST_CASE("without a transaction the state copy is its own write, after the checkpoint") {
  testing::TempDir tmp("epochs_copy_own");
  auto store = recordingStore(tmp.sub("state"));
  CheckpointDir dir(tmp.sub("ckpt"), 3);
  std::vector<std::string> calls;
  StateCopyKeeper keeper(std::make_shared<CopyInto>(calls));
  Flow f;
  f.start(1, {&dir, store.get(), nullptr, &keeper});
  REQUIRE(waitFor([&] { return f.epochs.endRequested(0); }));
  report(f.epochs, 0, 0, 1);
  REQUIRE(waitFor([&] { return f.epochs.committable() == 1; }));
  CHECK(calls == std::vector<std::string>{"own write of epoch 0"});
  f.stop();
}

TEST_CASE("epoch numbers go on across runs, after a restore and after a reset") {
  std::atomic<bool> stopping{false};
  EpochCoordinator c(stopping, [](const std::string&, const std::string&) {});
  CHECK(c.epoch() == 0);
  CheckpointInfo cp;
  cp.epoch = 7;
  c.restored(cp);
  CHECK(c.epoch() == 8);
  CHECK(c.lastCheckpoint()->epoch == 7);
  c.reset(5);  // never back
  CHECK(c.epoch() == 8);
  CHECK_FALSE(c.lastCheckpoint().has_value());
  c.reset(12);
  CHECK(c.epoch() == 12);
  c.beginRun(1, kMs, {}, {});
  // A run's tasks count its epochs from 0: the coordinator asks for the
  // run's first epoch, 12, as epoch 0 of the run.
  CHECK_FALSE(c.endRequested(0));
  c.read([](const EpochCoordinator::View& v) {
    REQUIRE(v.pending != nullptr);
    CHECK(v.pending->id == 12);
    CHECK(v.last == nullptr);
  });
}

TEST_CASE("a source commits the newest durable epoch's offsets, which cover the older ones") {
  PendingOffsets p;
  p.add(0, {PartitionProgress{"t", 0, 0, 10, 10}});
  p.add(1, {PartitionProgress{"t", 0, 10, 20, 20}});
  p.add(2, {PartitionProgress{"t", 0, 20, 30, 30}});
  CHECK_FALSE(p.take(0).has_value());
  auto upTo = p.take(2);  // epochs 0 and 1 are durable
  REQUIRE(upTo.has_value());
  CHECK(upTo->front().endOffset == 20);
  CHECK_FALSE(p.take(2).has_value());  // nothing new is durable
  upTo = p.take(3);
  REQUIRE(upTo.has_value());
  CHECK(upTo->front().endOffset == 30);
}
