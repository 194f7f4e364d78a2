#include "executor/checkpoint.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/clock.h"
#include "common/crc32.h"
#include "common/error.h"

namespace fs = std::filesystem;

namespace rtsql {

namespace {

constexpr const char* kMetaFile = "checkpoint.meta";
constexpr const char* kStateDir = "state";
constexpr const char* kMagic = "rtsql-checkpoint";
constexpr int kVersion = 1;
constexpr const char* kTmpSuffix = ".tmp";
constexpr const char* kResetFile = "RESET";

[[noreturn]] void throwCheckpointIo(const std::string& what, const std::string& path, const std::string& why) {
  throw SqlError(sqlstate::kIoError, fmt::format("checkpoint: {} '{}': {}", what, path, why));
}

// fsync of a file or a directory: what makes a write or a rename durable.
void syncPath(const std::string& path, bool directory) {
  int fd = ::open(path.c_str(), O_RDONLY | (directory ? O_DIRECTORY : 0) | O_CLOEXEC);
  if (fd < 0) throwCheckpointIo("cannot open", path, std::strerror(errno));
  int rc = ::fsync(fd);
  int err = errno;
  ::close(fd);
  if (rc != 0) throwCheckpointIo("cannot fsync", path, std::strerror(err));
}

void syncTree(const fs::path& dir) {
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    syncPath(entry.path().string(), entry.is_directory());
  }
  syncPath(dir.string(), true);
}

int64_t treeBytes(const fs::path& dir) {
  std::error_code ec;
  int64_t total = 0;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (it->is_regular_file(ec)) total += static_cast<int64_t>(it->file_size(ec));
  }
  return total;
}

std::optional<uint64_t> epochOfName(const std::string& name) {
  if (name.empty() || name.size() > 20) return std::nullopt;
  if (!std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  return std::stoull(name);
}

}  // namespace

void syncFileOrDirectory(const std::string& path, bool directory) { syncPath(path, directory); }

void syncDirectoryTree(const std::string& dir) { syncTree(dir); }

bool sameCheckpoint(const CheckpointInfo& a, const CheckpointInfo& b) {
  return a.epoch == b.epoch && a.epochEndMicros == b.epochEndMicros;
}

std::string formatCheckpointMeta(const CheckpointInfo& info) {
  std::string body;
  body += fmt::format("epoch {}\n", info.epoch);
  body += fmt::format("epoch_end_us {}\n", info.epochEndMicros);
  body += fmt::format("written_us {}\n", info.writtenMicros);
  body += fmt::format("duration_us {}\n", info.durationMicros);
  body += fmt::format("state_bytes {}\n", info.stateBytes);
  body += fmt::format("watermark {}\n", info.watermark);
  body += fmt::format("has_state {}\n", info.hasState ? 1 : 0);
  for (const auto& p : info.positions) {
    // The topic goes last: Kafka topic names never contain spaces or newlines.
    body += fmt::format("position {} {} {} {}\n", p.scan, p.partition, p.offset, p.topic);
    // A resume token (no spaces) belongs to the position line before it.
    if (!p.position.empty()) body += fmt::format("resume {}\n", p.position);
  }
  for (const auto& w : info.taskWatermarks) {
    body += fmt::format("task_watermark {} {} {}\n", w.stage, w.task, w.watermark);
  }
  return fmt::format("{} {} {} {:08x}\n", kMagic, kVersion, body.size(), crc32(body.data(), body.size())) +
         body;
}

