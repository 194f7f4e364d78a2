#include "server/views/view_reads.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <thread>

#include "common/error.h"
#include "common/interrupt.h"
#include "common/options.h"
#include "parser/expr_walker.h"
#include "planner/planner.h"
#include "server/flows/placement.h"
#include "server/pg_values.h"

namespace rtsql {

namespace {

constexpr const char* kServedHint =
    "a materialized view answers SELECT <columns> FROM v WHERE <each key column> = <value> "
    "(a lookup by key) and SELECT <columns> FROM v [LIMIT n] (every row in key order)";

// How long a read waits for a view being restored when the statement has no
// timeout of its own, and how often it looks.
constexpr int64_t kRestoreWaitMs = 30000;
constexpr int64_t kRestorePollMs = 20;

[[noreturn]] void unsupported(const std::string& view, size_t pos, const std::string& what) {
  throw SqlError(sqlstate::kFeatureNotSupported,
                 fmt::format("{} over materialized view \"{}\" is not supported yet", what, view),
                 pos, kServedHint);
}

// The output columns of the select list: (view column, name) pairs.
std::vector<std::pair<int, std::string>> selectedColumns(const ast::Select& sel,
                                                         const std::string& view,
                                                         const Schema& schema) {
  const ast::TableRef& from = *sel.from;
  auto qualifierOk = [&](const std::vector<std::string>& parts, size_t n) {
    if (parts.size() == n) return true;
    if (parts.size() != n + 1) return false;
    return iequals(parts[0], from.alias.empty() ? from.name : from.alias);
  };
  std::vector<std::pair<int, std::string>> out;
  for (const ast::SelectItem& item : sel.items) {
    const ast::Expr& e = *item.expr;
    if (e.kind == ast::ExprKind::Star && qualifierOk(e.parts, 0)) {
      for (size_t i = 0; i < schema.size(); ++i)
        out.emplace_back(static_cast<int>(i), schema.columns[i].name);
      continue;
    }
    if (e.kind != ast::ExprKind::Column || !qualifierOk(e.parts, 1)) {
      unsupported(view, e.pos, "an expression in the select list");
    }
    const int i = schema.find(e.parts.back());
    if (i < 0) {
      throw SqlError(sqlstate::kUndefinedColumn,
                     fmt::format("column \"{}\" does not exist in materialized view \"{}\"",
                                 e.parts.back(), view),
                     e.pos, "DESCRIBE " + view + " lists its columns");
    }
    out.emplace_back(i, item.alias.empty() ? schema.columns[static_cast<size_t>(i)].name
                                           : item.alias);
  }
  checkSelectListLength(out.size(), sel.pos);
  return out;
}

// Refuses what only the general engine can answer: everything but one
// SELECT of columns from the view, with a WHERE and a LIMIT.
void requireServedShape(const ast::Query& q, const std::string& view) {
  if (q.terms.size() != 1) unsupported(view, q.terms[1].pos, "UNION ALL");
  if (!q.orderBy.empty()) unsupported(view, q.orderBy.front().expr->pos, "ORDER BY");
  const ast::Select& sel = q.terms[0];
  if (sel.distinct || !sel.distinctOn.empty()) unsupported(view, sel.pos, "DISTINCT");
  if (!sel.groupBy.empty()) unsupported(view, sel.groupBy.front()->pos, "GROUP BY");
  if (sel.having) unsupported(view, sel.having->pos, "HAVING");
  if (sel.from->kind != ast::TableRef::Kind::Named) unsupported(view, sel.from->pos, "a join");
}

// The key columns' values a WHERE gives: `key column = constant` terms
// joined by AND, each key column once.
std::vector<Value> keyValues(const ast::Expr& where, const std::string& view, const Schema& schema,
                             const std::vector<int>& key) {
  std::vector<std::optional<Value>> values(key.size());
  std::vector<const ast::Expr*> terms{&where};
  while (!terms.empty()) {
    const ast::Expr& e = *terms.back();
    terms.pop_back();
    if (e.kind == ast::ExprKind::Binary && iequals(e.op, "AND")) {
      terms.push_back(e.args[1].get());
      terms.push_back(e.args[0].get());
      continue;
    }
    if (e.kind != ast::ExprKind::Binary || e.op != "=") {
      unsupported(view, e.pos, "a WHERE other than key column = value");
    }
    const ast::Expr* column = e.args[0].get();
    const ast::Expr* value = e.args[1].get();
    if (column->kind != ast::ExprKind::Column) std::swap(column, value);
    if (column->kind != ast::ExprKind::Column) {
      unsupported(view, e.pos, "a WHERE other than key column = value");
    }
    const int c = schema.find(column->parts.back());
    if (c < 0) {
      throw SqlError(sqlstate::kUndefinedColumn,
                     fmt::format("column \"{}\" does not exist in materialized view \"{}\"",
                                 column->parts.back(), view),
                     column->pos, "DESCRIBE " + view + " lists its columns");
    }
    size_t k = 0;
    while (k < key.size() && key[k] != c) ++k;
    if (k == key.size()) {
      unsupported(view, column->pos,
                  fmt::format("a WHERE on \"{}\", which is not a key column,",
                              column->parts.back()));
    }
    if (values[k]) unsupported(view, e.pos, "a WHERE that gives a key column twice");
    values[k] = evalConstant(*value, schema.columns[static_cast<size_t>(c)].type);
  }
  std::vector<Value> out;
  for (size_t k = 0; k < key.size(); ++k) {
    if (!values[k]) {
      unsupported(view, where.pos,
                  fmt::format("a WHERE without key column \"{}\" (a range or a scan)",
                              schema.columns[static_cast<size_t>(key[k])].name));
    }
    out.push_back(std::move(*values[k]));
  }
  return out;
}

// Sends the selected columns of `row`.
void sendRow(ResultWriter& out, const Row& row,
             const std::vector<std::pair<int, std::string>>& selected) {
  std::vector<std::optional<std::string>> values;
  values.reserve(selected.size());
  for (const auto& [i, name] : selected) values.push_back(pgTextOf(row.at(static_cast<size_t>(i))));
  out.row(values);
}

bool sameColumns(const Schema& a, const Schema& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a.columns[i].name != b.columns[i].name || !a.columns[i].type->equals(*b.columns[i].type))
      return false;
  }
  return true;
}

}  // namespace

