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
#include "common/thread_priority.h"
#include "executor/metrics/json_writer.h"
#include "executor/metrics/task_metrics.h"
#include "executor/operators/factory.h"
#include "executor/operators/sink.h"
#include "executor/shuffle.h"
#include "executor/state/state_store.h"
#include "executor/watermark_tracker.h"

namespace rtsql {

namespace {

// Records a source task hands over at most per poll, and how long a poll (or a
// shuffle task's wait) may block. The wait bounds how late a task notices an
// epoch end or a stop; it never delays a record, which is handed over as soon
// as it is there.
constexpr size_t kPollBatch = 512;
constexpr int kPollTimeoutMs = 50;
constexpr int kSinkFlushTimeoutMs = 30000;
constexpr size_t kShuffleQueueCapacity = 8192;
constexpr int64_t kStopTimeoutMicros = 60LL * 1000 * 1000;

std::string randomUuid() {
  std::random_device rd;
  std::mt19937_64 gen((static_cast<uint64_t>(rd()) << 32) ^ rd() ^ static_cast<uint64_t>(nowMicros()));
  uint64_t a = gen(), b = gen();
  a = (a & 0xffffffffffff0fffULL) | 0x0000000000004000ULL;  // version 4
  b = (b & 0x3fffffffffffffffULL) | 0x8000000000000000ULL;  // variant 1
  return fmt::format("{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", a >> 32, (a >> 16) & 0xffff, a & 0xffff,
                     b >> 48, b & 0xffffffffffffULL);
}

void writeLatency(JsonWriter& w, const char* name, const LatencyHistogram& h) {
  w.key(name).beginObject();
  static constexpr std::pair<const char*, double> kQuantiles[] = {
      {"P0", 0.0}, {"P50", 0.5}, {"P90", 0.9}, {"P95", 0.95}, {"P99", 0.99}};
  for (const auto& [label, q] : kQuantiles) {
    w.key(label).value(static_cast<double>(h.percentile(q)) / 1000.0);
  }
  w.endObject();
}

struct StateOpSnapshot {
  std::string name;
  uint64_t numRowsTotal = 0;
  uint64_t numRowsUpdated = 0;
  uint64_t numRowsDroppedByWatermark = 0;
  int64_t memoryUsedBytes = 0;

