// Savepoints: a named copy of a flow's checkpoint (its state, source
// positions and watermarks), kept out of checkpoint retention so that a bad
// deployment can be rolled back to the state before it.
//
//   STOP FLOW f WITH SAVEPOINT s     stops f (its final checkpoint), copies it
//   START FLOW f FROM SAVEPOINT s    the copy becomes f's newest checkpoint; f starts
//   SHOW SAVEPOINTS [FOR f]          flow, savepoint, epoch
//   DROP SAVEPOINT s [FOR f]
//
// A savepoint lives in <flow dir>/savepoints/<name>/: checkpoint.meta, the
// state snapshot (SST files hard-linked, as a restore does) and plan.txt, the
// EXPLAIN text of the plan that wrote it. A savepoint restores only into the
// same plan: after CREATE OR REPLACE FLOW, replace the flow back first. Names
// are identifiers of letters, digits, '_' and '-', so a savepoint never names
// a path outside its flow's directory. DROP FLOW removes its savepoints.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "executor/checkpoint.h"
#include "server/savepoints.h"

namespace rtsql {

namespace fs = std::filesystem;

namespace {

constexpr const char* kMetaFile = "checkpoint.meta";
constexpr const char* kPlanFile = "plan.txt";

void validateName(const std::string& name, size_t pos) {
  bool ok = !name.empty() && name.size() <= 64 && name[0] != '-';
  for (char c : name) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-');
  if (!ok) {
    throw SqlError(sqlstate::kInvalidName, fmt::format("invalid savepoint name \"{}\"", name), pos,
                   "a savepoint name is 1 to 64 letters, digits, '_' or '-'");
  }
}

std::string readFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void writeFile(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
  out.flush();
  if (!out) throw SqlError(sqlstate::kIoError, "cannot write " + p.string());
}

struct Savepoint {
  std::string flow;
  std::string name;
  CheckpointInfo info;
  std::string plan;
};

std::optional<Savepoint> readSavepoint(const fs::path& dir, const std::string& flow) {
  std::optional<CheckpointInfo> info = parseCheckpointMeta(readFile(dir / kMetaFile));
  if (!info) return std::nullopt;
  info->dir = dir.string();
  Savepoint s;
  s.flow = flow;
  s.name = dir.filename().string();
  s.info = std::move(*info);
  s.plan = readFile(dir / kPlanFile);
  return s;
}

}  // namespace

const std::vector<ResultColumn> Savepoints::kSavepointColumns = {
    {"flow"}, {"savepoint"}, {"epoch", pgtype::kInt8}};

std::string Savepoints::savepointDir(const std::string& flow) const {
  return (fs::path(ctx_.flows.flowDir(flow)) / "savepoints").string();
}

void Savepoints::savepointStatement(EngineSession& s, const ast::SavepointStatement& stmt,
                                    ResultWriter& out) {
  using A = ast::SavepointAction;
  if (!stmt.savepoint.empty()) validateName(stmt.savepoint, stmt.savepointPos);
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
        if (auto sp = readSavepoint(entry.path(), flow)) found.push_back(std::move(*sp));
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
    const fs::path tmp = dir.string() + ".tmp";
    fs::remove_all(tmp, ec);
    fs::create_directories(tmp, ec);
    if (ec) throw SqlError(sqlstate::kIoError, fmt::format("cannot create {}: {}", tmp.string(), ec.message()));
    if (latest->hasState) CheckpointDir::restoreState(*latest, (tmp / "state").string());
    writeFile(tmp / kMetaFile, formatCheckpointMeta(*latest));
    writeFile(tmp / kPlanFile, rt->plan().explain());
    fs::rename(tmp, dir, ec);
    if (ec) throw SqlError(sqlstate::kIoError, fmt::format("cannot rename {}: {}", tmp.string(), ec.message()));
    out.complete("STOP FLOW");
    return;
  }

  // START FLOW f FROM SAVEPOINT s
  std::optional<Savepoint> sp = fs::is_directory(dir, ec) ? readSavepoint(dir, flow) : std::nullopt;
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
                   "CREATE OR REPLACE FLOW it with the query the savepoint was taken of first");
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
  CheckpointDir checkpoints((fs::path(ctx_.flows.flowDir(flow)) / "checkpoints").string(), 1 << 20);
  std::vector<uint64_t> epochs =
      fs::is_directory(checkpoints.root(), ec) ? checkpoints.epochs() : std::vector<uint64_t>{};
  CheckpointInfo info = sp->info;
  info.epoch = std::max<uint64_t>(epochs.empty() ? 0 : epochs.back() + 1, sp->info.epoch);
  info.epochEndMicros = sp->info.epochEndMicros;
  checkpoints.write(info, [&](const std::string& stateDir) { CheckpointDir::restoreState(sp->info, stateDir); });
  ctx_.flows.startRuntime(flow, *rt);
  ctx_.persistWantRunning(flow, true);
  ctx_.flows.setWantRunning(flow, true);
  out.complete("START FLOW");
}

}  // namespace rtsql