std::optional<CheckpointInfo> parseCheckpointMeta(const std::string& text) {
  size_t nl = text.find('\n');
  if (nl == std::string::npos) return std::nullopt;
  std::istringstream header(text.substr(0, nl));
  std::string magic, crcHex;
  int version = 0;
  size_t length = 0;
  if (!(header >> magic >> version >> length >> crcHex) || magic != kMagic || version != kVersion) {
    return std::nullopt;
  }
  std::string body = text.substr(nl + 1);
  if (body.size() != length) return std::nullopt;
  if (fmt::format("{:08x}", crc32(body.data(), body.size())) != crcHex) return std::nullopt;

  CheckpointInfo info;
  std::istringstream lines(body);
  std::string line;
  bool sawEpoch = false;
  while (std::getline(lines, line)) {
    std::istringstream in(line);
    std::string key;
    in >> key;
    if (key == "position") {
      CheckpointPosition p;
      if (!(in >> p.scan >> p.partition >> p.offset)) return std::nullopt;
      std::string rest;
      std::getline(in, rest);
      p.topic = rest.empty() ? rest : rest.substr(1);  // after the separating space
      info.positions.push_back(std::move(p));
      continue;
    }
    if (key == "resume") {
      std::string token;
      if (info.positions.empty() || !(in >> token)) return std::nullopt;
      info.positions.back().position = std::move(token);
      continue;
    }
    if (key == "task_watermark") {
      CheckpointTaskWatermark w;
      if (!(in >> w.stage >> w.task >> w.watermark)) return std::nullopt;
      info.taskWatermarks.push_back(w);
      continue;
    }
    int64_t v = 0;
    if (!(in >> v)) return std::nullopt;
    if (key == "epoch") {
      info.epoch = static_cast<uint64_t>(v);
      sawEpoch = true;
    } else if (key == "epoch_end_us") {
      info.epochEndMicros = v;
    } else if (key == "written_us") {
      info.writtenMicros = v;
    } else if (key == "duration_us") {
      info.durationMicros = v;
    } else if (key == "state_bytes") {
      info.stateBytes = v;
    } else if (key == "watermark") {
      info.watermark = v;
    } else if (key == "has_state") {
      info.hasState = v != 0;
    }
    // Unknown keys are ignored: a later version may add fields.
  }
  if (!sawEpoch) return std::nullopt;
  return info;
}

CheckpointDir::CheckpointDir(std::string root, int retain)
    : root_(std::move(root)), retain_(std::max(1, retain)) {}

std::string CheckpointDir::pathOf(uint64_t epoch) const {
  return (fs::path(root_) / fmt::format("{:020}", epoch)).string();
}

void CheckpointDir::write(CheckpointInfo& info,
                          const std::function<void(const std::string& dir)>& writeState) {
  std::error_code ec;
  fs::create_directories(root_, ec);
  if (ec) throwCheckpointIo("cannot create", root_, ec.message());
  const fs::path final = pathOf(info.epoch);
  const fs::path tmp = final.string() + kTmpSuffix;
  fs::remove_all(tmp, ec);
  fs::create_directories(tmp, ec);
  if (ec) throwCheckpointIo("cannot create", tmp.string(), ec.message());

  if (info.hasState) {
    writeState((tmp / kStateDir).string());
    info.stateBytes = treeBytes(tmp / kStateDir);
  }
  info.writtenMicros = nowMicros();
  info.durationMicros = info.epochEndMicros ? info.writtenMicros - info.epochEndMicros : 0;
  std::string meta = formatCheckpointMeta(info);
  {
    std::ofstream out(tmp / kMetaFile, std::ios::binary | std::ios::trunc);
    out.write(meta.data(), static_cast<std::streamsize>(meta.size()));
    out.flush();
    if (!out) throwCheckpointIo("cannot write", (tmp / kMetaFile).string(), "write failed");
  }
  syncTree(tmp);

  // An older checkpoint of the same epoch (a flow recovered from an earlier one
  // and reached this epoch again) is replaced.
  fs::remove_all(final, ec);
  fs::rename(tmp, final, ec);
  if (ec) throwCheckpointIo("cannot rename", tmp.string(), ec.message());
  syncPath(root_, true);
  info.dir = final.string();

  // Retention: the newest `retain_` checkpoints stay.
  std::vector<uint64_t> all = epochs();
  if (all.size() > static_cast<size_t>(retain_)) {
    for (size_t i = 0; i + static_cast<size_t>(retain_) < all.size(); ++i) {
      fs::remove_all(pathOf(all[i]), ec);
    }
  }
}

