#include "executor/flow_runtime.h"

#include <pthread.h>

#include <algorithm>
#include <map>
#include <random>

#include "common/clock.h"
#include "common/error.h"
#include "common/json.h"
#include "executor/metrics/json_writer.h"
#include "executor/metrics/task_metrics.h"
#include "executor/operators/filter.h"
#include "executor/operators/project.h"
#include "executor/operators/sink.h"

namespace rtsql {

namespace {

// Records a source task hands over at most per poll, and how long a poll may
// wait for the first one. The wait bounds how late a task notices an epoch end
// or a stop; it never delays a record (poll returns as soon as one is there).
constexpr size_t kPollBatch = 512;
constexpr int kPollTimeoutMs = 50;
constexpr int kSinkFlushTimeoutMs = 30000;

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

}  // namespace

const char* flowStateName(FlowState s) {
  switch (s) {
    case FlowState::Stopped: return "stopped";
    case FlowState::Running: return "running";
    case FlowState::Failed: return "failed";
  }
  return "unknown";
}

struct FlowRuntime::Task {
  int index = 0;
  std::unique_ptr<SourceTask> source;
  std::unique_ptr<SinkWriter> sink;
  std::vector<OperatorPtr> operators;  // the fused chain; the last one writes the sink
  TaskMetricsSlot metrics;
  std::thread thread;
  uint64_t epochsDone = 0;
};

struct FlowRuntime::EpochSummary {
  uint64_t id = 0;
  int64_t startMicros = 0;
  int64_t endMicros = 0;  // 0 while the epoch runs
  int64_t commitMicros = 0;  // time spent flushing sinks and committing offsets
  EpochMetrics metrics;
  std::vector<PartitionProgress> partitions;
  int64_t decodeErrors = 0;
};

FlowRuntime::FlowRuntime(PhysicalPlan plan, ConnectorProvider& connectors, SlotPool& slots,
                         std::string flowId)
    : plan_(std::move(plan)), connectors_(connectors), slotPool_(slots), flowId_(std::move(flowId)) {}

FlowRuntime::~FlowRuntime() { stop(); }

void FlowRuntime::start() {
  {
    std::lock_guard lock(mu_);
    if (state_ == FlowState::Running) return;
  }
  joinAll();  // threads of an earlier, failed run

  if (plan_.stages.empty()) throw InternalError("flow plan without stages");
  const StageSpec& stage = plan_.stages.front();
  SlotPool::Reservation reservation = slotPool_.reserve(plan_.slots(), plan_.flowName);

  std::vector<std::unique_ptr<Task>> tasks;
  for (int i = 0; i < stage.tasks; ++i) {
    auto t = std::make_unique<Task>();
    t->index = i;
    t->source = connectors_.openSource(plan_.scan, plan_.flowName, i, stage.tasks);
    t->sink = connectors_.openSink(plan_.sink, plan_.flowName, i);
    for (const OperatorSpec& op : stage.operators) {
      switch (op.kind) {
        case OperatorKind::Filter: t->operators.push_back(makeFilter(op.predicate)); break;
        case OperatorKind::Project: t->operators.push_back(makeProject(op.exprs)); break;
      }
    }
    t->operators.push_back(std::make_unique<SinkOperator>(*t->sink, t->metrics));
    for (size_t k = 0; k + 1 < t->operators.size(); ++k) {
      t->operators[k]->setNext(t->operators[k + 1].get());
    }
    tasks.push_back(std::move(t));
  }

  {
    std::lock_guard lock(mu_);
    reservation_ = std::move(reservation);
    tasks_ = std::move(tasks);
    runId_ = randomUuid();
    state_ = FlowState::Running;
    failure_.clear();
    stopping_ = false;
    epochsRequested_ = 0;
    tasksReported_ = 0;
    epochStartMicros_ = nowMicros();
    pending_ = std::make_unique<EpochSummary>();
    pending_->id = batchId_;
    pending_->startMicros = epochStartMicros_;
  }
  for (auto& t : tasks_) {
    Task* task = t.get();
    task->thread = std::thread([this, task] { runTask(*task); });
    std::string name = fmt::format("{:.10}/{}", plan_.flowName, task->index);
    pthread_setname_np(task->thread.native_handle(), name.c_str());
  }
  coordinator_ = std::thread([this] { runCoordinator(); });
}

void FlowRuntime::runTask(Task& task) {
  std::vector<SourceRecord> batch;
  batch.reserve(kPollBatch);
  Operator* head = task.operators.front().get();
  const int eventTimeColumn = plan_.scan.eventTimeColumn;
  try {
    while (!stopping_.load(std::memory_order_relaxed)) {
      batch.clear();
      task.source->poll(batch, kPollBatch, kPollTimeoutMs);
      EpochMetrics& m = task.metrics.current();
      for (SourceRecord& rec : batch) {
        m.inputRows.fetch_add(1, std::memory_order_relaxed);
        m.sourceQueuingLatency.record(rec.readMicros - rec.timestampMicros);
        if (eventTimeColumn >= 0) {
          const Value& ts = rec.row[eventTimeColumn];
          if (!ts.isNull() && ts.asInt() > m.maxEventTimeMicros.load(std::memory_order_relaxed)) {
            m.maxEventTimeMicros.store(ts.asInt(), std::memory_order_relaxed);
          }
        }
        RecordContext ctx{rec.timestampMicros, rec.readMicros};
        head->push(rec.row, ctx);
      }
      if (epochsRequested_.load(std::memory_order_acquire) > task.epochsDone) finishEpoch(task);
    }
    // A stop ends the epoch in progress: everything read so far is written and
    // its offsets committed.
    finishEpoch(task);
  } catch (const SqlError& e) {
    fail(e.message());
  } catch (const std::exception& e) {
    fail(fmt::format("internal error in task {}: {}", task.index, e.what()));
  }
}

void FlowRuntime::finishEpoch(Task& task) {
  int64_t t0 = nowMicros();
  task.sink->flush(kSinkFlushTimeoutMs);
  std::vector<PartitionProgress> parts = task.source->progress();
  task.source->commit();
  std::unique_ptr<EpochMetrics> finished = task.metrics.rotate();
  int64_t commitMicros = nowMicros() - t0;
  ++task.epochsDone;

  std::lock_guard lock(mu_);
  pending_->metrics.mergeFrom(*finished);
  pending_->partitions.insert(pending_->partitions.end(), parts.begin(), parts.end());
  pending_->decodeErrors += task.source->decodeErrors();
  pending_->commitMicros = std::max(pending_->commitMicros, commitMicros);
  if (++tasksReported_ == static_cast<int>(tasks_.size())) {
    pending_->endMicros = nowMicros();
    last_ = std::move(pending_);
    ++batchId_;
    tasksReported_ = 0;
    epochStartMicros_ = last_->endMicros;
    pending_ = std::make_unique<EpochSummary>();
    pending_->id = batchId_;
    pending_->startMicros = epochStartMicros_;
    cv_.notify_all();
  }
}

void FlowRuntime::runCoordinator() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    uint64_t epoch = batchId_;
    auto deadline = std::chrono::steady_clock::now() +
                    std::chrono::microseconds(plan_.checkpointIntervalMicros);
    cv_.wait_until(lock, deadline, [&] { return stopping_.load(); });
    if (stopping_) break;
    epochsRequested_.store(epoch + 1, std::memory_order_release);
    // Tasks finish the epoch between polls; wait until the last one has.
    cv_.wait(lock, [&] { return stopping_ || batchId_ > epoch; });
  }
}

