#include "common/map_order.h"
#include "server/bounded_query.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <map>
#include <mutex>
#include <random>
#include <thread>
#include <unordered_map>

#include "common/clock.h"
#include "common/error.h"
#include "common/interrupt.h"
#include "common/thread_priority.h"
#include "connectors/kafka/bounded_source.h"
#include "connectors/kafka/client.h"
#include "connectors/registry.h"
#include "executor/flow_runtime.h"
#include "server/pg_values.h"
#include "server/query_slots.h"
#include "server/system_catalog.h"

namespace rtsql {

namespace {

// ------------------------------------------------------------------ relations

// A static table: its rows as of the query's planning (an INSERT meanwhile
// replaces the table's row vector, not this one).
class StaticTableRelation final : public BoundedRelation {
 public:
  explicit StaticTableRelation(Catalog::TablePtr table)
      : table_(std::move(table)), rows_(table_->rows) {}
  const Schema& schema() const override { return table_->schema; }
  std::unique_ptr<RowSource> open() const override {
    return std::make_unique<RowVectorSource>(rows_);
  }

 private:
  Catalog::TablePtr table_;
  std::shared_ptr<const std::vector<Row>> rows_;
};

// Rows computed once, when the query was planned (a system catalog relation).
// Its own class, which catalogQueryContext() tells from other relations.
class ComputedRelation final : public RowsRelation {
 public:
  using RowsRelation::RowsRelation;
};

// The named relations of a FROM clause, subqueries and joins included.
void namedRelations(const ast::TableRef& ref, std::vector<const ast::TableRef*>& out);

void namedRelations(const ast::Query& q, std::vector<const ast::TableRef*>& out) {
  for (const ast::Select& term : q.terms) {
    if (term.from) namedRelations(*term.from, out);
  }
}

void namedRelations(const ast::TableRef& ref, std::vector<const ast::TableRef*>& out) {
  switch (ref.kind) {
    case ast::TableRef::Kind::Named:
      out.push_back(&ref);
      return;
    case ast::TableRef::Kind::Subquery:
      if (ref.subquery) namedRelations(*ref.subquery, out);
      return;
    case ast::TableRef::Kind::Join:
    case ast::TableRef::Kind::Transform:
      if (ref.left) namedRelations(*ref.left, out);
      if (ref.right) namedRelations(*ref.right, out);
      return;
  }
}

// ------------------------------------------------------------------ the run's sources

// What the run's source tasks tell the statement's thread: how many have
// returned their last row.
struct SourcesDone {
  std::atomic<int> finished{0};
};

// One bounded relation's rows as a source task of one partition. Once it has
// returned its last row it counts itself finished and then waits in poll()
// until the run ends it.
class RelationSourceTask final : public SourceTask {
 public:
  RelationSourceTask(std::string name, std::unique_ptr<RowSource> rows,
                     std::shared_ptr<SourcesDone> done)
      : name_(std::move(name)), rows_(std::move(rows)), done_(std::move(done)) {}

  void poll(std::vector<SourceRecord>& out, size_t maxRecords, int timeoutMs) override {
    if (finished_) {
      std::unique_lock lock(mu_);
      cv_.wait_for(lock, std::chrono::milliseconds(timeoutMs), [&] { return woken_; });
      woken_ = false;
      return;
    }
    const int64_t now = monotonicMicros();
    Row row;
    while (out.size() < maxRecords) {
      if (!rows_->next(row)) {
        finished_ = true;
        // Counted after the task has the rows of this poll: they are pushed
        // before the task looks at the final epoch's request.
        done_->finished.fetch_add(1);
        break;
      }
      SourceRecord rec;
      rec.row = std::move(row);
      rec.timestampMicros = now;
      rec.readMicros = now;
      rec.partition = 0;
      rec.offset = read_.fetch_add(1, std::memory_order_relaxed);
      out.push_back(std::move(rec));
    }
  }
  void wake() override {
    std::lock_guard lock(mu_);
    woken_ = true;
    cv_.notify_all();
  }
  bool wakes() const override { return true; }
  void commit() override {}
  std::vector<PartitionProgress> progress() const override {
    PartitionProgress p;
    p.partition = 0;
    p.startOffset = 0;
    p.endOffset = read_.load(std::memory_order_relaxed);
    return {p};
  }
  int64_t decodeErrors() const override { return 0; }
  std::string description() const override { return fmt::format("Bounded[{}]", name_); }

