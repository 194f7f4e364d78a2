#include "executor/flow_runtime.h"

#include <pthread.h>

#include <algorithm>
#include <deque>
#include <filesystem>
#include <map>
#include <optional>
#include <random>

#include "common/clock.h"
#include "common/error.h"
#include "common/interrupt.h"
#include "common/json.h"
#include "common/log.h"
#include "common/thread_priority.h"
#include "executor/barrier_aligner.h"
#include "executor/epoch_coordinator.h"
#include "executor/exchange.h"
#include "executor/metrics/epoch_summary.h"
#include "executor/metrics/progress_json.h"
#include "executor/metrics/task_metrics.h"
#include "executor/operators/factory.h"
#include "executor/operators/sink.h"
#include "executor/operators/stateful_operator.h"
#include "executor/row_errors.h"
#include "executor/shuffle.h"
#include "executor/state/state_store.h"
#include "executor/watermark_tracker.h"
#include "planner/late_rows.h"

namespace rtsql {

namespace {

// Records a source task hands over at most per poll, and how long a poll (or a
// shuffle task's wait) may block. A wait never delays a record, which is
// handed over as soon as it is there. A source that can be woken
// (SourceTask::wakes()) is woken for epoch ends, commits and stops, so it waits
// kIdleWaitMs whenever nothing but its own records can change what the task
// does: then an idle flow costs a wakeup a second. Shuffle tasks wait as long:
// everything they act on comes through their queue or wakes it. Otherwise (a
// source that cannot be woken; a source task whose partitions may turn idle
// as the flow's other source tasks deliver) the wait is kPollTimeoutMs, which
// bounds how late the task notices any of that. Either wait ends early at the
// time an operator of the task asked to be woken (Operator::wakeAtMillis():
// a processor's processing-time timer, a TTL to sweep), so that work fires
// on the clock while no input comes.
constexpr size_t kPollBatch = 512;
constexpr int kPollTimeoutMs = 50;
constexpr int kIdleWaitMs = 1000;
constexpr int kSinkFlushTimeoutMs = 30000;
constexpr size_t kShuffleQueueCapacity = 8192;
constexpr int64_t kStopTimeoutMicros = 60LL * 1000 * 1000;
// How long a stop waits for the final epoch before the functions its tasks
// are busy in are interrupted: a task stuck in one (a Python call that runs
// for ever) never reaches the epoch's end, and the flow then stops without
// its final epoch, as after a crash (the last checkpoint is where it goes on).
constexpr int64_t kStopGraceMicros = 10LL * 1000 * 1000;

// How long a task may wait for input: `waitMs`, or less when an operator of
// its chain has work of its own at `wakeAt` (Operator::wakeAtMillis(),
// wall-clock ms). A flow whose operators have none waits as long as ever.
// Any wakeAt is taken, INT64_MIN ("now") included, without overflow.
int waitFor(int64_t wakeAt, int waitMs) {
  if (wakeAt == Operator::kNoWakeup) return waitMs;
  const int64_t now = nowMicros() / 1000;
  if (wakeAt <= now) return 0;
  return static_cast<int>(std::min<int64_t>(wakeAt - now, waitMs));
}

// Whether the time `wakeAt` has come: then the task ends a batch, with or
// without records, which is when its operators do that work.
bool wakeDue(int64_t wakeAt) {
  return wakeAt != Operator::kNoWakeup && nowMicros() / 1000 >= wakeAt;
}

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

struct FlowRuntime::Task {
  int stage = 0;
  int index = 0;
  bool isSource = false;
  bool outputsToSink = false;

  // Source tasks.
  int scanIndex = -1;
  const ScanSpec* scan = nullptr;
  std::unique_ptr<SourceTask> source;
  std::optional<PartitionWatermarks> partitionTimes;
  PendingOffsets uncommitted;  // barrier offsets of epochs not durable yet

  // Shuffle tasks.
  ShuffleQueue* queue = nullptr;
  int producers = 0;  // the tasks that feed this one's queue
  std::optional<InputWatermarks> inputTimes;
  BarrierAligner aligner;