ViewRead viewReadOf(const Options& settings) {
  const OptionEntry* e = settings.find(kViewSnapshotSetting);
  return e && iequals(e->value, "latest") ? ViewRead::Latest : ViewRead::Committed;
}

void checkViewRead(const std::string& value, size_t pos) {
  if (iequals(value, "latest") || iequals(value, "committed")) return;
  throw SqlError(sqlstate::kInvalidParameterValue,
                 fmt::format("invalid value '{}' for {}", value, kViewSnapshotSetting), pos,
                 "'committed' (the last committed epoch, the default) or 'latest' (the view's "
                 "current state, epochs not committed yet included)");
}

ViewCopy viewCopyOf(const Options& settings) {
  const OptionEntry* e = settings.find(kViewReadSetting);
  if (!e) return ViewCopy::Any;
  if (iequals(e->value, "holder")) return ViewCopy::Holder;
  if (iequals(e->value, "standby")) return ViewCopy::Standby;
  return ViewCopy::Any;
}

void checkViewCopy(const std::string& value, size_t pos) {
  if (iequals(value, "any") || iequals(value, "holder") || iequals(value, "standby")) return;
  throw SqlError(sqlstate::kInvalidParameterValue,
                 fmt::format("invalid value '{}' for {}", value, kViewReadSetting), pos,
                 "'any' (the holder, or this node's standby copy when the holder cannot answer; "
                 "the default), 'holder' (the holder only) or 'standby' (this node's standby "
                 "copy, where it keeps one)");
}