 private:
  std::string name_;
  std::unique_ptr<RowSource> rows_;
  std::shared_ptr<SourcesDone> done_;
  bool finished_ = false;
  std::atomic<int64_t> read_{0};
  std::mutex mu_;
  std::condition_variable cv_;
  bool woken_ = false;
};

// ------------------------------------------------------------------ the result

// About the bytes a value takes in memory: the Value itself and what it
// holds out of line (a string's text, a collection's items).
size_t heldBytes(const Value& v) {
  size_t bytes = sizeof(Value);
  switch (v.type()) {
    case TypeId::String:
    case TypeId::Binary:
      bytes += v.asString().size();
      break;
    case TypeId::Array:
    case TypeId::Struct:
    case TypeId::Map:
      for (const Value& item : v.asList()) bytes += heldBytes(item);
      break;
    default:
      break;
  }
  return bytes;
}

size_t heldBytes(const Row& row) {
  size_t bytes = sizeof(std::optional<Row>);
  for (const Value& v : row) bytes += heldBytes(v);
  return bytes;
}

// The query's result as its changelog leaves it: an insert or update-after
// puts a row in, under its unique key when the changelog has one (replacing
// that key's row); an update-before or delete takes its key's row out, or
// without a key one row equal to it. What it holds is bounded in rows and,
// about, in bytes (the rows' values and their keys).
class ResultTable {
 public:
  ResultTable(Changelog changelog, int64_t maxRows, int64_t maxBytes)
      : changelog_(std::move(changelog)), maxRows_(maxRows), maxBytes_(maxBytes) {}

  void apply(const Row& row, RowKind kind) {
    std::lock_guard lock(mu_);
    if (changelog_.mode == ChangelogMode::Append) {
      add(row);
      return;
    }
    const std::string key = keyOf(row);
    const bool adds = kind == RowKind::Insert || kind == RowKind::UpdateAfter;
    if (changelog_.uniqueKey) {
      auto it = byKey_.find(key);
      if (adds) {
        if (it != byKey_.end()) {
          std::optional<Row>& held = rows_[it->second];
          const size_t before = held ? heldBytes(*held) : 0;
          hold(heldBytes(row), before);
          held = row;
        } else {
          add(row, key.size());
          byKey_.emplace(key, rows_.size() - 1);
        }
      } else if (it != byKey_.end()) {
        remove(it);
      }
      return;
    }
    if (adds) {
      add(row, key.size());
      byKey_.emplace(key, rows_.size() - 1);
      return;
    }
    auto it = byKey_.find(key);
    if (it != byKey_.end()) remove(it);
  }

  bool overflowed() const {
    std::lock_guard lock(mu_);
    return overflowed_;
  }
  bool overflowedBytes() const {
    std::lock_guard lock(mu_);
    return overflowedBytes_;
  }

  std::vector<Row> take() {
    std::lock_guard lock(mu_);
    std::vector<Row> out;
    out.reserve(live_);
    for (auto& r : rows_) {
      if (r) out.push_back(std::move(*r));
    }
    rows_.clear();
    byKey_.clear();
    return out;
  }

