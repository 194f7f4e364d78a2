// A flow's savepoints on disk (server/savepoint_files.h).
#include "server/savepoint_files.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "common/error.h"

namespace rtsql {

namespace fs = std::filesystem;

namespace {

constexpr const char* kMetaFile = "checkpoint.meta";
constexpr const char* kPlanFile = "plan.txt";

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

}  // namespace

void validateSavepointName(const std::string& name, size_t pos) {
  bool ok = !name.empty() && name.size() <= 64 && name[0] != '-';
  for (char c : name)
    ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-');
  if (!ok) {
    throw SqlError(sqlstate::kInvalidName, fmt::format("invalid savepoint name \"{}\"", name), pos,
                   "a savepoint name is 1 to 64 letters, digits, '_' or '-'");
  }
}

std::optional<Savepoint> readSavepoint(const std::string& dir, const std::string& flow) {
  const fs::path path(dir);
  std::optional<CheckpointInfo> info = parseCheckpointMeta(readFile(path / kMetaFile));
  if (!info) return std::nullopt;
  info->dir = path.string();
  Savepoint s;
  s.flow = flow;
  s.name = path.filename().string();
  s.info = std::move(*info);
  s.plan = readFile(path / kPlanFile);
  return s;
}

void writeSavepoint(const CheckpointInfo& checkpoint, const std::string& plan,
                    const std::string& dir) {
  const fs::path final(dir);
  const fs::path tmp = dir + ".tmp";
  std::error_code ec;
  fs::remove_all(tmp, ec);
  fs::create_directories(tmp, ec);
  if (ec) {
    throw SqlError(sqlstate::kIoError,
                   fmt::format("cannot create {}: {}", tmp.string(), ec.message()));
  }
  if (checkpoint.hasState) CheckpointDir::restoreState(checkpoint, (tmp / "state").string());
  writeFile(tmp / kMetaFile, formatCheckpointMeta(checkpoint));
  writeFile(tmp / kPlanFile, plan);
  // Durable before it is named, and named durably before the statement
  // answers: a crash leaves the savepoint whole, or only its .tmp, which the
  // next savepoint of the name clears. The state's files are hard links of
  // the checkpoint's: their directory entries are what is new.
  syncDirectoryTree(tmp.string());
  fs::rename(tmp, final, ec);
  if (ec) {
    throw SqlError(sqlstate::kIoError,
                   fmt::format("cannot rename {}: {}", tmp.string(), ec.message()));
  }
  syncFileOrDirectory(final.parent_path().string(), true);
  syncFileOrDirectory(final.parent_path().parent_path().string(), true);
}

uint64_t installSavepoint(const Savepoint& sp, const std::string& checkpointsDir) {
  CheckpointDir checkpoints(checkpointsDir, 1 << 20);
  std::error_code ec;
  std::vector<uint64_t> epochs =
      fs::is_directory(checkpoints.root(), ec) ? checkpoints.epochs() : std::vector<uint64_t>{};
  CheckpointInfo info = sp.info;
  info.epoch = std::max<uint64_t>(epochs.empty() ? 0 : epochs.back() + 1, sp.info.epoch);
  // Epochs only grow, also past a reset that removed the checkpoints.
  if (std::optional<uint64_t> reset = checkpoints.pendingReset())
    info.epoch = std::max(info.epoch, *reset);
  info.epochEndMicros = sp.info.epochEndMicros;
  checkpoints.write(info, [&](const std::string& stateDir) {
    CheckpointDir::restoreState(sp.info, stateDir);
  });
  checkpoints.clearReset();
  return info.epoch;
}

}  // namespace rtsql
