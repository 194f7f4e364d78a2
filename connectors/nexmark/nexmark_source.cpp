// The nexmark source (see nexmark_source.h).
#include "connectors/nexmark/nexmark_source.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <thread>

#include "common/clock.h"
#include "common/json.h"
#include "connectors/nexmark/generator.h"
#include "connectors/registry.h"
#include "planner/planner.h"

namespace rtsql {

namespace {

using nexmark::EventKind;

constexpr int64_t kMaxPartitions = 1024;
// Event time of event 0 unless 'base-time' says otherwise: a fixed instant, so
// that a restarted flow makes the events it made before.
constexpr const char* kDefaultBaseTime = "2024-01-01 00:00:00";

const std::vector<std::string>& nexmarkKeys() {
  static const std::vector<std::string> keys = {
      "connector", "nexmark.table", "events", "events-per-second", "event-rate",
      "base-time", "partitions",    "seed",   kIdleTimeoutOption};
  return keys;
}

// One field of a Nexmark table.
struct Field {
  const char* name;
  TypeId type;
};

// The fields of each table, in the order of the Nexmark schema; the index of a
// field is what NexmarkSource::fill switches on.
const std::vector<Field>& fieldsOf(EventKind kind) {
  static const std::vector<Field> person = {
      {"id", TypeId::BigInt},           {"name", TypeId::String}, {"email_address", TypeId::String},
      {"credit_card", TypeId::String},  {"city", TypeId::String}, {"state", TypeId::String},
      {"date_time", TypeId::Timestamp}, {"extra", TypeId::String}};
  static const std::vector<Field> auction = {
      {"id", TypeId::BigInt},          {"item_name", TypeId::String},
      {"description", TypeId::String}, {"initial_bid", TypeId::BigInt},
      {"reserve", TypeId::BigInt},     {"date_time", TypeId::Timestamp},
      {"expires", TypeId::Timestamp},  {"seller", TypeId::BigInt},
      {"category", TypeId::BigInt},    {"extra", TypeId::String}};
  static const std::vector<Field> bid = {
      {"auction", TypeId::BigInt}, {"bidder", TypeId::BigInt}, {"price", TypeId::BigInt},
      {"channel", TypeId::String}, {"url", TypeId::String},    {"date_time", TypeId::Timestamp},
      {"extra", TypeId::String}};
  switch (kind) {
    case EventKind::Person:
      return person;
    case EventKind::Auction:
      return auction;
    case EventKind::Bid:
      return bid;
  }
  return bid;
}

const char* tableName(EventKind kind) {
  switch (kind) {
    case EventKind::Person:
      return "person";
    case EventKind::Auction:
      return "auction";
    case EventKind::Bid:
      return "bid";
  }
  return "bid";
}

int fieldIndex(EventKind kind, std::string_view column) {
  const auto& fields = fieldsOf(kind);
  for (size_t i = 0; i < fields.size(); ++i) {
    if (iequals(fields[i].name, column)) return static_cast<int>(i);
  }
  return -1;
}

std::string fieldList(EventKind kind) {
  std::string out;
  for (const Field& f : fieldsOf(kind)) {
    if (!out.empty()) out += ", ";
    out += fmt::format("{} {}", f.name, DataType::of(f.type)->toString());
  }
  return out;
}

// The options as CREATE SOURCE read them (SourceOptions::own).
struct NexmarkOptions final : ConnectorOptions {
  EventKind table = EventKind::Bid;
  int64_t events = 0;           // 0: no end
  int64_t eventsPerSecond = 0;  // 0: as fast as possible
  double eventRate = 10000;     // events per second of event time
  int64_t baseTimeMs = 0;
  int64_t partitions = 1;
  int64_t seed = 0;
};

[[noreturn]] void badValue(const OptionEntry& e, const std::string& expected,
                           std::string hint = {}) {
  throw SqlError(sqlstate::kInvalidParameterValue,
                 fmt::format("invalid value '{}' for option '{}': {}", e.value, e.key, expected),
                 e.valuePos, std::move(hint));
}

NexmarkOptions parseNexmarkOptions(const Options& options, size_t stmtPos) {
  options.checkKnown(nexmarkKeys());
  sourceIdleTimeoutMicros(options);
  NexmarkOptions o;
  options.require("nexmark.table", stmtPos);
  const std::string table =
      toLower(options.getEnum("nexmark.table", "bid", {"person", "auction", "bid"}));
  o.table = table == "person"    ? EventKind::Person
            : table == "auction" ? EventKind::Auction
                                 : EventKind::Bid;
  o.events = options.getInt("events", 0, 0);
  o.eventsPerSecond = options.getInt("events-per-second", 0, 0);
  o.partitions = options.getInt("partitions", 1, 1, kMaxPartitions);
  o.seed = options.getInt("seed", 0);
  o.eventRate = o.eventsPerSecond > 0 ? static_cast<double>(o.eventsPerSecond) : 10000.0;
  if (const OptionEntry* e = options.find("event-rate")) {
    char* end = nullptr;
    const double v = std::strtod(e->value.c_str(), &end);
    if (e->value.empty() || end != e->value.c_str() + e->value.size() || !std::isfinite(v) ||
        v <= 0) {
      badValue(*e, "expected a positive number of events per second of event time");
    }
    o.eventRate = v;
  }
  const OptionEntry* base = options.find("base-time");
  int64_t micros = 0;
  if (!parseTimestamp(base ? std::string_view(base->value) : kDefaultBaseTime, &micros)) {
    badValue(*base, "expected a timestamp", "write a timestamp such as '2024-01-01 00:00:00'");
  }
  o.baseTimeMs = micros / 1000;
  return o;
}

// Where a partition is: the next event offset it makes, the first offset of
// the current epoch, and its end. Read by progress() from any thread.
struct NexmarkPartitionState {
  int32_t partition = 0;
  int64_t end = -1;  // offsets in the partition, -1 for no end
  int64_t origin = 0;  // the offset this run started at: pacing counts from it
  std::atomic<int64_t> next{0};
  std::atomic<int64_t> start{0};
};

class NexmarkSource final : public SourceTask {
 public:
  NexmarkSource(const ScanSpec& scan, NexmarkOptions opts, int task, int tasks)
      : opts_(opts),
        generator_({opts.seed, opts.baseTimeMs, opts.eventRate}),
        parts_(static_cast<size_t>(ownedPartitions(opts.partitions, task, tasks))) {
    const int64_t p = opts_.partitions;
    size_t i = 0;
    for (int64_t part = task; part < p; part += std::max(tasks, 1)) {
      NexmarkPartitionState& s = parts_[i++];
      s.partition = static_cast<int32_t>(part);
      // Partition part holds the events k * p + part below `events`.
      if (opts_.events > 0) s.end = opts_.events > part ? (opts_.events - part + p - 1) / p : 0;
    }
    for (const Column& c : scan.schema.columns) columns_.push_back(fieldIndex(opts_.table, c.name));
    if (opts_.eventsPerSecond > 0)
      partitionRate_ = static_cast<double>(opts_.eventsPerSecond) / static_cast<double>(p);
  }