namespace {

// A view another node of the cluster runs: its rows are in that node's
// state, so the read is refused naming the node to ask.
[[noreturn]] void elsewhere(const std::string& view, size_t pos,
                            const std::set<std::string>& holders) {
  if (holders.empty()) {
    throw SqlError(sqlstate::kObjectNotInPrerequisiteState,
                   fmt::format("materialized view \"{}\" runs on another node of the cluster, "
                               "and no node runs it now",
                               view),
                   pos,
                   "its node left the cluster or is down: another node takes it within the "
                   "cluster's --node-timeout; SHOW FLOWS shows its state");
  }
  std::string nodes;
  for (const std::string& n : holders) nodes += (nodes.empty() ? "\"" : ", \"") + n + "\"";
  throw SqlError(sqlstate::kObjectNotInPrerequisiteState,
                 fmt::format("materialized view \"{}\" runs on another node of the cluster: "
                             "node {}",
                             view, nodes),
                 pos, fmt::format("read it on node {}", nodes));
}

}  // namespace

Catalog::FlowPtr ViewReads::viewOf(const ast::Query& query, const Catalog& catalog) {
  for (const ast::Select& sel : query.terms) {
    if (!sel.from || sel.from->kind != ast::TableRef::Kind::Named) continue;
    Catalog::FlowPtr f = catalog.findFlow(sel.from->name);
    if (f && f->materializedView) return f;
  }
  // A view named inside a join or a subquery: refused there by the shape.
  for (const ast::Select& sel : query.terms) {
    if (!sel.from || sel.from->kind != ast::TableRef::Kind::Join) continue;
    std::vector<const ast::TableRef*> refs{sel.from.get()};
    while (!refs.empty()) {
      const ast::TableRef* r = refs.back();
      refs.pop_back();
      if (r->kind == ast::TableRef::Kind::Join) {
        refs.push_back(r->left.get());
        refs.push_back(r->right.get());
      } else if (r->kind == ast::TableRef::Kind::Named) {
        Catalog::FlowPtr f = catalog.findFlow(r->name);
        if (f && f->materializedView) return f;
      }
    }
  }
  return nullptr;
}

Catalog::FlowPtr ViewReads::soleViewOf(const ast::Query& query, const Catalog& catalog) {
  Catalog::FlowPtr view;
  bool sole = true;
  ast::enumerate(
      query, [](const ast::Expr&) {},
      [&](const ast::TableRef& t) {
        if (t.kind != ast::TableRef::Kind::Named) return;
        Catalog::FlowPtr f = t.on || t.offsetRange ? nullptr : catalog.findFlow(t.name);
        if (!f || !f->materializedView || (view && view != f)) sole = false;
        if (!view) view = f;
      });
  return sole ? view : nullptr;
}

ViewReads::Found ViewReads::find(const std::string& view) {
  Found found;
  // Under the registry's lock, not the statement lock: a DROP or a replace
  // of the view takes its runtime out under the same lock, so a read sees
  // the runtime whole or not at all, and a lookup never waits for a
  // statement that changes other flows.
  flows_.inspect(view, [&](const FlowRuntime* rt, const FlowControl& control, bool runsHere) {
    found.elsewhere = !runsHere;
    if (!runsHere) found.holders = flows_.placement().otherRunners(view, rt);
    found.wantRunning = control.wantRunning;
    found.failure = control.lastError;
    if (!rt) return;
    found.planned = true;
    const PhysicalPlan& plan = rt->plan();
    found.layout.schema = plan.sink.input;
    found.layout.key = plan.sink.keyColumns;
    for (const StageSpec& stage : plan.stages) {
      if (stage.output.kind == StageOutput::Kind::Sink) found.layout.tasks = stage.tasks;
    }
    // The state first: a runtime that reads as running has restored its
    // checkpoint already (a replaced view's new plan starts so), so a read
    // never takes a running view for one without a checkpoint.
    found.state = rt->state();
    found.checkpoint = rt->lastCheckpoint();
    found.latest = rt->viewLatest();
    if (found.state == FlowState::Failed) found.failure = rt->failureReason();
  });
  // Not planned yet (a restart), or dropped meanwhile.
  if (!found.planned) found.exists = flows_.progress(view).has_value();
  return found;
}

