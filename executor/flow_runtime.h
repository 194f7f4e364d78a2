// FlowRuntime runs one flow's physical plan in real-time mode.
//
// Every task of the plan gets a thread and a reserved slot when the flow
// starts, and keeps both until it stops: there is no scheduling per record or
// per batch. A source task polls its partitions and pushes each record through
// the stage's fused operators into the sink as soon as it arrives.
//
// Time is cut into long-running epochs (the flow's checkpoint interval). At an
// epoch's end the coordinator asks every task to finish it; each task flushes
// its sink (every row written is acknowledged), then commits its source offsets
// (so a restart resumes after them: at-least-once), then hands its epoch metrics
// to the coordinator, which publishes the epoch's progress. Processing does not
// pause: a task finishes the epoch between two polls.
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

class FlowRuntime {
 public:
  // `flowId` is the flow's stable id (the progress JSON's `id`).
  FlowRuntime(PhysicalPlan plan, ConnectorProvider& connectors, SlotPool& slots,
               std::string flowId);
  ~FlowRuntime();
  FlowRuntime(const FlowRuntime&) = delete;
  FlowRuntime& operator=(const FlowRuntime&) = delete;

  // Reserves the slots, opens every source and sink task, and starts the tasks.
  // Throws SqlError (and holds nothing) when any of that fails.
  void start();
  // Ends the current epoch (flush, commit), stops every task and releases the
  // slots. Idempotent.
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

  void runTask(Task& task);
  void runCoordinator();
  void finishEpoch(Task& task);
  void fail(const std::string& reason);
  void joinAll();
  std::string buildJson(const EpochSummary& e, bool live) const;

  PhysicalPlan plan_;
  ConnectorProvider& connectors_;
  SlotPool& slotPool_;
  std::string flowId_;
  std::string runId_;

  SlotPool::Reservation reservation_;
  std::vector<std::unique_ptr<Task>> tasks_;
  std::thread coordinator_;

  std::atomic<bool> stopping_{false};
  std::atomic<uint64_t> epochsRequested_{0};  // epochs the coordinator asked to end

  mutable std::mutex mu_;
  std::condition_variable cv_;
  FlowState state_ = FlowState::Stopped;
  std::string failure_;
  uint64_t batchId_ = 0;            // the epoch in progress
  int64_t epochStartMicros_ = 0;    // wall clock when it began
  int tasksReported_ = 0;           // tasks done with epoch batchId_
  std::unique_ptr<EpochSummary> pending_;  // epoch batchId_ being assembled
  std::unique_ptr<EpochSummary> last_;     // the last finished epoch
};

}  // namespace rtsql
