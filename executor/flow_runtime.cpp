#include "executor/flow_runtime.h"

#include <pthread.h>

#include <algorithm>
#include <filesystem>
#include <random>

#include "common/clock.h"
#include "common/error.h"
#include "common/interrupt.h"
#include "common/log.h"
#include "common/thread_priority.h"
#include "executor/epoch_coordinator.h"
#include "executor/flow_task.h"
#include "executor/operators/factory.h"
#include "executor/operators/sink.h"
#include "executor/operators/stateful_operator.h"
#include "executor/state/state_store.h"
#include "executor/state/view_latest.h"
#include "executor/state/view_table.h"
#include "planner/late_rows.h"

namespace rtsql {

namespace {

constexpr size_t kShuffleQueueCapacity = 8192;
constexpr int64_t kStopTimeoutMicros = 60LL * 1000 * 1000;
// How long a stop waits for the final epoch before the functions its tasks
// are busy in are interrupted: a task stuck in one (a Python call that runs
// for ever) never reaches the epoch's end, and the flow then stops without
// its final epoch, as after a crash (the last checkpoint is where it goes on).
constexpr int64_t kStopGraceMicros = 10LL * 1000 * 1000;

std::string randomUuid() {
  std::random_device rd;
  std::mt19937_64 gen((static_cast<uint64_t>(rd()) << 32) ^ rd() ^ static_cast<uint64_t>(nowMicros()));
  uint64_t a = gen(), b = gen();
  a = (a & 0xffffffffffff0fffULL) | 0x0000000000004000ULL;  // version 4
  b = (b & 0x3fffffffffffffffULL) | 0x8000000000000000ULL;  // variant 1
  return fmt::format("{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", a >> 32, (a >> 16) & 0xffff, a & 0xffff,
                     b >> 48, b & 0xffffffffffffULL);
}

// The schema of each input of operator `k` of `stage` (a join's left, then
// right; k = the number of operators for the task's sink or shuffle writer):
// what the rows it takes look like, for the late or failed rows it writes out.
std::vector<Schema> operatorInputs(const PhysicalPlan& plan, const StageSpec& stage, size_t k) {
  if (k < stage.operators.size() && stage.operators[k].is<StreamJoinSpec>()) {
    const auto& join = stage.operators[k].as<StreamJoinSpec>();
    const auto& columns = join.output.columns;
    const auto leftEnd = columns.begin() + join.leftWidth;
    Schema left, right;
    left.columns.assign(columns.begin(), leftEnd);
    right.columns.assign(leftEnd, leftEnd + join.rightWidth);
    return {left, right};
  }
  if (k > 0) return {stage.operators[k - 1].output()};
  if (stage.scan >= 0) return {plan.scans.at(static_cast<size_t>(stage.scan)).schema};
  for (const StageSpec& s : plan.stages) {
    if (s.output.feeds(stage.id)) return {s.outputSchema};
  }
  throw InternalError(fmt::format("stage {} has no input", stage.id));
}

}  // namespace

const char* flowStateName(FlowState s) {
  switch (s) {
    case FlowState::Stopped: return "stopped";
    case FlowState::Running: return "running";
    case FlowState::Failed: return "failed";
    case FlowState::Recovering: return "recovering";
    case FlowState::Remote: return "remote";
  }
  return "unknown";
}

FlowRuntime::FlowRuntime(PhysicalPlan plan, ConnectorProvider& connectors, SlotPool& slots,
                         std::string flowId, std::string stateDir, std::string checkpointDir,
                         int checkpointRetention)
    : plan_(std::move(plan)),
      connectors_(connectors),
      slotPool_(slots),
      flowId_(std::move(flowId)),
      stateDir_(std::move(stateDir)),
      epochs_(
          stopping_,
          [this](const std::string& reason, const std::string& sqlstate) { fail(reason, sqlstate); },
          plan_.flowName) {
  if (!checkpointDir.empty()) {
    checkpoints_ = std::make_unique<CheckpointDir>(std::move(checkpointDir), checkpointRetention);
  }
  if (plan_.sink.connector == kViewSinkConnector) {
    int tasks = 1;
    for (const StageSpec& stage : plan_.stages) {
      if (stage.output.kind == StageOutput::Kind::Sink) tasks = stage.tasks;
    }
    viewLatest_ = std::make_shared<ViewLatest>(plan_.flowName, tasks);
  }
}

FlowRuntime::~FlowRuntime() { stop(); }

void FlowRuntime::buildTask(Task& t, const StageSpec& stage, int index) {
  t.stage = stage.id;
  t.index = index;
  t.isSource = stage.inputs == 0;
  t.outputsToSink = stage.output.kind == StageOutput::Kind::Sink;
  if (t.isSource) {
    t.scanIndex = stage.scan;
    t.scan = &plan_.scans.at(static_cast<size_t>(stage.scan));
    t.source = t.scan->exchange.topic.empty()
                   ? connectors_.openSource(*t.scan, plan_.flowName, index, stage.tasks)
                   : connectors_.openExchangeSource(*t.scan, plan_.flowName);
  } else {
    t.queue = queues_[static_cast<size_t>(queueBase_[stage.id] + index)].get();
    int producers = 0;
    for (const auto& s : plan_.stages) {
      if (s.output.feeds(stage.id)) producers += s.tasks;
    }
    t.producers = producers;
    t.aligner = BarrierAligner(static_cast<size_t>(producers));
  }
  const bool lateRowsOut = plan_.lateRowsDeadLettered;
  for (size_t k = 0; k < stage.operators.size(); ++k) {
    const OperatorSpec& op = stage.operators[k];
    t.operators.push_back(makeOperator(op, stateStore_.get(), index));
    t.counted.emplace_back(op.id(), t.operators.back().get());
    if (op.stateful()) t.stateful.emplace_back(op.id(), t.operators.back().get());
    if (lateRowsOut && seesLateRows(op)) {
      if (!t.lateRows) {
        t.lateRows = connectors_.openFlowDeadLetters(plan_, FlowDeadLetters::LateRows, index);
      }
      auto* stateful = dynamic_cast<StatefulOperator*>(t.operators.back().get());
      if (!stateful) throw InternalError(op.describe() + ": late rows at a stateless operator");
      stateful->sendLateRowsTo(t.lateRows.get(), operatorInputs(plan_, stage, k), op.id());
    }
  }
  if (t.outputsToSink && plan_.sink.connector == kViewSinkConnector) {
    t.sink = std::make_unique<ViewTableWriter>(*stateStore_, plan_.sink.keyColumns,
                                               plan_.flowName, index, viewLatest_);
    t.viewTable = true;
    t.operators.push_back(std::make_unique<SinkOperator>(*t.sink, t.metrics));
  } else if (t.outputsToSink) {
    t.sink = transaction_ ? connectors_.openTransactionalSink(plan_.sink, plan_.flowName,
                                                              stage.id * 10000 + index, *transaction_)
                          : connectors_.openSink(plan_.sink, plan_.flowName, stage.id * 10000 + index);
    t.operators.push_back(std::make_unique<SinkOperator>(*t.sink, t.metrics));
  } else if (stage.output.kind == StageOutput::Kind::Exchange) {
    const ExchangeSpec& spec = stage.output.exchange;
    t.exchange = connectors_.openExchangeWriter(spec, plan_.flowName, stage.id * 10000 + index);
    // Copy c's task t is producer c * tasks + t of the topic's markers.
    auto writer =
        std::make_unique<ExchangeWriter>(stage.output.keys, spec.partitions,
                                         static_cast<uint32_t>(plan_.shard * stage.tasks + index),
                                         static_cast<uint32_t>(spec.producers), *t.exchange);
    if (spec.local) {
      // The copy's own rows go on in process, as a shuffle's would; the
      // task sends that shuffle its idleness and barriers (shuffleOut).
      t.localShuffle = makeShuffleWriter(stage, index);
      t.shuffleOut = t.localShuffle.get();
      writer->keepOwnShard(plan_.shard, *t.localShuffle);
    }
    t.exchangeOut = writer.get();
    t.operators.push_back(std::move(writer));
  } else {
    auto writer = makeShuffleWriter(stage, index);
    t.shuffleOut = writer.get();
    t.operators.push_back(std::move(writer));
  }
  for (size_t k = 0; k + 1 < t.operators.size(); ++k) t.operators[k]->setNext(t.operators[k + 1].get());
  // The task's loops push each record they decoded or took from the queue
  // once, and read nothing of it after (Operator::takeInputRows).
  if (!t.operators.empty()) t.operators.front()->takeInputRows();

  const RowErrorPolicy onError = plan_.onError;
  if (onError != RowErrorPolicy::Fail) {
    if (onError == RowErrorPolicy::DeadLetter) {
      t.failedRows = connectors_.openFlowDeadLetters(plan_, FlowDeadLetters::RowErrors, index);
    }
    t.rowErrors = std::make_unique<RowErrors>(onError, plan_.flowName, t.failedRows.get());
    for (size_t k = 0; k < t.operators.size(); ++k) {
      const int id = k < stage.operators.size() ? stage.operators[k].id() : -1;
      t.rowErrors->add(t.operators[k].get(), id, operatorInputs(plan_, stage, k));
      t.operators[k]->sendRowErrorsTo(t.rowErrors.get());
    }
  }
}

std::unique_ptr<ShuffleWriter> FlowRuntime::makeShuffleWriter(const StageSpec& stage, int index) {
  const StageSpec& target = plan_.stages.at(static_cast<size_t>(stage.output.targetStage));
  // This task's index among the producers of the target stage: stages feeding
  // it are numbered in plan order.
  int producer = 0;
  for (const auto& s : plan_.stages) {
    if (s.id == stage.id) break;
    if (s.output.feeds(target.id)) producer += s.tasks;
  }
  std::vector<ShuffleQueue*> targets;
  for (int i = 0; i < target.tasks; ++i) {
    targets.push_back(queues_[static_cast<size_t>(queueBase_[target.id] + i)].get());
  }
  return std::make_unique<ShuffleWriter>(stage.output.keys, std::move(targets),
                                         static_cast<uint8_t>(stage.output.targetInput),
                                         static_cast<uint16_t>(producer + index), stopping_);
}

void FlowRuntime::start() {
  {
    std::lock_guard lock(mu_);
    if (state_ == FlowState::Running) return;
  }
  joinAll();  // threads of an earlier, failed run
  if (plan_.stages.empty()) throw InternalError("flow plan without stages");

  SlotPool::Reservation reservation = slotPool_.reserve(plan_.slots(), plan_.flowName);

  const bool needsState = plan_.keepsState();
  const int64_t restoreStart = nowMicros();
  // What the run starts from (executor/flow_recovery.cpp).
  Recovery from = recover(needsState);
  // Between the steps of a start, each of which may wait on a broker, a
  // registry or the disk: the starting thread's stop (a server that stops
  // while its supervisor starts the flow, a statement cancelled) ends the
  // start here, and what it opened so far is released as on any failure.
  throwIfInterrupted();
  if (needsState && !stateStore_) {
    StateStoreOptions so;
    so.path = stateDir_;
    so.recordChanges = copyKeeper_ != nullptr;
    if (so.path.empty()) {
      so.path = (std::filesystem::temp_directory_path() / ("rtsql-state-" + randomUuid())).string();
      so.destroyOnClose = true;
    }
    stateStore_ = StateStore::open(so);
  }

  // One queue per task of every shuffle stage.
  queues_.clear();
  queueBase_.assign(plan_.stages.size(), 0);
  for (const auto& stage : plan_.stages) {
    queueBase_[static_cast<size_t>(stage.id)] = static_cast<int>(queues_.size());
    if (stage.inputs > 0) {
      for (int i = 0; i < stage.tasks; ++i) {
        queues_.push_back(std::make_unique<ShuffleQueue>(kShuffleQueueCapacity));
      }
    }
  }

  // A pause in deliveries counts as delivery time up to a tenth of the
  // shortest idle timeout: a lull is never long enough to make a partition idle.
  int64_t idleTimeout = INT64_MAX;
  for (const ScanSpec& scan : plan_.scans) idleTimeout = std::min(idleTimeout, scan.idleTimeoutMicros);
  activity_ = std::make_unique<ActivityClock>(std::max<int64_t>(idleTimeout / 10, 1));

  std::vector<std::unique_ptr<Task>> tasks;
  for (const auto& stage : plan_.stages) {
    for (int i = 0; i < stage.tasks; ++i) {
      throwIfInterrupted();
      auto t = std::make_unique<Task>();
      buildTask(*t, stage, i);
      tasks.push_back(std::move(t));
    }
  }
  throwIfInterrupted();
  if (transaction_) transaction_->begin();
  restorePositions(from, tasks);
  throwIfInterrupted();

  {
    std::lock_guard lock(mu_);
    reservation_ = std::move(reservation);
    tasks_ = std::move(tasks);
    runId_ = randomUuid();
    state_ = FlowState::Running;
    failure_.clear();
    stopping_ = false;
    stopAskedMicros_ = 0;
    if (from.checkpoint) {
      epochs_.restored(*from.checkpoint);
      ++recoveries_;
      restoredMicros_ = nowMicros() - restoreStart;
    }
    if (from.reset) {
      // Epochs go on from where the reset flow was.
      epochs_.reset(from.resetEpoch.value_or(0));
      resetRequested_ = false;
    }
    restored_ = from.checkpoint;
    for (const auto& sk : from.skipped) {
      logLine(fmt::format(
          "flow \"{}\": skipped the checkpoint of epoch {}: {}; {}", plan_.flowName, sk.epoch,
          sk.reason,
          from.checkpoint ? fmt::format("restoring the one of epoch {}", from.checkpoint->epoch)
                          : std::string("no state to restore: going on from the committed offsets")));
    }
    skipped_ = std::move(from.skipped);
    resetRun_ = from.reset;
    sourceTasks_ = 0;
    for (const auto& t : tasks_) sourceTasks_ += t->isSource ? 1 : 0;
    epochs_.beginRun(
        static_cast<int>(tasks_.size()), plan_.checkpointIntervalMicros,
        {checkpoints_.get(), stateStore_.get(), transaction_.get(), copyKeeper_.get()},
        [this] { return currentWatermark(); }, [this] { wakeTasks(); });
  }
  for (auto& t : tasks_) {
    Task* task = t.get();
    task->thread = std::thread([this, task] {
      if (threadNice_ != 0) lowerCurrentThreadPriority(threadNice_);
      // A function looping long on one value leaves when the flow stops, or
      // once a stop has waited kStopGraceMicros for the final epoch. Atomics
      // and the clock: the watchdog of Python calls asks it too.
      constexpr InterruptScope::Check stopDue = [](const void* p) {
        const auto* rt = static_cast<const FlowRuntime*>(p);
        if (rt->stopping_.load(std::memory_order_relaxed)) return true;
        const int64_t asked = rt->stopAskedMicros_.load(std::memory_order_relaxed);
        return asked != 0 && monotonicMicros() - asked >= kStopGraceMicros;
      };
      InterruptScope interrupt(stopDue, this, stopDue);
      if (task->isSource) {
        runSourceTask(*task);
      } else {
        runShuffleTask(*task);
      }
    });
    std::string name = fmt::format("{:.9}/{}.{}", plan_.flowName, task->stage, task->index);
    pthread_setname_np(task->thread.native_handle(), name.c_str());
  }
  coordinator_ = std::thread([this] {
    if (threadNice_ != 0) lowerCurrentThreadPriority(threadNice_);
    epochs_.run();
  });
  pthread_setname_np(coordinator_.native_handle(),
                     fmt::format("{:.9}:epochs", plan_.flowName).c_str());
}


void FlowRuntime::wakeTasks() {
  for (auto& t : tasks_) {
    if (t->isSource) t->source->wake();
  }
  // Shuffle tasks have commits to make too.
  for (auto& q : queues_) q->wakeAll();
  // Under the lock, so that a task that has just found nothing to do is
  // waiting already and gets the notification.
  std::lock_guard lock(wakeMu_);
  wakeCv_.notify_all();
}

void FlowRuntime::fail(const std::string& reason, const std::string& sqlstate) {
  bool failedNow = false;
  {
    std::lock_guard lock(mu_);
    if (state_ != FlowState::Failed) {
      state_ = FlowState::Failed;
      failure_ = reason;
      failureCode_ = sqlstate;
      failedNow = true;
    }
  }
  stopping_ = true;
  epochs_.wake();
  wakeTasks();
  if (failedNow && failureListener_) failureListener_();
}

void FlowRuntime::stopWithoutFinalEpoch() {
  if (stopping_.exchange(true)) return;
  epochs_.wake();
  wakeTasks();
}

void FlowRuntime::joinAll() {
  for (auto& t : tasks_) {
    if (t->thread.joinable()) t->thread.join();
  }
  if (coordinator_.joinable()) coordinator_.join();
}

void FlowRuntime::stop() {
  // Two stops (STOP FLOW, which waits without the DDL lock, and the
  // server's shutdown) take turns: the second finds the flow stopped.
  std::lock_guard stopLock(stopMu_);
  bool running;
  {
    std::lock_guard lock(mu_);
    running = state_ == FlowState::Running && !stopping_;
  }
  // A sink that retries does not take its whole retry schedule to the
  // final epoch's flush, nor to the flush a task of a failed run may still
  // wait in (tasks_ changes only in start() and below; wakeTasks() reads it
  // the same way).
  for (const auto& t : tasks_) {
    if (t->sink) t->sink->flowStopping();
  }
  // The final epoch: sources stop reading at their barrier, everything before
  // it is flushed, checkpointed and committed. Waited for without the lock,
  // which a failure meanwhile takes.
  if (running) {
    stopAskedMicros_ = monotonicMicros();
    epochs_.finish(kStopTimeoutMicros);
  }
  stopping_ = true;
  epochs_.wake();
  wakeTasks();
  joinAll();
  std::lock_guard lock(mu_);
  // Close connectors (consumers leave, producers are already flushed) and give
  // the slots back. Without checkpoints the state store stays open for a
  // restart; with them, the next start reopens it from the last checkpoint.
  tasks_.clear();
  queues_.clear();
  transaction_.reset();  // after the writers that use it
  reservation_.release();
  if (checkpoints_) stateStore_.reset();
  // A stopped flow (or one that moved to another node) holds no connection
  // for its copy; the next start opens one.
  copyKeeper_.reset();
  if (stateCopy_) stateCopy_->close();
  if (state_ == FlowState::Running) state_ = FlowState::Stopped;
}

FlowState FlowRuntime::state() const {
  std::lock_guard lock(mu_);
  return state_;
}

std::optional<CheckpointInfo> FlowRuntime::lastCheckpoint() const { return epochs_.lastCheckpoint(); }
std::optional<uint64_t> FlowRuntime::lastCheckpointEpoch() const {
  return epochs_.lastCheckpointEpoch();
}

int FlowRuntime::recoveries() const {
  std::lock_guard lock(mu_);
  return recoveries_;
}

std::vector<CheckpointSearch::Skipped> FlowRuntime::skippedCheckpoints() const {
  std::lock_guard lock(mu_);
  return skipped_;
}

void FlowRuntime::resetState() {
  stop();
  std::lock_guard lock(mu_);
  if (checkpoints_) {
    // Epochs go on after the newest one the flow ever reached.
    uint64_t next = epochs_.epoch();
    std::vector<uint64_t> epochs = checkpoints_->epochs();
    if (!epochs.empty()) next = std::max(next, epochs.back() + 1);
    checkpoints_->markReset(next);
  }
  // Without checkpoints the state store stays open between runs: it goes too.
  stateStore_.reset();
  if (!stateDir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(stateDir_, ec);
  }
  epochs_.forgetCheckpoint();
  resetRequested_ = true;
  // A failure to restore is no failure of the reset flow: it is stopped, and
  // a start that fails for another reason (a broker away) is retried.
  if (state_ == FlowState::Failed) state_ = FlowState::Stopped;
  failure_.clear();
  failureCode_.clear();
  failureError_.reset();
}

void FlowRuntime::fail(const SqlError& e) {
  {
    std::lock_guard lock(mu_);
    if (state_ != FlowState::Failed) failureError_ = e;
  }
  fail(e.message(), e.sqlstate());
}

std::optional<SqlError> FlowRuntime::failureError() const {
  std::lock_guard lock(mu_);
  return failureError_;
}

std::string FlowRuntime::failureCode() const {
  std::lock_guard lock(mu_);
  return failureCode_;
}

std::string FlowRuntime::failureReason() const {
  std::lock_guard lock(mu_);
  return failure_;
}


int FlowRuntime::heldSlots() const {
  std::lock_guard lock(mu_);
  return reservation_.slots();
}

}  // namespace rtsql
