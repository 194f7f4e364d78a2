#include "server/live_query.h"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <mutex>
#include <random>

#include "common/thread_priority.h"
#include "connectors/kafka/tap.h"
#include "connectors/registry.h"
#include "executor/flow_runtime.h"
#include "server/pg_values.h"
#include "server/query_slots.h"

namespace rtsql {

namespace {

// Rows between the flow's tasks and the statement's thread. Bounded: a client
// that reads slowly makes this flow's sink wait (backpressure to its own
// source), and never any other flow.
class RowChannel {
 public:
  explicit RowChannel(size_t capacity) : capacity_(capacity) {}

  // Returns false once the channel is closed (the query ended).
  bool push(const Row& row) {
    std::unique_lock lock(mu_);
    notFull_.wait(lock, [&] { return closed_ || rows_.size() < capacity_; });
    if (closed_) return false;
    rows_.push_back(row);
    notEmpty_.notify_one();
    return true;
  }

  void popAll(std::deque<Row>& out, int timeoutMs) {
    std::unique_lock lock(mu_);
    notEmpty_.wait_for(lock, std::chrono::milliseconds(timeoutMs), [&] { return !rows_.empty(); });
    out.swap(rows_);
    notFull_.notify_all();
  }

  void close() {
    std::lock_guard lock(mu_);
    closed_ = true;
    notFull_.notify_all();
    notEmpty_.notify_all();
  }

 private:
  const size_t capacity_;
  std::mutex mu_;
  std::condition_variable notEmpty_, notFull_;
  std::deque<Row> rows_;
  bool closed_ = false;
};

// A query that retracts rows (its changelog is retract) shows each change with
// its kind in a first column "op" ("+I", "-U", "+U", "-D"), as a changelog;
// any other query shows its rows as they are, each update as the new row.
bool showsChanges(const PhysicalPlan& plan) {
  return plan.output.mode == ChangelogMode::Retract;
}

class ClientSink final : public SinkWriter {
 public:
  ClientSink(std::shared_ptr<RowChannel> channel, bool changes)
      : channel_(std::move(channel)), changes_(changes) {}
  void write(const Row& row, int64_t ts) override {
    if (changes_) {
      writeChange(row, ts, RowKind::Insert);
      return;
    }
    channel_->push(row);
  }
  void writeChange(const Row& row, int64_t ts, RowKind kind) override {
    if (!changes_) {
      SinkWriter::writeChange(row, ts, kind);
      return;
    }
    Row withKind;
    withKind.reserve(row.size() + 1);
    withKind.push_back(Value::string(rowKindSymbol(kind)));
    withKind.insert(withKind.end(), row.begin(), row.end());
    channel_->push(withKind);
  }
  void flush(int) override {}
  int64_t deliveryErrors() const override { return 0; }
  std::string description() const override { return "Client"; }

 private:
  std::shared_ptr<RowChannel> channel_;
  bool changes_;
};

// The server's connectors, except that the "client" sink is the channel and
// that Kafka sources read from the latest offsets share the server's taps.
class LiveProvider final : public ConnectorProvider {
 public:
  LiveProvider(ConnectorProvider& base, KafkaTaps& taps, std::shared_ptr<RowChannel> channel,
               bool changes)
      : base_(base), taps_(taps), channel_(std::move(channel)), changes_(changes) {}
  int sourcePartitions(const ScanSpec& scan) override { return base_.sourcePartitions(scan); }
  std::unique_ptr<SourceTask> openSource(const ScanSpec& scan, const std::string& flow, int task,
                                         int tasks) override {
    if (!KafkaTaps::serves(scan)) return base_.openSource(scan, flow, task, tasks);
    // A person reading rows does not need them within a millisecond: the
    // broker may gather up to 64 KB or 10 ms per fetch, so the live queries
    // of a source wake together once per fetch rather than once per record.
    // Not longer: the work a fetch brings runs as a burst in every live query
    // at once, and 100 ms bursts cost running flows 1 ms at P99 where 10 ms
    // ones cost 0.2 (docs/benchmarks.md, "Connections"). Options the source
    // sets itself win.
    ScanSpec relaxed = scan;
    if (!relaxed.options.has("kafka.fetch.min.bytes")) relaxed.options.set("kafka.fetch.min.bytes", "65536");
    if (!relaxed.options.has("kafka.fetch.wait.max.ms")) relaxed.options.set("kafka.fetch.wait.max.ms", "10");
    // Dead letters are a flow's: a query run again and again from the
    // earliest offsets would write the same ones each time. It skips them.
    SourceOptions parsed = sourceOptionsOf(scan);
    if (parsed.onError == RowErrorPolicy::DeadLetter) parsed.onError = RowErrorPolicy::Skip;
    relaxed.parsed = std::make_shared<const SourceOptions>(parsed);
    // A query that starts at the latest offsets wants what arrives from now
    // on, which one consumer can give every such query of the source. One
    // that reads from the earliest offsets needs a consumer of its own.
    if (!parsed.fromEarliest) {
      return taps_.subscribe(relaxed, flow, task, tasks);
    }
    return base_.openSource(relaxed, flow, task, tasks);
  }
  std::unique_ptr<SinkWriter> openSink(const SinkSpec& sink, const std::string& flow,
                                       int task) override {
    if (sink.traits.toClient) return std::make_unique<ClientSink>(channel_, changes_);
    return base_.openSink(sink, flow, task);
  }