ViewRead ViewReads::readOf(const std::string& view, const Options& settings, size_t pos,
                           ResultWriter* out) {
  const ViewRead mode = viewReadOf(settings);
  const ViewCopy copy = viewCopyOf(settings);
  if (copy == ViewCopy::Holder) return mode;
  bool elsewhere = false;
  flows_.inspect(view, [&](const FlowRuntime*, const FlowControl&, bool runsHere) {
    elsewhere = !runsHere;
  });
  if (!elsewhere) return mode;
  std::optional<StandbyRead> kept = flows_.placement().standbyRead(view);
  if (!kept) return mode;
  // 'any': the standby copy when no read can be sent to a holder (none
  // holds the view now, or it advertised no address).
  // It too while the holder is remembered as one that could not answer.
  if (copy == ViewCopy::Any) {
    if (mode != ViewRead::Committed) return mode;
    std::optional<Forward> to = forwardTo(view);
    if (!to) return ViewRead::Standby;
    std::optional<std::string> why = outages_.skip(view, to->holder, HolderOutages::Clock::now());
    if (!why) return mode;
    if (out) out->notice(*why);
    return ViewRead::Standby;
  }
  if (mode == ViewRead::Latest) {
    // A standby applies whole checkpoints of the copy: it has no rows of
    // an epoch not committed yet.
    throw SqlError(sqlstate::kFeatureNotSupported,
                   fmt::format("the standby copy of materialized view \"{}\" on this node holds "
                               "committed epochs only, not the latest state",
                               view),
                   pos,
                   "SET rtsql.view_snapshot = 'committed' to read the standby copy, or SET "
                   "rtsql.view_read = 'any' to read the latest state from the view's holder");
  }
  return ViewRead::Standby;
}

bool ViewReads::standbyAfter(const SqlError& holderError, const std::string& view,
                             const Options& settings) {
  if (holderError.sqlstate() != sqlstate::kObjectNotInPrerequisiteState ||
      viewCopyOf(settings) != ViewCopy::Any || viewReadOf(settings) != ViewRead::Committed ||
      !flows_.placement().standbyRead(view).has_value())
    return false;
  if (std::optional<Forward> to = forwardTo(view))
    outages_.failed(view, to->holder, holderError.what(), HolderOutages::Clock::now());
  return true;
}

std::shared_ptr<const ViewSnapshot> ViewReads::standbySnapshot(const std::string& view,
                                                               size_t pos, const Found& found,
                                                               ResultWriter& out) {
  std::optional<StandbyRead> kept = flows_.placement().standbyRead(view);
  if (!kept) {
    // The placement moved since the read chose the standby copy.
    throw SqlError(sqlstate::kObjectNotInPrerequisiteState,
                   fmt::format("materialized view \"{}\" runs on another node of the cluster, "
                               "and this node keeps no standby copy of it",
                               view),
                   pos,
                   fmt::format("EXPLAIN FLOW {} lists the nodes that keep one; SET "
                               "rtsql.view_read = 'any' reads the view's holder",
                               view));
  }
  if (!kept->checkpoint || !kept->state || !found.planned) return nullptr;
  std::string holders;
  for (const std::string& n : found.holders) holders += (holders.empty() ? "\"" : ", \"") + n + "\"";
  out.notice(fmt::format(
      "materialized view \"{}\": read from the standby copy on this node, as of epoch {} "
      "(its holder: {})",
      view, kept->checkpoint->epoch, holders.empty() ? std::string("none now") : "node " + holders));
  return ViewSnapshot::ofStored(std::move(kept->state), kept->checkpoint->epoch, found.layout);
}

std::optional<ViewReads::Forward> ViewReads::forwardTo(const std::string& view) {
  Found found = find(view);
  if (!found.elsewhere || found.holders.size() != 1) return std::nullopt;
  const std::string& holder = *found.holders.begin();
  std::optional<ForwardRoute> route = flows_.placement().forwardRoute(holder);
  if (!route) return std::nullopt;
  return Forward{holder, std::move(*route)};
}

std::optional<ViewLayout> ViewReads::layout(const std::string& view) {
  Found found = find(view);
  if (!found.planned) return std::nullopt;
  return found.layout;
}

