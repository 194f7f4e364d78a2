// Savepoints: a named copy of a flow's checkpoint (its state, source
// positions and watermarks), kept out of checkpoint retention so that a bad
// deployment can be rolled back to the state before it.
//
//   STOP FLOW f WITH SAVEPOINT s     stops f (its final checkpoint), copies it
//   START FLOW f FROM SAVEPOINT s    the copy becomes f's newest checkpoint; f starts
//   SHOW SAVEPOINTS [FOR f]          flow, savepoint, epoch
//   DROP SAVEPOINT s [FOR f]
//
// A savepoint lives in <flow dir>/savepoints/<name>/ (savepoint_files.h). It
// restores only into the plan it was taken of: after CREATE OR REPLACE FLOW,
// CREATE OR REPLACE FLOW ... FROM SAVEPOINT s with the query it was taken of
// goes back (replace_from_savepoint.cpp). DROP FLOW removes its savepoints.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "executor/checkpoint.h"
#include "server/savepoints.h"
#include "server/savepoint_files.h"

namespace rtsql {

namespace fs = std::filesystem;

const std::vector<ResultColumn> Savepoints::kSavepointColumns = {
    {"flow"}, {"savepoint"}, {"epoch", pgtype::kInt8}};

std::string Savepoints::savepointDir(const std::string& flow) const {
  return (fs::path(ctx_.flows.flowDir(flow)) / "savepoints").string();
}

void Savepoints::savepointStatement(EngineSession& s, const ast::SavepointStatement& stmt,
                                ResultWriter& out) {
  using A = ast::SavepointAction;
  if (!stmt.savepoint.empty()) validateSavepointName(stmt.savepoint, stmt.savepointPos);
  StatementLock::Guard lock = ctx_.guardFor(s);
  lock.lock();
  auto requireFlow = [&](const std::string& verb) {
    ctx_.requireOwnerOf(s, ast::ObjectKind::Flow, stmt.flow, verb, stmt.flowPos);
    if (!ctx_.catalogOf(s).findFlow(stmt.flow)) {
      throw SqlError(sqlstate::kUndefinedObject, fmt::format("flow \"{}\" does not exist", stmt.flow),
                     stmt.flowPos);
    }
  };
  if (stmt.action == A::Show) {
    EngineContext::Rows rows;
    std::vector<std::string> flows;
    if (!stmt.flow.empty()) {
      requireFlow("list the savepoints of");
      flows.push_back(ctx_.catalogOf(s).findFlow(stmt.flow)->name);
    } else {
      for (const auto& f : ctx_.catalogOf(s).flows()) flows.push_back(f->name);
    }
    for (const auto& flow : flows) {
      std::error_code ec;
      const fs::path root = savepointDir(flow);
      if (!fs::is_directory(root, ec)) continue;
      std::vector<Savepoint> found;
      for (const auto& entry : fs::directory_iterator(root, ec)) {
        if (!entry.is_directory() || entry.path().extension() == ".tmp") continue;
        if (auto sp = readSavepoint(entry.path().string(), flow)) found.push_back(std::move(*sp));
      }
      std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
      for (const auto& sp : found) {
        rows.push_back({sp.flow, sp.name, std::to_string(sp.info.epoch)});
      }
    }
    ctx_.sendRows(out, kSavepointColumns, rows, fmt::format("SHOW {}", rows.size()));
    return;
  }
  if (stmt.action == A::Drop) {
    std::vector<std::string> holders;
    if (!stmt.flow.empty()) {
      requireFlow("drop a savepoint of");
      holders.push_back(ctx_.catalogOf(s).findFlow(stmt.flow)->name);
    } else {
      for (const auto& f : ctx_.catalogOf(s).flows()) {
        std::error_code ec;
        if (fs::is_directory(fs::path(savepointDir(f->name)) / stmt.savepoint, ec))
          holders.push_back(f->name);
      }
      if (holders.size() > 1) {
        throw SqlError(sqlstate::kDuplicateObject,
                       fmt::format("savepoint \"{}\" exists for several flows", stmt.savepoint),
                       stmt.savepointPos, "name the flow: DROP SAVEPOINT s FOR f");
      }
    }
    std::error_code ec;
    const fs::path dir = holders.empty() ? fs::path() : fs::path(savepointDir(holders[0])) / stmt.savepoint;
    if (holders.empty() || !fs::is_directory(dir, ec)) {
      throw SqlError(sqlstate::kUndefinedObject,
                     fmt::format("savepoint \"{}\" does not exist", stmt.savepoint), stmt.savepointPos);
    }
    if (!holders.empty() && stmt.flow.empty())
      ctx_.requireOwnerOf(s, ast::ObjectKind::Flow, holders[0], "drop a savepoint of", stmt.savepointPos);
    if (s.shadow) {
      out.complete("DROP SAVEPOINT");
      return;
    }
    fs::remove_all(dir, ec);
    if (ec) throw SqlError(sqlstate::kIoError, fmt::format("cannot remove {}: {}", dir.string(), ec.message()));
    syncFileOrDirectory(dir.parent_path().string(), true);  // gone for good once answered
    out.complete("DROP SAVEPOINT");
    return;
  }

  requireFlow(stmt.action == A::Stop ? "stop" : "start");
  const std::string flow = ctx_.catalogOf(s).findFlow(stmt.flow)->name;
  FlowRuntime* rt = ctx_.flows.findRuntime(flow);
  if (!ctx_.flows.runsHere(flow, rt)) {
    throw SqlError(sqlstate::kFeatureNotSupported,
                   fmt::format("flow \"{}\" runs on another node of the cluster", flow), stmt.flowPos,
                   "run it on the node that runs the flow (SHOW FLOWS names it)");
  }
  if (!rt) rt = ctx_.planRestoredFlow(flow);
  if (!rt) throw InternalError("flow without a plan: " + flow);
  if (rt->plan().shards > 1 || rt->plan().exactlyOnce) {
    throw SqlError(sqlstate::kFeatureNotSupported,
                   fmt::format("flow \"{}\" is sharded or writes exactly once: savepoints are not "
                               "supported for it",
                               flow),
                   stmt.flowPos);
  }
  const fs::path dir = fs::path(savepointDir(flow)) / stmt.savepoint;
  std::error_code ec;
  if (stmt.action == A::Stop) {
    if (fs::exists(dir, ec)) {
      throw SqlError(sqlstate::kDuplicateObject,
                     fmt::format("savepoint \"{}\" of flow \"{}\" exists", stmt.savepoint, flow),
                     stmt.savepointPos, "DROP SAVEPOINT it first, or choose another name");
    }
    if (s.shadow) {
      out.complete("STOP FLOW");
      return;
    }
    ctx_.flows.requireNotStopping(flow, stmt.flowPos, "STOP FLOW");
    ctx_.persistWantRunning(flow, false);
    ctx_.flows.setWantRunning(flow, false);
    {
      // The final epoch's checkpoint is the savepoint's content.
      FlowRegistry::Stopping stopping(ctx_.flows, flow);
      rt->stop();
    }
    CheckpointDir checkpoints((fs::path(ctx_.flows.flowDir(flow)) / "checkpoints").string(), 1);
    std::optional<CheckpointInfo> latest =
        fs::is_directory(checkpoints.root(), ec) ? checkpoints.latest() : std::nullopt;
    if (!latest) {
      throw SqlError(sqlstate::kObjectNotInPrerequisiteState,
                     fmt::format("flow \"{}\" stopped, but it has no checkpoint to save", flow),
                     stmt.flowPos, "start it, let it finish an epoch, and stop it again");
    }
    writeSavepoint(*latest, rt->plan().explain(), dir.string());
    out.complete("STOP FLOW");
    return;
  }

  // START FLOW f FROM SAVEPOINT s
  std::optional<Savepoint> sp = fs::is_directory(dir, ec) ? readSavepoint(dir.string(), flow) : std::nullopt;
  if (!sp) {
    throw SqlError(sqlstate::kUndefinedObject,
                   fmt::format("savepoint \"{}\" of flow \"{}\" does not exist", stmt.savepoint, flow),
                   stmt.savepointPos, "SHOW SAVEPOINTS lists them");
  }
  if (sp->plan != rt->plan().explain()) {
    throw SqlError(sqlstate::kObjectNotInPrerequisiteState,
                   fmt::format("savepoint \"{}\" was taken of another plan of flow \"{}\"",
                               stmt.savepoint, flow),
                   stmt.savepointPos,
                   "CREATE OR REPLACE FLOW ... FROM SAVEPOINT s AS <the query it was taken of> "
                   "replaces the flow and starts it from the savepoint in one step");
  }
  if (s.shadow) {
    out.complete("START FLOW");
    return;
  }
  ctx_.flows.requireNotStopping(flow, stmt.flowPos, "START FLOW");
  {
    FlowRegistry::Stopping stopping(ctx_.flows, flow);
    rt->stop();
  }
  // The savepoint becomes the newest checkpoint, written like any other (a
  // crash leaves it whole or not at all).
  installSavepoint(*sp, (fs::path(ctx_.flows.flowDir(flow)) / "checkpoints").string());
  ctx_.flows.startRuntime(flow, *rt);
  ctx_.persistWantRunning(flow, true);
  ctx_.flows.setWantRunning(flow, true);
  out.complete("START FLOW");
}

}  // namespace rtsql

namespace rtsql {

}  // namespace rtsql