  std::unique_ptr<SinkWriter> sink;
  // A sharded flow's front (executor/exchange.h): the writer into the
  // exchange topic, and the operator that ends the chain with it.
  std::unique_ptr<ExchangeOut> exchange;
  ExchangeWriter* exchangeOut = nullptr;
  // Its in-process shuffle of the copy's own rows (ExchangeSpec::local),
  // which shuffleOut then names.
  std::unique_ptr<ShuffleWriter> localShuffle;
  // 'late.rows' = 'dead-letter', in a task with an operator that sees late
  // rows: where they go. Declared before the operators, which point at it.
  std::unique_ptr<FlowDeadLetterWriter> lateRows;
  // 'on.error' other than 'fail': what becomes of a row whose evaluation
  // fails, and with 'dead-letter' where it goes (executor/row_errors.h).
  std::unique_ptr<FlowDeadLetterWriter> failedRows;
  std::unique_ptr<RowErrors> rowErrors;
  std::vector<OperatorPtr> operators;  // the fused chain; the last one writes the sink or shuffle
  ShuffleWriter* shuffleOut = nullptr;
  std::vector<std::pair<int, const Operator*>> stateful;  // (operator id, operator)
  std::vector<std::pair<int, const Operator*>> counted;   // the stage's plan operators, in order
  TaskMetricsSlot metrics;
  std::atomic<int64_t> watermark{INT64_MIN};
  std::thread thread;
  uint64_t epochsDone = 0;
  uint64_t commitsDone = 0;
  bool finished = false;  // ended the final epoch

