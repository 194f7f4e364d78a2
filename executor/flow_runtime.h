// FlowRuntime runs one flow's physical plan in real-time mode: it wires the
// tasks (sources, fused operators, shuffle queues, sinks), runs their loops,
// and hands each rule to its own home: watermarks to executor/
// watermark_tracker.h, barrier alignment to executor/barrier_aligner.h, epochs,
// checkpoints and commits to executor/epoch_coordinator.h, and the progress
// document to executor/metrics/progress_json.h. Its own jobs each have a
// file: wiring and the life cycle (flow_runtime.cpp), recovery
// (flow_recovery.cpp), the source and shuffle task loops
// (flow_source_task.cpp, flow_shuffle_task.cpp), a task's epoch end
// (flow_epoch_end.cpp) and the live progress (flow_progress.cpp); a task's
// parts are in flow_task.h.
//
// Every task of every stage gets a thread and a reserved slot when the flow
// starts, and keeps both until it stops: all stages run at once, and there is
// no scheduling per record or per batch. A source task polls its partitions and
// pushes each record through its stage's fused operators; a stage ends at the
// sink or at a ShuffleWriter that hands the record to a task of the next stage
// at once (executor/shuffle.h).
//
// Event time: a source task's watermark is the minimum over its partitions of
// (max event time seen - the source's delay), leaving out idle partitions: a
// partition is idle only when it is caught up and has had no record for the
// source's idle timeout of time in which the flow's sources delivered records
// (executor/watermark_tracker.h), so the watermark never depends on how fast
// the partitions were read. A task whose partitions are all idle tells the
// stages below, so it does not hold their watermark back. A shuffle task's
// watermark is the minimum over its producing tasks that are not idle
// (InputWatermarks). Operators get onWatermark() whenever their task's
// watermark advances.
//
// Epochs and checkpoints: at each checkpoint interval the coordinator asks the
// source tasks to end the epoch. A source task records its offsets (the
// barrier position), ends the epoch of its own operators, flushes its sink or
// sends a barrier down the shuffle, and reports. A shuffle task aligns the
// barriers (BarrierAligner): once a producer's barrier has arrived, that
// producer's later messages wait in the task until the barrier has arrived
// from every producer, so the task's state at the barrier holds exactly the records before it. Then
// its operators flush their state, its sink is flushed, barriers go further
// down. After flushing, a task holds back its other state writes until the
// checkpoint is taken (StateStore::holdWrites), and goes on processing. When
// every task has reported, the coordinator writes the checkpoint (a RocksDB
// snapshot of the state, the barrier offsets and the watermark;
// executor/checkpoint.h), and only then do the source tasks commit the barrier
// offsets to Kafka and the tasks release their writes. Processing never pauses
// for any of it.
//
// Recovery: every start() restores the newest complete checkpoint: the state
// is replaced by its snapshot, every source partition is read again from its
// barrier offset, and the watermark starts where it was. Damaged checkpoints
// are passed over for older ones (skippedCheckpoints(), and the progress's
// recovery.skipped). A flow that has checkpointed but has no readable
// checkpoint left does not start when it keeps state (or writes exactly
// once): its committed offsets belong to the lost state, so it fails with
// SQLSTATE XX001 until resetState(). Delivery is at-least-once: rows derived
// from records after the checkpoint may be written again; state is exact, so
// the values they carry are right.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/error.h"
#include "executor/checkpoint.h"
#include "executor/state_copy.h"
#include "executor/connector_provider.h"
#include "executor/epoch_coordinator.h"
#include "executor/slot_pool.h"
#include "planner/physical_plan.h"
#include "planner/state_plan.h"

namespace rtsql {

struct IntervalLatency;
class ShuffleWriter;

// Recovering is never a runtime's own state: the server reports it for a flow
// that should run and is being brought back (restart, retry after a failure).
// Remote: a flow of the cluster's catalog that another node runs.
enum class FlowState { Stopped, Running, Failed, Recovering, Remote };
const char* flowStateName(FlowState s);

class ActivityClock;
class StateStore;
class ViewLatest;
class ShuffleQueue;
struct ShuffleMessage;

class FlowRuntime {
 public:
  // `flowId` is the flow's stable id (the progress JSON's `id`); `stateDir` is
  // where stateful operators keep their RocksDB state; `checkpointDir`, when
  // set, where checkpoints go (and recovery reads them). Without it the flow
  // keeps no checkpoints and starts from its committed offsets and fresh state.
  FlowRuntime(PhysicalPlan plan, ConnectorProvider& connectors, SlotPool& slots,
              std::string flowId, std::string stateDir = {}, std::string checkpointDir = {},
              int checkpointRetention = 3);
  ~FlowRuntime();
  FlowRuntime(const FlowRuntime&) = delete;
  FlowRuntime& operator=(const FlowRuntime&) = delete;