std::vector<uint64_t> CheckpointDir::epochs() const {
  std::vector<uint64_t> out;
  std::error_code ec;
  if (!fs::is_directory(root_, ec)) return out;
  for (const auto& entry : fs::directory_iterator(root_, ec)) {
    if (!entry.is_directory()) continue;
    if (auto e = epochOfName(entry.path().filename().string())) out.push_back(*e);
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool CheckpointDir::everWritten() const {
  std::error_code ec;
  if (!fs::is_directory(root_, ec)) return false;
  for (const auto& entry : fs::directory_iterator(root_, ec)) {
    const std::string name = entry.path().filename().string();
    if (!name.ends_with(kTmpSuffix)) return true;
  }
  return false;
}

std::optional<CheckpointInfo> CheckpointDir::latest(uint64_t maxEpoch) {
  return search(maxEpoch).found;
}

CheckpointSearch CheckpointDir::search(uint64_t maxEpoch) {
  CheckpointSearch out;
  std::error_code ec;
  if (!fs::is_directory(root_, ec)) return out;
  // Leftovers of a write that a crash interrupted.
  std::vector<fs::path> partial;
  for (const auto& entry : fs::directory_iterator(root_, ec)) {
    std::string name = entry.path().filename().string();
    if (name.size() > 4 && name.ends_with(kTmpSuffix)) partial.push_back(entry.path());
  }
  for (const auto& p : partial) fs::remove_all(p, ec);

  std::vector<uint64_t> all = epochs();
  for (auto it = all.rbegin(); it != all.rend(); ++it) {
    if (*it > maxEpoch) continue;
    fs::path dir = pathOf(*it);
    auto skip = [&](std::string why) { out.skipped.push_back({*it, std::move(why)}); };
    std::ifstream in(dir / kMetaFile, std::ios::binary);
    if (!in) {
      skip(fmt::format("{} is missing or unreadable", kMetaFile));
      continue;
    }
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::optional<CheckpointInfo> info = parseCheckpointMeta(text);
    if (!info) {
      skip(fmt::format("{} is damaged (length or checksum mismatch)", kMetaFile));
      continue;
    }
    if (info->epoch != *it) {
      skip(fmt::format("{} is of epoch {}", kMetaFile, info->epoch));
      continue;
    }
    if (info->hasState && !fs::is_directory(dir / kStateDir, ec)) {
      skip("its state snapshot is missing");
      continue;
    }
    info->dir = dir.string();
    out.found = std::move(info);
    break;
  }
  return out;
}

void CheckpointDir::markReset(uint64_t nextEpoch) {
  std::error_code ec;
  fs::create_directories(root_, ec);
  if (ec) throwCheckpointIo("cannot create", root_, ec.message());
  // The marker first: a crash in between leaves a reset that is still pending
  // and checkpoints it ignores, never checkpoints without the marker.
  const fs::path marker = fs::path(root_) / kResetFile;
  const fs::path tmp = marker.string() + kTmpSuffix;
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << nextEpoch << '\n';
    out.flush();
    if (!out) throwCheckpointIo("cannot write", tmp.string(), "write failed");
  }
  syncPath(tmp.string(), false);
  fs::rename(tmp, marker, ec);
  if (ec) throwCheckpointIo("cannot rename", tmp.string(), ec.message());
  syncPath(root_, true);
  for (uint64_t epoch : epochs()) {
    fs::remove_all(pathOf(epoch), ec);
    if (ec) throwCheckpointIo("cannot remove", pathOf(epoch), ec.message());
  }
  syncPath(root_, true);
}

std::optional<uint64_t> CheckpointDir::pendingReset() const {
  std::ifstream in(fs::path(root_) / kResetFile);
  if (!in) return std::nullopt;
  uint64_t epoch = 0;
  if (!(in >> epoch)) epoch = 0;  // a torn marker still marks a reset
  return epoch;
}

void CheckpointDir::clearReset() {
  std::error_code ec;
  if (fs::remove(fs::path(root_) / kResetFile, ec)) syncPath(root_, true);
}

void CheckpointDir::restoreState(const CheckpointInfo& info, const std::string& stateDir) {
  std::error_code ec;
  fs::remove_all(stateDir, ec);
  if (ec) throwCheckpointIo("cannot remove", stateDir, ec.message());
  if (!info.hasState) return;
  const fs::path from = fs::path(info.dir) / kStateDir;
  fs::create_directories(stateDir, ec);
  if (ec) throwCheckpointIo("cannot create", stateDir, ec.message());
  for (const auto& entry : fs::directory_iterator(from)) {
    if (!entry.is_regular_file()) continue;
    fs::path to = fs::path(stateDir) / entry.path().filename();
    if (entry.path().extension() == ".sst") {
      fs::create_hard_link(entry.path(), to, ec);
      if (!ec) continue;
      ec.clear();  // another file system: copy instead
    }
    fs::copy_file(entry.path(), to, fs::copy_options::overwrite_existing, ec);
    if (ec) throwCheckpointIo("cannot copy", entry.path().string(), ec.message());
  }
}

}  // namespace rtsql