  void add(const OperatorStats& s) {
    numRowsTotal += s.numRowsTotal.load(std::memory_order_relaxed);
    numRowsUpdated += s.numRowsUpdated.load(std::memory_order_relaxed);
    numRowsDroppedByWatermark += s.numRowsDroppedByWatermark.load(std::memory_order_relaxed);
    memoryUsedBytes += s.memoryUsedBytes.load(std::memory_order_relaxed);
  }
};

// The progress's recovery.skipped: the checkpoints a start passed over.
void writeSkipped(JsonWriter& w, const std::vector<CheckpointSearch::Skipped>& skipped) {
  w.key("skipped").beginArray();
  for (const auto& sk : skipped) {
    w.beginObject();
    w.key("epoch").value(sk.epoch);
    w.key("reason").value(sk.reason);
    w.endObject();
  }
  w.endArray();
}

}  // namespace

const char* flowStateName(FlowState s) {
  switch (s) {
    case FlowState::Stopped: return "stopped";
    case FlowState::Running: return "running";
    case FlowState::Failed: return "failed";
    case FlowState::Recovering: return "recovering";
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
  bool idle = false;  // told the stages below that every partition is idle
  std::deque<std::pair<uint64_t, std::vector<PartitionProgress>>> uncommitted;  // epoch -> offsets

  // Shuffle tasks.
  ShuffleQueue* queue = nullptr;
  std::vector<int64_t> producerWatermark;
  std::vector<bool> producerIdle;
  std::vector<uint64_t> producerBarriers;  // epochs whose barrier arrived, per producer
  std::vector<bool> blocked;               // producers whose barrier came before the others'
  std::deque<ShuffleMessage> stashed;      // their messages since, in arrival order

  std::unique_ptr<SinkWriter> sink;
  std::vector<OperatorPtr> operators;  // the fused chain; the last one writes the sink or shuffle
  ShuffleWriter* shuffleOut = nullptr;
  std::vector<std::pair<int, const Operator*>> stateful;  // (operator id, operator)
  TaskMetricsSlot metrics;
  std::atomic<int64_t> watermark{INT64_MIN};
  std::thread thread;
  uint64_t epochsDone = 0;
  uint64_t commitsDone = 0;
  bool finished = false;  // ended the final epoch

  Operator* head() const { return operators.front().get(); }
};

struct FlowRuntime::EpochSummary {
  uint64_t id = 0;
  int64_t startMicros = 0;
  int64_t endMicros = 0;     // 0 while the epoch runs
  int64_t commitMicros = 0;  // longest epoch-end work of a task (flushes, barriers)
  int64_t watermark = INT64_MIN;
  EpochMetrics metrics;
  std::vector<PartitionProgress> partitions;
  int64_t decodeErrors = 0;
  std::map<int, StateOpSnapshot> stateOps;
  std::map<int, uint64_t> inputRowsByScan;
  std::vector<CheckpointPosition> positions;         // source offsets at the barriers
  std::vector<CheckpointTaskWatermark> taskWatermarks;  // task watermarks at the barriers
};

FlowRuntime::FlowRuntime(PhysicalPlan plan, ConnectorProvider& connectors, SlotPool& slots,
                         std::string flowId, std::string stateDir, std::string checkpointDir,
                         int checkpointRetention)
    : plan_(std::move(plan)),
      connectors_(connectors),
      slotPool_(slots),
      flowId_(std::move(flowId)),
      stateDir_(std::move(stateDir)) {
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
    t.source = connectors_.openSource(*t.scan, plan_.flowName, index, stage.tasks);
  } else {
    t.queue = queues_[static_cast<size_t>(queueBase_[stage.id] + index)].get();
    int producers = 0;
    for (const auto& s : plan_.stages) {
      if (s.output.kind == StageOutput::Kind::Shuffle && s.output.targetStage == stage.id) {
        producers += s.tasks;
      }
    }
    t.producerWatermark.assign(static_cast<size_t>(producers), INT64_MIN);
    t.producerIdle.assign(static_cast<size_t>(producers), false);
    t.producerBarriers.assign(static_cast<size_t>(producers), 0);
  }
  for (const OperatorSpec& op : stage.operators) {
    t.operators.push_back(makeOperator(op, stateStore_.get(), index));
    if (op.stateful()) t.stateful.emplace_back(op.id(), t.operators.back().get());
  }
  if (t.outputsToSink) {
    t.sink = transaction_ ? connectors_.openTransactionalSink(plan_.sink, plan_.flowName,
                                                              stage.id * 10000 + index, *transaction_)
                          : connectors_.openSink(plan_.sink, plan_.flowName, stage.id * 10000 + index);
    t.operators.push_back(std::make_unique<SinkOperator>(*t.sink, t.metrics));
  } else {
    const StageSpec& target = plan_.stages.at(static_cast<size_t>(stage.output.targetStage));
    // This task's index among the producers of the target stage: stages feeding
    // it are numbered in plan order.
    int producer = 0;
    for (const auto& s : plan_.stages) {
      if (s.id == stage.id) break;
      if (s.output.kind == StageOutput::Kind::Shuffle && s.output.targetStage == target.id) {
        producer += s.tasks;
      }
    }
    std::vector<ShuffleQueue*> targets;
    for (int i = 0; i < target.tasks; ++i) {
      targets.push_back(queues_[static_cast<size_t>(queueBase_[target.id] + i)].get());
    }
    auto writer = std::make_unique<ShuffleWriter>(stage.output.keys, std::move(targets),
                                                  static_cast<uint8_t>(stage.output.targetInput),
                                                  static_cast<uint16_t>(producer + index), stopping_);
    t.shuffleOut = writer.get();
    t.operators.push_back(std::move(writer));
  }
  for (size_t k = 0; k + 1 < t.operators.size(); ++k) t.operators[k]->setNext(t.operators[k + 1].get());
}

void FlowRuntime::start() {
  {
    std::lock_guard lock(mu_);
    if (state_ == FlowState::Running) return;
  }
  joinAll();  // threads of an earlier, failed run
  if (plan_.stages.empty()) throw InternalError("flow plan without stages");

  SlotPool::Reservation reservation = slotPool_.reserve(plan_.slots(), plan_.flowName);

  bool needsState = false;
  for (const auto& stage : plan_.stages) {
    for (const auto& op : stage.operators) needsState = needsState || op.stateful();
  }
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
    if (reset) {
      // Checkpoints of a run after the reset that never finished its first
      // epoch are no state to go on from.
      if (!checkpoints_->epochs().empty()) checkpoints_->markReset(resetEpoch.value_or(batchId_));
      if (transaction_ && committed >= 0) {
        resetEpoch = std::max<uint64_t>(resetEpoch.value_or(0), static_cast<uint64_t>(committed) + 1);
      }
    } else if (!transaction_ || committed >= 0) {
      CheckpointSearch found =
          checkpoints_->search(transaction_ ? static_cast<uint64_t>(committed) : UINT64_MAX);
      checkpoint = std::move(found.found);
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
        at.push_back(std::move(pp));
      }
      if (!at.empty()) t->source->seek(at);
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
    finalEpoch_ = false;
    stopRequested_ = false;
    coordinatorDone_ = false;
    epochsRequested_ = 0;
    commitsRequested_ = 0;
    tasksReported_ = 0;
    if (checkpoint) {
      batchId_ = checkpoint->epoch + 1;
      lastCheckpoint_ = checkpoint;
      ++recoveries_;
      restoredMicros_ = nowMicros() - restoreStart;
    }
    if (reset) {
      // Epochs go on from where the reset flow was, so that the progress's
      // batchId and an exactly-once sink's committed epoch only grow.
      batchId_ = std::max(batchId_, resetEpoch.value_or(0));
      lastCheckpoint_.reset();
      resetRequested_ = false;
    }
    restored_ = checkpoint;
    for (const auto& sk : skipped) {
      fmt::print(stderr, "{} rtsqld: flow \"{}\": skipped the checkpoint of epoch {}: {}; {}\n",
                 formatTimestamp(nowMicros(), true), plan_.flowName, sk.epoch, sk.reason,
                 checkpoint ? fmt::format("restoring the one of epoch {}", checkpoint->epoch)
                            : std::string("no state to restore: going on from the committed offsets"));
    }
    skipped_ = std::move(skipped);
    resetRun_ = reset;
    runEpochBase_ = batchId_;
    epochStartMicros_ = nowMicros();
    pending_ = std::make_unique<EpochSummary>();
    pending_->id = batchId_;
    pending_->startMicros = epochStartMicros_;
  }
  for (auto& t : tasks_) {
    Task* task = t.get();
    task->thread = std::thread([this, task] {
      if (threadNice_ != 0) lowerCurrentThreadPriority(threadNice_);
      // A function looping long on one value leaves when the flow stops.
      InterruptScope interrupt(
          [](const void* rt) { return static_cast<const FlowRuntime*>(rt)->stopping_.load(std::memory_order_relaxed); },
          this);
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
    runCoordinator();
  });
}

void FlowRuntime::runSourceTask(Task& task) {
  std::vector<SourceRecord> batch;
  batch.reserve(kPollBatch);
  Operator* head = task.head();
  const int eventTimeColumn = task.scan->eventTimeColumn;
  ActivityClock& activity = *activity_;
  PartitionWatermarks& times =
      task.partitionTimes.emplace(task.scan->watermarkDelayMicros, task.scan->idleTimeoutMicros);
  int32_t lastPartition = -1;
  PartitionWatermarks::Partition* lastTime = nullptr;
  try {
    // Every partition the task reads holds the watermark from the start, not
    // only from its first record: the first partition to deliver must not
    // move the watermark past the records the others are about to deliver.
    for (const PartitionProgress& p : task.source->progress()) times.at(p.partition, activity.now());
    if (task.watermark.load() != INT64_MIN) head->onWatermark(task.watermark.load());
    while (!stopping_.load(std::memory_order_relaxed)) {
      if (task.finished) {
        // The final epoch is ended; wait for the flow to commit it and stop.
        commitIfRequested(task);
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        continue;
      }
      batch.clear();
      task.source->poll(batch, kPollBatch, kPollTimeoutMs);
      int64_t now = monotonicMicros();
      EpochMetrics& m = task.metrics.current();
      for (SourceRecord& rec : batch) {
        m.inputRows.fetch_add(1, std::memory_order_relaxed);
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
        head->push(rec.row, ctx);
      }
      if (!batch.empty()) activity.delivered(now);

      // Watermark: the slowest partition that is not idle; none at all moves
      // it while every partition is idle.
      PartitionWatermarks::Result r =
          times.update(activity.now(), [&](int32_t p) { return task.source->caughtUp(p); });
      if (r.allIdle) {
        if (!task.idle && task.shuffleOut) {
          // Nothing left to read while the flow's other partitions delivered:
          // let the stages below go on without this task.
          task.idle = true;
          task.shuffleOut->broadcast(ShuffleMessage::Kind::Idle, 0);
        }
      } else {
        const int64_t current = task.watermark.load(std::memory_order_relaxed);
        const bool advance = eventTimeColumn >= 0 && r.watermark != INT64_MIN && r.watermark > current;
        if (advance) task.watermark.store(r.watermark, std::memory_order_relaxed);
        if (advance || task.idle) {
          // Back from idle, the task's watermark (even with none yet) tells the
          // stages below to wait for it again.
          task.idle = false;
          head->onWatermark(task.watermark.load(std::memory_order_relaxed));
        }
      }

      if (epochsRequested_.load(std::memory_order_acquire) > task.epochsDone) {
        bool final = finalEpoch_.load(std::memory_order_acquire);
        endTaskEpoch(task, true);
        if (final) task.finished = true;
      }
      commitIfRequested(task);
    }
    commitIfRequested(task);
  } catch (const Interrupted&) {
    // The flow is stopping and a function saw it: nothing failed.
  } catch (const SqlError& e) {
    fail(e.message(), e.sqlstate());
  } catch (const std::exception& e) {
    fail(fmt::format("internal error in task {}.{}: {}", task.stage, task.index, e.what()));
  }
}

void FlowRuntime::runShuffleTask(Task& task) {
  std::deque<ShuffleMessage> inbox;
  task.blocked.assign(task.producerWatermark.size(), false);
  try {
    if (task.watermark.load() != INT64_MIN) task.head()->onWatermark(task.watermark.load());
    while (!stopping_.load(std::memory_order_relaxed) && !task.finished) {
      commitIfRequested(task);
      if (!task.queue->popAll(inbox, kPollTimeoutMs)) continue;
      for (ShuffleMessage& msg : inbox) handleShuffleMessage(task, msg);
      inbox.clear();
    }
  } catch (const Interrupted&) {
    // The flow is stopping and a function saw it: nothing failed.
  } catch (const SqlError& e) {
    fail(e.message(), e.sqlstate());
  } catch (const std::exception& e) {
    fail(fmt::format("internal error in task {}.{}: {}", task.stage, task.index, e.what()));
  }
}

void FlowRuntime::handleShuffleMessage(Task& task, ShuffleMessage& msg) {
  // Barrier alignment: a producer whose barrier has arrived is blocked, and its
  // messages wait in `stashed` until every producer's barrier is in.
  if (task.blocked[msg.producer]) {
    task.stashed.push_back(std::move(msg));
    return;
  }
  Operator* head = task.head();
  switch (msg.kind) {
    case ShuffleMessage::Kind::Record:
      if (msg.input == 0) {
        head->push(msg.row, msg.ctx);
      } else {
        head->pushRight(msg.row, msg.ctx);
      }
      return;
    case ShuffleMessage::Kind::Watermark:
    case ShuffleMessage::Kind::Idle: {
      if (msg.kind == ShuffleMessage::Kind::Watermark) {
        task.producerWatermark[msg.producer] = std::max(task.producerWatermark[msg.producer], msg.value);
        task.producerIdle[msg.producer] = false;
      } else {
        task.producerIdle[msg.producer] = true;
      }
      int64_t wm = INT64_MAX;
      for (size_t p = 0; p < task.producerWatermark.size(); ++p) {
        if (!task.producerIdle[p]) wm = std::min(wm, task.producerWatermark[p]);
      }
      if (wm != INT64_MAX && wm != INT64_MIN && wm > task.watermark.load(std::memory_order_relaxed)) {
        task.watermark.store(wm, std::memory_order_relaxed);
        head->onWatermark(wm);
      }
      return;
    }
    case ShuffleMessage::Kind::Barrier: {
      task.producerBarriers[msg.producer] = static_cast<uint64_t>(msg.value) + 1;
      bool aligned = std::all_of(task.producerBarriers.begin(), task.producerBarriers.end(),
                                 [&](uint64_t b) { return b > task.epochsDone; });
      if (!aligned) {
        task.blocked[msg.producer] = true;
        return;
      }
      bool final = finalEpoch_.load(std::memory_order_acquire);
      endTaskEpoch(task, false);
      if (final) task.finished = true;
      std::fill(task.blocked.begin(), task.blocked.end(), false);
      // What waited is processed now, in arrival order.
      std::deque<ShuffleMessage> waiting;
      waiting.swap(task.stashed);
      for (ShuffleMessage& m : waiting) handleShuffleMessage(task, m);
      return;
    }
  }
}

void FlowRuntime::endTaskEpoch(Task& task, bool isSource) {
  int64_t t0 = nowMicros();
  uint64_t epoch = task.epochsDone;
  const int64_t watermarkAtBarrier = task.watermark.load(std::memory_order_relaxed);
  std::vector<PartitionProgress> offsets;
  if (isSource) {
    offsets = task.source->progress();
    task.uncommitted.emplace_back(epoch, offsets);
  }
  std::map<int, StateOpSnapshot> stateOps;
  for (const auto& [id, op] : task.stateful) {
    auto& snap = stateOps[id];
    snap.name = op->name();
    snap.add(op->stats());
  }
  // Operators flush their state; then the sink is flushed or the barrier sent,
  // so everything before the barrier is durable below before it is reported.
  task.head()->onEpochEnd();
  if (task.sink) {
    task.sink->flush(kSinkFlushTimeoutMs);
    // The epoch's transaction closes once every task is here: later rows wait.
    if (transaction_) task.sink->pause();
  }
  if (checkpoints_ && stateStore_) {
    // RocksDB now holds this task's state at the barrier; keep it so until the
    // checkpoint is taken.
    for (const auto& [id, op] : task.stateful) stateStore_->holdWrites(id, task.index, true);
  }
  if (task.shuffleOut) task.shuffleOut->broadcast(ShuffleMessage::Kind::Barrier, static_cast<int64_t>(epoch));
  std::unique_ptr<EpochMetrics> finished = task.metrics.rotate();
  int64_t work = nowMicros() - t0;
  ++task.epochsDone;

  std::lock_guard lock(mu_);
  pending_->metrics.mergeFrom(*finished);
  pending_->partitions.insert(pending_->partitions.end(), offsets.begin(), offsets.end());
  for (const auto& p : offsets) {
    if (p.endOffset >= 0) pending_->positions.push_back({task.scanIndex, p.topic, p.partition, p.endOffset});
  }
  pending_->taskWatermarks.push_back({task.stage, task.index, watermarkAtBarrier});
  if (isSource) {
    pending_->decodeErrors += task.source->decodeErrors();
    pending_->inputRowsByScan[task.scanIndex] += finished->inputRows.load();
  }
  pending_->commitMicros = std::max(pending_->commitMicros, work);
  for (auto& [id, snap] : stateOps) {
    auto& into = pending_->stateOps[id];
    into.name = snap.name;
    into.numRowsTotal += snap.numRowsTotal;
    into.numRowsUpdated += snap.numRowsUpdated;
    into.numRowsDroppedByWatermark += snap.numRowsDroppedByWatermark;
    into.memoryUsedBytes += snap.memoryUsedBytes;
  }
  if (++tasksReported_ == static_cast<int>(tasks_.size())) {
    // Every task has ended the epoch: it is complete.
    pending_->endMicros = nowMicros();
    pending_->watermark = currentWatermark();
    last_ = std::move(pending_);
    ++batchId_;
    tasksReported_ = 0;
    epochStartMicros_ = last_->endMicros;
    pending_ = std::make_unique<EpochSummary>();
    pending_->id = batchId_;
    pending_->startMicros = epochStartMicros_;
    // The coordinator writes the checkpoint, then lets the tasks commit.
    cv_.notify_all();
  }
}

void FlowRuntime::commitIfRequested(Task& task) {
  uint64_t complete = commitsRequested_.load(std::memory_order_acquire);
  if (complete <= task.commitsDone) return;
  // Commit the newest complete epoch's barrier offsets; older ones are covered.
  std::optional<std::vector<PartitionProgress>> upTo;
  while (!task.uncommitted.empty() && task.uncommitted.front().first < complete) {
    upTo = std::move(task.uncommitted.front().second);
    task.uncommitted.pop_front();
  }
  if (upTo && plan_.commitOffsets) task.source->commit(*upTo);
  task.commitsDone = complete;
  if (checkpoints_ && stateStore_) {
    for (const auto& [id, op] : task.stateful) stateStore_->holdWrites(id, task.index, false);
  }
  if (transaction_ && task.sink && !task.finished) task.sink->resume();
}

void FlowRuntime::runCoordinator() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    const uint64_t epoch = batchId_;
    auto deadline = std::chrono::steady_clock::now() +
                    std::chrono::microseconds(plan_.checkpointIntervalMicros);
    cv_.wait_until(lock, deadline, [&] { return stopping_.load() || stopRequested_.load(); });
    if (stopping_) break;
    // Only the coordinator asks for epoch ends, one at a time: a stop during an
    // epoch's end waits for it, then ends the next one as the final epoch.
    const bool final = stopRequested_.load();
    if (final) finalEpoch_.store(true, std::memory_order_release);
    epochsRequested_.store(epoch - runEpochBase_ + 1, std::memory_order_release);
    // Tasks end the epoch between polls; wait until the last one has.
    cv_.wait(lock, [&] { return stopping_ || batchId_ > epoch; });
    if (stopping_) break;
    if (checkpoints_) {
      CheckpointInfo info;
      info.epoch = last_->id;
      info.epochEndMicros = last_->endMicros;
      info.watermark = last_->watermark;
      info.positions = last_->positions;
      info.taskWatermarks = last_->taskWatermarks;
      info.hasState = stateStore_ != nullptr;
      lock.unlock();
      try {
        checkpoints_->write(info, [&](const std::string& dir) { stateStore_->snapshot(dir); });
      } catch (const SqlError& e) {
        fail(fmt::format("cannot write the checkpoint of epoch {}: {}", info.epoch, e.message()),
             e.sqlstate());
        lock.lock();
        break;
      }
      if (transaction_) {
        // The epoch's rows become visible to read_committed consumers, with the
        // epoch recorded in the same transaction; the next epoch's opens at once.
        try {
          transaction_->commit(info.epoch);
          if (!final) transaction_->begin();
        } catch (const SqlError& e) {
          fail(fmt::format("cannot commit the output of epoch {}: {}", info.epoch, e.message()),
               e.sqlstate());
          lock.lock();
          break;
        }
      }
      checkpoints_->clearReset();  // a reset is done once a checkpoint after it is
      lock.lock();
      lastCheckpoint_ = std::move(info);
    }
    // Everything before the barriers is durable: sources may commit them.
    commitsRequested_.store(epoch - runEpochBase_ + 1, std::memory_order_release);
    if (final) break;
  }
  coordinatorDone_ = true;
  cv_.notify_all();
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
  cv_.notify_all();
  for (auto& q : queues_) q->wakeAll();
}

