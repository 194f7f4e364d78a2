// The Kinesis source task (see source.h).
#include "connectors/kinesis/source.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "common/clock.h"
#include "common/error.h"
#include "common/json.h"
#include "common/schema.h"
#include "connectors/format/codec.h"
#include "connectors/kafka/client.h"
#include "connectors/kafka/dead_letter.h"
#include "connectors/kinesis/columns.h"
#include "connectors/kinesis/lineage.h"
#include "connectors/registry.h"
#include "connectors/restore_position.h"

namespace rtsql::kinesis {

namespace {

// How often a task lists the stream's shards to find those a reshard opened,
// besides at once after one of its shards ended.
constexpr int64_t kListIntervalMicros = 10'000'000;
// Backoff after a throttled or failed call: doubled from the poll interval
// up to this.
constexpr int64_t kMaxBackoffMicros = 5'000'000;
// How long the endpoint may stay unreachable before the flow fails (and is
// retried by the server like any failed flow).
constexpr int64_t kUnreachableMicros = 30'000'000;

std::string envOr(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

// The drained shards of one flow run's source, shared by its tasks: a child
// may be owned by another task than its parent.
class DrainedShards {
 public:
  void add(const std::string& id) {
    std::lock_guard lock(mu_);
    ids_.insert(id);
  }
  bool has(const std::string& id) const {
    std::lock_guard lock(mu_);
    return ids_.count(id) > 0;
  }

 private:
  mutable std::mutex mu_;
  std::unordered_set<std::string> ids_;
};

// One DrainedShards per flow and source while any of its tasks is open.
std::shared_ptr<DrainedShards> drainedShardsOf(const std::string& key) {
  static std::mutex mu;
  static std::map<std::string, std::weak_ptr<DrainedShards>> all;
  std::lock_guard lock(mu);
  for (auto it = all.begin(); it != all.end();) {
    it = it->second.expired() ? all.erase(it) : std::next(it);
  }
  std::shared_ptr<DrainedShards> shared = all[key].lock();
  if (!shared) {
    shared = std::make_shared<DrainedShards>();
    all[key] = shared;
  }
  return shared;
}

SqlError callFailure(const CallError& e, const std::string& stream) {
  if (e.transport()) {
    return SqlError(sqlstate::kConnectionFailure,
                    fmt::format("cannot reach Kinesis at {}", e.what()), SqlError::npos,
                    "check 'kinesis.endpoint' and that the service is up");
  }
  if (e.serviceError() == "ResourceNotFoundException") {
    return SqlError(sqlstate::kUndefinedObject,
                    fmt::format("Kinesis stream \"{}\" does not exist: {}", stream, e.what()),
                    SqlError::npos, "check 'kinesis.stream' and 'kinesis.region'");
  }
  if (e.status() == 400 && (e.serviceError().find("Signature") != std::string::npos ||
                            e.serviceError().find("Token") != std::string::npos ||
                            e.serviceError() == "AccessDeniedException" ||
                            e.serviceError() == "UnrecognizedClientException")) {
    return SqlError(sqlstate::kInvalidAuthorization,
                    fmt::format("Kinesis refused the credentials: {}", e.what()), SqlError::npos,
                    "set 'kinesis.accessKeyId' and 'kinesis.secretKey', or AWS_ACCESS_KEY_ID and "
                    "AWS_SECRET_ACCESS_KEY in the server's environment");
  }
  return SqlError(sqlstate::kConnectionFailure, fmt::format("Kinesis call failed: {}", e.what()));
}

std::string positionToken(const StartAt& at) {
  switch (at.kind) {
    case StartAt::Kind::TrimHorizon:
      return "trim";
    case StartAt::Kind::AtTimestamp:
      return fmt::format("at:{}", at.timestampMillis);
    case StartAt::Kind::AfterSequenceNumber:
      return "after:" + at.sequenceNumber;
    case StartAt::Kind::Latest:
      break;
  }
  return "trim";
}

// The iterator start of a token; nullopt for "end" and for a token this
// build does not know (a damaged checkpoint is refused before: parse).
std::optional<StartAt> startOfToken(const std::string& token) {
  StartAt at;
  if (token == "trim") return at;
  if (token.rfind("at:", 0) == 0) {
    at.kind = StartAt::Kind::AtTimestamp;
    char* end = nullptr;
    at.timestampMillis = std::strtoll(token.c_str() + 3, &end, 10);
    if (end == token.c_str() + 3 || *end != '\0') return std::nullopt;
    return at;
  }
  if (token.rfind("after:", 0) == 0 && token.size() > 6) {
    at.kind = StartAt::Kind::AfterSequenceNumber;
    at.sequenceNumber = token.substr(6);
    return at;
  }
  return std::nullopt;
}

struct ShardState {
  std::string id;
  int32_t partition = 0;
  std::string token;     // where the next record comes from (source.h)
  std::string iterator;  // empty: ask for one from `token`
  int64_t startCount = 0;
  int64_t count = 0;  // records read since the flow first started
  int64_t nextFetchMicros = 0;
  int64_t backoffMicros = 0;
  int64_t millisBehind = -1;
  // A fresh start at LATEST asks the service for a LATEST iterator once;
  // the token (AT_TIMESTAMP of the start) is what a restart resumes from.
  bool latest = false;
  // The token was restored from a checkpoint and nothing was read since:
  // whether the shard still holds its record is checked at the first fetch.
  bool restored = false;
  bool expiryChecked = false;
  int64_t skipped = 0;  // restored positions the shard no longer held
  bool drained() const { return token == "end"; }
};

// What CREATE SOURCE read, carried by the plan (a spec built by hand is read
// through its connector by sourceOptionsOf), with the environment's
// credentials as they are now.
SourceConfig sourceConfigOf(const ScanSpec& scan) {
  return sourceConfig(connectorOptionsAs<KinesisOptions>(sourceOptionsOf(scan).own, "kinesis"));
}

class KinesisSourceTask final : public SourceTask {
 public:
  KinesisSourceTask(const ScanSpec& scan, const std::string& flowName, int task, int tasks,
                    const std::string& embeddedBootstrap)
      : config_(sourceConfigOf(scan)),
        client_(config_.client),
        task_(task),
        tasks_(tasks),
        raw_(iequals(scan.format, "raw")),
        drained_(drainedShardsOf(flowName + '\n' + scan.name)),
        openMillis_(nowMicros() / 1000),
        flowName_(flowName),
        failOnDataLoss_(sourceOptionsOf(scan).failOnDataLoss) {
    const SourceOptions parsed = sourceOptionsOf(scan);
    failOnError_ = parsed.onError == RowErrorPolicy::Fail;
    if (parsed.onError == RowErrorPolicy::DeadLetter) {
      Options kafkaOptions = kafka::deadLetterKafkaOptions(parsed.deadLetterBootstrap);
      deadLetters_ = std::make_unique<kafka::DeadLetterWriter>(
          scan, kafkaOptions, kafka::resolveBootstrap(kafkaOptions, embeddedBootstrap), flowName,
          task);
    }
    width_ = scan.schema.size();
    Schema payload;
    for (size_t i = 0; i < scan.schema.size(); ++i) {
      const Column& c = scan.schema.columns[i];
      MetaColumn kind = metaColumnOf(c, raw_);
      if (kind != MetaColumn::None) {
        meta_.emplace_back(static_cast<int>(i), kind);
      } else if (!raw_) {
        payload.columns.push_back(c);
      }
    }
    if (!raw_) decoder_ = makeDecoder(scan.format, payload, scan.options, parsed.decode);
    std::vector<Shard> shards = listShards();
    for (const Shard& s : shards) adopt(s, freshStart(s));
    nextListMicros_ = monotonicMicros() + kListIntervalMicros;
  }

  void poll(std::vector<SourceRecord>& out, size_t maxRecords, int timeoutMs) override {
    if (failure_) throw *failure_;
    // The shards this task drained are told to the others only now, once the
    // records of the last poll were handed to the flow: a child another task
    // reads then comes after them.
    for (const std::string& id : drainedNow_) drained_->add(id);
    drainedNow_.clear();
    const int64_t deadline = monotonicMicros() + int64_t(std::max(timeoutMs, 0)) * 1000;
    for (;;) {
      int64_t now = monotonicMicros();
      if (now >= nextListMicros_) refreshShards(now);
      size_t added = 0;
      int64_t nextDue = std::min(deadline, nextListMicros_);
      std::vector<ShardState*> ready = readable();
      // A shard waiting for a parent that another task reads is looked at
      // again after a poll interval.
      size_t open = 0;
      for (const ShardState& s : shards_) open += s.drained() ? 0 : 1;
      if (ready.size() < open) nextDue = std::min(nextDue, now + config_.pollIntervalMicros);
      for (ShardState* s : ready) {
        if (added >= maxRecords) break;
        if (s->nextFetchMicros <= now) {
          added += fetch(*s, out, maxRecords - added);
          if (failure_) break;
        }
        nextDue = std::min(nextDue, s->nextFetchMicros);
      }
      if (failure_) {
        if (added == 0) throw *failure_;
        return;
      }
      if (added > 0) return;
      now = monotonicMicros();
      if (now >= deadline) return;
      std::unique_lock lock(wakeMutex_);
      if (nextDue > now) {
        wakeCv_.wait_for(lock, std::chrono::microseconds(nextDue - now), [&] { return woken_; });
      }
      if (woken_) {
        woken_ = false;
        return;
      }
    }
  }

  void wake() override {
    std::lock_guard lock(wakeMutex_);
    woken_ = true;
    wakeCv_.notify_all();
  }

  bool wakes() const override { return true; }

  void commit() override {
    std::lock_guard lock(mutex_);
    for (ShardState& s : shards_) s.startCount = s.count;
  }

  // Positions live in the flow's checkpoints only: an epoch's end moves the
  // next epoch's start.
  void commit(const std::vector<PartitionProgress>& upTo) override {
    std::lock_guard lock(mutex_);
    for (const PartitionProgress& p : upTo) {
      if (ShardState* s = byPartition(p.partition)) s->startCount = p.endOffset;
    }
  }

  void seek(const std::vector<PartitionProgress>& positions) override {
    std::lock_guard lock(mutex_);
    // Shards the checkpoint does not name were opened after it: from their start.
    for (ShardState& s : shards_) {
      s.token = "trim";
      s.latest = false;
      s.iterator.clear();
      s.count = s.startCount = 0;
    }
    for (const PartitionProgress& p : positions) {
      if (p.position == "end") knownDrained_.insert(p.topic);
      ShardState* s = byPartition(p.partition);
      if (!s || p.position.empty()) continue;
      s->token = p.position;
      s->restored = s->token.rfind("after:", 0) == 0;
      s->expiryChecked = false;
      s->count = s->startCount = std::max<int64_t>(p.endOffset, 0);
      if (s->drained()) drained_->add(s->id);
    }
  }

  void startFromStartingOffsets() override {
    std::lock_guard lock(mutex_);
    knownDrained_.clear();
    for (ShardState& s : shards_) {
      s.token = startToken();
      s.restored = false;
      s.latest = config_.startingPosition == "LATEST";
      s.iterator.clear();
      s.count = s.startCount = 0;
    }
  }

  std::vector<PartitionProgress> progress() const override {
    std::lock_guard lock(mutex_);
    std::vector<PartitionProgress> out;
    for (const ShardState& s : shards_) {
      PartitionProgress p;
      // The shard's id stands where a Kafka source names its topic: the
      // checkpoint keeps it beside the partition.
      p.topic = s.id;
      p.partition = s.partition;
      p.startOffset = s.startCount;
      p.endOffset = s.count;
      p.position = s.token;
      p.offsetsSkipped = s.skipped;
      out.push_back(std::move(p));
    }
    return out;
  }

  bool caughtUp(int32_t partition) const override {
    std::lock_guard lock(mutex_);
    for (const ShardState& s : shards_) {
      if (s.partition == partition) return s.drained() || s.millisBehind == 0;
    }
    return true;
  }

  int64_t decodeErrors() const override { return errors_.load(std::memory_order_relaxed); }

  int64_t deadLetters() const override { return deadLetters_ ? deadLetters_->count() : 0; }

  void flushDeadLetters(int timeoutMs) override {
    if (deadLetters_) deadLetters_->flush(timeoutMs);
  }

  std::string description() const override { return "KinesisSource[" + config_.stream + "]"; }

 private:
  std::string startToken() const {
    StartAt at;
    if (config_.startingPosition == "AT_TIMESTAMP") {
      at.kind = StartAt::Kind::AtTimestamp;
      at.timestampMillis = config_.startingTimestampMillis;
    } else if (config_.startingPosition == "LATEST") {
      // The records that arrive after the flow first started: a restart
      // before any was read still reads every one of them.
      at.kind = StartAt::Kind::AtTimestamp;
      at.timestampMillis = openMillis_;
    }
    return positionToken(at);
  }

  // A shard in the first listing starts at the source's starting position;
  // later listings find shards a reshard opened, read from their start.
  std::string freshStart(const Shard&) const { return listed_ ? "trim" : startToken(); }

  bool owns(int32_t partition) const { return partition >= 0 && partition % tasks_ == task_; }

  ShardState* byPartition(int32_t partition) {
    auto it = index_.find(partition);
    return it == index_.end() ? nullptr : &shards_[it->second];
  }

  void adopt(const Shard& shard, const std::string& token) {
    int32_t number = shardNumber(shard.id);
    if (number < 0) {
      throw SqlError(
          sqlstate::kFeatureNotSupported,
          fmt::format("Kinesis shard id \"{}\" of stream \"{}\" does not end in its number",
                      shard.id, config_.stream));
    }
    if (!owns(number) || index_.count(number)) return;
    ShardState s;
    s.id = shard.id;
    s.partition = number;
    s.token = token;
    s.latest = !listed_ && config_.startingPosition == "LATEST";
    std::lock_guard lock(mutex_);
    index_[number] = shards_.size();
    shards_.push_back(std::move(s));
  }

  std::vector<Shard> listShards() {
    try {
      std::vector<Shard> shards = listAllShards(client_, config_.stream);
      listing_ = shards;
      return shards;
    } catch (const CallError& e) {
      throw callFailure(e, config_.stream);
    } catch (const ProtocolError& e) {
      throw SqlError(sqlstate::kConnectionFailure,
                     fmt::format("{}: {}", client_.endpoint(), e.what()));
    }
  }

  void refreshShards(int64_t now) {
    nextListMicros_ = now + kListIntervalMicros;
    std::vector<Shard> shards;
    try {
      shards = listAllShards(client_, config_.stream);
    } catch (const CallError& e) {
      noteFailure(e);
      return;
    } catch (const ProtocolError& e) {
      failure_ = SqlError(sqlstate::kConnectionFailure,
                          fmt::format("{}: {}", client_.endpoint(), e.what()));
      return;
    }
    listed_ = true;
    for (const Shard& s : shards) {
      // A shard this task has not seen, found after a checkpoint was
      // restored or after the first listing: a reshard opened it.
      adopt(s, freshStart(s));
    }
    listing_ = std::move(shards);
  }

  bool isDrained(const std::string& id) const {
    for (const ShardState& s : shards_) {
      if (s.id == id) return s.drained();
    }
    return knownDrained_.count(id) > 0 || drained_->has(id);
  }

  std::vector<ShardState*> readable() {
    std::vector<ShardState*> out;
    std::vector<const Shard*> ok =
        readableShards(listing_, [&](const std::string& id) { return isDrained(id); });
    for (const Shard* sh : ok) {
      int32_t n = shardNumber(sh->id);
      ShardState* s = byPartition(n);
      if (s && s->id == sh->id) out.push_back(s);
    }
    return out;
  }

  // A failed call: throttling and transport failures are retried after a
  // growing pause, the rest end the flow.
  void noteFailure(const CallError& e, ShardState* s = nullptr) {
    const int64_t now = monotonicMicros();
    if (!e.retryable()) {
      failure_ = callFailure(e, config_.stream);
      return;
    }
    if (e.transport()) {
      if (unreachableSince_ == 0) unreachableSince_ = now;
      if (now - unreachableSince_ > kUnreachableMicros) {
        failure_ = callFailure(e, config_.stream);
        return;
      }
    }
    if (s) {
      s->backoffMicros =
          std::clamp<int64_t>(s->backoffMicros * 2, config_.pollIntervalMicros, kMaxBackoffMicros);
      s->nextFetchMicros = now + s->backoffMicros;
    }
    if (now - lastLogMicros_ >= 10'000'000) {
      lastLogMicros_ = now;
      fmt::print(stderr, "rtsql: {}: {}; retrying\n", description(), e.what());
    }
  }

  // One GetRecords of shard `s`: returns the records added.
  size_t fetch(ShardState& s, std::vector<SourceRecord>& out, size_t room) {
    const int64_t started = monotonicMicros();
    s.nextFetchMicros = started + config_.pollIntervalMicros;
    RecordsPage page;
    try {
      if (s.iterator.empty() && s.restored && !s.expiryChecked && !restoredHeld(s)) return 0;
      if (s.iterator.empty()) {
        std::optional<StartAt> at = startOfToken(s.token);
        if (!at) return 0;
        if (s.latest) at->kind = StartAt::Kind::Latest;
        s.iterator = parseShardIterator(
            client_.call("GetShardIterator", shardIteratorBody(config_.stream, s.id, *at)));
        s.latest = false;
      }
      page = parseGetRecords(client_.call(
          "GetRecords", getRecordsBody(s.iterator, std::min<int64_t>(config_.maxRecordsPerFetch,
                                                                     int64_t(room)))));
    } catch (const CallError& e) {
      if (s.restored && e.serviceError() == "InvalidArgumentException") {
        // The service refuses the checkpointed sequence number: it is not
        // one of this stream's shard (the stream was deleted and created
        // again under its name). Only the error's type is said: the
        // service's text is not ours to repeat.
        restoredLost(s, fmt::format("is refused by the service ({}): the stream it belongs to is "
                                    "gone",
                                    e.serviceError()));
        return 0;
      }
      if (e.serviceError() == "ExpiredIteratorException") {
        // A new iterator from the last record read, at once.
        s.iterator.clear();
        s.nextFetchMicros = started;
        return 0;
      }
      noteFailure(e, &s);
      return 0;
    } catch (const ProtocolError& e) {
      failure_ = SqlError(sqlstate::kConnectionFailure,
                          fmt::format("{}: {}", client_.endpoint(), e.what()));
      return 0;
    }
    unreachableSince_ = 0;
    s.backoffMicros = 0;
    s.restored = false;
    const int64_t readMicros = nowMicros();
    size_t added = 0;
    for (const Record& r : page.records) {
      if (!decode(r, s, readMicros, out)) {
        if (failure_) {
          // The bad record is not consumed: read again from before it.
          s.iterator.clear();
          return added;
        }
      } else {
        ++added;
      }
      std::lock_guard lock(mutex_);
      s.token = "after:" + r.sequenceNumber;
      ++s.count;
    }
    std::lock_guard lock(mutex_);
    s.millisBehind = page.millisBehindLatest;
    if (page.nextIterator.empty()) {
      // Closed and read to its end: its children may be read now.
      s.token = "end";
      s.iterator.clear();
      drainedNow_.push_back(s.id);
      nextListMicros_ = 0;
    } else {
      s.iterator = std::move(page.nextIterator);
    }
    return added;
  }

  // Whether shard `s` still holds the record its restored token names: the
  // oldest record it holds (TRIM_HORIZON) must not come after it, or the
  // records after it may have expired unread (connectors/restore_position.h).
  // False when the loss was dealt with (failure_ set, or the shard set to
  // go on from its oldest record). CallError goes to the caller.
  bool restoredHeld(ShardState& s) {
    StartAt trim;
    std::string it = parseShardIterator(
        client_.call("GetShardIterator", shardIteratorBody(config_.stream, s.id, trim)));
    RecordsPage oldest = parseGetRecords(client_.call("GetRecords", getRecordsBody(it, 1)));
    s.expiryChecked = true;
    const std::string checkpointed = s.token.substr(6);  // after "after:"
    if (oldest.records.empty()) return true;  // nothing held: nothing after it lost
    if (!sequenceExpired(checkpointed, oldest.records[0].sequenceNumber)) return true;
    restoredLost(s, fmt::format("has expired: the oldest record the shard holds is {}",
                                oldest.records[0].sequenceNumber));
    return false;
  }

  // The restored position of `s` is gone: the flow fails, or with
  // 'failOnDataLoss' = 'false' the shard goes on from its oldest record.
  void restoredLost(ShardState& s, const std::string& why) {
    s.restored = false;
    RestoreSubject at{description(), flowName_, config_.stream, s.id};
    try {
      restoredSequenceLost(at, s.token.substr(6), why, failOnDataLoss_);
    } catch (const SqlError& e) {
      failure_ = e;
      return;
    }
    std::lock_guard lock(mutex_);
    s.token = "trim";
    s.iterator.clear();
    ++s.skipped;
  }

  Value metaValue(MetaColumn kind, const Record& r, const ShardState& s) const {
    switch (kind) {
      case MetaColumn::Data:
        return Value::binary(r.data);
      case MetaColumn::StreamName:
        return Value::string(config_.stream);
      case MetaColumn::PartitionKey:
        return Value::string(r.partitionKey);
      case MetaColumn::SequenceNumber:
        return Value::string(r.sequenceNumber);
      case MetaColumn::ArrivalTimestamp:
        return r.arrivalMicros >= 0 ? Value::timestamp(r.arrivalMicros) : Value();
      case MetaColumn::ShardId:
        return Value::string(s.id);
      case MetaColumn::None:
        break;
    }
    return Value();
  }

  bool decode(const Record& r, const ShardState& s, int64_t readMicros,
              std::vector<SourceRecord>& out) {
    SourceRecord& rec = out.emplace_back();
    if (decoder_) {
      RecordView view;
      view.key = r.partitionKey.data();
      view.keyLen = r.partitionKey.size();
      view.value = r.data.data();
      view.valueLen = r.data.size();
      view.topic = config_.stream;
      view.partition = s.partition;
      view.offset = s.count;
      view.timestampMicros = r.arrivalMicros >= 0 ? r.arrivalMicros : readMicros;
      if (!decoder_->decode(view, rec.row, error_)) {
        out.pop_back();
        errors_.fetch_add(1, std::memory_order_relaxed);
        if (failOnError_) {
          failure_ =
              SqlError(sqlstate::kInvalidTextRepresentation,
                       fmt::format("cannot decode the record of Kinesis stream \"{}\" shard {} "
                                   "sequence number {}: {}",
                                   config_.stream, s.id, r.sequenceNumber, error_),
                       SqlError::npos,
                       "fix the record or the source's columns, or go on past bad records with "
                       "'on.error' = 'skip' or 'dead-letter'");
        } else if (deadLetters_) {
          deadLetters_->writeRecord(Value::binary(r.data), Value::binary(r.partitionKey), error_,
                                    kafka::kinesisPosition(config_.stream, s.id, r.sequenceNumber));
        }
        return false;
      }
    }
    rec.row.resize(width_);
    for (const auto& [index, kind] : meta_)
      rec.row[static_cast<size_t>(index)] = metaValue(kind, r, s);
    rec.timestampMicros = r.arrivalMicros >= 0 ? r.arrivalMicros : readMicros;
    rec.readMicros = readMicros;
    rec.partition = s.partition;
    rec.offset = s.count;
    return true;
  }

  SourceConfig config_;
  Client client_;
  int task_;
  int tasks_;
  bool raw_;
  bool failOnError_ = true;
  size_t width_ = 0;
  std::vector<std::pair<int, MetaColumn>> meta_;
  std::unique_ptr<RecordDecoder> decoder_;
  std::string error_;
  std::atomic<int64_t> errors_{0};
  std::optional<SqlError> failure_;
  std::unique_ptr<kafka::DeadLetterWriter> deadLetters_;  // on.error = 'dead-letter'

  std::shared_ptr<DrainedShards> drained_;
  std::unordered_set<std::string> knownDrained_;  // from the restored checkpoint
  std::vector<std::string> drainedNow_;           // drained by the last poll, not yet shared
  int64_t openMillis_;
  std::string flowName_;
  bool failOnDataLoss_ = true;
  bool listed_ = false;  // a listing after the first was made
  std::vector<Shard> listing_;
  int64_t nextListMicros_ = 0;
  int64_t unreachableSince_ = 0;
  int64_t lastLogMicros_ = 0;

  mutable std::mutex mutex_;  // guards shards_' positions against progress() readers
  std::vector<ShardState> shards_;
  std::unordered_map<int32_t, size_t> index_;

  std::mutex wakeMutex_;
  std::condition_variable wakeCv_;
  bool woken_ = false;
};

}  // namespace

KinesisOptions parseKinesisOptions(const Options& options) {
  KinesisOptions o;
  SourceConfig& c = o.config;
  c.stream = options.getString("kinesis.stream");
  c.client.region = options.getString("kinesis.region");
  c.client.endpoint = options.getString(
      "kinesis.endpoint", fmt::format("https://kinesis.{}.amazonaws.com", c.client.region));
  o.accessKeyId = options.has("kinesis.accessKeyId");
  o.secretKey = options.has("kinesis.secretKey");
  o.sessionToken = options.has("kinesis.sessionToken");
  c.client.credentials.accessKeyId = options.getString("kinesis.accessKeyId");
  c.client.credentials.secretAccessKey = options.getString("kinesis.secretKey");
  c.client.credentials.sessionToken = options.getString("kinesis.sessionToken");
  c.client.requestTimeoutMs =
      options.getInterval("kinesis.requestTimeout", 10'000'000, 100'000, 60'000'000) / 1000;
  c.startingPosition = toUpper(options.getString("kinesis.startingPosition", "LATEST"));
  if (c.startingPosition == "AT_TIMESTAMP") {
    int64_t micros = 0;
    parseTimestamp(options.getString("kinesis.startingTimestamp"), &micros);
    c.startingTimestampMillis = micros / 1000;
  }
  c.pollIntervalMicros = options.getInterval("kinesis.pollInterval", 200'000, 1'000, 60'000'000);
  c.maxRecordsPerFetch = options.getInt("kinesis.maxRecordsPerFetch", 10000, 1, 10000);
  return o;
}

SourceConfig sourceConfig(const KinesisOptions& options) {
  SourceConfig c = options.config;
  auto& k = c.client.credentials;
  if (!options.accessKeyId) k.accessKeyId = envOr("AWS_ACCESS_KEY_ID");
  if (!options.secretKey) k.secretAccessKey = envOr("AWS_SECRET_ACCESS_KEY");
  // Keys from the options never take the environment's token.
  if (!options.sessionToken) {
    k.sessionToken = options.accessKeyId ? std::string() : envOr("AWS_SESSION_TOKEN");
  }
  return c;
}

SourceConfig sourceConfig(const Options& options) {
  return sourceConfig(parseKinesisOptions(options));
}

std::vector<Shard> listAllShards(Client& client, const std::string& stream) {
  std::vector<Shard> all;
  std::string token;
  // A stream has at most a few thousand shards, a page up to a thousand.
  for (int page = 0; page < 1000; ++page) {
    std::vector<Shard> shards =
        parseListShards(client.call("ListShards", listShardsBody(stream, token)), token);
    for (Shard& s : shards) all.push_back(std::move(s));
    if (token.empty()) break;
  }
  return all;
}

int kinesisSourcePartitions(const ScanSpec& scan) {
  SourceConfig config = sourceConfigOf(scan);
  Client client(config.client);
  std::vector<Shard> shards;
  try {
    shards = listAllShards(client, config.stream);
  } catch (const CallError& e) {
    throw callFailure(e, config.stream);
  } catch (const ProtocolError& e) {
    throw SqlError(sqlstate::kConnectionFailure,
                   fmt::format("{}: {}", config.client.endpoint, e.what()));
  }
  int open = 0;
  for (const Shard& s : shards) open += s.closed ? 0 : 1;
  return std::max(open, 1);
}

std::unique_ptr<SourceTask> makeKinesisSource(const ScanSpec& scan, const std::string& flowName,
                                              int task, int tasks,
                                              const std::string& embeddedBootstrap) {
  if (tasks < 1 || task < 0 || task >= tasks) {
    throw InternalError(fmt::format("source task {} of {}", task, tasks));
  }
  return std::make_unique<KinesisSourceTask>(scan, flowName, task, tasks, embeddedBootstrap);
}

}  // namespace rtsql::kinesis
