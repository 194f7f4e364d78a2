// CREATE OR REPLACE FLOW of a flow that exists, and EXPLAIN of it
// (server/flow_replace.h). CREATE OR REPLACE of a flow that does not exist
// is CREATE FLOW's (flow_ddl.cpp).
#include "server/flow_ddl.h"
#include "server/flow_replace.h"

#include <fmt/format.h>

#include <filesystem>

#include "common/clock.h"
#include "executor/checkpoint.h"
#include "planner/processor.h"
#include "planner/shard_plan.h"
#include "planner/user_function.h"
#include "executor/state/view_changelog.h"
#include "executor/state/view_table.h"
#include "server/views/view_reads.h"

namespace rtsql {

std::optional<StateMigration> storedStateMigration(
    const std::vector<std::pair<std::string, std::string>>& settings) {
  for (const auto& [k, v] : settings) {
    if (k == kStateMigrationSetting) return StateMigration::parse(v);
  }
  return std::nullopt;
}

namespace {

// What the statement replaces, in words, and its command tag.
const char* objectWord(const ast::CreateFlow& stmt) {
  return stmt.materializedView ? "materialized view" : "flow";
}

const char* replaceTag(const ast::CreateFlow& stmt) {
  return stmt.materializedView ? "CREATE MATERIALIZED VIEW" : "CREATE FLOW";
}

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

FlowReplace::ReplacePlan FlowReplace::planReplace(EngineSession& s, const ast::CreateFlow& stmt) {
  ctx_.requireOwnerOf(s, ast::ObjectKind::Flow, stmt.name, "replace", stmt.namePos);
  if (!ctx_.catalogOf(s).findFlow(stmt.name)) {
    throw SqlError(sqlstate::kUndefinedObject,
                   fmt::format("{} \"{}\" does not exist", objectWord(stmt), stmt.name),
                   stmt.namePos, "CREATE OR REPLACE creates it: there is no state to plan");
  }
  ReplacePlan r;
  r.rt = ctx_.flows.findRuntime(stmt.name);
  // Planned and checked here all the same; its node carries it out
  // (remote_replace.h).
  r.remote = !ctx_.flows.runsHere(stmt.name, r.rt);
  if (r.remote && (s.blockShadow || !stmt.fromSavepoint.empty())) {
    throw SqlError(sqlstate::kFeatureNotSupported,
                   fmt::format("{} \"{}\" runs on another node of the cluster", objectWord(stmt),
                               stmt.name),
                   stmt.namePos,
                   s.blockShadow ? "a transaction block replaces only flows that run on its node: "
                                   "run this CREATE OR REPLACE on its own, or on the node that "
                                   "runs the flow (SHOW FLOWS names it)"
                                 : "its savepoints are on the node that runs it: run the statement "
                                   "there (SHOW FLOWS names it)");
  }
  if (!r.rt) r.rt = ctx_.planRestoredFlow(stmt.name);
  if (!r.rt) throw InternalError("flow without a plan: " + stmt.name);
  if (r.rt->plan().shards > 1) {
    throw SqlError(sqlstate::kFeatureNotSupported,
                   fmt::format("flow \"{}\" is sharded: its copies cannot be replaced in place",
                               stmt.name),
                   stmt.namePos, "drop the flow and create it again");
  }
  r.plan = planFlow(stmt, ctx_.planContext(s));
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

std::vector<std::string> FlowReplace::explainReplace(EngineSession& s,
                                                     const ast::CreateFlow& stmt) {
  StatementLock::Guard lock = ctx_.guardFor(s);
  lock.lock();
  if (!ctx_.catalogOf(s).findFlow(stmt.name)) {
    // A new flow: its plan, as EXPLAIN CREATE FLOW prints it.
    std::vector<std::string> out{fmt::format("flow \"{}\" does not exist: it is created", stmt.name)};
    const std::string plan = planFlow(stmt, ctx_.planContext(s)).explain();
    size_t start = 0;
    while (start < plan.size()) {
      size_t end = plan.find('\n', start);
      if (end == std::string::npos) end = plan.size();
      out.push_back(plan.substr(start, end - start));
      start = end + 1;
    }
    return out;
  }
  if (!stmt.fromSavepoint.empty()) return explainFromSavepoint(s, stmt);  // replace_from_savepoint.cpp
  return planReplace(s, stmt).state.lines();
}

std::optional<StateMigration> FlowReplace::replaceMigration(const std::string& flow,
                                                            const ReplacePlan& r, bool resetAll,
                                                            const EngineSession& s,
                                                            FlowControl& control) {
  control = ctx_.flows.control(flow);
  const std::optional<StateMigration> pending = storedStateMigration(control.settings);
  control.settings = ctx_.settingsOf(s);
  std::erase_if(control.settings, [](const auto& kv) { return kv.first == kStateMigrationSetting; });
  const std::optional<uint64_t> epoch = newestEpoch(ctx_.flows.flowDir(flow));
  if (!epoch || resetAll) return std::nullopt;
  StateMigration m = r.state.migration();
  m.lastOldEpoch = *epoch;
  // A materialized view's table and changelog have ids of their own, which
  // no plan renumbers: kept, they stay where they are.
  if (r.state.keepsViewTable()) {
    m.operators[kViewTableOperatorId] = kViewTableOperatorId;
    m.operators[kViewChangelogOperatorId] = kViewChangelogOperatorId;
  }
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
    control.settings.emplace_back(kStateMigrationSetting, m.format());
    return m;
  }
  return std::nullopt;
}

void FlowReplace::installReplaced(const std::string& flow, FlowDef def, ReplacePlan r,
                                  const std::optional<StateMigration>& migration, bool resetAll,
                                  const FlowControl& control, bool start, ResultWriter& out) {
  std::vector<std::string> inputs = ctx_.flowInputs(r.plan, def.sink);
  ctx_.catalog.dropFlow(flow, false, SqlError::npos);
  ctx_.catalog.addFlow(std::move(def), false, SqlError::npos);
  ctx_.catalog.setFlowInputs(flow, std::move(inputs));
  auto runtime = ctx_.flows.makeRuntime(std::move(r.plan), flow);
  runtime->setStateMigration(migration);
  if (resetAll) runtime->resetState();
  FlowRuntime* rt = runtime.get();
  ctx_.flows.setRuntime(flow, std::move(runtime));
  ctx_.flows.updateControl(flow, [&](FlowControl& c) {
    c.settings = control.settings;
    c.runningSinceMicros = monotonicMicros();
  });
  if (start) {
    // A start that fails leaves the new plan in the catalog and in the
    // supervisor's hands, as a failed restart would.
    ctx_.flows.startRuntime(flow, *rt);
  }
  for (const auto& o : r.state.operators) {
    if (o.fate == StateFate::Kept && !o.reasons.empty()) {
      for (const auto& note : o.reasons) out.notice(fmt::format("operator {}: {}", o.newId, note));
    }
  }
}

void FlowReplace::requireCompatible(const ast::CreateFlow& stmt, const StatePlan& state) {
  if (!state.compatible()) {
    const bool viewTable = state.viewTable && state.viewTable->fate == StateFate::Incompatible;
    throw SqlError(sqlstate::kObjectNotInPrerequisiteState,
                   fmt::format("{} \"{}\" cannot keep its state under the new query: {}",
                               objectWord(stmt), stmt.name, state.reasonsText()),
                   stmt.namePos,
                   viewTable ? "EXPLAIN CREATE OR REPLACE MATERIALIZED VIEW prints the state plan; "
                               "add RESET STATE to rebuild the view from the sources' "
                               "startingOffsets"
                             : fmt::format("EXPLAIN CREATE OR REPLACE {} prints the state plan; add "
                                           "RESET STATE to start all state empty, or RESET STATE "
                                           "(ids) for the operators named",
                                           stmt.materializedView ? "MATERIALIZED VIEW" : "FLOW"));
  }
  // A view rebuilt from empty: its readers' places in its changelog would
  // point into changes that are gone.
  if (state.viewTable && !state.keepsViewTable())
    ctx_.catalog.requireNoReaders(stmt.name, stmt.namePos, "rebuild from empty");
}

void FlowReplace::replaceFlow(EngineSession& s, const ast::CreateFlow& stmt, ResultWriter& out,
                              StatementLock::Guard* lock) {
  if (!stmt.fromSavepoint.empty()) return replaceFromSavepoint(s, stmt, out);  // replace_from_savepoint.cpp
  if (s.blockShadow && !ctx_.catalog.findFlow(stmt.name)) {
    // A flow this transaction block created: it has no state yet, and its
    // new definition is what COMMIT creates.
    PhysicalPlan plan = planFlow(stmt, ctx_.planContext(s));
    Catalog::FlowPtr old = s.shadow->findFlow(stmt.name);
    FlowDef def = FlowDdl::flowDefinition(stmt, plan, *s.shadow, old->owner);
    def.name = old->name;
    s.shadow->dropFlow(stmt.name, false, stmt.namePos);
    s.shadow->addFlow(std::move(def), false, stmt.namePos);
    out.complete(replaceTag(stmt));
    return;
  }
  ReplacePlan r = planReplace(s, stmt);
  if (r.state.unchanged) {
    out.notice(fmt::format("{} \"{}\" runs this plan already: nothing changes", objectWord(stmt),
                           stmt.name));
    out.complete(replaceTag(stmt));
    return;
  }
  requireCompatible(stmt, r.state);
  if (s.shadow) {
    // A dry run plans and checks; the flow runs on as it was. A transaction
    // block's copy of the catalog takes the new definition, which COMMIT
    // plans again and carries the state over to (block_statements.cpp).
    if (s.blockShadow) {
      Catalog::FlowPtr old = s.shadow->findFlow(stmt.name);
      FlowDef def = FlowDdl::flowDefinition(stmt, r.plan, *s.shadow, old->owner);
      def.name = old->name;
      s.shadow->dropFlow(stmt.name, false, stmt.namePos);
      s.shadow->addFlow(std::move(def), false, stmt.namePos);
    }
    out.complete(replaceTag(stmt));
    return;
  }
  if (r.remote) {
    if (!lock) throw InternalError("a replace of another node's flow without its statement lock");
    return requestRemoteReplace(s, stmt, out, *lock);  // remote_replace.cpp
  }
  ctx_.flows.requireNotStopping(stmt.name, stmt.namePos, "CREATE OR REPLACE FLOW");
  Catalog::FlowPtr old = ctx_.catalog.findFlow(stmt.name);
  FlowDef def = FlowDdl::flowDefinition(stmt, r.plan, ctx_.catalog, old->owner);
  def.name = old->name;
  Catalog next(ctx_.catalog);
  next.dropFlow(stmt.name, false, stmt.namePos);
  next.addFlow(def, false, stmt.namePos);

  // The epoch boundary: the running plan ends its epoch and checkpoints it.
  const bool wasRunning = r.rt->state() == FlowState::Running;
  {
    FlowRegistry::Stopping stopping(ctx_.flows, stmt.name);
    r.rt->stop();
  }
  const bool resetAll = stmt.resetState && stmt.resetOperators.empty();
  FlowControl control;
  std::optional<StateMigration> migration = replaceMigration(stmt.name, r, resetAll, s, control);
  try {
    CatalogChange change;
    change.catalog = &next;
    change.flow = toLower(stmt.name);
    change.control = &control;
    ctx_.persistCatalog(change);
  } catch (...) {
    // The catalog still holds the running plan: it goes on as it was.
    if (wasRunning) ctx_.flows.startRuntime(stmt.name, *r.rt);
    throw;
  }
  const std::string name = def.name;
  const bool viewRebuilt = r.state.viewTable && !r.state.keepsViewTable();
  installReplaced(name, std::move(def), std::move(r), migration, resetAll, control,
                  wasRunning || control.wantRunning, out);
  // Reads of a rebuilt view no longer see the old rows' snapshot.
  if (viewRebuilt) ctx_.views->forget(name);
  out.complete(replaceTag(stmt));
}

}  // namespace rtsql