void FlowRuntime::joinAll() {
  for (auto& t : tasks_) {
    if (t->thread.joinable()) t->thread.join();
  }
  if (coordinator_.joinable()) coordinator_.join();
}

void FlowRuntime::stop() {
  {
    std::unique_lock lock(mu_);
    if (state_ == FlowState::Running && !stopping_) {
      // The coordinator ends the epoch in progress as the final one: sources
      // stop reading at their barrier, everything before it is flushed,
      // checkpointed and committed.
      stopRequested_ = true;
      cv_.notify_all();
      cv_.wait_for(lock, std::chrono::microseconds(kStopTimeoutMicros),
                   [&] { return stopping_.load() || coordinatorDone_; });
    }
  }
  stopping_ = true;
  cv_.notify_all();
  for (auto& q : queues_) q->wakeAll();
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
  if (state_ == FlowState::Running) state_ = FlowState::Stopped;
}

FlowState FlowRuntime::state() const {
  std::lock_guard lock(mu_);
  return state_;
}

std::optional<CheckpointInfo> FlowRuntime::lastCheckpoint() const {
  std::lock_guard lock(mu_);
  return lastCheckpoint_;
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
    uint64_t next = batchId_;
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
  lastCheckpoint_.reset();
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
  int64_t wm = INT64_MAX;
  for (const auto& t : tasks_) {
    int64_t w = t->watermark.load(std::memory_order_relaxed);
    if (t->outputsToSink && w != INT64_MIN) wm = std::min(wm, w);
  }
  return wm == INT64_MAX ? INT64_MIN : wm;
}

