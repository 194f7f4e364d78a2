// CREATE FLOW, STOP FLOW and START FLOW: a flow's definition into the catalog
// and its runtime into the flow registry (server/flows/flow_registry.h),
// started where its placement says it runs. DROP FLOW is DROP's (ddl.cpp).
#include <fmt/format.h>

#include <filesystem>
#include <random>

#include "common/clock.h"
#include "planner/processor.h"
#include "planner/shard_plan.h"
#include "planner/user_function.h"
#include "server/flow_ddl.h"
#include "server/flow_replace.h"
#include "server/views/view_reads.h"

namespace rtsql {

namespace {

void requireFlow(const Catalog& catalog, const ast::FlowCommand& stmt) {
  if (!catalog.findFlow(stmt.name)) {
    throw SqlError(sqlstate::kUndefinedObject, fmt::format("flow \"{}\" does not exist", stmt.name),
                   stmt.namePos);
  }
}

}  // namespace

FlowDef FlowDdl::flowDefinition(const ast::CreateFlow& stmt, const PhysicalPlan& plan,
                                const Catalog& catalog, const std::string& owner) {
  FlowDef def;
  def.name = stmt.name;
  def.sink = stmt.sink;
  def.checkpointIntervalMicros = plan.checkpointIntervalMicros;
  def.options = plan.flowOptions;
  def.sql = stmt.text;
  def.queryText = stmt.queryText;
  def.functions = userFunctionsCalled(*stmt.query, catalog);
  def.processors = processorsUsed(*stmt.query);
  def.owner = owner;
  def.materializedView = stmt.materializedView;
  return def;
}

void FlowDdl::requireViewName(const EngineSession& s, const ast::CreateFlow& stmt) const {
  // SELECT ... FROM v finds the view by its name among the relations.
  const Catalog& catalog = ctx_.catalogOf(s);
  if (catalog.findSource(stmt.name) || catalog.findTable(stmt.name) ||
      catalog.findSink(stmt.name)) {
    throw SqlError(sqlstate::kDuplicateObject,
                   fmt::format("relation \"{}\" already exists", stmt.name), stmt.namePos)
        .withHint("a materialized view is read by its name: give it another one");
  }
  if (ctx_.options.dataDir.empty()) {
    throw SqlError(sqlstate::kFeatureNotSupported,
                   "a materialized view keeps its rows in the data directory, and this server "
                   "has none",
                   stmt.namePos, "start rtsqld with --data-dir");
  }
  if (Catalog::FlowPtr f = catalog.findFlow(stmt.name); f && !f->materializedView) {
    throw SqlError(sqlstate::kDuplicateObject,
                   fmt::format("flow \"{}\" already exists", stmt.name), stmt.namePos)
        .withHint("a materialized view is a flow too: give it another name");
  }
}

void FlowDdl::createFlow(EngineSession& s, const ast::CreateFlow& stmt, ResultWriter& out) {
  StatementLock::Guard lock = ctx_.guardFor(s);
  lock.lock();
  // CREATE OR REPLACE of a flow that exists (flow_replace.cpp); of one that
  // does not, a CREATE.
  if (stmt.orReplace) {
    if (Catalog::FlowPtr f = ctx_.catalogOf(s).findFlow(stmt.name)) {
      if (f->materializedView != stmt.materializedView) {
        throw SqlError(sqlstate::kWrongObjectType,
                       fmt::format("\"{}\" is a {}", f->name,
                                   f->materializedView ? "materialized view"
                                                       : "flow, not a materialized view"),
                       stmt.namePos,
                       f->materializedView ? "CREATE OR REPLACE MATERIALIZED VIEW replaces it"
                                           : "CREATE OR REPLACE FLOW replaces it");
      }
      return replace_.replaceFlow(s, stmt, out, &lock);
    }
  }
  if (!stmt.fromSavepoint.empty()) {
    throw SqlError(sqlstate::kUndefinedObject,
                   fmt::format("flow \"{}\" does not exist, so it has no savepoint", stmt.name),
                   stmt.namePos, "FROM SAVEPOINT rolls back a flow that runs: CREATE FLOW without it");
  }
  if (!s.shadow) ctx_.flows.requireNotStopping(stmt.name, stmt.namePos, "CREATE FLOW");
  const char* tag = stmt.materializedView ? "CREATE MATERIALIZED VIEW" : "CREATE FLOW";
  if (ctx_.catalogOf(s).findFlow(stmt.name) && stmt.ifNotExists) {
    out.notice(fmt::format("{} \"{}\" already exists, skipping",
                           stmt.materializedView ? "materialized view" : "flow", stmt.name));
    out.complete(tag);
    return;
  }
  if (stmt.materializedView) requireViewName(s, stmt);
  if (splitShardFlowName(stmt.name)) {
    throw SqlError(sqlstate::kReservedName,
                   fmt::format("flow name \"{}\" ends in '#' and a number, which names a copy of "
                               "a sharded flow",
                               stmt.name),
                   stmt.namePos)
        .withHint("choose another name");
  }
  PhysicalPlan plan = planFlow(stmt, ctx_.planContext(s));
  for (int shard = 1; shard < plan.shards; ++shard) {
    // A flow of an earlier version may bear a copy's name.
    const std::string copy = shardFlowName(stmt.name, shard);
    if (ctx_.catalogOf(s).findFlow(copy)) {
      throw SqlError(sqlstate::kDuplicateObject,
                     fmt::format("flow \"{}\" exists, and would be copy {} of this flow", copy,
                                 shard),
                     stmt.namePos)
          .withHint("drop it, or give this flow another name");
    }
  }
  ctx_.flows.placement().checkShards(plan, stmt.namePos);
  if (s.shadow) {
    // Planned and checked against the free slots; nothing starts.
    if (plan.slots() > ctx_.slots.total() - ctx_.slots.used()) {
      throw SqlError(sqlstate::kInsufficientResources,
                     fmt::format("flow \"{}\" needs {} task slots but only {} of {} are free",
                                 stmt.name, plan.slots(), ctx_.slots.total() - ctx_.slots.used(),
                                 ctx_.slots.total()),
                     stmt.namePos);
    }
    s.shadow->addFlow(flowDefinition(stmt, plan, *s.shadow, s.user), false, stmt.namePos);
    out.complete(tag);
    return;
  }
  FlowDef def = flowDefinition(stmt, plan, ctx_.catalog, s.user);
  std::vector<std::string> inputs = ctx_.flowInputs(plan, stmt.sink);
  // The name must be free before anything starts.
  Catalog next(ctx_.catalog);
  next.addFlow(def, false, stmt.namePos);
  FlowControl control;
  control.settings = ctx_.settingsOf(s);
  if (plan.shards > 1) {
    // A sharded flow's exchange topics are this flow's own (planner/shard_plan.h).
    std::random_device rd;
    plan.exchangeId = fmt::format(
        "{:08x}", (static_cast<uint64_t>(rd()) << 16) ^ rd() ^ static_cast<uint64_t>(nowMicros()));
    // Each copy's own rows stay in process (a flow made before this was
    // recorded keeps sending them through the topic).
    plan.exchangeLocal = true;
    std::erase_if(control.settings, [](const auto& kv) {
      return kv.first == kExchangeIdSetting || kv.first == kExchangeLocalSetting;
    });
    control.settings.emplace_back(kExchangeIdSetting, plan.exchangeId);
    control.settings.emplace_back(kExchangeLocalSetting, "1");
  }
  // In a cluster, the slots of a sharded flow's copies, or of a spread
  // flow's partitions, chosen now and recorded with the flow.
  std::erase_if(control.settings, [](const auto& kv) { return kv.first == kClusterSlotsSetting; });
  plan.clusterSlots = ctx_.flows.placement().chooseSlots(stmt.name, plan);
  if (!plan.clusterSlots.empty())
    control.settings.emplace_back(kClusterSlotsSetting, formatClusterSlots(plan.clusterSlots));

  // A new flow starts with empty state and no checkpoints: whatever a dropped
  // flow of the same name left behind is removed (in a cluster, its state
  // copy is marked empty too, before any node may start the new flow).
  // A sharded flow's copies too (planner/shard_plan.h). A copy left for
  // deletion by the slot's next holder (DROP FLOW while no node ran the
  // flow) is the new flow's now.
  ctx_.flows.keepStateCopy(stmt.name);
  std::error_code ec;
  for (int shard = 0; shard < plan.shards; ++shard) {
    const std::string name = shardFlowName(stmt.name, shard);
    if (auto copy = ctx_.flows.stateCopyFor(name); copy && plan.keepsState()) copy->clear();
    std::filesystem::remove_all(ctx_.flows.flowDir(name), ec);
  }
  auto runtime = ctx_.flows.makeRuntime(std::move(plan), stmt.name);
  try {
    // In a cluster, the node that holds the flow's slot starts it when it
    // reads the new flow (this one, when it holds it).
    if (ctx_.flows.runsHere(stmt.name, runtime.get())) ctx_.flows.startRuntime(stmt.name, *runtime);
  } catch (SqlError& e) {
    // Nothing half-starts: the flow is forgotten when it cannot run. A broker
    // without real transactions refuses exactly-once: point at that option.
    if (e.position() == SqlError::npos && e.sqlstate() == sqlstate::kFeatureNotSupported) {
      for (const auto& o : stmt.options) {
        if (iequals(o.key, "delivery")) e.setPosition(o.valuePos);
      }
    }
    throw;
  }
  // The catalog file records the flow before the server shows it; a flow the
  // file cannot record is stopped and forgotten.
  try {
    CatalogChange change;
    change.catalog = &next;
    change.flow = toLower(stmt.name);
    change.control = &control;
    ctx_.persistCatalog(change);
  } catch (...) {
    runtime.reset();  // stops it and closes its state store before its files go
    std::filesystem::remove_all(ctx_.flows.flowDir(stmt.name), ec);
    throw;
  }
  ctx_.catalog.addFlow(std::move(def), false, stmt.namePos);
  ctx_.catalog.setFlowInputs(stmt.name, std::move(inputs));
  control.runningSinceMicros = monotonicMicros();
  ctx_.flows.add(stmt.name, std::move(runtime), std::move(control));
  // A sharded flow's other copies: each started by the node that holds its
  // slot (the supervisor, within its round).
  ctx_.flows.syncShards(stmt.name);
  if (stmt.materializedView) ctx_.views->forget(stmt.name);  // a dropped view's snapshot of that name
  out.complete(tag);
}

void FlowDdl::stopFlow(EngineSession& s, const ast::FlowCommand& stmt, ResultWriter& out) {
  if (s.shadow) {
    // A dry run checks the flow is there and whose it is, in its own catalog.
    ctx_.requireOwnerOf(s, ast::ObjectKind::Flow, stmt.name, "stop", stmt.namePos);
    requireFlow(*s.shadow, stmt);
    out.complete("STOP FLOW");
    return;
  }
  StatementLock::Guard lock = ctx_.guardFor(s);
  lock.lock();
  // Under the lock: the catalog's flows change with other statements.
  ctx_.requireOwnerOf(s, ast::ObjectKind::Flow, stmt.name, "stop", stmt.namePos);
  FlowRuntime* rt = ctx_.flows.findRuntime(stmt.name);
  requireFlow(ctx_.catalog, stmt);
  ctx_.flows.requireNotStopping(stmt.name, stmt.namePos, "STOP FLOW");
  // A flow another node of the cluster runs is stopped there, when that node
  // reads the change.
  if (ctx_.flows.runsHere(stmt.name, rt) && (!rt || rt->state() == FlowState::Stopped)) {
    out.notice(fmt::format("flow \"{}\" is already stopped", stmt.name));
  }
  // Recorded first: a flow the file still says runs would start again at the
  // next restart.
  ctx_.persistWantRunning(stmt.name, false);
  ctx_.flows.setWantRunning(stmt.name, false);
  ctx_.flows.stopShards(stmt.name);
  if (rt) {
    // Waited for without the DDL lock: a task may take long to stop (a
    // Python call is interrupted only after a grace, one in C code that never
    // returns not at all), and other statements go on meanwhile. The flow
    // stays in stoppingFlows_, so no statement drops its runtime or starts
    // it again until the stop is over.
    FlowRegistry::Stopping stopping(ctx_.flows, stmt.name);
    lock.unlock();
    rt->stop();
  }
  out.complete("STOP FLOW");
}

void FlowDdl::startFlow(EngineSession& s, const ast::FlowCommand& stmt, ResultWriter& out) {
  if (s.shadow) {
    // A dry run checks the flow is there and whose it is, in its own catalog.
    ctx_.requireOwnerOf(s, ast::ObjectKind::Flow, stmt.name, "start", stmt.namePos);
    requireFlow(*s.shadow, stmt);
    out.complete("START FLOW");
    return;
  }
  StatementLock::Guard lock = ctx_.guardFor(s);
  lock.lock();
  // Under the lock: the catalog's flows change with other statements.
  ctx_.requireOwnerOf(s, ast::ObjectKind::Flow, stmt.name, "start", stmt.namePos);
  FlowRuntime* rt = ctx_.flows.findRuntime(stmt.name);
  requireFlow(ctx_.catalog, stmt);
  ctx_.flows.requireNotStopping(stmt.name, stmt.namePos, "START FLOW");
  if (!ctx_.flows.runsHere(stmt.name, rt)) {
    // Another node of the cluster runs it: the catalog says so, and that node
    // starts it when it reads the change.
    if (stmt.resetState) {
      throw SqlError(sqlstate::kFeatureNotSupported,
                     fmt::format("flow \"{}\" runs on another node of the cluster", stmt.name),
                     stmt.namePos, "run START FLOW ... RESET STATE on the node that runs it (SHOW FLOWS names it)");
    }
    ctx_.persistWantRunning(stmt.name, true);
    ctx_.flows.setWantRunning(stmt.name, true);
    ctx_.flows.startShardsHere(stmt.name);  // a sharded flow's copies that run here
    out.complete("START FLOW");
    return;
  }
  // A START that fails changes nothing: a stopped flow stays stopped, and one
  // the supervisor is bringing back stays in its hands.
  if (!rt) rt = ctx_.planRestoredFlow(stmt.name);
  // RESET STATE: the flow starts again as a new one would, with empty state
  // and every source at its startingOffsets.
  if (stmt.resetState && rt->plan().shards > 1) {
    throw SqlError(sqlstate::kFeatureNotSupported,
                   fmt::format("flow \"{}\" is sharded, and its copies' exchange topics hold the "
                               "rows they exchanged before: a reset would take them in again",
                               stmt.name),
                   stmt.namePos, "drop the flow and create it again to start it from empty state");
  }
  if (stmt.resetState) rt->resetState();
  const bool wasRunning = rt->state() == FlowState::Running;
  if (!wasRunning) {
    rt->stop();  // a failed run leaves threads and slots to collect
    ctx_.flows.startRuntime(stmt.name, *rt);
  }
  try {
    ctx_.persistWantRunning(stmt.name, true);
  } catch (...) {
    // The file still says what it said: the flow runs only if it ran before.
    if (!wasRunning) rt->stop();
    throw;
  }
  if (wasRunning) out.notice(fmt::format("flow \"{}\" is already running", stmt.name));
  ctx_.flows.setWantRunning(stmt.name, true);
  ctx_.flows.startShardsHere(stmt.name);
  ctx_.flows.updateControl(stmt.name, [](FlowControl& c) { c.runningSinceMicros = monotonicMicros(); });
  out.complete("START FLOW");
}

}  // namespace rtsql