std::shared_ptr<const ViewSnapshot> ViewReads::opened(const std::string& view, const Found& found,
                                                      bool mayOpen) {
  const std::string key = toLower(view);
  if (!found.checkpoint) return ViewSnapshot::empty(found.layout);
  {
    std::lock_guard lock(mu_);
    if (auto snap = openFor(key, found.checkpoint->epoch)) return snap;
    if (!mayOpen) return nullptr;
    opening_.insert(key);
  }
  // Opened outside the lock: other reads go on with the snapshot before.
  std::shared_ptr<const ViewSnapshot> snapshot;
  try {
    snapshot = ViewSnapshot::open(
        (std::filesystem::path(found.checkpoint->dir) / "state").string(),
        found.checkpoint->epoch, found.layout);
  } catch (...) {
    std::lock_guard lock(mu_);
    opening_.erase(key);
    throw;
  }
  // The snapshot it replaces is closed (every file of a checkpoint's
  // RocksDB) here, after the lock, by the read that opened the next one,
  // rather than under the lock or by a lookup.
  std::shared_ptr<const ViewSnapshot> replaced;
  std::lock_guard lock(mu_);
  opening_.erase(key);
  auto& slot = open_[key];
  if (!slot || slot->epoch() < snapshot->epoch()) {
    replaced = std::move(slot);
    slot = snapshot;
  }
  return slot;
}

std::shared_ptr<const ViewSnapshot> ViewReads::snapshot(const std::string& view, size_t pos,
                                                        ResultWriter& out, ViewRead mode) {
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    Found found = find(view);
    // The latest state is a running flow's; any other view answers committed.
    if (mode == ViewRead::Latest && !found.elsewhere && found.planned &&
        found.state == FlowState::Running && found.latest) {
      if (auto latest = found.latest->read(found.layout)) return latest;
    }
    if (found.elsewhere && mode != ViewRead::Standby) elsewhere(view, pos, found.holders);
    if (found.elsewhere) {
      // This node's standby copy, once it has applied a checkpoint.
      if (auto snap = standbySnapshot(view, pos, found, out)) return snap;
      const int64_t waited = std::chrono::duration_cast<std::chrono::milliseconds>(
                                 std::chrono::steady_clock::now() - start)
                                 .count();
      if (out.cancelled() || waited >= kRestoreWaitMs) {
        throw SqlError(sqlstate::kObjectNotInPrerequisiteState,
                       fmt::format("the standby copy of materialized view \"{}\" on this node "
                                   "has applied no checkpoint yet",
                                   view),
                       pos,
                       "try again shortly (a standby reads the view's state copy from its "
                       "start), or read the holder: SET rtsql.view_read = 'holder'");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(kRestorePollMs));
      continue;
    }
    if (found.planned && found.checkpoint) {
      if (found.state == FlowState::Failed) {
        out.notice(fmt::format(
            "materialized view \"{}\": its flow failed ({}); this is its last committed "
            "snapshot, of epoch {}",
            view, found.failure, found.checkpoint->epoch));
      }
      // A checkpoint the retention removed meanwhile: the next one is there.
      for (int attempt = 0;; ++attempt) {
        try {
          return opened(view, found);
        } catch (const SqlError&) {
          if (attempt >= 3) throw;
          found = find(view);
          if (!found.checkpoint) break;
        }
      }
    }
    if (!found.exists) {
      throw SqlError(sqlstate::kUndefinedTable,
                     fmt::format("materialized view \"{}\" does not exist", view), pos);
    }
    // Never checkpointed, and running: empty as of its start.
    if (found.planned && !found.checkpoint && found.state == FlowState::Running)
      return ViewSnapshot::empty(found.layout);
    if (!found.wantRunning) {
      throw SqlError(sqlstate::kObjectNotInPrerequisiteState,
                     fmt::format("materialized view \"{}\" is stopped and has no snapshot loaded",
                                 view),
                     pos, "START FLOW " + view);
    }
    // Being restored (a restart, or a retry after a failure before any
    // checkpoint was loaded): wait within the statement's time.
    const int64_t waited = std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::chrono::steady_clock::now() - start)
                               .count();
    if (out.cancelled() || waited >= kRestoreWaitMs) {
      SqlError err(sqlstate::kObjectNotInPrerequisiteState,
                   fmt::format("materialized view \"{}\" is still being restored", view), pos,
                   "try again shortly; SHOW MATERIALIZED VIEWS shows its state");
      if (!found.failure.empty()) err.withDetail("its flow's last error: " + found.failure);
      throw err;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(kRestorePollMs));
  }
}