std::string FlowRuntime::progressJson() const {
  std::lock_guard lock(mu_);
  // A failed flow keeps its tasks until it is stopped or restarted: report what
  // its epoch got to (records read, decode errors, offsets), not an empty one.
  bool failedWithTasks = state_ == FlowState::Failed && !tasks_.empty();
  if ((state_ != FlowState::Running && !failedWithTasks) || !pending_) {
    if (last_) return buildJson(*last_, false);
    EpochSummary empty;
    empty.id = batchId_;
    empty.startMicros = epochStartMicros_;
    empty.endMicros = epochStartMicros_;
    return buildJson(empty, false);
  }
  // The live epoch: what the tasks have finished of it plus what they are doing now.
  EpochSummary live;
  live.id = pending_->id;
  live.startMicros = pending_->startMicros;
  live.metrics.mergeFrom(pending_->metrics);
  live.decodeErrors = pending_->decodeErrors;
  live.inputRowsByScan = pending_->inputRowsByScan;
  live.watermark = currentWatermark();
  for (const auto& t : tasks_) {
    t->metrics.withCurrent([&](const EpochMetrics& m) {
      live.metrics.mergeFrom(m);
      if (t->isSource) live.inputRowsByScan[t->scanIndex] += m.inputRows.load();
    });
    if (t->source) {
      auto parts = t->source->progress();
      live.partitions.insert(live.partitions.end(), parts.begin(), parts.end());
      live.decodeErrors += t->source->decodeErrors();
    }
    for (const auto& [id, op] : t->stateful) {
      auto& snap = live.stateOps[id];
      snap.name = op->name();
      snap.add(op->stats());
    }
  }
  return buildJson(live, state_ == FlowState::Running);
}