  void poll(std::vector<SourceRecord>& out, size_t maxRecords, int timeoutMs) override {
    int64_t now = monotonicMicros();
    if (startMono_.load(std::memory_order_relaxed) == 0)
      startMono_.store(now, std::memory_order_relaxed);
    const int64_t deadline = now + std::max(timeoutMs, 0) * int64_t{1000};
    const size_t before = out.size();
    while (true) {
      // Each partition in turn from the one after the last served, so that no
      // partition falls behind the others in event time.
      for (size_t i = 0; i < parts_.size() && out.size() - before < maxRecords; ++i) {
        next_ = (next_ + 1) % parts_.size();
        NexmarkPartitionState& s = parts_[next_];
        const size_t share = std::max<size_t>(maxRecords / parts_.size(), 1);
        generate(s, out, std::min(maxRecords - (out.size() - before), share), due(s, now));
      }
      if (out.size() > before) return;
      if (now >= deadline) return;
      // Nothing due: sleep until the next event is (or the timeout). A source
      // that has reached its end sleeps the whole timeout, so it never spins.
      std::this_thread::sleep_for(
          std::chrono::microseconds(std::max<int64_t>(std::min(deadline, nextDue()) - now, 1)));
      now = monotonicMicros();
    }
  }

  void commit() override {
    for (NexmarkPartitionState& s : parts_) s.start.store(s.next.load());
  }

  void commit(const std::vector<PartitionProgress>& upTo) override {
    for (const PartitionProgress& p : upTo) {
      if (NexmarkPartitionState* s = find(p.partition)) s->start.store(p.endOffset);
    }
  }

  void seek(const std::vector<PartitionProgress>& positions) override {
    for (const PartitionProgress& p : positions) {
      NexmarkPartitionState* s = find(p.partition);
      if (!s || p.endOffset < 0) continue;
      const int64_t at = s->end >= 0 ? std::min(p.endOffset, s->end) : p.endOffset;
      s->next.store(at);
      s->start.store(at);
      s->origin = at;
    }
  }

  std::vector<PartitionProgress> progress() const override {
    std::vector<PartitionProgress> out;
    const int64_t start = startMono_.load(std::memory_order_relaxed);
    const int64_t now = monotonicMicros();
    for (const NexmarkPartitionState& s : parts_) {
      PartitionProgress p;
      p.partition = s.partition;
      p.startOffset = s.start.load();
      p.endOffset = s.next.load();
      // What the generator holds: up to the end when it runs free, what is due
      // by now when it is paced.
      p.latestOffset = std::max(p.endOffset, start == 0 ? p.endOffset : latest(s, now));
      out.push_back(p);
    }
    return out;
  }

