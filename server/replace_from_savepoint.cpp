// CREATE OR REPLACE FLOW ... FROM SAVEPOINT: a replace whose state is a
// savepoint's (server/savepoint_files.h) rather than the running plan's.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "executor/checkpoint.h"
#include "server/flow_ddl.h"
#include "server/flow_replace.h"
#include "server/savepoint_files.h"

namespace rtsql {

namespace fs = std::filesystem;

// CREATE OR REPLACE FLOW f ... FROM SAVEPOINT s AS <query>: a deployment
// rolled back in one step. The new query must plan to the plan the savepoint
// was taken of; the running plan ends its epoch, the catalog records the new
// definition, the savepoint becomes the newest checkpoint and the flow goes
// on from its state and offsets. Until then the new plan must not read the
// running plan's checkpoints, whose layout is another: the recorded
// migration drops all of their state and offsets, so a crash between the
// catalog write and the savepoint's install comes back with the new plan
// and empty state rather than with state it would misread.
namespace {

std::vector<std::string> linesOf(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

// The lines only in `a` ("- ") and only in `b` ("+ "), in order: a diff
// over their longest common subsequence (plans are a few dozen lines).
std::vector<std::string> planDiff(const std::vector<std::string>& a,
                                  const std::vector<std::string>& b) {
  const size_t n = a.size(), m = b.size();
  std::vector<std::vector<size_t>> common(n + 1, std::vector<size_t>(m + 1, 0));
  for (size_t i = n; i-- > 0;) {
    for (size_t j = m; j-- > 0;) {
      common[i][j] = a[i] == b[j] ? common[i + 1][j + 1] + 1
                                  : std::max(common[i + 1][j], common[i][j + 1]);
    }
  }
  std::vector<std::string> out;
  size_t i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] == b[j]) {
      ++i;
      ++j;
    } else if (i < n && (j == m || common[i + 1][j] >= common[i][j + 1])) {
      out.push_back("- " + a[i++]);
    } else {
      out.push_back("+ " + b[j++]);
    }
  }
  return out;
}

// The savepoint of `flow` that `stmt` names: 42704 when it has none.
std::optional<Savepoint> namedSavepoint(const std::string& flowDir, const std::string& flow,
                                        const ast::CreateFlow& stmt) {
  const fs::path dir = fs::path(flowDir) / "savepoints" / stmt.fromSavepoint;
  std::error_code ec;
  std::optional<Savepoint> sp =
      fs::is_directory(dir, ec) ? readSavepoint(dir.string(), flow) : std::nullopt;
  if (!sp) {
    throw SqlError(sqlstate::kUndefinedObject,
                   fmt::format("savepoint \"{}\" of flow \"{}\" does not exist", stmt.fromSavepoint,
                               flow),
                   stmt.fromSavepointPos, "SHOW SAVEPOINTS lists them");
  }
  return sp;
}

}  // namespace

std::vector<std::string> FlowReplace::explainFromSavepoint(EngineSession& s,
                                                           const ast::CreateFlow& stmt) {
  validateSavepointName(stmt.fromSavepoint, stmt.fromSavepointPos);
  ReplacePlan r = planReplace(s, stmt);
  const std::string flow = ctx_.catalogOf(s).findFlow(stmt.name)->name;
  const std::optional<Savepoint> sp = namedSavepoint(ctx_.flows.flowDir(flow), flow, stmt);
  // The state restored is the savepoint's, so the plan that matters is the
  // one it was taken of, not the running one.
  std::vector<std::string> out;
  const std::string next = r.plan.explain();
  if (sp->plan == next) {
    out.push_back(fmt::format("savepoint \"{}\" was taken of this plan: the flow goes on from its "
                              "state and offsets; the running plan's state is dropped",
                              sp->name));
    out.push_back("the change can be applied");
    return out;
  }
  out.push_back(
      fmt::format("savepoint \"{}\" was taken of another plan: the change is refused", sp->name));
  out.push_back("the new plan differs from the savepoint's (- the savepoint's, + the new):");
  for (std::string& line : planDiff(linesOf(sp->plan), linesOf(next))) out.push_back(line);
  return out;
}