std::string FlowRuntime::buildJson(const EpochSummary& e, bool live, bool nested) const {
  int64_t end = e.endMicros ? e.endMicros : nowMicros();
  double seconds = std::max(1e-3, static_cast<double>(end - e.startMicros) / 1e6);
  uint64_t in = e.metrics.inputRows.load();
  uint64_t out = e.metrics.outputRows.load();

  JsonWriter w;
  w.beginObject();
  w.key("id").value(flowId_);
  w.key("runId").value(runId_);
  w.key("name").value(plan_.flowName);
  w.key("timestamp").value(formatTimestamp(e.startMicros, true));
  w.key("batchId").value(e.id);
  w.key("live").value(live);
  w.key("numInputRows").value(in);
  w.key("inputRowsPerSecond").value(static_cast<double>(in) / seconds);
  w.key("processedRowsPerSecond").value(static_cast<double>(in) / seconds);
  w.key("durationMs").beginObject();
  w.key("triggerExecution").value((end - e.startMicros) / 1000);
  w.key("commitOffsets").value(e.commitMicros / 1000);
  w.endObject();
  w.key("eventTime").beginObject();
  int64_t maxEvent = e.metrics.maxEventTimeMicros.load();
  if (maxEvent != INT64_MIN) w.key("max").value(formatTimestamp(maxEvent, true));
  if (e.watermark != INT64_MIN) w.key("watermark").value(formatTimestamp(e.watermark, true));
  w.endObject();
  w.key("stateOperators").beginArray();
  for (const auto& [id, s] : e.stateOps) {
    w.beginObject();
    w.key("operatorName").value(s.name);
    w.key("operatorId").value(id);
    w.key("numRowsTotal").value(s.numRowsTotal);
    w.key("numRowsUpdated").value(s.numRowsUpdated);
    w.key("numRowsDroppedByWatermark").value(s.numRowsDroppedByWatermark);
    w.key("memoryUsedBytes").value(s.memoryUsedBytes);
    w.endObject();
  }
  w.endArray();

  // One entry per source, its partitions grouped by topic as Spark prints Kafka offsets.
  w.key("sources").beginArray();
  for (size_t si = 0; si < plan_.scans.size(); ++si) {
    const ScanSpec& scan = plan_.scans[si];
    std::string description = scan.name;
    for (const auto& t : tasks_) {
      if (t->scan == &scan && t->source) {
        description = t->source->description();
        break;
      }
    }
    // Partitions belong to this source when their topic is one of its topics;
    // with a single source every partition is its own.
    auto mine = [&](const PartitionProgress& p) {
      if (plan_.scans.size() == 1) return true;
      std::string topics = "," + scan.options.getString("subscribe") + ",";
      return p.topic.empty() ? false : topics.find("," + p.topic + ",") != std::string::npos;
    };
    auto offsets = [&](const char* key, int64_t PartitionProgress::*field) {
      std::map<std::string, std::map<int32_t, int64_t>> byTopic;
      for (const auto& p : e.partitions) {
        if (mine(p)) byTopic[p.topic.empty() ? scan.name : p.topic][p.partition] = p.*field;
      }
      w.key(key).beginObject();
      for (const auto& [topic, parts] : byTopic) {
        w.key(topic).beginObject();
        for (const auto& [partition, offset] : parts) w.key(std::to_string(partition)).value(offset);
        w.endObject();
      }
      w.endObject();
    };
    w.beginObject();
    w.key("description").value(description);
    offsets("startOffset", &PartitionProgress::startOffset);
    offsets("endOffset", &PartitionProgress::endOffset);
    offsets("latestOffset", &PartitionProgress::latestOffset);
    offsets("offsetsSkipped", &PartitionProgress::offsetsSkipped);
    auto it = e.inputRowsByScan.find(static_cast<int>(si));
    uint64_t scanIn = it == e.inputRowsByScan.end() ? 0 : it->second;
    w.key("numInputRows").value(scanIn);
    w.key("inputRowsPerSecond").value(static_cast<double>(scanIn) / seconds);
    w.key("processedRowsPerSecond").value(static_cast<double>(scanIn) / seconds);
    // Decode errors are counted per flow; with one source they are its own.
    if (plan_.scans.size() == 1) w.key("numDecodeErrors").value(e.decodeErrors);
    w.endObject();
  }
  w.endArray();
  if (plan_.scans.size() > 1) w.key("numDecodeErrors").value(e.decodeErrors);

  w.key("sink").beginObject();
  std::string sinkDescription = plan_.sink.name;
  for (const auto& t : tasks_) {
    if (t->sink) {
      sinkDescription = t->sink->description();
      break;
    }
  }
  w.key("description").value(sinkDescription);
  w.key("numOutputRows").value(out);
  w.endObject();
  w.key("rtmMetrics").beginObject();
  writeLatency(w, "processingLatencyMs", e.metrics.processingLatency);
  writeLatency(w, "sourceQueuingLatencyMs", e.metrics.sourceQueuingLatency);
  writeLatency(w, "e2eLatencyMs", e.metrics.e2eLatency);
  w.endObject();
  if (!nested) {
    // Durability: the newest complete checkpoint and the last recovery.
    w.key("checkpoint");
    if (lastCheckpoint_) {
      const CheckpointInfo& c = *lastCheckpoint_;
      w.beginObject();
      w.key("epoch").value(c.epoch);
      w.key("timestamp").value(formatTimestamp(c.writtenMicros, true));
      w.key("durationMs").value(static_cast<double>(c.durationMicros) / 1000.0);
      w.key("stateBytes").value(c.stateBytes);
      w.endObject();
    } else {
      w.null();
    }
    w.key("recovery");
    if (restored_) {
      w.beginObject();
      w.key("fromEpoch").value(restored_->epoch);
      w.key("restoreMs").value(static_cast<double>(restoredMicros_) / 1000.0);
      w.key("recoveries").value(recoveries_);
      writeSkipped(w, skipped_);
      w.key("reset").value(false);
      w.endObject();
    } else if (!skipped_.empty() || resetRun_) {
      // No checkpoint was restored, and that is worth saying: damaged ones
      // were passed over (a stateless flow going on from its committed
      // offsets), or the state was reset.
      w.beginObject();
      w.key("fromEpoch").null();
      w.key("restoreMs").null();
      w.key("recoveries").value(recoveries_);
      writeSkipped(w, skipped_);
      w.key("reset").value(resetRun_);
      w.endObject();
    } else {
      w.null();
    }
  }
  if (live) {
    w.key("lastEpoch");
    if (last_) {
      w.raw(buildJson(*last_, false, true));
    } else {
      w.null();
    }
  }
  w.endObject();
  return w.take();
}

}  // namespace rtsql
