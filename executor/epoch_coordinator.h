// The epochs of a running flow: when one ends, which tasks have ended it, when
// it is durable, and so when its offsets may be committed. It is its own home
// because this ordering is what makes a flow's checkpoints and commits
// consistent, and it is tested on its own (tests/unit/executor/
// epoch_coordinator_test.cpp) with fake tasks.
//
// The order, for every epoch:
//  1. At each checkpoint interval (or at a stop, for the final epoch) the
//     coordinator thread (run()) asks the tasks to end the epoch:
//     endRequested() turns true. Only it asks, one epoch at a time.
//  2. Each task ends it between records (source tasks at their barrier
//     position, shuffle tasks once their barriers are aligned) and report()s
//     what it did. The last report completes the epoch.
//  3. The coordinator makes the complete epoch durable: it writes the
//     checkpoint (a snapshot of the state, the barrier offsets, the
//     watermarks) and commits an exactly-once sink's transaction.
//  4. Only then does committable() count the epoch: source tasks commit its
//     barrier offsets (PendingOffsets) and tasks release their held writes.
// Tasks never wait for any of it: they go on processing the next epoch.
//
// The coordinator outlives runs of its flow: epoch numbers, the last finished
// epoch and the newest checkpoint carry over from one run to the next.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "executor/checkpoint.h"
#include "executor/connector_provider.h"
#include "executor/metrics/epoch_summary.h"

namespace rtsql {

class StateStore;
class StateCopyKeeper;

class EpochCoordinator {
 public:
  // What makes an epoch durable. Without checkpoints nothing is written and an
  // epoch is durable once complete.
  struct Durability {
    CheckpointDir* checkpoints = nullptr;
    StateStore* state = nullptr;             // snapshotted into each checkpoint, when set
    SinkTransaction* transaction = nullptr;  // exactly-once sinks: committed per epoch
    StateCopyKeeper* copy = nullptr;         // the state's copy off this machine, written per checkpoint
  };
  // How the flow fails (the coordinator stops at once after it).
  using FailFn = std::function<void(const std::string& reason, const std::string& sqlstate)>;

  // `stopping` is the flow's flag that every thread leaves at once.
  // `flowName` names the flow in what the coordinator logs.
  EpochCoordinator(const std::atomic<bool>& stopping, FailFn fail, std::string flowName = {})
      : stopping_(stopping), fail_(std::move(fail)), flowName_(std::move(flowName)) {}

  // Between runs, while no task thread is running:
  // a restored checkpoint: the next epoch is the one after it.
  void restored(const CheckpointInfo& checkpoint);
  // A reset: no checkpoint is current, and epochs go on from at least `epoch`.
  void reset(uint64_t epoch);
  // The checkpoints were removed (a reset is pending); epoch numbers stay.
  void forgetCheckpoint();
  // A run starts: `tasks` tasks report each epoch, an epoch ends every
  // `intervalMicros`; `flowWatermark` gives the flow's watermark when an epoch
  // completes (called on the reporting task's thread). `wakeTasks`, when set,
  // is called on the coordinator's thread each time endRequested() or
  // committable() has changed, so that tasks can wait for records without a
  // timeout and still act on them at once.
  void beginRun(int tasks, int64_t intervalMicros, Durability durability,
                std::function<int64_t()> flowWatermark, std::function<void()> wakeTasks = {});

  // The coordinator thread: returns after the final epoch is durable, or when
  // the flow stops or fails.
  void run();

  // Task threads. `done` is how many epochs the task ended in this run.
  bool endRequested(uint64_t done) const {
    return requested_.load(std::memory_order_acquire) > done;
  }
  // The epoch being ended is the flow's last (read before ending it).
  bool finalEpoch() const { return final_.load(std::memory_order_acquire); }
  // A task ended the epoch; `mine` is what it did in it.
  void report(const EpochSummary& mine);
  // How many epochs of this run are durable.
  uint64_t committable() const { return committable_.load(std::memory_order_acquire); }

  // Any thread. Asks for the epoch in progress to be ended as the final one
  // and waits until it is durable, the flow stops, or `timeoutMicros` passed.
  void finish(int64_t timeoutMicros);
  // The flow stops (or failed): wakes the coordinator and finish().
  void wake();

  uint64_t epoch() const;  // the epoch in progress (or the next one)
  std::optional<CheckpointInfo> lastCheckpoint() const;
  // Its epoch alone (what a view's lookup asks, without copying the rest).
  std::optional<uint64_t> lastCheckpointEpoch() const;

  // What progress reads: under the coordinator's lock, f(view).
  struct View {
    const EpochSummary* pending;  // the epoch in progress; null before the first run
    const EpochSummary* last;     // the last finished epoch, if any
    const std::optional<CheckpointInfo>& lastCheckpoint;
    uint64_t epoch;
    int64_t epochStartMicros;
  };
  template <typename F>
  auto read(F&& f) const {
    std::lock_guard lock(mu_);
    return f(View{pending_.get(), last_.get(), lastCheckpoint_, epoch_, epochStartMicros_});
  }

 private:
  void startEpoch(int64_t startMicros);

  const std::atomic<bool>& stopping_;
  const FailFn fail_;
  const std::string flowName_;

  std::atomic<uint64_t> requested_{0};    // epochs of this run the tasks were asked to end
  std::atomic<uint64_t> committable_{0};  // epochs of this run that are durable
  std::atomic<bool> final_{false};        // the epoch being ended is the last one
  std::atomic<bool> stopRequested_{false};

  mutable std::mutex mu_;
  std::condition_variable cv_;
  int tasks_ = 0;
  int64_t intervalMicros_ = 0;
  Durability durability_;
  std::function<int64_t()> flowWatermark_;
  std::function<void()> wakeTasks_;
  uint64_t epoch_ = 0;    // the epoch in progress
  uint64_t runBase_ = 0;  // epoch_ when this run started (tasks count epochs from it)
  int64_t epochStartMicros_ = 0;
  int reported_ = 0;                       // tasks done with epoch_
  std::unique_ptr<EpochSummary> pending_;  // epoch_ being assembled
  std::unique_ptr<EpochSummary> last_;     // the last finished epoch
  std::optional<CheckpointInfo> lastCheckpoint_;
  bool done_ = false;  // the final epoch is durable (or the flow stopped)
};

// A source task's barrier offsets that are not committed yet, by epoch. Once
// epochs are durable, the newest of them is committed: it covers the older.
class PendingOffsets {
 public:
  void add(uint64_t epoch, std::vector<PartitionProgress> offsets) {
    pending_.emplace_back(epoch, std::move(offsets));
  }
  // The offsets to commit now that the first `durable` epochs of the run are
  // durable; none when no pending epoch is among them.
  std::optional<std::vector<PartitionProgress>> take(uint64_t durable);

 private:
  std::deque<std::pair<uint64_t, std::vector<PartitionProgress>>> pending_;
};

}  // namespace rtsql