  bool caughtUp(int32_t partition) const override {
    const NexmarkPartitionState* s = find(partition);
    if (!s) return true;
    return s->next.load() >= latest(*s, monotonicMicros());
  }

  int64_t decodeErrors() const override { return 0; }

  std::string description() const override {
    std::string out = fmt::format("Nexmark[{}", tableName(opts_.table));
    if (opts_.events > 0) out += fmt::format(", events={}", opts_.events);
    if (opts_.eventsPerSecond > 0)
      out += fmt::format(", eventsPerSecond={}", opts_.eventsPerSecond);
    return out + "]";
  }

 private:
  static int64_t ownedPartitions(int64_t partitions, int task, int tasks) {
    tasks = std::max(tasks, 1);
    return task < partitions ? (partitions - task + tasks - 1) / tasks : 0;
  }

  NexmarkPartitionState* find(int32_t partition) {
    for (NexmarkPartitionState& s : parts_)
      if (s.partition == partition) return &s;
    return nullptr;
  }
  const NexmarkPartitionState* find(int32_t partition) const {
    return const_cast<NexmarkSource*>(this)->find(partition);
  }

  // Offsets of `s` the generator holds by `now`: the end (or no limit) when it
  // runs free; otherwise those due, the first at the start, then one every
  // 1/rate seconds.
  int64_t latest(const NexmarkPartitionState& s, int64_t now) const {
    if (partitionRate_ <= 0) return s.end >= 0 ? s.end : s.next.load();
    return due(s, now);
  }

  int64_t due(const NexmarkPartitionState& s, int64_t now) const {
    if (partitionRate_ <= 0) return s.end >= 0 ? s.end : INT64_MAX;
    const int64_t start = startMono_.load(std::memory_order_relaxed);
    const double elapsed = static_cast<double>(now - start);
    int64_t n = s.origin + static_cast<int64_t>(std::floor(elapsed * partitionRate_ / 1e6)) + 1;
    return s.end >= 0 ? std::min(n, s.end) : n;
  }

  // When the next event of any partition is due, monotonic micros.
  int64_t nextDue() const {
    if (partitionRate_ <= 0) return INT64_MAX;
    int64_t at = INT64_MAX;
    for (const NexmarkPartitionState& s : parts_) {
      const int64_t k = s.next.load(std::memory_order_relaxed);
      if (s.end >= 0 && k >= s.end) continue;
      at = std::min(at, startMono_.load(std::memory_order_relaxed) +
                            static_cast<int64_t>(std::ceil(static_cast<double>(k - s.origin) * 1e6 /
                                                           partitionRate_)));
    }
    return at;
  }

  // Up to `max` records of the table from partition `s`, from its next offset
  // to at most `until`.
  void generate(NexmarkPartitionState& s, std::vector<SourceRecord>& out, size_t max, int64_t until) {
    int64_t k = s.next.load(std::memory_order_relaxed);
    const int64_t p = opts_.partitions;
    const int64_t created = nowMicros();
    size_t made = 0;
    while (k < until && made < max) {
      const int64_t n = k * p + s.partition;
      if (nexmark::kindOf(n) == opts_.table) {
        SourceRecord& rec = out.emplace_back();
        rec.partition = s.partition;
        rec.offset = k;
        rec.timestampMicros = created;
        rec.readMicros = created;
        fill(n, rec.row);
        ++made;
      }
      ++k;
    }
    s.next.store(k, std::memory_order_relaxed);
  }