bool ViewReads::serves(const ast::Query& query, const FlowDef& view) {
  // The same checks select() makes, on the view's columns as planned; what
  // they refuse (0A000) is left to the bounded-query engine. Other errors
  // (an unknown column, a key value of the wrong type) are select()'s to tell.
  try {
    requireServedShape(query, view.name);
    std::optional<ViewLayout> l = layout(view.name);
    if (!l) return true;  // not planned: select() says why
    const ast::Select& sel = query.terms[0];
    selectedColumns(sel, view.name, l->schema);
    if (sel.where) keyValues(*sel.where, view.name, l->schema, l->key);
    return true;
  } catch (const SqlError& e) {
    return e.sqlstate() != sqlstate::kFeatureNotSupported;
  }
}

namespace {

class SnapshotRows final : public RowSource {
 public:
  explicit SnapshotRows(std::unique_ptr<RowIterator> rows) : rows_(std::move(rows)) {}
  bool next(Row& out) override { return rows_ && rows_->next(out); }

 private:
  std::unique_ptr<RowIterator> rows_;
};

class ViewRelation final : public BoundedRelation {
 public:
  ViewRelation(Schema schema, std::shared_ptr<const ViewSnapshot> snapshot)
      : schema_(std::move(schema)), snapshot_(std::move(snapshot)) {}
  const Schema& schema() const override { return schema_; }
  std::unique_ptr<RowSource> open() const override {
    return std::make_unique<SnapshotRows>(snapshot_ ? snapshot_->scan() : nullptr);
  }

 private:
  Schema schema_;
  std::shared_ptr<const ViewSnapshot> snapshot_;  // null: columns only
};

}  // namespace

std::shared_ptr<const BoundedRelation> ViewReads::relation(const std::string& view,
                                                           ResultWriter* out,
                                                           std::optional<uint64_t>* epoch,
                                                           ViewRead mode) {
  if (!out) {
    std::optional<ViewLayout> l = layout(view);
    if (!l) {
      throw SqlError(sqlstate::kObjectNotInPrerequisiteState,
                     fmt::format("materialized view \"{}\" is not planned yet", view),
                     SqlError::npos, "SHOW MATERIALIZED VIEWS shows its state");
    }
    return std::make_shared<ViewRelation>(l->schema, nullptr);
  }
  std::shared_ptr<const ViewSnapshot> snap = snapshot(view, SqlError::npos, *out, mode);
  if (epoch) *epoch = snap->epoch();
  return std::make_shared<ViewRelation>(snap->schema(), std::move(snap));
}

std::vector<ResultColumn> ViewReads::columns(const ast::Query& query, const FlowDef& view) {
  requireServedShape(query, view.name);
  std::optional<ViewLayout> l = layout(view.name);
  if (!l) {
    throw SqlError(sqlstate::kObjectNotInPrerequisiteState,
                   fmt::format("materialized view \"{}\" is not planned yet", view.name),
                   query.pos, "SHOW MATERIALIZED VIEWS shows its state");
  }
  std::vector<ResultColumn> cols;
  for (const auto& [i, name] : selectedColumns(query.terms[0], view.name, l->schema))
    cols.push_back({name, pgTypeOf(*l->schema.columns[static_cast<size_t>(i)].type)});
  return cols;
}

