// FlowRuntime runs one flow's physical plan in real-time mode.
//
// Every task of every stage gets a thread and a reserved slot when the flow
// starts, and keeps both until it stops: all stages run at once, and there is
// no scheduling per record or per batch. A source task polls its partitions and
// pushes each record through its stage's fused operators; a stage ends at the
// sink or at a ShuffleWriter that hands the record to a task of the next stage
// at once (executor/shuffle.h).
//
// Event time: a source task's watermark is the minimum over its partitions of
// (max event time seen - the source's delay), ignoring partitions idle for
// longer than the plan's idle timeout; a task that is idle altogether tells the
// stages below, so it does not hold their watermark back. A shuffle task's
// watermark is the minimum over its producing tasks that are not idle.
// Operators get onWatermark() whenever their task's watermark advances.
//
// Epochs: at each checkpoint interval the coordinator asks the source tasks to
// end the epoch. A source task records its offsets (the barrier position),
// ends the epoch of its own operators, flushes its sink or sends a barrier down
// the shuffle, and reports. A shuffle task ends its epoch once the barrier has
// arrived from every producer: its operators flush their state, its sink is
// flushed, barriers go further down. When every task has reported, the epoch is
// complete: every row derived from records before the barriers is acknowledged
// by the sink, so the source tasks commit the barrier offsets, and the epoch's
// progress is published. Processing never pauses for any of it. Delivery is
// at-least-once: after a failure, the flow resumes from the last committed
// offsets, with the state its operators flushed at that epoch.
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "executor/connector.h"
#include "executor/slot_pool.h"
#include "planner/physical_plan.h"

namespace rtsql {

enum class FlowState { Stopped, Running, Failed };
const char* flowStateName(FlowState s);

class StateStore;
class ShuffleQueue;

class FlowRuntime {
 public:
  // `flowId` is the flow's stable id (the progress JSON's `id`); `stateDir` is
  // where stateful operators keep their RocksDB state (kept across STOP/START).
  FlowRuntime(PhysicalPlan plan, ConnectorProvider& connectors, SlotPool& slots,
              std::string flowId, std::string stateDir = {});
  ~FlowRuntime();
  FlowRuntime(const FlowRuntime&) = delete;
  FlowRuntime& operator=(const FlowRuntime&) = delete;

  // Reserves the slots, opens every source, sink and state table, and starts
  // the tasks. Throws SqlError (and holds nothing) when any of that fails.
  void start();
  // Ends the current epoch (output flushed, offsets committed, state flushed),
  // stops every task and releases the slots. Idempotent.
  void stop();

  FlowState state() const;
  std::string failureReason() const;
  // The progress JSON: the live epoch so far (with the last finished one under
  // "lastEpoch") while running; the last finished epoch once stopped.
  std::string progressJson() const;
  const PhysicalPlan& plan() const { return plan_; }

 private:
  struct Task;
  struct EpochSummary;

  void buildTask(Task& t, const StageSpec& stage, int index);
  void runSourceTask(Task& task);
  void runShuffleTask(Task& task);
  void endTaskEpoch(Task& task, bool isSource);
  void commitIfRequested(Task& task);
  void runCoordinator();
  void fail(const std::string& reason);
  void joinAll();
  std::string buildJson(const EpochSummary& e, bool live) const;
  int64_t currentWatermark() const;

  PhysicalPlan plan_;
  ConnectorProvider& connectors_;
  SlotPool& slotPool_;
  std::string flowId_;
  std::string stateDir_;
  std::string runId_;

  SlotPool::Reservation reservation_;
  std::unique_ptr<StateStore> stateStore_;
  std::vector<std::unique_ptr<ShuffleQueue>> queues_;  // by stage, then task
  std::vector<int> queueBase_;                          // first queue of each stage
  std::vector<std::unique_ptr<Task>> tasks_;
  std::thread coordinator_;

  std::atomic<bool> stopping_{false};        // tasks leave at once (stop done or failure)
  std::atomic<bool> finalEpoch_{false};      // the epoch being ended is the last one
  std::atomic<uint64_t> epochsRequested_{0};  // epochs the coordinator asked sources to end
  std::atomic<uint64_t> commitsRequested_{0};  // epochs complete: sources may commit them

  mutable std::mutex mu_;
  std::condition_variable cv_;
  FlowState state_ = FlowState::Stopped;
  std::string failure_;
  uint64_t batchId_ = 0;           // the epoch in progress
  int64_t epochStartMicros_ = 0;   // wall clock when it began
  int tasksReported_ = 0;          // tasks done with epoch batchId_
  int sourcesCommitted_ = 0;       // source tasks that committed the last complete epoch
  std::unique_ptr<EpochSummary> pending_;  // epoch batchId_ being assembled
  std::unique_ptr<EpochSummary> last_;     // the last finished epoch
};

}  // namespace rtsql