  void fill(int64_t n, Row& row) {
    row.resize(columns_.size());
    switch (opts_.table) {
      case EventKind::Person: {
        generator_.person(n, person_);
        for (size_t c = 0; c < columns_.size(); ++c) {
          Value& v = row[c];
          switch (columns_[c]) {
            case 0:
              v = Value::bigint(person_.id);
              break;
            case 1:
              v = Value::string(person_.name);
              break;
            case 2:
              v = Value::string(person_.emailAddress);
              break;
            case 3:
              v = Value::string(person_.creditCard);
              break;
            case 4:
              v = Value::string(person_.city);
              break;
            case 5:
              v = Value::string(person_.state);
              break;
            case 6:
              v = Value::timestamp(person_.dateTimeMs * 1000);
              break;
            case 7:
              v = Value::string(person_.extra);
              break;
            default:
              v = Value();
              break;
          }
        }
        return;
      }
      case EventKind::Auction: {
        generator_.auction(n, auction_);
        for (size_t c = 0; c < columns_.size(); ++c) {
          Value& v = row[c];
          switch (columns_[c]) {
            case 0:
              v = Value::bigint(auction_.id);
              break;
            case 1:
              v = Value::string(auction_.itemName);
              break;
            case 2:
              v = Value::string(auction_.description);
              break;
            case 3:
              v = Value::bigint(auction_.initialBid);
              break;
            case 4:
              v = Value::bigint(auction_.reserve);
              break;
            case 5:
              v = Value::timestamp(auction_.dateTimeMs * 1000);
              break;
            case 6:
              v = Value::timestamp(auction_.expiresMs * 1000);
              break;
            case 7:
              v = Value::bigint(auction_.seller);
              break;
            case 8:
              v = Value::bigint(auction_.category);
              break;
            case 9:
              v = Value::string(auction_.extra);
              break;
            default:
              v = Value();
              break;
          }
        }
        return;
      }
      case EventKind::Bid: {
        generator_.bid(n, bid_);
        for (size_t c = 0; c < columns_.size(); ++c) {
          Value& v = row[c];
          switch (columns_[c]) {
            case 0:
              v = Value::bigint(bid_.auction);
              break;
            case 1:
              v = Value::bigint(bid_.bidder);
              break;
            case 2:
              v = Value::bigint(bid_.price);
              break;
            case 3:
              v = Value::string(bid_.channel);
              break;
            case 4:
              v = Value::string(bid_.url);
              break;
            case 5:
              v = Value::timestamp(bid_.dateTimeMs * 1000);
              break;
            case 6:
              v = Value::string(bid_.extra);
              break;
            default:
              v = Value();
              break;
          }
        }
        return;
      }
    }
  }

  NexmarkOptions opts_;
  nexmark::Generator generator_;
  std::vector<NexmarkPartitionState> parts_;
  std::vector<int> columns_;  // field index of each column of the scan
  double partitionRate_ = 0;  // events per second of one partition, 0 for no pacing
  size_t next_ = 0;           // the partition served last
  std::atomic<int64_t> startMono_{0};
  // Reused for every event, so that their strings keep their buffers.
  nexmark::Person person_;
  nexmark::Auction auction_;
  nexmark::Bid bid_;
};

}  // namespace

void validateNexmarkOptions(const Options& options, size_t stmtPos) {
  parseNexmarkOptions(options, stmtPos);
}

Schema bindNexmarkSchema(const ast::CreateSource& stmt, const Options& options) {
  const EventKind table = parseNexmarkOptions(options, stmt.pos).table;
  if (stmt.columns.empty()) {
    Schema schema;
    for (const Field& f : fieldsOf(table))
      schema.columns.push_back(Column{f.name, DataType::of(f.type), false});
    return schema;
  }
  Schema schema = bindColumns(stmt.columns);
  for (size_t i = 0; i < stmt.columns.size(); ++i) {
    const ast::ColumnDef& def = stmt.columns[i];
    const int field = fieldIndex(table, def.name);
    if (field < 0) {
      throw SqlError(
          sqlstate::kUndefinedColumn,
          fmt::format("nexmark table '{}' has no column \"{}\"", tableName(table), def.name),
          def.pos, "Columns: " + fieldList(table) + ".");
    }
    const Field& f = fieldsOf(table)[static_cast<size_t>(field)];
    const DataType& declared = *schema.columns[i].type;
    if (declared.id != f.type) {
      throw SqlError(
          sqlstate::kDatatypeMismatch,
          fmt::format("column \"{}\" of nexmark table '{}' is {}, not {}", def.name,
                      tableName(table), DataType::of(f.type)->toString(), declared.toString()),
          def.type.pos,
          fmt::format("declare it as {} {}", f.name, DataType::of(f.type)->toString()));
    }
  }
  return schema;
}

std::shared_ptr<const ConnectorOptions> parseNexmarkOptions(const Options& options) {
  return std::make_shared<const NexmarkOptions>(parseNexmarkOptions(options, SqlError::npos));
}

namespace {

// What CREATE SOURCE read, carried by the plan (a spec built by hand is read
// through its connector by sourceOptionsOf).
const NexmarkOptions& nexmarkOptionsOf(const SourceOptions& parsed) {
  return connectorOptionsAs<NexmarkOptions>(parsed.own, "nexmark");
}

}  // namespace

int nexmarkPartitions(const ScanSpec& scan) {
  return static_cast<int>(nexmarkOptionsOf(sourceOptionsOf(scan)).partitions);
}

std::unique_ptr<SourceTask> makeNexmarkSource(const ScanSpec& scan, int task, int tasks) {
  return std::make_unique<NexmarkSource>(scan, nexmarkOptionsOf(sourceOptionsOf(scan)), task,
                                         tasks);
}

}  // namespace rtsql
