// CREATE OR REPLACE FLOW of a flow that exists, and EXPLAIN of it
// (server/flow_replace.h). CREATE OR REPLACE of a flow that does not exist
// is CREATE FLOW's (flow_ddl.cpp).
#include "server/flow_replace.h"

#include <fmt/format.h>

#include <filesystem>

#include "common/clock.h"
#include "executor/checkpoint.h"
#include "planner/processor.h"
#include "planner/shard_plan.h"
#include "planner/user_function.h"
#include "server/engine.h"

namespace rtsql {

std::optional<StateMigration> storedStateMigration(
    const std::vector<std::pair<std::string, std::string>>& settings) {
  for (const auto& [k, v] : settings) {
    if (k == kStateMigrationSetting) return StateMigration::parse(v);
  }
  return std::nullopt;
}

namespace {

// The newest checkpoint epoch in a flow's directory, if any.
std::optional<uint64_t> newestEpoch(const std::string& flowDir) {
  CheckpointDir dir((std::filesystem::path(flowDir) / "checkpoints").string(), 1);
  std::error_code ec;
  if (!std::filesystem::is_directory(dir.root(), ec)) return std::nullopt;
  std::vector<uint64_t> epochs = dir.epochs();
  if (epochs.empty()) return std::nullopt;
  return epochs.back();
}

// `later` after `earlier`: what a checkpoint of earlier's old layout becomes.
StateMigration compose(const StateMigration& earlier, const StateMigration& later) {
  StateMigration m;
  m.lastOldEpoch = earlier.lastOldEpoch;
  auto chain = [](const std::map<int, int>& a, const std::map<int, int>& b, std::map<int, int>& out) {
    for (const auto& [from, via] : a) {
      auto it = b.find(via);
      if (it != b.end()) out[from] = it->second;
    }
  };
  chain(earlier.operators, later.operators, m.operators);
  chain(earlier.scans, later.scans, m.scans);
  chain(earlier.stages, later.stages, m.stages);
  return m;
}

}  // namespace

Engine::ReplacePlan Engine::planReplace(EngineSession& s, const ast::CreateFlow& stmt) {
  requireOwnerOf(s, ast::ObjectKind::Flow, stmt.name, "replace", stmt.namePos);
  if (!catalogOf(s).findFlow(stmt.name)) {
    throw SqlError(sqlstate::kUndefinedObject, fmt::format("flow \"{}\" does not exist", stmt.name),
                   stmt.namePos, "CREATE OR REPLACE FLOW creates it: there is no state to plan");
  }
  ReplacePlan r;
  r.rt = flows_.findRuntime(stmt.name);
  if (!flows_.runsHere(stmt.name, r.rt)) {
    throw SqlError(sqlstate::kFeatureNotSupported,
                   fmt::format("flow \"{}\" runs on another node of the cluster", stmt.name),
                   stmt.namePos, "run CREATE OR REPLACE FLOW on the node that runs it (SHOW FLOWS names it)");
  }
  if (!r.rt) r.rt = planRestoredFlow(stmt.name);
  if (!r.rt) throw InternalError("flow without a plan: " + stmt.name);
  if (r.rt->plan().shards > 1) {
    throw SqlError(sqlstate::kFeatureNotSupported,
                   fmt::format("flow \"{}\" is sharded: its copies cannot be replaced in place",
                               stmt.name),
                   stmt.namePos, "drop the flow and create it again");
  }
  r.plan = planFlow(stmt, planContext(s));
  if (r.plan.shards > 1) {
    throw SqlError(sqlstate::kFeatureNotSupported,
                   fmt::format("flow \"{}\" would be sharded: a flow becomes sharded only when "
                               "it is created",
                               stmt.name),
                   stmt.namePos, "drop the flow and create it again");
  }
  r.state = planStateChange(r.rt->plan(), r.plan);
  if (stmt.resetState) {
    r.state.unchanged = false;
    r.state.reset(stmt.resetOperators, stmt.resetPos);
  }
  return r;
}

std::vector<std::string> Engine::explainReplace(EngineSession& s, const ast::CreateFlow& stmt) {
  StatementLock::Guard lock = guardFor(s);
  lock.lock();
  if (!catalogOf(s).findFlow(stmt.name)) {
    // A new flow: its plan, as EXPLAIN CREATE FLOW prints it.
    std::vector<std::string> out{fmt::format("flow \"{}\" does not exist: it is created", stmt.name)};
    const std::string plan = planFlow(stmt, planContext(s)).explain();
    size_t start = 0;
    while (start < plan.size()) {
      size_t end = plan.find('\n', start);
      if (end == std::string::npos) end = plan.size();
      out.push_back(plan.substr(start, end - start));
      start = end + 1;
    }
    return out;
  }
  return planReplace(s, stmt).state.lines();
}

void Engine::replaceFlow(EngineSession& s, const ast::CreateFlow& stmt, ResultWriter& out) {
  ReplacePlan r = planReplace(s, stmt);
  if (r.state.unchanged) {
    out.notice(fmt::format("flow \"{}\" runs this plan already: nothing changes", stmt.name));
    out.complete("CREATE FLOW");
    return;
  }
  if (!r.state.compatible()) {
    throw SqlError(sqlstate::kObjectNotInPrerequisiteState,
                   fmt::format("flow \"{}\" cannot keep its state under the new query: {}",
                               stmt.name, r.state.reasonsText()),
                   stmt.namePos,
                   "EXPLAIN CREATE OR REPLACE FLOW prints the state plan; add RESET STATE to start "
                   "all state empty, or RESET STATE (ids) for the operators named");
  }
  if (s.shadow) {
    // A dry run plans and checks; the flow runs on as it was.
    out.complete("CREATE FLOW");
    return;
  }
  flows_.requireNotStopping(stmt.name, stmt.namePos, "CREATE OR REPLACE FLOW");
  Catalog::FlowPtr old = catalog_.findFlow(stmt.name);
  FlowDef def;
  def.name = old->name;
  def.sink = stmt.sink;
  def.checkpointIntervalMicros = r.plan.checkpointIntervalMicros;
  def.options = r.plan.flowOptions;
  def.sql = stmt.text;
  def.queryText = stmt.queryText;
  def.functions = userFunctionsCalled(*stmt.query, catalog_);
  def.processors = processorsUsed(*stmt.query);
  def.owner = old->owner;
  std::vector<std::string> inputs = flowInputs(r.plan, stmt.sink);
  Catalog next(catalog_);
  next.dropFlow(stmt.name, false, stmt.namePos);
  next.addFlow(def, false, stmt.namePos);

  // The epoch boundary: the running plan ends its epoch and checkpoints it.
  const bool wasRunning = r.rt->state() == FlowState::Running;
  {
    FlowRegistry::Stopping stopping(flows_, stmt.name);
    r.rt->stop();
  }
  FlowControl control = flows_.control(stmt.name);
  const std::optional<StateMigration> pending = storedStateMigration(control.settings);
  control.settings = settingsOf(s);
  std::erase_if(control.settings, [](const auto& kv) { return kv.first == kStateMigrationSetting; });
  const bool resetAll = stmt.resetState && stmt.resetOperators.empty();
  const std::optional<uint64_t> epoch = newestEpoch(flows_.flowDir(stmt.name));
  std::optional<StateMigration> migration;
  if (epoch && !resetAll) {
    StateMigration m = r.state.migration();
    m.lastOldEpoch = *epoch;
    // A replace before the last one's first checkpoint: the newest
    // checkpoint is still in the layout before that.
    if (pending && *epoch <= pending->lastOldEpoch) m = compose(*pending, m);
    std::vector<int> oldIds;
    for (const auto& o : r.state.operators)
      if (o.oldId >= 0) oldIds.push_back(o.oldId);
    const PhysicalPlan& was = r.rt->plan();
    if ((pending && *epoch <= pending->lastOldEpoch) ||
        !m.identity(oldIds, static_cast<int>(was.scans.size()), static_cast<int>(was.stages.size())) ||
        was.scans.size() != r.plan.scans.size()) {
      migration = m;
      control.settings.emplace_back(kStateMigrationSetting, m.format());
    }
  }
  try {
    CatalogChange change;
    change.catalog = &next;
    change.flow = toLower(stmt.name);
    change.control = &control;
    persistCatalog(change);
  } catch (...) {
    // The catalog still holds the running plan: it goes on as it was.
    if (wasRunning) flows_.startRuntime(stmt.name, *r.rt);
    throw;
  }
  catalog_.dropFlow(stmt.name, false, stmt.namePos);
  catalog_.addFlow(std::move(def), false, stmt.namePos);
  catalog_.setFlowInputs(stmt.name, std::move(inputs));
  auto runtime = flows_.makeRuntime(std::move(r.plan), stmt.name);
  runtime->setStateMigration(migration);
  if (resetAll) runtime->resetState();
  FlowRuntime* rt = runtime.get();
  flows_.setRuntime(stmt.name, std::move(runtime));
  flows_.updateControl(stmt.name, [&](FlowControl& c) {
    c.settings = control.settings;
    c.runningSinceMicros = monotonicMicros();
  });
  if (wasRunning || control.wantRunning) {
    // A start that fails leaves the new plan in the catalog and in the
    // supervisor's hands, as a failed restart would.
    flows_.startRuntime(stmt.name, *rt);
  }
  for (const auto& o : r.state.operators) {
    if (o.fate == StateFate::Kept && !o.reasons.empty()) {
      for (const auto& note : o.reasons) out.notice(fmt::format("operator {}: {}", o.newId, note));
    }
  }
  out.complete("CREATE FLOW");
}

}  // namespace rtsql