 private:
  ConnectorProvider& base_;
  KafkaTaps& taps_;
  std::shared_ptr<RowChannel> channel_;
  bool changes_;
};

std::string shortId() {
  std::random_device rd;
  return fmt::format("{:08x}", rd());
}

}  // namespace

std::vector<ResultColumn> liveQueryColumns(const PhysicalPlan& plan) {
  std::vector<ResultColumn> cols;
  if (showsChanges(plan)) cols.push_back({"op", pgTypeOf(*DataType::of(TypeId::String))});
  for (const auto& c : plan.sink.input.columns) {
    if (!c.hidden) cols.push_back({c.name, pgTypeOf(*c.type)});
  }
  return cols;
}

void runLiveQuery(PhysicalPlan plan, std::optional<int64_t> limit, ConnectorProvider& connectors,
                  KafkaTaps& taps, SlotPool& slots, const std::string& stateDir,
                  ResultWriter& out) {
  std::vector<ResultColumn> cols = liveQueryColumns(plan);
  std::string id = shortId();
  plan.flowName = "live-" + id;
  plan.commitOffsets = false;
  std::string dir = (std::filesystem::path(stateDir) / id).string();

  auto channel = std::make_shared<RowChannel>(4096);
  LiveProvider provider(connectors, taps, channel, showsChanges(plan));
  const QuerySlots need = querySlotsOf(plan);
  FlowRuntime runtime(std::move(plan), provider, slots, "live-" + id, dir);
  // A person reading rows does not notice a millisecond; a flow's P99 does.
  runtime.setThreadNice(kLiveQueryNice);
  try {
    runtime.start();
  } catch (const SqlError& e) {
    if (e.sqlstate() != sqlstate::kInsufficientResources) throw;
    throw querySlotsError("a live query", need, slots);
  }

  out.columns(cols);
  int64_t sent = 0;
  std::deque<Row> rows;
  std::vector<std::optional<std::string>> text(cols.size());
  std::string failure, failureCode;
  // The LIMIT is checked first: a query that has all its rows ends without
  // asking the client whether to go on.
  while ((!limit || sent < *limit) && !out.cancelled()) {
    // The rows a failed flow produced before its failure are still sent: the
    // client gets all of them, then the error.
    const bool failed = runtime.state() == FlowState::Failed;
    if (failed) {
      failure = runtime.failureReason();
      failureCode = runtime.failureCode();
    }
    channel->popAll(rows, failed ? 0 : 50);
    for (const Row& row : rows) {
      for (size_t i = 0; i < text.size() && i < row.size(); ++i) text[i] = pgTextOf(row[i]);
      out.row(text);
      if (limit && ++sent >= *limit) break;
      if (!limit) ++sent;
    }
    rows.clear();
    if (failed) {
      if (limit && sent >= *limit) failure.clear();  // it had every row it asked for
      break;
    }
  }
  // Unblock the sink before stopping. Nobody reads the rows of a final epoch
  // now: the tasks leave at once, and a function call of theirs that takes
  // long is interrupted without a stop's grace.
  channel->close();
  runtime.stopWithoutFinalEpoch();
  runtime.stop();
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  if (!failure.empty()) {
    throw SqlError(failureCode.empty() ? sqlstate::kDataException : failureCode,
                   "live query failed: " + failure);
  }
  out.complete(fmt::format("SELECT {}", sent));
}

}  // namespace rtsql
