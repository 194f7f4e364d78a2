#include "connectors/datagen/datagen.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <limits>
#include <mutex>
#include <optional>
#include <random>
#include <thread>

#include "common/clock.h"
#include "common/expr.h"
#include "connectors/format/decode_util.h"
#include "connectors/registry.h"
#include "planner/row_error_policy.h"

namespace rtsql {

namespace {

constexpr int64_t kMaxLength = 1 << 20;  // longest generated string or binary

const std::vector<std::string>& datagenKeys() {
  // The WITH list of a source reaches the connector whole, so the generic
  // source options are known here too.
  static const std::vector<std::string> keys = {
      "connector",      "format",       "rows-per-second", "rowsPerSecond", "number-of-rows",
      "numberOfRows",   "seed",         "maxPartitions",   "numPartitions", kOnErrorOption,
      "dead.letter.sink", kIdleTimeoutOption};
  return keys;
}

const std::vector<std::string>& fieldProperties() {
  static const std::vector<std::string> props = {"kind", "min", "max", "length",
                                                 "values", "start", "end", "null-rate"};
  return props;
}

[[noreturn]] void badOption(const OptionEntry& e, const std::string& message, std::string hint = {}) {
  throw SqlError(sqlstate::kInvalidParameterValue, message, e.valuePos, std::move(hint));
}

double parseNumber(const OptionEntry& e) {
  Value v;
  if (!format::textToValue(e.value, *DataType::of(TypeId::Double), v, false) ||
      !std::isfinite(v.asDouble())) {
    badOption(e, fmt::format("invalid value for option '{}': '{}' is not a number", e.key, e.value));
  }
  return v.asDouble();
}

int64_t parseInteger(const OptionEntry& e, int64_t min, int64_t max) {
  Value v;
  if (!format::textToValue(e.value, *DataType::of(TypeId::BigInt), v, false) || v.asInt() < min ||
      v.asInt() > max) {
    badOption(e, fmt::format("invalid value for option '{}': '{}'", e.key, e.value),
              fmt::format("Expected an integer between {} and {}.", min, max));
  }
  return v.asInt();
}

std::vector<std::string> splitList(const std::string& text) {
  std::vector<std::string> items;
  size_t start = 0;
  while (true) {
    size_t comma = text.find(',', start);
    std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    size_t b = item.find_first_not_of(' ');
    size_t e = item.find_last_not_of(' ');
    items.push_back(b == std::string::npos ? std::string() : item.substr(b, e - b + 1));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return items;
}

// How one column is generated, from its `fields.<column>.*` options.
struct FieldSpec {
  bool sequence = false;
  std::optional<double> min, max;
  const OptionEntry* minEntry = nullptr;
  const OptionEntry* maxEntry = nullptr;
  int64_t length = 8;
  std::vector<std::string> valueTexts;
  const OptionEntry* valuesEntry = nullptr;
  const OptionEntry* kindEntry = nullptr;
  int64_t start = 0;
  std::optional<int64_t> end;
  double nullRate = 0;
  const OptionEntry* firstEntry = nullptr;  // where to report a column problem
  // The entry pointers above point into the Options being validated; they are
  // used for error positions only and never after validation.
};

// The options as CREATE SOURCE read them (SourceOptions::own), carried by the
// plan to each task it opens.
struct ParsedOptions final : ConnectorOptions {
  int64_t rowsPerSecond = 1;
  std::optional<int64_t> numberOfRows;
  uint64_t seed = 0;
  // Column name (as written) -> spec; names compare case-insensitively.
  std::vector<std::pair<std::string, FieldSpec>> fields;
};

FieldSpec& fieldFor(ParsedOptions& p, const std::string& column) {
  for (auto& [name, spec] : p.fields)
    if (iequals(name, column)) return spec;
  p.fields.emplace_back(column, FieldSpec{});
  return p.fields.back().second;
}

const OptionEntry* firstOf(const Options& options, const char* a, const char* b) {
  const OptionEntry* e = options.find(a);
  return e ? e : options.find(b);
}

ParsedOptions parseDatagenOptions(const Options& options, size_t stmtPos) {
  options.checkKnown(datagenKeys(), {"fields."});
  sourceIdleTimeoutMicros(options);
  ParsedOptions p;
  if (const OptionEntry* e = firstOf(options, "rows-per-second", "rowsPerSecond")) {
    p.rowsPerSecond = parseInteger(*e, 1, 1'000'000'000);
  }
  if (const OptionEntry* e = firstOf(options, "number-of-rows", "numberOfRows")) {
    p.numberOfRows = parseInteger(*e, 0, INT64_MAX);
  }
  if (const OptionEntry* e = options.find("seed")) {
    p.seed = static_cast<uint64_t>(parseInteger(*e, INT64_MIN, INT64_MAX));
  }
  for (const OptionEntry& e : options.entries()) {
    if (e.key.size() <= 7 || !iequals(std::string_view(e.key).substr(0, 7), "fields.")) continue;
    std::string rest = e.key.substr(7);
    size_t dot = rest.rfind('.');
    if (dot == std::string::npos || dot == 0 || dot + 1 == rest.size()) {
      throw SqlError(sqlstate::kInvalidParameterValue,
                     fmt::format("invalid datagen option '{}'", e.key), e.keyPos,
                     "Field options are written 'fields.<column>.<property>'.");
    }
    std::string column = rest.substr(0, dot);
    std::string prop = toLower(rest.substr(dot + 1));
    FieldSpec& f = fieldFor(p, column);
    if (!f.firstEntry) f.firstEntry = &e;
    if (prop == "kind") {
      if (iequals(e.value, "sequence")) {
        f.sequence = true;
      } else if (!iequals(e.value, "random")) {
        badOption(e, fmt::format("invalid value for option '{}': '{}'", e.key, e.value),
                  "Allowed values: 'random', 'sequence'.");
      }
      f.kindEntry = &e;
    } else if (prop == "min") {
      f.min = parseNumber(e);
      f.minEntry = &e;
    } else if (prop == "max") {
      f.max = parseNumber(e);
      f.maxEntry = &e;
    } else if (prop == "length") {
      f.length = parseInteger(e, 0, kMaxLength);
    } else if (prop == "values") {
      f.valueTexts = splitList(e.value);
      f.valuesEntry = &e;
    } else if (prop == "start") {
      f.start = parseInteger(e, INT64_MIN, INT64_MAX);
    } else if (prop == "end") {
      f.end = parseInteger(e, INT64_MIN, INT64_MAX);
    } else if (prop == "null-rate") {
      f.nullRate = parseNumber(e);
      if (f.nullRate < 0 || f.nullRate > 1)
        badOption(e, fmt::format("invalid value for option '{}': '{}'", e.key, e.value),
                  "Expected a fraction between 0 and 1.");
    } else {
      std::string list;
      for (const auto& name : fieldProperties()) list += (list.empty() ? "" : ", ") + name;
      throw SqlError(sqlstate::kInvalidParameterValue,
                     fmt::format("unknown datagen field property '{}' in option '{}'", prop, e.key),
                     e.keyPos, "Field properties: " + list + ".");
    }
  }
  for (auto& [column, f] : p.fields) {
    if (f.min && f.max && *f.min > *f.max) {
      badOption(*f.maxEntry, fmt::format("option '{}' ({}) is below the minimum ({})", f.maxEntry->key,
                                         f.maxEntry->value, f.minEntry->value));
    }
    if (f.sequence && f.end && *f.end < f.start) {
      throw SqlError(sqlstate::kInvalidParameterValue,
                     fmt::format("sequence of field '{}' ends ({}) before it starts ({})", column, *f.end,
                                 f.start),
                     f.kindEntry ? f.kindEntry->valuePos : stmtPos);
    }
  }
  return p;
}

// Checks the field options against the columns they name.
void checkAgainstSchema(const ParsedOptions& p, const Schema& schema) {
  for (const auto& [column, f] : p.fields) {
    int index = schema.find(column);
    if (index < 0 || schema.columns[static_cast<size_t>(index)].hidden) {
      throw SqlError(sqlstate::kUndefinedColumn,
                     fmt::format("datagen option '{}' names no column '{}'", f.firstEntry->key, column),
                     f.firstEntry->keyPos, "Columns: " + schema.toString());
    }
    const DataType& type = *schema.columns[static_cast<size_t>(index)].type;
    if (f.sequence && !type.isNumeric() && type.id != TypeId::String) {
      badOption(*f.kindEntry, fmt::format("a sequence cannot fill column '{}' of type {}", column,
                                          type.toString()),
                "Sequences fill INT, BIGINT, DOUBLE and STRING columns.");
    }
    if ((f.min || f.max) && !type.isNumeric()) {
      const OptionEntry& e = f.minEntry ? *f.minEntry : *f.maxEntry;
      badOption(e, fmt::format("option '{}' needs a numeric column; '{}' is {}", e.key, column,
                               type.toString()));
    }
    if (type.id == TypeId::Int) {
      for (const OptionEntry* e : {f.minEntry, f.maxEntry}) {
        if (e && (*(e == f.minEntry ? f.min : f.max) < INT32_MIN || *(e == f.minEntry ? f.min : f.max) > INT32_MAX))
          badOption(*e, fmt::format("option '{}' ({}) is out of range for INT", e->key, e->value));
      }
    }
    if (f.valuesEntry) {
      for (const std::string& text : f.valueTexts) {
        Value v;
        if (!format::textToValue(text, type, v, false)) {
          badOption(*f.valuesEntry, fmt::format("value '{}' of option '{}' is not a valid {}", text,
                                                f.valuesEntry->key, type.toString()));
        }
      }
    }
  }
}

constexpr char kAlphanumeric[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

// A column's generator, resolved once from its type and FieldSpec.
struct ColumnGen {
  const DataType* type = nullptr;
  format::MetaKind meta = format::MetaKind::None;
  FieldSpec spec;
  std::vector<Value> values;  // `values` converted to the column type
};

class DatagenSource final : public SourceTask {
 public:
  DatagenSource(const ScanSpec& scan, ParsedOptions opts, int task, int tasks)
      : schema_(scan.schema), opts_(std::move(opts)), task_(task), tasks_(std::max(tasks, 1)) {
    // Split the total rate and row count over the tasks; the first tasks take
    // the remainder so the totals are exact.
    int64_t t = tasks_;
    rate_ = opts_.rowsPerSecond / t + (task_ < opts_.rowsPerSecond % t ? 1 : 0);
    if (opts_.numberOfRows) limit_ = *opts_.numberOfRows / t + (task_ < *opts_.numberOfRows % t ? 1 : 0);
    rng_.seed(opts_.seed * 0x9E3779B97F4A7C15ULL + static_cast<uint64_t>(task_) * 0xBF58476D1CE4E5B9ULL + 1);
    for (const Column& c : schema_.columns) {
      ColumnGen g;
      g.type = c.type.get();
      g.meta = format::metaKindOf(c);
      for (const auto& [name, spec] : opts_.fields) {
        if (iequals(name, c.name) && !c.hidden) {
          g.spec = spec;
          for (const std::string& text : spec.valueTexts) {
            Value v;
            format::textToValue(text, *c.type, v, false);
            g.values.push_back(std::move(v));
          }
        }
      }
      gens_.push_back(std::move(g));
    }
  }

  void poll(std::vector<SourceRecord>& out, size_t maxRecords, int timeoutMs) override {
    int64_t now = monotonicMicros();
    if (startMono_.load() == 0) startMono_.store(now);
    const int64_t deadline = now + std::max(timeoutMs, 0) * int64_t{1000};
    while (true) {
      int64_t due = dueRows(now);
      if (due > emitted_ && !exhausted_) {
        emit(out, static_cast<size_t>(std::min<int64_t>(due - emitted_, static_cast<int64_t>(maxRecords))));
        return;
      }
      if (now >= deadline) return;
      // Sleep until the next row is due (or the timeout, or a wake()); a
      // finished or idle task sleeps the whole timeout so its caller does not
      // spin.
      int64_t wakeAt = deadline;
      if (!finished()) wakeAt = std::min(deadline, nextDueMicros());
      {
        std::unique_lock lock(wakeMutex_);
        const bool woken =
            wakeCv_.wait_for(lock, std::chrono::microseconds(std::max<int64_t>(wakeAt - now, 1)),
                             [&] { return woken_; });
        woken_ = false;
        if (woken) return;
      }
      now = monotonicMicros();
    }
  }

  void wake() override {
    std::lock_guard lock(wakeMutex_);
    woken_ = true;
    wakeCv_.notify_all();
  }

  bool wakes() const override { return true; }

  void commit() override { startOffset_.store(nextOffset_.load()); }

  std::vector<PartitionProgress> progress() const override {
    PartitionProgress p;
    p.partition = task_;
    p.startOffset = startOffset_.load();
    p.endOffset = nextOffset_.load();
    int64_t start = startMono_.load();
    p.latestOffset = start == 0 ? p.endOffset : std::max(p.endOffset, dueRows(monotonicMicros()));
    return {p};
  }

  int64_t decodeErrors() const override { return 0; }

  std::string description() const override {
    if (opts_.numberOfRows)
      return fmt::format("Datagen[rowsPerSecond={}, numberOfRows={}]", opts_.rowsPerSecond, *opts_.numberOfRows);
    return fmt::format("Datagen[rowsPerSecond={}]", opts_.rowsPerSecond);
  }

 private:
  bool finished() const { return rate_ == 0 || exhausted_ || (limit_ >= 0 && emitted_ >= limit_); }

  // Rows due by `now`: the first at the start, then one every 1/rate seconds,
  // capped by the row limit.
  int64_t dueRows(int64_t now) const {
    int64_t start = startMono_.load();
    if (rate_ == 0 || start == 0) return 0;
    double elapsed = static_cast<double>(now - start);
    int64_t due = static_cast<int64_t>(std::floor(elapsed * static_cast<double>(rate_) / 1e6)) + 1;
    if (limit_ >= 0) due = std::min(due, limit_);
    return due;
  }

  int64_t nextDueMicros() const {
    return startMono_.load() +
           static_cast<int64_t>(std::ceil(static_cast<double>(emitted_) * 1e6 / static_cast<double>(rate_)));
  }

  void emit(std::vector<SourceRecord>& out, size_t n) {
    const int64_t created = nowMicros();
    for (size_t i = 0; i < n; ++i) {
      SourceRecord rec;
      rec.row.resize(gens_.size());
      rec.partition = task_;
      rec.offset = nextOffset_.load();
      rec.timestampMicros = created;
      rec.readMicros = created;
      for (size_t c = 0; c < gens_.size(); ++c) {
        if (!fill(gens_[c], rec.row[c], rec)) {
          exhausted_ = true;  // a sequence passed its end: the source is done
          return;
        }
      }
      out.push_back(std::move(rec));
      ++emitted_;
      nextOffset_.store(nextOffset_.load() + 1);
    }
  }

  int64_t uniformInt(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng_); }

  std::string randomText(int64_t length) {
    std::string s(static_cast<size_t>(length), ' ');
    for (char& ch : s) ch = kAlphanumeric[uniformInt(0, sizeof(kAlphanumeric) - 2)];
    return s;
  }

  // A value of `type` with no options: used for nested fields and array items.
  Value randomValue(const DataType& type, int depth) {
    switch (type.id) {
      case TypeId::Boolean: return Value::boolean(uniformInt(0, 1) == 1);
      case TypeId::Int: return Value::integer(static_cast<int32_t>(uniformInt(0, 1000)));
      case TypeId::BigInt: return Value::bigint(uniformInt(0, 1000));
      case TypeId::Double: return Value::float64(std::uniform_real_distribution<double>(0, 1000)(rng_));
      case TypeId::TinyInt: return Value::tinyint(static_cast<int8_t>(uniformInt(0, 100)));
      case TypeId::SmallInt: return Value::smallint(static_cast<int16_t>(uniformInt(0, 1000)));
      case TypeId::Float:
        return Value::float32(static_cast<float>(std::uniform_real_distribution<double>(0, 1000)(rng_)));
      case TypeId::String: return Value::string(randomText(8));
      case TypeId::Binary: return Value::binary(randomText(8));
      case TypeId::Timestamp: return Value::timestamp(nowMicros());
      case TypeId::Interval: return Value::interval(uniformInt(0, 1'000'000));
      case TypeId::YearMonthInterval: return Value::yearMonthInterval(static_cast<int32_t>(uniformInt(0, 240)));
      case TypeId::Decimal:
        return castValue(Value::float64(std::uniform_real_distribution<double>(0, 1000)(rng_)), type);
      case TypeId::Date: return Value::date(nowMicros() / (86400LL * 1000000));
      case TypeId::TimestampNtz: return Value::timestampNtz(nowMicros());  // UTC's wall clock
      case TypeId::Array: {
        ValueList items;
        if (depth < 4) {
          int64_t n = uniformInt(0, 3);
          for (int64_t i = 0; i < n; ++i) items.push_back(randomValue(*type.element, depth + 1));
        }
        return Value::array(std::move(items));
      }
      case TypeId::Struct: {
        ValueList fields;
        for (const StructField& f : type.fields)
          fields.push_back(depth < 4 ? randomValue(*f.type, depth + 1) : Value());
        return Value::structure(std::move(fields));
      }
      case TypeId::Map: {
        // Up to three entries with distinct keys: a key drawn twice is kept once.
        ValueList items;
        if (depth < 4 && type.key && type.value) {
          int64_t n = uniformInt(0, 3);
          for (int64_t i = 0; i < n; ++i) {
            Value k = randomValue(*type.key, depth + 1);
            bool seen = k.isNull();
            for (size_t j = 0; j < items.size() && !seen; j += 2) seen = items[j].compare(k) == 0;
            if (seen) continue;
            items.push_back(std::move(k));
            items.push_back(randomValue(*type.value, depth + 1));
          }
        }
        return Value::map(std::move(items));
      }
      case TypeId::Null: return Value();
    }
    return Value();
  }

  // Fills one column; false when its sequence has run out.
  bool fill(ColumnGen& g, Value& out, const SourceRecord& rec) {
    if (g.meta != format::MetaKind::None) {
      switch (g.meta) {
        case format::MetaKind::Timestamp: out = Value::timestamp(rec.timestampMicros); break;
        case format::MetaKind::Partition: out = Value::integer(rec.partition); break;
        case format::MetaKind::Offset: out = Value::bigint(rec.offset); break;
        default: out = Value(); break;
      }
      return true;
    }
    const FieldSpec& f = g.spec;
    const DataType& type = *g.type;
    if (f.sequence) {
      // Task t of n takes start+t, start+t+n, ...: together the tasks cover the
      // sequence once.
      int64_t step = 0, n = 0;
      const int64_t end = f.end ? *f.end
                                : (type.id == TypeId::Int        ? INT32_MAX
                                   : type.id == TypeId::SmallInt ? INT16_MAX
                                   : type.id == TypeId::TinyInt  ? INT8_MAX
                                                                 : INT64_MAX);
      if (__builtin_mul_overflow(emitted_, static_cast<int64_t>(tasks_), &step) ||
          __builtin_add_overflow(f.start, step + task_, &n) || n > end)
        return false;
      switch (type.id) {
        case TypeId::Int: out = Value::integer(static_cast<int32_t>(n)); break;
        case TypeId::SmallInt: out = Value::smallint(static_cast<int16_t>(n)); break;
        case TypeId::TinyInt: out = Value::tinyint(static_cast<int8_t>(n)); break;
        case TypeId::Double: out = Value::float64(static_cast<double>(n)); break;
        case TypeId::Float: out = Value::float32(static_cast<float>(n)); break;
        case TypeId::String: out = Value::string(std::to_string(n)); break;
        default: out = Value::bigint(n); break;
      }
      return true;
    }
    if (f.nullRate > 0 && std::uniform_real_distribution<double>(0, 1)(rng_) < f.nullRate) {
      out = Value();
      return true;
    }
    if (!g.values.empty()) {
      out = g.values[static_cast<size_t>(uniformInt(0, static_cast<int64_t>(g.values.size()) - 1))];
      return true;
    }
    switch (type.id) {
      case TypeId::Int:
      case TypeId::BigInt: {
        double lo = f.min.value_or(0), hi = f.max.value_or(std::max(lo, 1000.0));
        int64_t a = static_cast<int64_t>(std::ceil(lo)), b = static_cast<int64_t>(std::floor(hi));
        if (b < a) b = a;
        int64_t n = uniformInt(a, b);
        out = type.id == TypeId::Int ? Value::integer(static_cast<int32_t>(n)) : Value::bigint(n);
        return true;
      }
      case TypeId::TinyInt:
      case TypeId::SmallInt: {
        // Within the type's range, whatever min and max say.
        const bool tiny = type.id == TypeId::TinyInt;
        double lo = f.min.value_or(0), hi = f.max.value_or(std::max(lo, tiny ? 100.0 : 1000.0));
        const int64_t lowest = tiny ? INT8_MIN : INT16_MIN, highest = tiny ? INT8_MAX : INT16_MAX;
        int64_t a = std::clamp<int64_t>(static_cast<int64_t>(std::ceil(lo)), lowest, highest);
        int64_t b = std::clamp<int64_t>(static_cast<int64_t>(std::floor(hi)), lowest, highest);
        if (b < a) b = a;
        int64_t n = uniformInt(a, b);
        out = tiny ? Value::tinyint(static_cast<int8_t>(n)) : Value::smallint(static_cast<int16_t>(n));
        return true;
      }
      case TypeId::Float: {
        double lo = f.min.value_or(0), hi = f.max.value_or(std::max(lo, 1000.0));
        out = Value::float32(static_cast<float>(lo == hi ? lo : std::uniform_real_distribution<double>(lo, hi)(rng_)));
        return true;
      }
      case TypeId::Double:
      case TypeId::Decimal: {
        // A DECIMAL column draws a double in [min, max] and rounds it to its scale.
        double lo = f.min.value_or(0), hi = f.max.value_or(std::max(lo, 1000.0));
        out = Value::float64(lo == hi ? lo : std::uniform_real_distribution<double>(lo, hi)(rng_));
        if (type.id == TypeId::Decimal) out = castValue(out, type);
        return true;
      }
      case TypeId::String: out = Value::string(randomText(f.length)); return true;
      case TypeId::Binary: out = Value::binary(randomText(f.length)); return true;
      case TypeId::Timestamp: out = Value::timestamp(rec.timestampMicros); return true;
      case TypeId::TimestampNtz: out = Value::timestampNtz(rec.timestampMicros); return true;
      default: out = randomValue(type, 0); return true;
    }
  }

  Schema schema_;
  ParsedOptions opts_;
  int task_;
  int tasks_;
  int64_t rate_ = 0;    // rows per second of this task
  int64_t limit_ = -1;  // rows this task generates in all, -1 for no limit
  std::vector<ColumnGen> gens_;
  std::mt19937_64 rng_;
  int64_t emitted_ = 0;
  bool exhausted_ = false;
  std::atomic<int64_t> startMono_{0};
  std::atomic<int64_t> nextOffset_{0};
  std::atomic<int64_t> startOffset_{0};
  std::mutex wakeMutex_;
  std::condition_variable wakeCv_;
  bool woken_ = false;  // a wake() the poll has not seen yet
};

}  // namespace

void validateDatagenOptions(const Options& options, size_t stmtPos) { parseDatagenOptions(options, stmtPos); }

void validateDatagenOptions(const Options& options, const Schema& schema, size_t stmtPos) {
  checkAgainstSchema(parseDatagenOptions(options, stmtPos), schema);
}

std::shared_ptr<const ConnectorOptions> parseDatagenOptions(const Options& options) {
  ParsedOptions opts = parseDatagenOptions(options, SqlError::npos);
  // The entries point into `options`, which the carried copy outlives.
  for (auto& [column, f] : opts.fields) {
    f.minEntry = f.maxEntry = f.valuesEntry = f.kindEntry = f.firstEntry = nullptr;
  }
  return std::make_shared<const ParsedOptions>(std::move(opts));
}

std::unique_ptr<SourceTask> makeDatagenSource(const ScanSpec& scan, int task, int tasks) {
  // What CREATE SOURCE read and checked against the columns, carried by the
  // plan. A spec built by hand (tests, benchmarks) is checked here as CREATE
  // SOURCE would, and read through its connector by sourceOptionsOf.
  if (!scan.parsed) validateDatagenOptions(scan.options, scan.schema, SqlError::npos);
  return std::make_unique<DatagenSource>(
      scan, connectorOptionsAs<ParsedOptions>(sourceOptionsOf(scan).own, "datagen"), task, tasks);
}

}  // namespace rtsql
