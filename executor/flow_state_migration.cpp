// A checkpoint of a replaced plan restored into the plan that replaced it
// (CREATE OR REPLACE FLOW, planner/state_plan.h): the state of each kept
// operator moves to its new id, the state of the others is left behind, and
// the positions and task watermarks move to the new scans and stages. The
// checkpoint itself is never changed: the rewrite happens in the restored
// state directory, which every start lays out again, so a crash at any point
// restores and rewrites it again; the new plan's first checkpoint is in its
// own layout.
#include <fmt/format.h>

#include <filesystem>

#include "common/log.h"
#include "executor/flow_task.h"
#include "executor/state/state_store.h"

namespace rtsql {

namespace {

constexpr size_t kPrefixBytes = 8;  // operator id, then task index, 4 big-endian bytes each
constexpr size_t kBatchEntries = 4096;

uint32_t operatorIdOf(std::string_view key) {
  uint32_t id = 0;
  for (size_t i = 0; i < 4; ++i) id = (id << 8) | static_cast<uint8_t>(key[i]);
  return id;
}

void setOperatorId(std::string& key, uint32_t id) {
  for (size_t i = 0; i < 4; ++i) key[i] = static_cast<char>((id >> (8 * (3 - i))) & 0xff);
}

}  // namespace

void FlowRuntime::migrateRestored(CheckpointInfo& checkpoint, bool needsState) {
  const StateMigration& m = *migration_;
  std::vector<CheckpointPosition> positions;
  for (auto p : checkpoint.positions) {
    auto it = m.scans.find(p.scan);
    if (it == m.scans.end()) continue;  // a source no longer read, or read anew
    p.scan = it->second;
    positions.push_back(std::move(p));
  }
  checkpoint.positions = std::move(positions);
  std::vector<CheckpointTaskWatermark> watermarks;
  for (auto w : checkpoint.taskWatermarks) {
    auto it = m.stages.find(w.stage);
    if (it == m.stages.end()) continue;
    w.stage = it->second;
    watermarks.push_back(w);
  }
  checkpoint.taskWatermarks = std::move(watermarks);

  std::error_code ec;
  if (!needsState || stateDir_.empty() || !checkpoint.hasState ||
      !std::filesystem::is_directory(stateDir_, ec))
    return;
  // The restored directory becomes the source of a new one with the keys
  // moved; entries of operators without a new id are left out.
  const std::string from = stateDir_ + ".replaced";
  std::filesystem::remove_all(from, ec);
  std::filesystem::rename(stateDir_, from, ec);
  if (ec) {
    throw SqlError(sqlstate::kIoError, fmt::format("flow \"{}\": cannot move {} aside: {}",
                                                   plan_.flowName, stateDir_, ec.message()));
  }
  int64_t moved = 0;
  int64_t dropped = 0;
  {
    StateStoreOptions oldOptions;
    oldOptions.path = from;
    std::unique_ptr<StateStore> oldStore = StateStore::open(oldOptions);
    StateStoreOptions newOptions;
    newOptions.path = stateDir_;
    std::unique_ptr<StateStore> newStore = StateStore::open(newOptions);
    std::vector<StateChange> batch;
    oldStore->forEach([&](std::string_view key, std::string_view value) {
      if (key.size() < kPrefixBytes) return;
      auto it = m.operators.find(static_cast<int>(operatorIdOf(key)));
      if (it == m.operators.end()) {
        ++dropped;
        return;
      }
      StateChange c;
      c.key = std::string(key);
      setOperatorId(c.key, static_cast<uint32_t>(it->second));
      c.value = std::string(value);
      batch.push_back(std::move(c));
      ++moved;
      if (batch.size() >= kBatchEntries) {
        newStore->write(batch);
        batch.clear();
      }
    });
    if (!batch.empty()) newStore->write(batch);
  }
  std::filesystem::remove_all(from, ec);
  logLine(fmt::format("flow \"{}\": restored epoch {} of the replaced plan: {} state entries "
                      "carried over, {} left behind",
                      plan_.flowName, checkpoint.epoch, moved, dropped));
}

}  // namespace rtsql