std::optional<uint64_t> ViewReads::select(const ast::Query& query, const FlowDef& view, ResultWriter& out,
                                          ViewRead mode) {
  requireServedShape(query, view.name);
  const ast::Select& sel = query.terms[0];
  std::shared_ptr<const ViewSnapshot> snap = snapshot(view.name, sel.from->pos, out, mode);
  const Schema& schema = snap->schema();
  const auto selected = selectedColumns(sel, view.name, schema);
  std::optional<std::vector<Value>> key;
  if (sel.where) key = keyValues(*sel.where, view.name, schema, snap->key());

  std::vector<ResultColumn> cols;
  for (const auto& [i, name] : selected)
    cols.push_back({name, pgTypeOf(*schema.columns[static_cast<size_t>(i)].type)});
  out.columns(cols);
  int64_t sent = 0;
  auto send = [&](const Row& row) {
    sendRow(out, row, selected);
    ++sent;
  };
  // `= NULL` is never true, as in any WHERE.
  const bool nullKey =
      key && std::any_of(key->begin(), key->end(), [](const Value& v) { return v.isNull(); });
  if (key && !nullKey) {
    if (std::optional<Row> row = snap->lookup(*key); row && query.limit.value_or(1) > 0) send(*row);
  } else if (key) {
    // No row.
  } else {
    std::unique_ptr<RowIterator> rows = snap->scan();
    Row row;
    while ((!query.limit || sent < *query.limit) && rows->next(row)) {
      if (out.cancelled()) throw Interrupted();
      send(row);
    }
  }
  out.complete(fmt::format("SELECT {}", sent));
  return snap->epoch();
}

std::optional<PreparedLookup> ViewReads::prepareLookup(const ast::Query& query, const FlowDef& view,
                                                       const std::vector<ParameterAt>& parameters) {
  PreparedLookup p;
  try {
    requireServedShape(query, view.name);
    const ast::Select& sel = query.terms[0];
    if (!sel.where) return std::nullopt;  // a scan: run as its text
    std::optional<ViewLayout> l = layout(view.name);
    if (!l) return std::nullopt;
    p.view = view.name;
    p.schema = l->schema;
    p.key = l->key;
    p.limit = query.limit;
    p.pos = sel.from->pos;
    p.selected = selectedColumns(sel, view.name, p.schema);
    for (const auto& [i, name] : p.selected)
      p.columns.push_back({name, pgTypeOf(*p.schema.columns[static_cast<size_t>(i)].type)});
    // The same terms keyValues() takes; a term's value is a parameter when
    // it is exactly the NULL standing for one.
    p.parameter.assign(p.key.size(), std::nullopt);
    p.constant.assign(p.key.size(), Value());
    std::vector<bool> given(p.key.size(), false);
    size_t matched = 0;
    std::vector<const ast::Expr*> terms{sel.where.get()};
    while (!terms.empty()) {
      const ast::Expr& e = *terms.back();
      terms.pop_back();
      if (e.kind == ast::ExprKind::Binary && iequals(e.op, "AND")) {
        terms.push_back(e.args[1].get());
        terms.push_back(e.args[0].get());
        continue;
      }
      if (e.kind != ast::ExprKind::Binary || e.op != "=") return std::nullopt;
      const ast::Expr* column = e.args[0].get();
      const ast::Expr* value = e.args[1].get();
      if (column->kind != ast::ExprKind::Column) std::swap(column, value);
      if (column->kind != ast::ExprKind::Column) return std::nullopt;
      const int c = p.schema.find(column->parts.back());
      size_t k = 0;
      while (k < p.key.size() && p.key[k] != c) ++k;
      if (c < 0 || k == p.key.size() || given[k]) return std::nullopt;
      given[k] = true;
      std::optional<size_t> param;
      if (value->kind == ast::ExprKind::Literal && value->literal.kind == ast::LiteralKind::Null) {
        for (const ParameterAt& at : parameters) {
          if (at.at == value->pos) param = at.index;
        }
      }
      if (param) {
        p.parameter[k] = param;
        ++matched;
      } else {
        p.constant[k] = evalConstant(*value, p.schema.columns[static_cast<size_t>(c)].type);
      }
    }
    // A parameter anywhere else (inside an expression, the select list, a
    // LIMIT) is for the statement's text to take.
    if (matched != parameters.size()) return std::nullopt;
    for (bool g : given) {
      if (!g) return std::nullopt;
    }
  } catch (const SqlError&) {
    return std::nullopt;  // the text, run, says what is wrong
  }
  return p;
}