 private:
  // `keyBytes`: the bytes of the row's key in byKey_, 0 when it has none.
  void add(const Row& row, size_t keyBytes = 0) {
    if (static_cast<int64_t>(live_) >= maxRows_) {
      overflowed_ = true;
      throw SqlError(sqlstate::kProgramLimitExceeded,
                     fmt::format("the result has more than {} rows", maxRows_));
    }
    hold(heldBytes(row) + (keyBytes > 0 ? keyBytes + kKeyEntryBytes : 0), 0);
    rows_.emplace_back(row);
    ++live_;
  }

  void remove(std::unordered_multimap<std::string, size_t>::iterator it) {
    std::optional<Row>& held = rows_[it->second];
    if (held) bytes_ -= std::min(bytes_, heldBytes(*held) + it->first.size() + kKeyEntryBytes);
    held.reset();
    byKey_.erase(it);
    --live_;
  }

  // Counts `adding` bytes in place of `replacing`, refused above maxBytes_.
  void hold(size_t adding, size_t replacing) {
    const size_t next = bytes_ - std::min(bytes_, replacing) + adding;
    if (static_cast<int64_t>(next) > maxBytes_) {
      overflowedBytes_ = true;
      throw SqlError(sqlstate::kProgramLimitExceeded,
                     fmt::format("the result holds more than {} bytes", maxBytes_));
    }
    bytes_ = next;
  }

  // A key's entry in byKey_ beside its text: the node, the hash, the index.
  static constexpr size_t kKeyEntryBytes = 64;

  // The row's unique key (all of it without one) as text: each value's type
  // and text, length-prefixed, so that no two keys run together.
  std::string keyOf(const Row& row) const {
    std::string key;
    auto append = [&](const Value& v) {
      const std::optional<std::string> text = pgTextOf(v);
      key += std::to_string(static_cast<int>(v.type()));
      if (!text) {
        key += 'N';
        return;
      }
      key += ':' + std::to_string(text->size()) + ':' + *text;
    };
    if (changelog_.uniqueKey) {
      for (int i : *changelog_.uniqueKey) {
        if (i >= 0 && static_cast<size_t>(i) < row.size()) append(row[static_cast<size_t>(i)]);
      }
    } else {
      for (const Value& v : row) append(v);
    }
    return key;
  }

  const Changelog changelog_;
  const int64_t maxRows_;
  const int64_t maxBytes_;
  mutable std::mutex mu_;
  std::vector<std::optional<Row>> rows_;  // in arrival order; a removed row is empty
  std::unordered_multimap<std::string, size_t> byKey_;
  size_t live_ = 0;
  size_t bytes_ = 0;  // about, of the rows held and their keys
  bool overflowed_ = false;
  bool overflowedBytes_ = false;
};

class ResultSink final : public SinkWriter {
 public:
  explicit ResultSink(std::shared_ptr<ResultTable> table) : table_(std::move(table)) {}
  void write(const Row& row, int64_t) override { table_->apply(row, RowKind::Insert); }
  void writeChange(const Row& row, int64_t, RowKind kind) override { table_->apply(row, kind); }
  void flush(int) override {}
  int64_t deliveryErrors() const override { return 0; }
  std::string description() const override { return "BoundedResult"; }

 private:
  std::shared_ptr<ResultTable> table_;
};

// The server's connectors, except that a bounded relation's scan reads the
// relation and the "client" sink is the result table.
class BoundedProvider final : public ConnectorProvider {
 public:
  BoundedProvider(ConnectorProvider& base, BoundedLookup lookup, std::string embeddedBootstrap,
                  std::shared_ptr<SourcesDone> done, std::shared_ptr<ResultTable> result)
      : base_(base),
        lookup_(std::move(lookup)),
        embeddedBootstrap_(std::move(embeddedBootstrap)),
        done_(std::move(done)),
        result_(std::move(result)) {}
  int sourcePartitions(const ScanSpec& scan) override {
    if (scan.connector == kBoundedConnector) return 1;
    return base_.sourcePartitions(scan);
  }
  std::unique_ptr<SourceTask> openSource(const ScanSpec& scan, const std::string& flow, int task,
                                         int tasks) override {
    if (scan.connector != kBoundedConnector) return openRange(scan, flow, task, tasks);
    std::shared_ptr<const BoundedRelation> relation = lookup_(scan.name);
    if (!relation) {
      throw SqlError(sqlstate::kUndefinedTable,
                     fmt::format("relation \"{}\" does not exist", scan.name));
    }
    return std::make_unique<RelationSourceTask>(scan.name, relation->open(), done_);
  }
  std::unique_ptr<SinkWriter> openSink(const SinkSpec& sink, const std::string& flow,
                                       int task) override {
    if (sink.traits.toClient) return std::make_unique<ResultSink>(result_);
    return base_.openSink(sink, flow, task);
  }