  Operator* head() const { return operators.front().get(); }
};

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
  if (t.outputsToSink) {
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
  // Recovery: the state and the source positions of the newest complete
  // checkpoint. The state store is reopened from the snapshot on every start:
  // what an earlier run wrote after its last checkpoint is no state at any
  // barrier.
  std::optional<CheckpointInfo> checkpoint;
  std::vector<CheckpointSearch::Skipped> skipped;
  // A reset run starts with empty state at the sources' startingOffsets.
  bool reset = resetRequested_;
  std::optional<uint64_t> resetEpoch;
  const int64_t restoreStart = nowMicros();
  transaction_.reset();
  if (plan_.exactlyOnce) {
    if (!checkpoints_) {
      throw SqlError(sqlstate::kFeatureNotSupported,
                     "'delivery' = 'exactly-once' needs checkpoints: start rtsqld with --data-dir");
    }
    // The transaction may stay open for a whole epoch, and then the checkpoint.
    int64_t timeoutMs = std::min<int64_t>(900'000, plan_.checkpointIntervalMicros / 1000 * 2 + 60'000);
    transaction_ = connectors_.openSinkTransaction(plan_.sink, plan_.flowName, timeoutMs);
  }
  if (checkpoints_) {
    std::error_code ec;
    // The root exists once the flow has written a checkpoint (a new flow's
    // directory is removed by CREATE FLOW).
    const bool hadCheckpoints = std::filesystem::is_directory(checkpoints_->root(), ec);
    resetEpoch = checkpoints_->pendingReset();
    reset = reset || resetEpoch.has_value();
    // The output agrees with the newest checkpoint whose transaction
    // committed; a newer checkpoint's rows were aborted with its transaction,
    // so its epoch is processed (and written) again.
    const int64_t committed = transaction_ ? transaction_->recover() : -1;
    copyKeeper_.reset();
    if (stateCopy_ && needsState) {
      if (transaction_) {
        // Exactly-once: the copy is written in the output's transaction.
        try {
          stateCopy_->checkWithin(*transaction_);
        } catch (const SqlError& e) {
          transaction_.reset();
          throw SqlError(e.sqlstate(), fmt::format("flow \"{}\": {}", plan_.flowName, e.message()),
                         SqlError::npos, e.hint());
        }
      }
      copyKeeper_ = std::make_unique<StateCopyKeeper>(stateCopy_, warmCopy_);
    }
    // The copy, when newer than the flow's own checkpoints (it ran on another
    // node since), becomes its newest checkpoint (with exactly-once output,
    // one whose output committed).
    auto consultCopy = [&](const std::optional<CheckpointInfo>& local) {
      if (!copyKeeper_) return local;
      const uint64_t maxEpoch =
          transaction_ ? (committed >= 0 ? static_cast<uint64_t>(committed) : 0) : UINT64_MAX;
      std::optional<CheckpointInfo> found =
          copyKeeper_->restore(*checkpoints_, local, reset, maxEpoch, stateDir_ + ".copy");
      // A reset flow's copy holds no state of it from now on, even before
      // its first checkpoint replaces it.
      if (reset) stateCopy_->clear();
      if (found && copyKeeper_->source() == StateCopyKeeper::Source::Standby) {
        logLine(fmt::format("flow \"{}\": starting from this node's standby copy of epoch {}",
                            plan_.flowName, found->epoch));
      } else if (found && (!local || found->dir != local->dir)) {
        logLine(fmt::format("flow \"{}\": restoring the state copy of epoch {}", plan_.flowName,
                            found->epoch));
      }
      return found;
    };
    if (reset) {
      consultCopy(std::nullopt);
      // Checkpoints of a run after the reset that never finished its first
      // epoch are no state to go on from.
      if (!checkpoints_->epochs().empty()) checkpoints_->markReset(resetEpoch.value_or(epochs_.epoch()));
      if (transaction_ && committed >= 0) {
        resetEpoch = std::max<uint64_t>(resetEpoch.value_or(0), static_cast<uint64_t>(committed) + 1);
      }
    } else if (!transaction_ || committed >= 0) {
      CheckpointSearch found =
          checkpoints_->search(transaction_ ? static_cast<uint64_t>(committed) : UINT64_MAX);
      checkpoint = consultCopy(found.found);
      skipped = std::move(found.skipped);
      // State without the checkpoint its committed offsets (or its committed
      // output) belong to cannot be rebuilt: starting empty from those offsets
      // would run on with wrong results. A stateless flow has no state to
      // lose and goes on from its committed offsets.
      if (!checkpoint && hadCheckpoints && (needsState || transaction_)) {
        std::string why;
        for (const auto& sk : skipped) {
          why += fmt::format("{}epoch {}: {}", why.empty() ? "" : "; ", sk.epoch, sk.reason);
        }
        std::string what =
            skipped.empty()
                ? fmt::format("no checkpoint is left in {}", checkpoints_->root())
                : fmt::format("no checkpoint in {} can be read ({})", checkpoints_->root(), why);
        if (transaction_) what += fmt::format(", and its output committed epoch {}", committed);
        std::string message = fmt::format(
            "flow \"{}\" cannot restore its state: {}; its committed offsets belong to that state, "
            "so it does not run on without it. START FLOW {} RESET STATE discards the state and reads "
            "the sources again from their startingOffsets",
            plan_.flowName, what, plan_.flowName);
        {
          std::lock_guard lock(mu_);
          state_ = FlowState::Failed;
          failure_ = message;
          failureCode_ = sqlstate::kDataCorrupted;
          skipped_ = skipped;
        }
        transaction_.reset();
        throw SqlError(sqlstate::kDataCorrupted, message, SqlError::npos,
                       "restore the flow's checkpoints from a backup, or run START FLOW " +
                           plan_.flowName + " RESET STATE to start it again from empty state");
      }
    }
    // In a cluster the state of a flow another node ran stays there: going
    // on from the offsets that node committed with empty state would count
    // only what comes next, so the state is built again from the sources.
    if (!reset && !checkpoint && !hadCheckpoints && needsState && rebuildWithoutCheckpoint_) {
      reset = true;
      // Epochs go on after the last one whose output committed, as a reset's do.
      if (transaction_ && committed >= 0) resetEpoch = static_cast<uint64_t>(committed) + 1;
    }
    stateStore_.reset();
    if (needsState && !stateDir_.empty()) {
      if (checkpoint) {
        CheckpointDir::restoreState(*checkpoint, stateDir_);
      } else {
        std::error_code ec;
        std::filesystem::remove_all(stateDir_, ec);
      }
    }
  }
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
      auto t = std::make_unique<Task>();
      buildTask(*t, stage, i);
      tasks.push_back(std::move(t));
    }
  }
  if (transaction_) transaction_->begin();
  if (reset) {
    for (auto& t : tasks) {
      if (t->isSource) t->source->startFromStartingOffsets();
    }
  }
  if (checkpoint) {
    for (auto& t : tasks) {
      for (const auto& w : checkpoint->taskWatermarks) {
        if (w.stage == t->stage && w.task == t->index) t->watermark.store(w.watermark);
      }
      if (!t->isSource) continue;
      std::vector<PartitionProgress> at;
      for (const auto& p : checkpoint->positions) {
        if (p.scan != t->scanIndex) continue;
        PartitionProgress pp;
        pp.topic = p.topic;
        pp.partition = p.partition;
        pp.startOffset = pp.endOffset = p.offset;
        pp.position = p.position;
        at.push_back(std::move(pp));
      }
      if (!at.empty()) {
        try {
          t->source->seek(at);
        } catch (const SqlError& e) {
          // A restored position the source's log no longer holds
          // (connectors/restore_position.h) fails the flow until START FLOW
          // ... RESET STATE, as lost checkpoints do: no retry can bring the
          // records back.
          if (e.sqlstate() == sqlstate::kDataCorrupted) {
            std::lock_guard lock(mu_);
            state_ = FlowState::Failed;
            failure_ = e.message();
            failureCode_ = e.sqlstate();
          }
          throw;
        }
      }
    }
  }