bool ViewReads::lookup(const PreparedLookup& p, const std::vector<Value>& key, ResultWriter& out,
                       std::optional<uint64_t>& epoch, ViewRead mode) {
  std::shared_ptr<const ViewSnapshot> snap = snapshot(p.view, p.pos, out, mode);
  return answer(p, *snap, key, out, epoch);
}

bool ViewReads::lookupNow(const PreparedLookup& p, const std::vector<Value>& key,
                          ResultWriter& out, std::optional<uint64_t>& epoch) {
  // What find() tells, without copying the view's layout and checkpoint:
  // the snapshot read was opened with the layout, and answer() compares it
  // with the one `p` was prepared over.
  bool elsewhere = false;
  bool planned = false;
  FlowState state = FlowState::Stopped;
  std::optional<uint64_t> checkpoint;
  flows_.inspect(p.view, [&](const FlowRuntime* rt, const FlowControl&, bool runsHere) {
    elsewhere = !runsHere;
    if (!rt) return;
    planned = true;
    // The state first, as find() reads them.
    state = rt->state();
    checkpoint = rt->lastCheckpointEpoch();
  });
  // What snapshot() would wait for, refuse or tell: lookup() answers it.
  if (elsewhere || !planned || !checkpoint || state == FlowState::Failed) return false;
  std::shared_ptr<const ViewSnapshot> snap = openedNow(p.view, *checkpoint);
  return snap && answer(p, *snap, key, out, epoch);
}

std::shared_ptr<const ViewSnapshot> ViewReads::openedNow(const std::string& view,
                                                         uint64_t checkpoint) {
  const std::string key = toLower(view);
  std::lock_guard lock(mu_);
  return openFor(key, checkpoint);
}

std::shared_ptr<const ViewSnapshot> ViewReads::openFor(const std::string& key,
                                                       uint64_t checkpoint) const {
  auto it = open_.find(key);
  if (it == open_.end()) return nullptr;
  const std::optional<uint64_t> epoch = it->second->epoch();
  if (epoch == checkpoint) return it->second;
  // Opening a checkpoint's RocksDB reads every file's footer: once a
  // checkpoint (a second apart for a view) is enough, and the reads that
  // come meanwhile go on with the epoch before (not with a later one: that
  // is of a view replaced since).
  if (opening_.count(key) != 0 && epoch && *epoch < checkpoint) return it->second;
  return nullptr;
}

bool ViewReads::answer(const PreparedLookup& p, const ViewSnapshot& snap,
                       const std::vector<Value>& key, ResultWriter& out,
                       std::optional<uint64_t>& epoch) {
  if (!sameColumns(snap.schema(), p.schema) || snap.key() != p.key) return false;
  // Read before anything is reported, so that a failed read reports only
  // its error.
  std::optional<Row> row;
  // `= NULL` is never true, as in any WHERE.
  const bool nullKey = std::any_of(key.begin(), key.end(), [](const Value& v) { return v.isNull(); });
  if (!nullKey && p.limit.value_or(1) > 0) row = snap.lookup(key);
  out.columns(p.columns);
  if (row) sendRow(out, *row, p.selected);
  out.complete(row ? "SELECT 1" : "SELECT 0");
  epoch = snap.epoch();
  return true;
}

ViewStatus ViewReads::status(const FlowDef& view) {
  ViewStatus st;
  st.name = view.name;
  Found found = find(view.name);
  st.state = found.planned ? flowStateName(found.state) : "recovering";
  if (found.checkpoint) st.epoch = found.checkpoint->epoch;
  for (int k : found.layout.key) {
    if (k < 0 || static_cast<size_t>(k) >= found.layout.schema.size()) continue;
    if (!st.key.empty()) st.key += ", ";
    st.key += found.layout.schema.columns[static_cast<size_t>(k)].name;
  }
  st.error = found.failure;
  return st;
}

void ViewReads::forget(const std::string& view) {
  {
    std::lock_guard lock(mu_);
    open_.erase(toLower(view));
  }
  outages_.forget(view);
}

}  // namespace rtsql