 private:
  // Every other scan of a bounded plan is a Kafka source read FOR OFFSETS
  // BETWEEN 'earliest' AND 'latest' (the binder refuses the rest): from its
  // earliest offsets, to the end offsets it has now.
  std::unique_ptr<SourceTask> openRange(const ScanSpec& scan, const std::string& flow, int task,
                                        int tasks) {
    ScanSpec earliest = scan;
    SourceOptions parsed = sourceOptionsOf(scan);
    parsed.fromEarliest = true;
    // Dead letters are a flow's: a query run again and again would write
    // the same ones each time. It skips them.
    if (parsed.onError == RowErrorPolicy::DeadLetter) parsed.onError = RowErrorPolicy::Skip;
    earliest.parsed = std::make_shared<const SourceOptions>(parsed);
    std::unique_ptr<SourceTask> inner = base_.openSource(earliest, flow, task, tasks);
    auto done = done_;
    return makeBoundedKafkaSource(std::move(inner), earliest,
                                  kafka::resolveBootstrap(scan.options, embeddedBootstrap_),
                                  [done] { done->finished.fetch_add(1); });
  }

  ConnectorProvider& base_;
  BoundedLookup lookup_;
  std::string embeddedBootstrap_;
  std::shared_ptr<SourcesDone> done_;
  std::shared_ptr<ResultTable> result_;
};

// ------------------------------------------------------------------ ORDER BY

struct SortKey {
  int column = -1;  // a result column, or
  ExprPtr expr;     // an expression over the result's columns
  bool descending = false;
  bool nullsFirst = false;
};

// Binds the query's ORDER BY over its result columns: a position (ORDER BY
// 2), a column's name, or an expression over them; or an item the planner
// computed as a hidden column of `all` (orderColumnName: a column of FROM
// that is not selected).
std::vector<SortKey> bindOrderBy(const ast::Query& q, const Schema& result, const Schema& all,
                                 const Catalog* catalog) {
  std::vector<SortKey> keys;
  for (size_t i = 0; i < q.orderBy.size(); ++i) {
    const ast::OrderItem& item = q.orderBy[i];
    SortKey key;
    key.descending = item.descending;
    key.nullsFirst = item.nullsFirst.value_or(item.descending);
    const ast::Expr& e = *item.expr;
    if (const int hidden = all.find(orderColumnName(i)); hidden >= 0) {
      key.column = hidden;
    } else if (e.kind == ast::ExprKind::Literal && e.literal.kind == ast::LiteralKind::Integer) {
      int64_t n = 0;
      try {
        n = std::stoll(e.literal.text);
      } catch (const std::exception&) {
        n = 0;
      }
      if (n < 1 || n > static_cast<int64_t>(result.size())) {
        throw SqlError(sqlstate::kInvalidColumnReference,
                       fmt::format("ORDER BY position {} is not in select list", e.literal.text),
                       e.pos);
      }
      key.column = static_cast<int>(n - 1);
    } else if (e.kind == ast::ExprKind::Column && (e.parts.size() == 2 || e.parts.size() == 3) &&
               result.find(e.parts.back()) >= 0) {
      // A qualified name (ORDER BY s.amount, or pg_catalog.pg_class.relname
      // with the schema) orders by the selected column of that name.
      key.column = result.find(e.parts.back());
    } else {
      try {
        key.expr = bindExpression(e, result, catalog);
      } catch (SqlError& err) {
        if (err.sqlstate() == std::string(sqlstate::kUndefinedColumn)) {
          err.withHint("a bounded query's ORDER BY names a column it selects, a position, or "
                       "a column of its FROM");
        }
        throw;
      }
    }
    const DataTypePtr& type =
        key.expr ? key.expr->type()
                 : (key.column < static_cast<int>(result.size()) ? result : all)
                       .columns[static_cast<size_t>(key.column)]
                       .type;
    // Spark orders no MAP, nor what holds one.
    refuseMapValues(*type, "ORDER BY", e.pos, kOrderByMapHint);
    keys.push_back(std::move(key));
  }
  return keys;
}

// NULL where the key says (by default PostgreSQL's order: NULL after every
// value ascending, before them descending).
void sortRows(std::vector<Row>& rows, const std::vector<SortKey>& keys) {
  if (keys.empty()) return;
  std::vector<std::pair<std::vector<Value>, size_t>> decorated;
  decorated.reserve(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    if ((i & 1023) == 0) throwIfInterrupted();
    std::vector<Value> values;
    values.reserve(keys.size());
    for (const SortKey& k : keys) {
      values.push_back(k.expr ? k.expr->eval(rows[i]) : rows[i][static_cast<size_t>(k.column)]);
    }
    decorated.emplace_back(std::move(values), i);
  }
  std::stable_sort(decorated.begin(), decorated.end(), [&](const auto& a, const auto& b) {
    for (size_t k = 0; k < keys.size(); ++k) {
      const Value& x = a.first[k];
      const Value& y = b.first[k];
      if (x.isNull() || y.isNull()) {
        if (x.isNull() == y.isNull()) continue;
        return x.isNull() == keys[k].nullsFirst;
      }
      int c = x.compare(y);
      if (keys[k].descending) c = -c;
      if (c != 0) return c < 0;
    }
    return false;
  });
  std::vector<Row> sorted;
  sorted.reserve(rows.size());
  for (auto& d : decorated) sorted.push_back(std::move(rows[d.second]));
  rows.swap(sorted);
}

std::string runId() {
  std::random_device rd;
  return fmt::format("{:08x}", rd());
}

}  // namespace

std::shared_ptr<const BoundedRelation> boundedRelationOf(const Catalog& catalog,
                                                         const std::string& name) {
  if (Catalog::TablePtr table = catalog.findTable(name)) {
    return std::make_shared<StaticTableRelation>(std::move(table));
  }
  return nullptr;
}

BoundedLookup boundedLookupOf(const Catalog& catalog, const PgSession* pg, BoundedLookup others) {
  auto made = std::make_shared<std::map<std::string, std::shared_ptr<const BoundedRelation>>>();
  auto mu = std::make_shared<std::mutex>();
  return [&catalog, pg, others = std::move(others), made, mu](const std::string& name)
             -> std::shared_ptr<const BoundedRelation> {
    if (auto table = boundedRelationOf(catalog, name)) return table;
    std::lock_guard lock(*mu);
    auto it = made->find(name);
    if (it != made->end()) return it->second;
    std::shared_ptr<const BoundedRelation> rel = others ? others(name) : nullptr;
    if (!rel && pg) {
      if (std::optional<PgSession::Relation> sys = pg->systemRelation(name)) {
        rel = std::make_shared<ComputedRelation>(std::move(sys->columns), std::move(sys->rows));
      }
    }
    made->emplace(name, rel);
    return rel;
  };
}

bool isBoundedQuery(const ast::Query& query, const BoundedLookup& lookup) {
  // A term without FROM is a constant row, which only INSERT evaluates
  // (server/insert_into.cpp); the planner plans none.
  for (const ast::Select& term : query.terms) {
    if (!term.from) return false;
  }
  std::vector<const ast::TableRef*> names;
  namedRelations(query, names);
  if (names.empty()) return false;
  for (const ast::TableRef* ref : names) {
    if (!ref->offsetRange && !lookup(ref->name)) return false;
  }
  return true;
}

PlanContext boundedPlanContext(PlanContext base, BoundedLookup lookup) {
  base.boundedRelation = lookup;
  auto partitions = std::move(base.sourcePartitions);
  base.sourcePartitions = [partitions](const SourceDef& def) {
    if (def.connector == kBoundedConnector) return 1;
    return partitions ? partitions(def) : 0;
  };
  return base;
}

PlanContext catalogQueryContext(const ast::Query& query, const BoundedLookup& lookup,
                                PlanContext ctx) {
  std::vector<const ast::TableRef*> names;
  namedRelations(query, names);
  if (names.empty()) return ctx;
  for (const ast::TableRef* ref : names) {
    if (ref->offsetRange) return ctx;
    std::shared_ptr<const BoundedRelation> rel = lookup(ref->name);
    if (!dynamic_cast<const ComputedRelation*>(rel.get())) return ctx;
  }
  ctx.session.set("shuffle.partitions", "1");
  return ctx;
}

namespace {

// Whether every relation `plan` reads is the catalog as PostgreSQL shows it
// (pg_catalog.pg_class, information_schema.tables, pg_class): its arrays go
// out in PostgreSQL's form (pg_values.h).
bool readsOnlyCatalog(const PhysicalPlan& plan) {
  static const std::vector<std::string> names = SystemCatalog::relationNames();
  if (plan.scans.empty()) return false;
  for (const ScanSpec& scan : plan.scans) {
    std::string name = toLower(scan.name);
    if (name.find('.') == std::string::npos) name = "pg_catalog." + name;
    if (!std::binary_search(names.begin(), names.end(), name)) return false;
  }
  return true;
}

}  // namespace

std::vector<ResultColumn> boundedQueryColumns(const PhysicalPlan& plan) {
  const bool pgArrays = readsOnlyCatalog(plan);
  std::vector<ResultColumn> cols;
  for (const auto& c : plan.sink.input.columns) {
    if (!c.hidden) cols.push_back({c.name, pgArrays ? pgArrayTypeOf(*c.type) : pgTypeOf(*c.type)});
  }
  return cols;
}

void runBoundedQuery(PhysicalPlan plan, const ast::Query& query, const BoundedRun& run,
                     ResultWriter& out) {
  const std::vector<ResultColumn> cols = boundedQueryColumns(plan);
  const bool pgArrays = readsOnlyCatalog(plan);
  const std::vector<Row> rows = collectBoundedRows(std::move(plan), query, run, out);
  out.columns(cols);
  std::vector<std::optional<std::string>> text(cols.size());
  for (const Row& row : rows) {
    for (size_t i = 0; i < text.size() && i < row.size(); ++i)
      text[i] = pgArrays ? pgArrayTextOf(row[i]) : pgTextOf(row[i]);
    out.row(text);
  }
  out.complete(fmt::format("SELECT {}", rows.size()));
}

std::vector<Row> collectBoundedRows(PhysicalPlan plan, const ast::Query& query,
                                    const BoundedRun& run, const ResultWriter& out) {
  Schema resultSchema;
  for (const auto& c : plan.sink.input.columns) {
    if (!c.hidden) resultSchema.columns.push_back(c);
  }
  // Bound before anything runs: a wrong ORDER BY fails at once.
  const std::vector<SortKey> order =
      bindOrderBy(query, resultSchema, plan.sink.input, run.catalog);
  if (plan.output.mode != ChangelogMode::Append && !plan.output.uniqueKey &&
      plan.output.mode != ChangelogMode::Retract) {
    throw InternalError("a bounded query's updates without a key to apply them by");
  }

  int sourceTasks = 0;
  for (const StageSpec& stage : plan.stages) {
    if (stage.scan >= 0) sourceTasks += stage.tasks;
  }
  const QuerySlots slots = querySlotsOf(plan);
  const std::string id = runId();
  plan.flowName = "bounded-" + id;
  plan.commitOffsets = false;
  const std::string dir = (std::filesystem::path(run.stateDir) / id).string();
  auto done = std::make_shared<SourcesDone>();
  auto result = std::make_shared<ResultTable>(plan.output, run.maxRows, run.maxBytes);
  BoundedProvider provider(*run.connectors, run.lookup, run.embeddedBootstrap, done, result);
  auto runtime =
      std::make_unique<FlowRuntime>(std::move(plan), provider, *run.slots, "bounded-" + id, dir);
  // A person waiting for a result is not a flow's P99: live queries run nicer.
  runtime->setThreadNice(kLiveQueryNice);

  // Stops the run and closes its state before its directory goes.
  auto finish = [&](bool finalEpoch) {
    if (!finalEpoch) runtime->stopWithoutFinalEpoch();
    runtime->stop();
    const bool failed = runtime->state() == FlowState::Failed;
    std::optional<SqlError> error;
    if (failed || result->overflowed() || result->overflowedBytes()) {
      if (result->overflowedBytes()) {
        error = SqlError(sqlstate::kProgramLimitExceeded,
                         fmt::format("the result of a bounded query holds more than {} bytes",
                                     run.maxBytes))
                    .withHint("aggregate or filter further, select fewer columns, or SET "
                              "rtsql.bounded_max_bytes higher");
      } else if (result->overflowed()) {
        error = SqlError(sqlstate::kProgramLimitExceeded,
                         fmt::format("the result of a bounded query has more than {} rows",
                                     run.maxRows))
                    .withHint("aggregate or filter further, add LIMIT, or SET "
                              "rtsql.bounded_max_rows higher");
      } else if (std::optional<SqlError> e = runtime->failureError()) {
        error = std::move(*e);  // the error as PostgreSQL words it, with its hint
      } else {
        const std::string code = runtime->failureCode();
        error = SqlError(code.empty() ? sqlstate::kDataException : code,
                         "bounded query failed: " + runtime->failureReason());
      }
    }
    runtime.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
    return error;
  };

  try {
    runtime->start();
  } catch (const SqlError& e) {
    runtime.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
    if (e.sqlstate() == sqlstate::kInsufficientResources)
      throw querySlotsError("a bounded query", slots, *run.slots);
    throw;
  } catch (...) {
    runtime.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
    throw;
  }
  // Waits until every source task has returned its last row; the stop's final
  // epoch then carries every row through every stage into the result.
  while (done->finished.load() < sourceTasks) {
    if (out.cancelled()) {
      finish(false);
      throw Interrupted();
    }
    if (runtime->state() == FlowState::Failed) {
      std::optional<SqlError> error = finish(false);
      if (error) throw *error;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (std::optional<SqlError> error = finish(true)) throw *error;
  if (out.cancelled()) throw Interrupted();

  std::vector<Row> rows = result->take();
  sortRows(rows, order);
  const size_t begin = std::min<size_t>(
      rows.size(), static_cast<size_t>(std::max<int64_t>(query.offset.value_or(0), 0)));
  size_t last = rows.size();
  if (query.limit) {
    last = std::min<size_t>(last, begin + static_cast<size_t>(std::max<int64_t>(*query.limit, 0)));
  }
  std::vector<Row> kept;
  kept.reserve(last - begin);
  for (size_t r = begin; r < last; ++r) {
    Row& row = rows[r];
    row.resize(std::min(row.size(), resultSchema.size()));  // the hidden columns go
    kept.push_back(std::move(row));
  }
  return kept;
}

}  // namespace rtsql
