#include "executor/state_copy.h"

#include <filesystem>

#include "common/error.h"

namespace rtsql {

std::optional<CheckpointInfo> StateCopyKeeper::restore(CheckpointDir& checkpoints,
                                                       const std::optional<CheckpointInfo>& local,
                                                       bool reset, uint64_t maxEpoch,
                                                       const std::string& scratchDir) {
  unwritten_.clear();
  source_ = Source::Local;
  if (!reset && (local || warm_)) {
    std::optional<CheckpointInfo> newest = copy_->newestCheckpoint();
    std::optional<CheckpointInfo> start = local;
    // The copy ran on elsewhere: a warm copy of its newest checkpoint spares
    // reading it.
    if (newest && warm_ && newest->epoch <= maxEpoch &&
        (!local || newest->epoch > local->epoch ||
         (newest->epoch == local->epoch && !sameCheckpoint(*newest, *local)))) {
      if (std::optional<CheckpointInfo> warm = warm_(checkpoints, *newest)) {
        start = std::move(warm);
        source_ = Source::Standby;
      }
    }
    // In step already: the state restored is the copy's own.
    if (newest && start && sameCheckpoint(*newest, *start)) {
      whole_ = false;
      stale_.clear();
      return start;
    }
  }
  StateCopy::Contents copy = copy_->read();
  stale_ = std::move(copy.keys);
  std::optional<CheckpointInfo> result = local;
  const bool useCopy =
      !reset && copy.checkpoint && copy.checkpoint->epoch <= maxEpoch &&
      (!local || copy.checkpoint->epoch > local->epoch ||
       (copy.checkpoint->epoch == local->epoch && !sameCheckpoint(*copy.checkpoint, *local)));
  if (useCopy) {
    // The copy becomes the flow's newest checkpoint here, restored as any other.
    std::error_code ec;
    std::filesystem::remove_all(scratchDir, ec);
    StateStoreOptions options;
    options.path = scratchDir;
    options.destroyOnClose = true;
    std::unique_ptr<StateStore> store = StateStore::open(options);
    constexpr size_t kBatch = 10000;
    for (size_t i = 0; i < copy.entries.size(); i += kBatch) {
      const size_t end = std::min(copy.entries.size(), i + kBatch);
      store->write(
          std::vector<StateChange>(copy.entries.begin() + static_cast<std::ptrdiff_t>(i),
                                   copy.entries.begin() + static_cast<std::ptrdiff_t>(end)));
    }
    CheckpointInfo info = *copy.checkpoint;
    info.hasState = true;
    checkpoints.write(info, [&](const std::string& dir) { store->snapshot(dir); });
    result = std::move(info);
    source_ = Source::Copy;
  }
  // In step when the state restored is the copy's own, or both are empty.
  const bool inStep =
      !reset && (result ? copy.checkpoint && sameCheckpoint(*copy.checkpoint, *result)
                        : !copy.checkpoint && stale_.empty());
  whole_ = !inStep;
  if (inStep) stale_.clear();
  return result;
}

void StateCopyKeeper::collect(StateStore& store, std::vector<StateChange>& changes) {
  if (!whole_) return;
  // Every entry, and a removal of each key the copy may hold that the state
  // does not (both in key order).
  changes.clear();
  auto stale = stale_.begin();
  store.forEach([&](std::string_view key, std::string_view value) {
    for (; stale != stale_.end() && *stale < key; ++stale)
      changes.push_back({*stale, std::nullopt});
    if (stale != stale_.end() && *stale == key) ++stale;
    changes.push_back({std::string(key), std::string(value)});
  });
  for (; stale != stale_.end(); ++stale) changes.push_back({*stale, std::nullopt});
}

std::string StateCopyKeeper::write(const CheckpointInfo& info, std::vector<StateChange> changes,
                                   SinkTransaction* within) {
  if (!whole_ && !unwritten_.empty()) {
    // The copy is still at the checkpoint before the failed writes: their
    // changes and these together bring it here.
    for (StateChange& c : changes) unwritten_[c.key] = std::move(c.value);
    changes.clear();
    for (auto& [key, value] : unwritten_) changes.push_back({key, value});
  }
  try {
    copy_->write(info, changes, within);
  } catch (const SqlError& e) {
    if (!whole_) {
      unwritten_.clear();
      for (StateChange& c : changes) unwritten_[c.key] = std::move(c.value);
    }
    return e.message();
  }
  unwritten_.clear();
  whole_ = false;
  stale_.clear();
  return {};
}

}  // namespace rtsql