void FlowReplace::replaceFromSavepoint(EngineSession& s, const ast::CreateFlow& stmt,
                                       ResultWriter& out) {
  validateSavepointName(stmt.fromSavepoint, stmt.fromSavepointPos);
  ReplacePlan r = planReplace(s, stmt);  // who may, where it runs, the new plan
  const std::string flow = ctx_.catalogOf(s).findFlow(stmt.name)->name;
  if (r.plan.exactlyOnce || r.rt->plan().exactlyOnce) {
    throw SqlError(sqlstate::kFeatureNotSupported,
                   fmt::format("flow \"{}\" writes exactly once: savepoints are not supported "
                               "for it",
                               flow),
                   stmt.namePos);
  }
  const std::optional<Savepoint> sp = namedSavepoint(ctx_.flows.flowDir(flow), flow, stmt);
  if (sp->plan != r.plan.explain()) {
    throw SqlError(sqlstate::kObjectNotInPrerequisiteState,
                   fmt::format("savepoint \"{}\" was taken of another plan of flow \"{}\"",
                               stmt.fromSavepoint, flow),
                   stmt.fromSavepointPos,
                   "give the query (and options) the flow ran when the savepoint was taken: its "
                   "state restores only into that plan")
        .withDetail("the savepoint's plan:\n" + sp->plan);
  }
  if (s.shadow) {
    // A dry run checks; a transaction block refuses it before (block_statements.cpp).
    out.complete("CREATE FLOW");
    return;
  }
  ctx_.flows.requireNotStopping(flow, stmt.namePos, "CREATE OR REPLACE FLOW");
  Catalog::FlowPtr old = ctx_.catalog.findFlow(flow);
  FlowDef def = FlowDdl::flowDefinition(stmt, r.plan, ctx_.catalog, old->owner);
  def.name = old->name;
  Catalog next(ctx_.catalog);
  next.dropFlow(flow, false, stmt.namePos);
  next.addFlow(def, false, stmt.namePos);

  const bool wasRunning = r.rt->state() == FlowState::Running;
  {
    FlowRegistry::Stopping stopping(ctx_.flows, flow);
    r.rt->stop();
  }
  FlowControl control = ctx_.flows.control(flow);
  control.settings = ctx_.settingsOf(s);
  std::erase_if(control.settings, [](const auto& kv) { return kv.first == kStateMigrationSetting; });
  const std::string checkpointsDir = (fs::path(ctx_.flows.flowDir(flow)) / "checkpoints").string();
  std::optional<StateMigration> migration;
  {
    CheckpointDir checkpoints(checkpointsDir, 1);
    std::error_code ec;
    std::vector<uint64_t> epochs =
        fs::is_directory(checkpoints.root(), ec) ? checkpoints.epochs() : std::vector<uint64_t>{};
    if (!epochs.empty()) {
      migration.emplace();
      migration->lastOldEpoch = epochs.back();
      control.settings.emplace_back(kStateMigrationSetting, migration->format());
    }
  }
  try {
    CatalogChange change;
    change.catalog = &next;
    change.flow = toLower(flow);
    change.control = &control;
    ctx_.persistCatalog(change);
  } catch (...) {
    // The catalog still holds the running plan: it goes on as it was.
    if (wasRunning) ctx_.flows.startRuntime(flow, *r.rt);
    throw;
  }
  r.state.operators.clear();  // the state is the savepoint's, not the running plan's
  const bool start = wasRunning || control.wantRunning;
  uint64_t epoch = 0;
  try {
    epoch = installSavepoint(*sp, checkpointsDir);
  } catch (...) {
    // Recorded, but not started: it would go on with empty state.
    installReplaced(flow, std::move(def), std::move(r), migration, false, control, false, out);
    throw;
  }
  installReplaced(flow, std::move(def), std::move(r), migration, false, control, start, out);
  out.notice(fmt::format("flow \"{}\" goes on from savepoint \"{}\" (its epoch {}, restored as {})",
                         flow, sp->name, sp->info.epoch, epoch));
  out.complete("CREATE FLOW");
}

}  // namespace rtsql