  {
    std::lock_guard lock(mu_);
    reservation_ = std::move(reservation);
    tasks_ = std::move(tasks);
    runId_ = randomUuid();
    state_ = FlowState::Running;
    failure_.clear();
    stopping_ = false;
    stopAskedMicros_ = 0;
    if (checkpoint) {
      epochs_.restored(*checkpoint);
      ++recoveries_;
      restoredMicros_ = nowMicros() - restoreStart;
    }
    if (reset) {
      // Epochs go on from where the reset flow was.
      epochs_.reset(resetEpoch.value_or(0));
      resetRequested_ = false;
    }
    restored_ = checkpoint;
    for (const auto& sk : skipped) {
      logLine(fmt::format(
          "flow \"{}\": skipped the checkpoint of epoch {}: {}; {}", plan_.flowName, sk.epoch,
          sk.reason,
          checkpoint ? fmt::format("restoring the one of epoch {}", checkpoint->epoch)
                     : std::string("no state to restore: going on from the committed offsets")));
    }
    skipped_ = std::move(skipped);
    resetRun_ = reset;
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

void FlowRuntime::runSourceTask(Task& task) {
  std::vector<SourceRecord> batch;
  batch.reserve(kPollBatch);
  Operator* head = task.head();
  const int eventTimeColumn = task.scan->eventTimeColumn;
  ActivityClock& activity = *activity_;
  PartitionWatermarks& times = task.partitionTimes.emplace(
      task.scan->watermarkDelayMicros, task.scan->idleTimeoutMicros, task.watermark.load());
  ForwardedWatermark ownStep(task.watermark.load());
  int32_t lastPartition = -1;
  PartitionWatermarks::Partition* lastTime = nullptr;
  try {
    // Every partition the task reads holds the watermark from the start, not
    // only from its first record: the first partition to deliver must not
    // move the watermark past the records the others are about to deliver.
    for (const PartitionProgress& p : task.source->progress()) times.at(p.partition, activity.now());
    if (task.watermark.load() != INT64_MIN) head->onWatermark(task.watermark.load());
    // Whether the task's partitions can turn idle while it waits: only when
    // another source task delivers (the delivery clock moves) and one of its
    // own partitions is not idle yet.
    const bool othersMoveTheClock = sourceTasks_ > 1;
    bool allIdle = false;
    while (!stopping_.load(std::memory_order_relaxed)) {
      if (task.finished) {
        // The final epoch is ended; wait for the flow to commit it and stop
        // (the coordinator and stop() wake the task).
        commitIfRequested(task);
        std::unique_lock lock(wakeMu_);
        wakeCv_.wait_for(lock, std::chrono::milliseconds(kIdleWaitMs), [&] {
          return stopping_.load() || epochs_.committable() > task.commitsDone;
        });
        continue;
      }
      batch.clear();
      const bool longWait = task.source->wakes() && (!othersMoveTheClock || allIdle);
      const int64_t wakeAt = head->wakeAtMillis();
      task.source->poll(batch, kPollBatch,
                        waitFor(wakeAt, longWait ? kIdleWaitMs : kPollTimeoutMs));
      int64_t now = monotonicMicros();
      EpochMetrics& m = task.metrics.current();
      // The records of a poll arrived together: the shuffle hands them over
      // together once the task is through them (shuffle.h).
      if (task.shuffleOut) task.shuffleOut->beginBatch();
      for (SourceRecord& rec : batch) {
        addOwned<uint64_t>(m.inputRows);
        m.sourceQueuingLatency.record(rec.readMicros - rec.timestampMicros);
        // Records of a batch mostly come from one partition: skip the map
        // lookup while it stays the same (map nodes never move).
        if (rec.partition != lastPartition || !lastTime) {
          lastPartition = rec.partition;
          lastTime = &times.at(rec.partition, activity.now());
        }
        if (eventTimeColumn >= 0) {
          const Value& ts = rec.row[static_cast<size_t>(eventTimeColumn)];
          if (ts.isNull()) {
            PartitionWatermarks::record(*lastTime);
          } else {
            PartitionWatermarks::record(*lastTime, ts.asInt());
            if (ts.asInt() > m.maxEventTimeMicros.load(std::memory_order_relaxed)) {
              m.maxEventTimeMicros.store(ts.asInt(), std::memory_order_relaxed);
            }
          }
        } else {
          PartitionWatermarks::record(*lastTime);
        }
        RecordContext ctx{rec.timestampMicros, rec.readMicros};
        ctx.kind = rec.kind;
        if (task.exchangeOut) task.exchangeOut->setOrigin(rec.partition, rec.offset);
        try {
          head->push(rec.row, ctx);
        } catch (const SqlError& e) {
          // The first operator's data error; the others' are taken in emit().
          if (!takeRowError(task.rowErrors.get(), e, *head, rec.row, 0)) throw;
        }
      }
      if (!batch.empty() || wakeDue(wakeAt)) head->onBatchEnd();
      if (task.shuffleOut) task.shuffleOut->endBatch();
      if (!batch.empty()) activity.delivered(now);

      // Watermark: the slowest partition that is not idle
      // (executor/watermark_tracker.h), or what the source says of its
      // producers (a sharded flow's exchange).
      const bool announcesIdle = task.shuffleOut != nullptr || task.exchangeOut != nullptr;
      PartitionWatermarks::Step step;
      if (const auto own = task.source->ownWatermark()) {
        step = ownStep.step(own->watermark, own->allIdle, announcesIdle);
        allIdle = own->allIdle;
      } else {
        step = times.step(activity.now(), announcesIdle,
                          [&](int32_t p) { return task.source->caughtUp(p); });
        allIdle = std::all_of(times.partitions().begin(), times.partitions().end(),
                              [](const auto& p) { return p.second.idle; });
      }
      if (step.kind == PartitionWatermarks::Step::Kind::Idle) {
        if (task.shuffleOut) task.shuffleOut->broadcast(ShuffleMessage::Kind::Idle, 0);
        if (task.exchangeOut) task.exchangeOut->onIdle();
      } else if (step.kind == PartitionWatermarks::Step::Kind::Watermark) {
        task.watermark.store(step.watermark, std::memory_order_relaxed);
        head->onWatermark(step.watermark);
      }

      if (epochs_.endRequested(task.epochsDone)) {
        bool final = epochs_.finalEpoch();
        endTaskEpoch(task, true);
        if (final) task.finished = true;
      }
      commitIfRequested(task);
    }
    commitIfRequested(task);
  } catch (const Interrupted&) {
    // The flow is stopping and a function saw it: nothing failed. A stop
    // still waiting for the final epoch, which this task will not reach,
    // stops the flow now.
    stopWithoutFinalEpoch();
  } catch (const SqlError& e) {
    fail(e.message(), e.sqlstate());
  } catch (const std::exception& e) {
    fail(fmt::format("internal error in task {}.{}: {}", task.stage, task.index, e.what()));
  }
}

void FlowRuntime::runShuffleTask(Task& task) {
  std::deque<ShuffleMessage> inbox;
  task.inputTimes.emplace(static_cast<size_t>(task.producers), task.watermark.load());
  try {
    if (task.watermark.load() != INT64_MIN) task.head()->onWatermark(task.watermark.load());
    while (!stopping_.load(std::memory_order_relaxed) && !task.finished) {
      commitIfRequested(task);
      // Records, barriers and watermarks arrive through the queue, and commit
      // requests and the stop wake it: nothing else needs a short wait but
      // the time an operator asked to be woken at.
      const int64_t wakeAt = task.head()->wakeAtMillis();
      if (!task.queue->popAll(inbox, waitFor(wakeAt, kIdleWaitMs)) && !wakeDue(wakeAt)) continue;
      if (task.shuffleOut) task.shuffleOut->beginBatch();
      for (ShuffleMessage& msg : inbox) handleShuffleMessage(task, msg);
      task.head()->onBatchEnd();
      if (task.shuffleOut) task.shuffleOut->endBatch();
      inbox.clear();
    }
  } catch (const Interrupted&) {
    // The flow is stopping and a function saw it: nothing failed. A stop
    // still waiting for the final epoch, which this task will not reach,
    // stops the flow now.
    stopWithoutFinalEpoch();
  } catch (const SqlError& e) {
    fail(e.message(), e.sqlstate());
  } catch (const std::exception& e) {
    fail(fmt::format("internal error in task {}.{}: {}", task.stage, task.index, e.what()));
  }
}

void FlowRuntime::handleShuffleMessage(Task& task, ShuffleMessage& msg) {
  // Barrier alignment: a producer whose barrier has arrived is blocked, and its
  // messages wait until every producer's barrier is in.
  if (task.aligner.hold(msg)) return;
  Operator* head = task.head();
  switch (msg.kind) {
    case ShuffleMessage::Kind::Record:
      try {
        if (msg.input == 0) {
          head->push(msg.row, msg.ctx);
        } else {
          head->pushRight(msg.row, msg.ctx);
        }
      } catch (const SqlError& e) {
        // The first operator's data error; the others' are taken in emit().
        if (!takeRowError(task.rowErrors.get(), e, *head, msg.row, msg.input)) throw;
      }
      return;
    case ShuffleMessage::Kind::Watermark:
    case ShuffleMessage::Kind::Idle: {
      // The minimum over the producers that are not idle.
      const bool advanced = msg.kind == ShuffleMessage::Kind::Watermark
                                ? task.inputTimes->watermark(msg.producer, msg.value)
                                : task.inputTimes->idle(msg.producer);
      if (advanced) {
        const int64_t wm = task.inputTimes->current();
        task.watermark.store(wm, std::memory_order_relaxed);
        head->onWatermark(wm);
      }
      return;
    }
    case ShuffleMessage::Kind::Barrier: {
      if (!task.aligner.barrier(msg.producer, static_cast<uint64_t>(msg.value))) return;
      bool final = epochs_.finalEpoch();
      endTaskEpoch(task, false);
      if (final) task.finished = true;
      // What waited is processed now, in arrival order.
      std::deque<ShuffleMessage> waiting;
      task.aligner.release(waiting);
      for (ShuffleMessage& m : waiting) handleShuffleMessage(task, m);
      return;
    }
  }
}

void FlowRuntime::endTaskEpoch(Task& task, bool isSource) {
  int64_t t0 = nowMicros();
  // The coordinator asks for one epoch end at a time, after the one before
  // is durable: that one is committable now, even when this task has not
  // seen it yet (the end of the next one, the final one of a stop in
  // particular, can come in the same turn). It is taken first, so that the
  // sink's rows held back since its barrier go into this epoch's transaction
  // before the flush below (a final epoch never resumes the sink after it),
  // and the state writes held since then are in this epoch's checkpoint.
  commitIfRequested(task);
  uint64_t epoch = task.epochsDone;
  // What this task reports for the epoch, as a summary of its own.
  EpochSummary mine;
  mine.taskWatermarks.push_back({task.stage, task.index, task.watermark.load(std::memory_order_relaxed)});
  if (isSource) {
    // Dead letters are acknowledged before the offsets past them are taken.
    task.source->flushDeadLetters(kSinkFlushTimeoutMs);
    mine.partitions = task.source->progress();
    task.uncommitted.add(epoch, mine.partitions);
    for (const auto& p : mine.partitions) {
      if (p.endOffset >= 0) {
        mine.positions.push_back({task.scanIndex, p.topic, p.partition, p.endOffset, p.position});
      }
    }
  }
  // Late rows are acknowledged before the task reports the epoch: at least
  // once, as the sink's rows.
  if (task.lateRows) task.lateRows->flush(kSinkFlushTimeoutMs);
  if (task.failedRows) task.failedRows->flush(kSinkFlushTimeoutMs);
  // State figures before the flush, which restarts numRowsUpdated.
  mine.addStateOperators(task.stateful);
  // Operators flush their state; then the sink is flushed or the barrier sent,
  // so everything before the barrier is durable below before it is reported.
  task.head()->onEpochEnd();
  if (task.sink) {
    task.sink->flush(kSinkFlushTimeoutMs);
    // The epoch's transaction closes once every task is here: later rows wait.
    if (transaction_) task.sink->pause();
  }
  // A front's rows are in the exchange topic before its positions are taken
  // as the checkpoint's (at least once; the backs drop repeats).
  if (task.exchangeOut) task.exchangeOut->flush(kSinkFlushTimeoutMs);
  if (checkpoints_ && stateStore_) {
    // RocksDB now holds this task's state at the barrier; keep it so until the
    // checkpoint is taken.
    for (const auto& [id, op] : task.stateful) stateStore_->holdWrites(id, task.index, true);
  }
  if (task.shuffleOut) task.shuffleOut->broadcast(ShuffleMessage::Kind::Barrier, static_cast<int64_t>(epoch));
  std::vector<RowCounts> rows = operatorRows(task);
  std::unique_ptr<EpochMetrics> finished = task.metrics.rotate(rows);
  mine.addOperatorRows(task.stage, task.counted, rows);
  mine.metrics.mergeFrom(*finished);
  if (isSource) {
    mine.decodeErrors = task.source->decodeErrors();
    mine.deadLettersByScan[task.scanIndex] = task.source->deadLetters();
    mine.inputRowsByScan[task.scanIndex] = finished->inputRows.load();
  }
  if (task.rowErrors) {
    mine.rowErrorsSkipped = task.rowErrors->skipped();
    mine.rowErrorsDeadLettered = task.rowErrors->deadLettered();
  }
  mine.commitMicros = nowMicros() - t0;
  ++task.epochsDone;

  epochs_.report(mine);
}

void FlowRuntime::commitIfRequested(Task& task) {
  uint64_t complete = epochs_.committable();
  if (complete <= task.commitsDone) return;
  // Commit the newest complete epoch's barrier offsets; older ones are covered.
  std::optional<std::vector<PartitionProgress>> upTo = task.uncommitted.take(complete);
  if (upTo && plan_.commitOffsets) task.source->commit(*upTo);
  task.commitsDone = complete;
  if (checkpoints_ && stateStore_) {
    for (const auto& [id, op] : task.stateful) stateStore_->holdWrites(id, task.index, false);
  }
  if (transaction_ && task.sink && !task.finished) task.sink->resume();
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
  {
    std::lock_guard lock(mu_);
    if (state_ != FlowState::Failed) {
      state_ = FlowState::Failed;
      failure_ = reason;
      failureCode_ = sqlstate;
    }
  }
  stopping_ = true;
  epochs_.wake();
  wakeTasks();
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
}

std::string FlowRuntime::failureCode() const {
  std::lock_guard lock(mu_);
  return failureCode_;
}

std::string FlowRuntime::failureReason() const {
  std::lock_guard lock(mu_);
  return failure_;
}

int64_t FlowRuntime::currentWatermark() const {
  // The flow's watermark is the one its last stages act on.
  FlowWatermark wm;
  for (const auto& t : tasks_) {
    if (t->outputsToSink) wm.add(t->watermark.load(std::memory_order_relaxed));
  }
  return wm.value();
}

void FlowRuntime::recentLatency(IntervalLatency& out) const {
  std::lock_guard lock(mu_);
  const int64_t now = nowMicros();
  out.index = now / RecentLatency::kIntervalMicros - 1;
  if (state_ != FlowState::Running) return;
  for (const auto& t : tasks_) t->metrics.recent().mergeLastComplete(now, out);
}

std::string FlowRuntime::progressJson() const {
  std::lock_guard lock(mu_);
  return epochs_.read([&](const EpochCoordinator::View& epochs) {
    ProgressContext c{flowId_, runId_, plan_, {}, {}, epochs.lastCheckpoint, restored_, restoredMicros_,
                      recoveries_, skipped_, resetRun_};
    for (size_t si = 0; si < plan_.scans.size(); ++si) {
      std::string description = plan_.scans[si].name;
      for (const auto& t : tasks_) {
        if (t->scan == &plan_.scans[si] && t->source) {
          description = t->source->description();
          break;
        }
      }
      c.sourceDescriptions.push_back(std::move(description));
    }
    c.sinkDescription = plan_.sink.name;
    for (const auto& t : tasks_) {
      if (t->sink) {
        c.sinkDescription = t->sink->description();
        break;
      }
    }
    // A failed flow keeps its tasks until it is stopped or restarted: report
    // what its epoch got to (records read, decode errors, offsets), not an
    // empty one.
    bool failedWithTasks = state_ == FlowState::Failed && !tasks_.empty();
    if ((state_ != FlowState::Running && !failedWithTasks) || !epochs.pending) {
      if (epochs.last) return rtsql::progressJson(c, *epochs.last, false, nullptr);
      EpochSummary empty;
      empty.id = epochs.epoch;
      empty.startMicros = epochs.epochStartMicros;
      empty.endMicros = epochs.epochStartMicros;
      return rtsql::progressJson(c, empty, false, nullptr);
    }
    // The live epoch: what the tasks have finished of it plus what they are doing now.
    const EpochSummary& pending = *epochs.pending;
    EpochSummary live;
    live.id = pending.id;
    live.startMicros = pending.startMicros;
    live.metrics.mergeFrom(pending.metrics);
    live.decodeErrors = pending.decodeErrors;
    live.deadLettersByScan = pending.deadLettersByScan;
    live.inputRowsByScan = pending.inputRowsByScan;
    live.operatorRows = pending.operatorRows;
    live.watermark = currentWatermark();
    IntervalLatency recent;
    const int64_t now = nowMicros();
    for (const auto& t : tasks_) {
      t->metrics.recent().mergeLastComplete(now, recent);
      std::vector<RowCounts> rows = operatorRows(*t);
      t->metrics.withCurrent([&](const EpochMetrics& m, const std::vector<RowCounts>& atStart) {
        live.metrics.mergeFrom(m);
        if (t->isSource) live.inputRowsByScan[t->scanIndex] += m.inputRows.load();
        for (size_t k = 0; k < rows.size() && k < atStart.size(); ++k) {
          rows[k] = {rows[k].in - atStart[k].in, rows[k].out - atStart[k].out};
        }
      });
      live.addOperatorRows(t->stage, t->counted, rows);
      if (t->source) {
        auto parts = t->source->progress();
        live.partitions.insert(live.partitions.end(), parts.begin(), parts.end());
        live.decodeErrors += t->source->decodeErrors();
        live.deadLettersByScan[t->scanIndex] += t->source->deadLetters();
      }
      // Counted since the tasks started: what each task has now.
      if (t->rowErrors) {
        live.rowErrorsSkipped += t->rowErrors->skipped();
        live.rowErrorsDeadLettered += t->rowErrors->deadLettered();
      }
      live.addStateOperators(t->stateful);
    }
    if (state_ == FlowState::Running) c.recent = &recent;
    return rtsql::progressJson(c, live, state_ == FlowState::Running, epochs.last);
  });
}

std::vector<RowCounts> FlowRuntime::operatorRows(const Task& task) {
  std::vector<RowCounts> rows;
  rows.reserve(task.counted.size());
  for (const auto& [id, op] : task.counted) {
    rows.push_back({op->stats().rowsIn.load(std::memory_order_relaxed),
                    op->stats().rowsOut.load(std::memory_order_relaxed)});
  }
  return rows;
}

int FlowRuntime::heldSlots() const {
  std::lock_guard lock(mu_);
  return reservation_.slots();
}

}  // namespace rtsql
