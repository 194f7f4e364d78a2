// The replay of the catalog store (server/catalog_store.h): at start, what
// it holds is run again through the statement handlers (flows through
// restoreFlow, which plans them without starting them: the flow registry's
// supervisor starts them); what needs a remote service that is away is put
// off and tried again on a thread of its own. A change another node of a
// cluster makes to the catalog goes the same way: each change makes the
// object it names here what the change says, through the same handlers, so
// that an object is created, dropped and checked on every node as on the
// node whose statement made it. A replay's session says it replays (its
// statements are not checked or recorded again) and whether its maker holds
// the statement lock (server/statement_lock.h).
#include <fmt/format.h>
#include <pthread.h>

#include <algorithm>

#include "common/clock.h"
#include "common/interrupt.h"
#include "common/log.h"
#include "connectors/net/http_client.h"
#include "parser/expr_walker.h"
#include "parser/parser.h"
#include "planner/flow_dialect.h"
#include "planner/processor.h"
#include "planner/shard_plan.h"
#include "planner/user_function.h"
#include "server/alter.h"
#include "server/catalog_replay.h"
#include "server/flow_replace.h"
#include "server/views/view_inputs.h"

namespace rtsql {

namespace {

std::string quoteIdentifier(const std::string& name) {
  std::string out = "\"";
  for (char c : name) {
    out += c;
    if (c == '"') out += '"';
  }
  return out + "\"";
}

// The kinds of object a change may name; each is also the keyword of its
// DROP statement.
bool knownKind(const std::string& kind) {
  for (const char* k : {"function", "processor", "source", "sink", "table", "flow"}) {
    if (kind == k) return true;
  }
  return false;
}

// The functions a replayed CREATE FLOW or CREATE FUNCTION calls by name,
// lower-cased, each once.
std::vector<std::string> functionsNamed(const ast::Statement& stmt) {
  std::vector<std::string> out;
  auto add = [&](const ast::Expr& e) {
    if (e.kind != ast::ExprKind::Call) return;
    std::string key = toLower(e.name);
    if (std::find(out.begin(), out.end(), key) == out.end()) out.push_back(std::move(key));
  };
  if (stmt.kind == ast::StatementKind::CreateFlow) {
    ast::enumerate(*static_cast<const ast::CreateFlow&>(stmt).query, add);
  } else if (stmt.kind == ast::StatementKind::CreateFunction) {
    const auto& body = static_cast<const ast::CreateFunction&>(stmt).body;
    if (body) ast::enumerateAll(*body, add);
  }
  return out;
}

// A replayed flow or function that calls a user function the restart could
// not bring back is not restored either: planned now, the call would bind to
// whatever else has the name (a built-in function a newer release added under
// it) and the flow would silently compute something else. It fails with 42723
// when a built-in function took the name, else 42883, and is kept in the
// catalog file as it was.
void refuseLostCalls(const ast::Statement& stmt, const std::string& kind, const std::string& name,
                     const Catalog& catalog, const std::vector<CatalogRecord>& unrestored,
                     const std::vector<CatalogRecord>& deferred) {
  auto lost = [&](const std::string& fn) {
    auto isIt = [&](const CatalogRecord& r) { return r.kind == "function" && toLower(r.name) == fn; };
    return std::any_of(unrestored.begin(), unrestored.end(), isIt) ||
           std::any_of(deferred.begin(), deferred.end(), isIt);
  };
  for (const std::string& fn : functionsNamed(stmt)) {
    if (catalog.findFunction(fn) || !lost(fn)) continue;
    if (isBuiltinFunctionName(fn)) {
      throw SqlError(
          sqlstate::kDuplicateFunction,
          fmt::format("{} \"{}\" calls user function \"{}\", which was not restored: a built-in "
                      "function of this version has its name",
                      kind, name, fn),
          SqlError::npos,
          fmt::format("the catalog file keeps both; create the function again under another "
                      "name, then the {} calling that name",
                      kind));
    }
    throw SqlError(sqlstate::kUndefinedFunction,
                   fmt::format("{} \"{}\" calls user function \"{}\", which was not restored",
                               kind, name, fn),
                   SqlError::npos,
                   fmt::format("the log says why \"{}\" was not restored; the catalog file keeps "
                               "the {}",
                               fn, kind));
  }
}

}  // namespace

void CatalogStoreReplay::replayStatement(EngineSession& s, const std::string& sql, ResultWriter& out) {
  std::vector<ast::StatementPtr> stmts = parseStatements(sql);
  if (stmts.size() != 1) throw SqlError(sqlstate::kIoError, "not one statement");
  ctx_.dispatch->executeStatement(s, *stmts.front(), out);
}

void CatalogStoreReplay::restore() {
  // Ready before the flows are restored: each restored flow tells it the
  // slots CREATE FLOW chose for its copies or partitions.
  ctx_.flows.placement().open();
  if (ctx_.store) {
    std::vector<CatalogRecord> records = ctx_.store->load();
    orderViewsBeforeReaders(records);
    // Nothing else runs yet (no sessions, no supervisor), and the statement
    // handlers take the statement lock themselves.
    // A restart never waits on a remote service: what needs one (a source
    // whose columns a schema registry gives) fails at once, and is put off.
    net::NoWaitScope noWait;
    ReplayWriter discard;
    EngineSession session;
    session.replay = true;
    int restored = 0;
    for (const CatalogRecord& r : records) {
      try {
        if (r.kind == "flow") {
          restoreFlow(r);
        } else {
          // A function or processor is created again as its owner's.
          session.user = r.owner;
          if (r.kind == "function") {
            std::vector<ast::StatementPtr> stmts = parseStatements(r.sql);
            if (stmts.size() == 1) {
              refuseLostCalls(*stmts.front(), r.kind, r.name, ctx_.catalog, ctx_.unrestored, ctx_.deferred);
            }
          }
          replayStatement(session, r.sql, discard);
        }
        ++restored;
      } catch (const std::exception& e) {
        const auto* sqlError = dynamic_cast<const SqlError*>(&e);
        // Put off when it needed a remote service, or may need what was put
        // off (a flow reading a source that is not back yet).
        if ((sqlError && sqlError->sqlstate() == sqlstate::kConnectionFailure) ||
            !ctx_.deferred.empty()) {
          logLine(fmt::format("restoring {} \"{}\" later: {}", r.kind, r.name,
                              sqlError ? sqlError->message() : e.what()));
          ctx_.deferred.push_back(r);
          continue;
        }
        std::string why = sqlError ? sqlError->message() : e.what();
        if (r.kind == "function" && isBuiltinFunctionName(toLower(r.name))) {
          // Made before a release added a built-in function of that name.
          why = "a built-in function of this version has its name (create it again under another "
                "name; the flows and functions calling it are not restored either)";
        }
        logLine(fmt::format("cannot restore {} \"{}\": {}; it is kept in the catalog file", r.kind,
                            r.name, why));
        ctx_.unrestored.push_back(r);
      }
    }
    if (!records.empty()) {
      logLine(fmt::format("restored {} of {} catalog entries from {}", restored, records.size(),
                          ctx_.store->where()));
    }
    ctx_.store->follow([this](const std::vector<StoredChange>& changes) { applyChanges(changes); });
  }
  ctx_.flows.start([this](const std::string& name) { return ctx_.planRestoredFlow(name); });
  if (ctx_.options.cluster) requests_.start();
  if (!ctx_.deferred.empty()) {
    restorer_ = std::thread([this] { restoreDeferred(); });
    pthread_setname_np(restorer_.native_handle(), "restore-later");
  }
}

void CatalogStoreReplay::stop() {
  requests_.stop();
  {
    std::lock_guard lock(restorerMu_);
    restorerStop_ = true;
  }
  restorerCv_.notify_all();
  if (restorer_.joinable()) restorer_.join();
}

void CatalogStoreReplay::restoreDeferred() {
  // Its waits on a remote service end when the engine shuts down.
  InterruptScope interrupt(
      [](const void* e) { return static_cast<const CatalogStoreReplay*>(e)->restorerStop_.load(); }, this);
  ReplayWriter discard;
  EngineSession session;
  session.replay = true;
  int64_t waitMs = 1000;
  for (;;) {
    {
      std::unique_lock lock(restorerMu_);
      restorerCv_.wait_for(lock, std::chrono::milliseconds(waitMs),
                           [&] { return restorerStop_.load(); });
      if (restorerStop_.load()) return;
    }
    std::vector<CatalogRecord> pending;
    {
      std::lock_guard lock(ctx_.statements.mutex());
      pending = ctx_.deferred;
    }
    for (const CatalogRecord& r : pending) {
      try {
        if (r.kind == "flow") {
          // Planned without waiting: a plan that needs a remote service is
          // the supervisor's to make later, as for a broker away.
          net::NoWaitScope noWait;
          std::lock_guard lock(ctx_.statements.mutex());
          restoreFlow(r);
        } else {
          // A source's remote service is asked outside the statement lock:
          // the statement takes it to change the catalog.
          replayStatement(session, r.sql, discard);
        }
        logLine(fmt::format("restored {} \"{}\"", r.kind, r.name));
        std::lock_guard lock(ctx_.statements.mutex());
        auto it = std::find_if(ctx_.deferred.begin(), ctx_.deferred.end(), [&](const CatalogRecord& o) {
          return o.kind == r.kind && o.name == r.name && o.sql == r.sql;
        });
        if (it != ctx_.deferred.end()) ctx_.deferred.erase(it);
      } catch (const Interrupted&) {
        return;
      } catch (const std::exception&) {
        // Still away, or needing what is: tried again next round.
      }
    }
    {
      std::lock_guard lock(ctx_.statements.mutex());
      if (ctx_.deferred.empty()) return;
    }
    waitMs = std::min<int64_t>(waitMs * 2, 30000);
  }
}

void CatalogStoreReplay::restoreFlow(const CatalogRecord& record) {
  std::vector<ast::StatementPtr> stmts = parseStatements(record.sql);
  if (stmts.size() != 1 || stmts.front()->kind != ast::StatementKind::CreateFlow) {
    throw SqlError(sqlstate::kIoError, "not a CREATE FLOW statement");
  }
  const auto& stmt = static_cast<const ast::CreateFlow&>(*stmts.front());
  refuseLostCalls(stmt, "flow", stmt.name, ctx_.catalog, ctx_.unrestored, ctx_.deferred);
  FlowControl control;
  control.wantRunning = record.running;
  control.settings = record.settings;
  // A flow stored before one of its dialect markers existed (ANSI mode, number
  // literals with a point as DECIMALs, ...) recorded none: it reads as it did
  // then, so a restart never changes its output types, state or errors.
  for (const char* marker : kFlowDialectMarkers)
    if (std::none_of(control.settings.begin(), control.settings.end(),
                     [marker](const auto& kv) { return iequals(kv.first, marker); }))
      control.settings.emplace_back(marker, kDialectBefore);
  EngineSession session;
  for (const auto& [k, v] : control.settings) session.settings.set(k, v);
  ctx_.flows.adoptLegacyFlowDir(stmt.name);
  // Also when it cannot be planned yet: SHOW FLOWS names where it runs.
  ctx_.flows.placement().setFlowSlots(
      stmt.name, parseClusterSlots(session.settings.getString(kClusterSlotsSetting)));

  FlowDef def;
  def.name = stmt.name;
  def.sink = stmt.sink;
  def.sql = stmt.text;
  def.queryText = stmt.queryText;
  def.functions = userFunctionsCalled(*stmt.query, ctx_.catalog);
  def.processors = processorsUsed(*stmt.query);
  def.owner = record.owner;
  def.materializedView = stmt.materializedView;
  std::unique_ptr<FlowRuntime> runtime;
  std::vector<std::string> inputs;
  try {
    PhysicalPlan plan = planFlow(stmt, ctx_.planContext(session));
    def.checkpointIntervalMicros = plan.checkpointIntervalMicros;
    def.options = plan.flowOptions;
    inputs = ctx_.flowInputs(plan, stmt.sink);
    runtime = ctx_.flows.makeRuntime(std::move(plan), stmt.name);
    // A replaced flow restores the replaced plan's checkpoint through its
    // migration (server/flow_replace.h).
    runtime->setStateMigration(storedStateMigration(record.settings));
  } catch (const SqlError& e) {
    // The plan needs the sources' partition counts: with a broker away, the
    // flow is restored without a runtime and the supervisor plans it later.
    control.lastError = e.message();
    if (!FlowRegistry::retryable(e.sqlstate())) throw;
  }
  ctx_.catalog.addFlow(std::move(def), false, stmt.namePos);
  if (runtime) ctx_.catalog.setFlowInputs(stmt.name, inputs);
  ctx_.flows.add(stmt.name, std::move(runtime), std::move(control));
  ctx_.flows.syncShards(stmt.name);
}

FlowRuntime* EngineContext::planRestoredFlow(const std::string& name) {
  Catalog::FlowPtr def = catalog.findFlow(name);
  if (!def) return nullptr;
  std::vector<ast::StatementPtr> stmts = parseStatements(def->sql);
  const auto& stmt = static_cast<const ast::CreateFlow&>(*stmts.front());
  EngineSession session;
  for (const auto& [k, v] : flows.control(name).settings) session.settings.set(k, v);
  PhysicalPlan plan = planFlow(stmt, planContext(session));
  {
    // Restored before it could be planned: the definition gets what only the
    // plan knows (its checkpoint interval and options).
    FlowDef planned = *def;
    planned.checkpointIntervalMicros = plan.checkpointIntervalMicros;
    planned.options = plan.flowOptions;
    catalog.dropFlow(name, true, SqlError::npos);
    catalog.addFlow(std::move(planned), false, SqlError::npos);
  }
  catalog.setFlowInputs(stmt.name, flowInputs(plan, stmt.sink));
  auto runtime = flows.makeRuntime(std::move(plan), stmt.name);
  runtime->setStateMigration(storedStateMigration(flows.control(name).settings));
  FlowRuntime* rt = runtime.get();
  flows.setRuntime(name, std::move(runtime));
  flows.syncShards(name);
  return rt;
}

void CatalogStoreReplay::applyChanges(const std::vector<StoredChange>& changes) {
  for (const StoredChange& change : changes) {
    if (!knownKind(change.kind)) {
      throw SqlError(sqlstate::kIoError, fmt::format("unknown kind of catalog entry '{}/{}'",
                                                     change.kind, change.name));
    }
  }
  // The whole write under the statement lock: no statement of this node
  // sees a transaction block of another node's half applied. Its statements
  // run with a session that says so, and take it no more.
  std::unique_lock lock(ctx_.statements.mutex());
  if (changes.size() == 1) return applyChange(changes.front());
  // What the block drops goes first, readers before what they read (the
  // topic holds a block's drops after its creates, in key order); then what
  // it creates or changes, in the order it was written, which creates each
  // object after those it depends on.
  auto dropRank = [](const std::string& kind) {
    for (int i = 0; const char* k : {"flow", "sink", "table", "source", "processor", "function"}) {
      if (kind == k) return i;
      ++i;
    }
    return 6;
  };
  std::vector<const StoredChange*> order;
  for (const StoredChange& c : changes)
    if (c.records.empty()) order.push_back(&c);
  std::stable_sort(order.begin(), order.end(), [&](const StoredChange* a, const StoredChange* b) {
    return dropRank(a->kind) < dropRank(b->kind);
  });
  for (const StoredChange& c : changes)
    if (!c.records.empty()) order.push_back(&c);
  // Each change is applied even when one before it fails here (as a restart
  // goes on past what it cannot restore): the node that wrote the block
  // checked all of it against the catalog the whole cluster has.
  std::string failed;
  for (const StoredChange* c : order) {
    try {
      applyChange(*c);
    } catch (const std::exception& e) {
      const auto* sqlError = dynamic_cast<const SqlError*>(&e);
      failed += fmt::format("{}{}/{}: {}", failed.empty() ? "" : "; ", c->kind, c->name,
                            sqlError ? sqlError->message() : e.what());
    }
  }
  if (!failed.empty()) throw SqlError(sqlstate::kIoError, failed);
}

void CatalogStoreReplay::applyChange(const StoredChange& change) {
  // Not a structured binding: the lambdas below capture these (clang 14,
  // the sanitizer builds' compiler, refuses to capture a binding).
  const std::string& kind = change.kind;
  const std::string& lowerName = change.name;
  if (!knownKind(kind)) {
    throw SqlError(sqlstate::kIoError,
                   fmt::format("unknown kind of catalog entry '{}/{}'", kind, lowerName));
  }
  ReplayWriter discard;
  EngineSession session;
  session.replay = true;
  session.holdsLock = true;
  auto run = [&](const std::string& sql) { replayStatement(session, sql, discard); };
  // The object as this node has it: its declared name and statement.
  std::string name, sql;
  auto have = [&](const auto& def) {
    if (def) {
      name = def->name;
      sql = def->sql;
    }
  };
  if (kind == "function") have(ctx_.catalog.findFunction(lowerName));
  if (kind == "processor") have(ctx_.catalog.findProcessor(lowerName));
  if (kind == "source") have(ctx_.catalog.findSource(lowerName));
  if (kind == "sink") have(ctx_.catalog.findSink(lowerName));
  if (kind == "table") have(ctx_.catalog.findTable(lowerName));
  if (kind == "flow") have(ctx_.catalog.findFlow(lowerName));
  // A record this node could not apply before is replaced by the change.
  std::erase_if(ctx_.unrestored, [&](const CatalogRecord& r) {
    return (r.kind == "insert" ? "table" : r.kind) == kind && toLower(r.name) == lowerName;
  });
  auto dropHere = [&] {
    if (!name.empty()) run(fmt::format("DROP {} IF EXISTS {}", kind, quoteIdentifier(name)));
    name.clear();
  };
  if (change.records.empty()) {
    dropHere();
    return;
  }
  const std::vector<CatalogRecord>& records = change.records;
  const CatalogRecord& main = records.front();
  // The object is made here as its owner's, as on the node that made it.
  // (A change that differs from this node's object in its owner alone comes
  // only from a node of an earlier version, which writes none: it is left
  // as it is here, rather than dropped and made again under flows that use
  // it.)
  session.user = main.owner;
  try {
    if (kind == "flow") {
      // A sharded flow made again with the same statement is another flow:
      // it exchanges its rows through topics of its own (planner/shard_plan.h),
      // and its copies (or a spread flow's partitions) may be on other slots.
      auto setting = [](const std::vector<std::pair<std::string, std::string>>& settings,
                        const char* key) {
        for (const auto& [k, v] : settings) {
          if (k == key) return v;
        }
        return std::string();
      };
      bool samePlacement = true;
      if (!name.empty()) {
        const auto mine = ctx_.flows.control(name).settings;
        for (const char* key : {kExchangeIdSetting, kExchangeLocalSetting, kClusterSlotsSetting})
          samePlacement = samePlacement && setting(mine, key) == setting(main.settings, key);
      }
      if (!name.empty() && sql == main.sql && samePlacement) {
        // The same flow: whether it should run may have changed.
        FlowRuntime* rt = ctx_.flows.findRuntime(name);
        bool wasWanted = false;
        ctx_.flows.updateControl(name, [&](FlowControl& c) {
          c.settings = main.settings;
          wasWanted = c.wantRunning;
        });
        if (wasWanted != main.running) ctx_.flows.setWantRunning(name, main.running);
        // Another node asks this one, if it runs the flow, to replace it.
        if (replaceRequestOf(main.settings)) requests_.wake();
        const bool started = main.running && !wasWanted;
        if (!main.running) {
          if (rt) rt->stop();
          ctx_.flows.stopShards(name);
          return;
        }
        // A sharded flow's copies that run here start again too (a failed
        // one included); the others, on the nodes that run them.
        if (started) ctx_.flows.startShardsHere(name);
        if (rt && !ctx_.flows.runsHere(name, rt)) {
          rt->stop();
          return;
        }
        if (started) {
          // START FLOW on another node: as START FLOW here, a flow that
          // failed is started again too. When it cannot start now, the
          // supervisor retries it.
          try {
            if (!rt) rt = ctx_.planRestoredFlow(name);
            if (!ctx_.flows.runsHere(name, rt)) return;
            rt->stop();
            ctx_.flows.startRuntime(name, *rt);
            ctx_.flows.updateControl(name,
                                     [](FlowControl& c) { c.runningSinceMicros = monotonicMicros(); });
          } catch (const SqlError& e) {
            ctx_.flows.updateControl(name, [&](FlowControl& c) { c.lastError = e.message(); });
          }
        }
        return;
      }
      // ALTER FLOW there: the flow goes on here from its checkpoint.
      if (!name.empty() && samePlacement && alter_.adoptAltered(session, kind, name, main.sql)) {
        ctx_.flows.updateControl(name, [&](FlowControl& c) { c.settings = main.settings; });
        return;
      }
      dropHere();
      restoreFlow(main);
      return;
    }
    if (kind == "table" && !name.empty() && sql == main.sql) {
      // The same table: the INSERTs this node does not have yet.
      const std::vector<std::string> mine = ctx_.tableInserts[toLower(name)];
      const size_t theirs = records.size() - 1;
      bool prefix = mine.size() <= theirs;
      for (size_t i = 0; prefix && i < mine.size(); ++i) prefix = records[i + 1].sql == mine[i];
      if (prefix) {
        for (size_t i = mine.size(); i < theirs; ++i) run(records[i + 1].sql);
        return;
      }
    }
    if (!name.empty() && sql == main.sql) return;
    // ALTER SOURCE / SINK there: replaced in place under the flows that use it.
    if (!name.empty() && (kind == "source" || kind == "sink") && records.size() == 1 &&
        alter_.adoptAltered(session, kind, name, main.sql)) {
      return;
    }
    // Another definition: CREATE OR REPLACE replaces a function or processor
    // in place (flows may call it); anything else is dropped and created.
    if (!name.empty() && (kind == "function" || kind == "processor")) {
      try {
        run(main.sql);
        return;
      } catch (const SqlError&) {
        // Not OR REPLACE: the other node dropped it and created it anew.
      }
    }
    dropHere();
    for (const CatalogRecord& r : records) run(r.sql);
  } catch (const std::exception&) {
    // Kept as it came, as a restart keeps what it cannot restore, so that
    // this node never writes the cluster's catalog without it.
    for (const CatalogRecord& r : records) ctx_.unrestored.push_back(r);
    throw;
  }
}

}  // namespace rtsql