  // How much nicer than the process the flow's threads run
  // (common/thread_priority.h); set before start(). 0, the default, is a
  // flow's; live queries run nicer.
  void setThreadNice(int by) { threadNice_ = by; }
  // A stateful flow that finds no checkpoint of its own rebuilds its state
  // from its sources' startingOffsets instead of going on from their
  // committed offsets with empty state: a flow of a cluster, whose
  // checkpoints stay on the node that ran it before. Set before start().
  void setRebuildStateWithoutCheckpoint(bool on) { rebuildWithoutCheckpoint_ = on; }
  // A copy of the flow's checkpoints off this machine (executor/state_copy.h),
  // kept by a stateful flow with checkpoints: restored from when it is newer
  // than the flow's own, written at each checkpoint. Set before start().
  void setStateCopy(std::shared_ptr<StateCopy> copy) { stateCopy_ = std::move(copy); }
  // A warm copy of the state on this node (a standby's), which a run that
  // takes the flow over starts from instead of reading the copy.
  void setWarmCopy(StateCopyKeeper::Warm warm) { warmCopy_ = std::move(warm); }
  // Called on the failing thread, with no lock of the runtime held, when a
  // running flow fails: what lets a supervisor sleep until it has work. It
  // must return quickly. Set before start().
  void setFailureListener(std::function<void()> listener) { failureListener_ = std::move(listener); }
  // The share of its source partitions this node reads, for a flow spread
  // over the nodes of a cluster (PhysicalPlan::spreadsPartitions). Set while
  // stopped, before start(); it holds for the runs after.
  void setPartitionShare(const PartitionShare& share) {
    for (ScanSpec& scan : plan_.scans) scan.share = share;
  }

  // Reserves the slots, opens every source, sink and state table, and starts
  // the tasks. Throws SqlError (and holds nothing) when any of that fails.
  void start();
  // Ends the current epoch (output flushed, offsets committed, state flushed),
  // stops every task and releases the slots. Idempotent; two threads may call
  // it at once (the second waits for the first).
  void stop();

  // Tells the tasks to leave at once, without a final epoch (stop() then
  // waits for them): a live query whose client has gone, or a task that left
  // on an interrupt during a stop. Any thread.
  void stopWithoutFinalEpoch();

  FlowState state() const;
  std::string failureReason() const;
  std::string failureCode() const;  // the SQLSTATE of the failure
  // The failure as the task's SqlError had it (its hint and position too);
  // nullopt for a failure that was no SqlError. A bounded query answers
  // its client with it, as PostgreSQL words the error.
  std::optional<SqlError> failureError() const;
  // The progress JSON: the live epoch so far (with the last finished one under
  // "lastEpoch") while running; the last finished epoch once stopped.
  std::string progressJson() const;
  // Adds the tasks' latencies of the last complete interval (recent_latency.h)
  // into `out` and sets its index; adds nothing when the flow is not running.
  // What progressJson() says under "recentMetrics", for a cluster's nodes to
  // merge.
  void recentLatency(IntervalLatency& out) const;
  const PhysicalPlan& plan() const { return plan_; }
  // A materialized view's latest state (executor/state/view_latest.h); null
  // for any other flow.
  std::shared_ptr<ViewLatest> viewLatest() const { return viewLatest_; }
  // The task slots the flow holds now: its plan's while it runs, none once it
  // stopped or failed (they went back to the pool).
  int heldSlots() const;
  // The newest complete checkpoint, if any was written or restored.
  std::optional<CheckpointInfo> lastCheckpoint() const;
  std::optional<uint64_t> lastCheckpointEpoch() const;  // lastCheckpoint()'s epoch
  // How many times start() restored a checkpoint.
  int recoveries() const;
  // The damaged checkpoints the last start() passed over, newest first.
  std::vector<CheckpointSearch::Skipped> skippedCheckpoints() const;
  // Stops the flow and discards its state and checkpoints: the next start()
  // begins with empty state and reads every source from its startingOffsets,
  // as a new flow would (a crash before its first checkpoint does that
  // again). Throws SqlError 58030 when the checkpoints cannot be removed.
  void resetState();
  // CREATE OR REPLACE FLOW (planner/state_plan.h): the checkpoints of epochs
  // up to migration.lastOldEpoch were written by the plan this one replaced,
  // and a start that restores one moves its state keys, positions and
  // watermarks to this plan's operators, scans and stages
  // (executor/flow_state_migration.cpp). Call before start().
  void setStateMigration(std::optional<StateMigration> migration) { migration_ = std::move(migration); }

 private:
  // One task of the run (executor/flow_task.h).
  struct Task;