void FlowRuntime::fail(const std::string& reason) {
  {
    std::lock_guard lock(mu_);
    if (state_ != FlowState::Failed) {
      state_ = FlowState::Failed;
      failure_ = reason;
    }
  }
  stopping_ = true;
  cv_.notify_all();
}

void FlowRuntime::joinAll() {
  for (auto& t : tasks_) {
    if (t->thread.joinable()) t->thread.join();
  }
  if (coordinator_.joinable()) coordinator_.join();
}

void FlowRuntime::stop() {
  stopping_ = true;
  cv_.notify_all();
  joinAll();
  std::lock_guard lock(mu_);
  // Close connectors (consumers leave, producers are already flushed) and give
  // the slots back.
  tasks_.clear();
  reservation_.release();
  if (state_ == FlowState::Running) state_ = FlowState::Stopped;
}

FlowState FlowRuntime::state() const {
  std::lock_guard lock(mu_);
  return state_;
}

std::string FlowRuntime::failureReason() const {
  std::lock_guard lock(mu_);
  return failure_;
}

std::string FlowRuntime::progressJson() const {
  std::lock_guard lock(mu_);
  if (state_ != FlowState::Running || !pending_) {
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
  for (const auto& t : tasks_) {
    t->metrics.withCurrent([&](const EpochMetrics& m) { live.metrics.mergeFrom(m); });
    if (t->source) {
      auto parts = t->source->progress();
      live.partitions.insert(live.partitions.end(), parts.begin(), parts.end());
      live.decodeErrors += t->source->decodeErrors();
    }
  }
  std::string json = buildJson(live, true);
  return json;
}

std::string FlowRuntime::buildJson(const EpochSummary& e, bool live) const {
  int64_t end = e.endMicros ? e.endMicros : nowMicros();
  double seconds = std::max(1e-3, static_cast<double>(end - e.startMicros) / 1e6);
  uint64_t in = e.metrics.inputRows.load();
  uint64_t out = e.metrics.outputRows.load();

  // Partitions grouped by topic, as Spark prints Kafka offsets.
  auto offsets = [&](JsonWriter& w, const char* key, int64_t PartitionProgress::*field) {
    std::map<std::string, std::map<int32_t, int64_t>> byTopic;
    for (const auto& p : e.partitions) {
      byTopic[p.topic.empty() ? plan_.scan.name : p.topic][p.partition] = p.*field;
    }
    w.key(key).beginObject();
    for (const auto& [topic, parts] : byTopic) {
      w.key(topic).beginObject();
      for (const auto& [partition, offset] : parts) w.key(std::to_string(partition)).value(offset);
      w.endObject();
    }
    w.endObject();
  };

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
  if (plan_.scan.eventTimeColumn >= 0 && maxEvent != INT64_MIN) {
    w.key("max").value(formatTimestamp(maxEvent, true));
    w.key("watermark").value(formatTimestamp(maxEvent - plan_.scan.watermarkDelayMicros, true));
  }
  w.endObject();
  w.key("stateOperators").beginArray().endArray();
  w.key("sources").beginArray().beginObject();
  w.key("description").value(tasks_.empty() || !tasks_.front()->source
                                  ? plan_.scan.name
                                  : tasks_.front()->source->description());
  offsets(w, "startOffset", &PartitionProgress::startOffset);
  offsets(w, "endOffset", &PartitionProgress::endOffset);
  offsets(w, "latestOffset", &PartitionProgress::latestOffset);
  w.key("numInputRows").value(in);
  w.key("inputRowsPerSecond").value(static_cast<double>(in) / seconds);
  w.key("processedRowsPerSecond").value(static_cast<double>(in) / seconds);
  w.key("numDecodeErrors").value(e.decodeErrors);
  w.endObject().endArray();
  w.key("sink").beginObject();
  w.key("description").value(tasks_.empty() || !tasks_.front()->sink
                                  ? plan_.sink.name
                                  : tasks_.front()->sink->description());
  w.key("numOutputRows").value(out);
  w.endObject();
  w.key("rtmMetrics").beginObject();
  writeLatency(w, "processingLatencyMs", e.metrics.processingLatency);
  writeLatency(w, "sourceQueuingLatencyMs", e.metrics.sourceQueuingLatency);
  writeLatency(w, "e2eLatencyMs", e.metrics.e2eLatency);
  w.endObject();
  if (live) {
    w.key("lastEpoch");
    if (last_) {
      w.raw(buildJson(*last_, false));
    } else {
      w.null();
    }
  }
  w.endObject();
  return w.take();
}

}  // namespace rtsql