  // What a run starts from (executor/flow_recovery.cpp).
  struct Recovery {
    std::optional<CheckpointInfo> checkpoint;        // the state and positions restored, if any
    std::vector<CheckpointSearch::Skipped> skipped;  // damaged checkpoints passed over
    bool reset = false;                  // empty state, sources from their startingOffsets
    std::optional<uint64_t> resetEpoch;  // where a reset run's epochs go on
  };
  // Chooses what the run starts from (the newest complete checkpoint, the
  // state copy when newer, a reset), opens the exactly-once transaction and
  // the copy's keeper, and lays out the state directory for it. Throws
  // SqlError; a flow whose state cannot be had back is left Failed.
  Recovery recover(bool needsState);
  [[noreturn]] void failUnrecoverable(const std::vector<CheckpointSearch::Skipped>& skipped,
                                      int64_t committed);
  // Puts the restored watermarks into the new tasks and seeks their sources
  // to the checkpoint's positions, or to their startingOffsets on a reset.
  void restorePositions(const Recovery& from, std::vector<std::unique_ptr<Task>>& tasks);
  // A checkpoint of the replaced plan made this plan's (setStateMigration()):
  // the restored state directory rewritten, the positions and watermarks moved.
  void migrateRestored(CheckpointInfo& checkpoint, bool needsState);

  // Wiring (executor/flow_runtime.cpp).
  void buildTask(Task& t, const StageSpec& stage, int index);
  // Task `index` of `stage`'s writer into the shuffle stage.output names.
  std::unique_ptr<ShuffleWriter> makeShuffleWriter(const StageSpec& stage, int index);
  // The task loops (executor/flow_source_task.cpp, flow_shuffle_task.cpp).
  void runSourceTask(Task& task);
  void runShuffleTask(Task& task);
  void handleShuffleMessage(Task& task, ShuffleMessage& msg);
  // A task's epoch end and commit (executor/flow_epoch_end.cpp).
  void endTaskEpoch(Task& task, bool isSource);
  void commitIfRequested(Task& task);
  // Something other than records needs the tasks (an epoch end, a commit, a
  // stop): the waits of source and shuffle tasks end at once. Any thread,
  // while tasks_ exists.
  void wakeTasks();
  void fail(const std::string& reason, const std::string& sqlstate = sqlstate::kInternalError);
  void fail(const SqlError& e);
  void joinAll();
  // Progress assembly (executor/flow_progress.cpp): each of the task's plan
  // operators' rowsIn/rowsOut since the task started, and the flow's watermark.
  static std::vector<RowCounts> operatorRows(const Task& task);
  int64_t currentWatermark() const;

  PhysicalPlan plan_;
  ConnectorProvider& connectors_;
  SlotPool& slotPool_;
  std::string flowId_;
  std::string stateDir_;
  std::string runId_;
  std::unique_ptr<CheckpointDir> checkpoints_;
  std::unique_ptr<SinkTransaction> transaction_;  // exactly-once runs only

  SlotPool::Reservation reservation_;
  std::unique_ptr<StateStore> stateStore_;
  std::shared_ptr<ViewLatest> viewLatest_;  // a view's flow only
  std::vector<std::unique_ptr<ShuffleQueue>> queues_;  // by stage, then task
  std::vector<int> queueBase_;                          // first queue of each stage
  std::vector<std::unique_ptr<Task>> tasks_;
  std::unique_ptr<ActivityClock> activity_;  // the sources' delivery time (idle partitions)
  std::thread coordinator_;

  std::atomic<bool> stopping_{false};  // tasks leave at once (stop done or failure)
  // When stop() asked for the final epoch (monotonicMicros(); 0: not asked).
  std::atomic<int64_t> stopAskedMicros_{0};
  std::mutex stopMu_;  // held through stop()
  int sourceTasks_ = 0;                // source tasks of the current run
  // A source task that has ended its final epoch waits here for the commit
  // and the stop (wakeTasks()).
  std::mutex wakeMu_;
  std::condition_variable wakeCv_;
  // Epoch ends, checkpoints and commits (executor/epoch_coordinator.h), run by
  // the coordinator_ thread; it has its own lock, taken after mu_ when both are.
  EpochCoordinator epochs_;

  std::function<void()> failureListener_;
  mutable std::mutex mu_;
  FlowState state_ = FlowState::Stopped;
  std::string failure_;
  std::string failureCode_;
  std::optional<SqlError> failureError_;
  std::optional<CheckpointInfo> restored_;  // what the current run started from
  int64_t restoredMicros_ = 0;             // how long the restore took
  int recoveries_ = 0;
  std::vector<CheckpointSearch::Skipped> skipped_;  // damaged checkpoints the current run passed over
  bool resetRun_ = false;        // the current run started from a reset
  bool resetRequested_ = false;  // resetState() was called; the next start() honours it
  std::optional<StateMigration> migration_;  // setStateMigration()
  int threadNice_ = 0;
  bool rebuildWithoutCheckpoint_ = false;
  std::shared_ptr<StateCopy> stateCopy_;
  StateCopyKeeper::Warm warmCopy_;
  std::unique_ptr<StateCopyKeeper> copyKeeper_;  // this run's, for a stateful flow with a copy
};

}  // namespace rtsql
