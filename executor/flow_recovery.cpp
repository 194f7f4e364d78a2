// Recovery, the part of FlowRuntime::start() that chooses what a run starts
// from: the newest complete checkpoint of the flow's own, the state copy when
// it is newer (executor/state_copy.h), or empty state at the sources'
// startingOffsets (a reset); and, for an exactly-once flow, only what its
// committed output agrees with. See "Recovery" in executor/flow_runtime.h.
#include <filesystem>

#include "common/error.h"
#include "common/log.h"
#include "executor/flow_task.h"

namespace rtsql {

FlowRuntime::Recovery FlowRuntime::recover(bool needsState) {
  // The state store is reopened from the snapshot on every start: what an
  // earlier run wrote after its last checkpoint is no state at any barrier.
  Recovery r;
  // A reset run starts with empty state at the sources' startingOffsets.
  r.reset = resetRequested_;
  transaction_.reset();
  if (plan_.exactlyOnce) {
    if (!checkpoints_) {
      throw SqlError(sqlstate::kFeatureNotSupported,
                     "'delivery' = 'exactly-once' needs checkpoints: start rtsqld with --data-dir");
    }
    // The transaction may stay open for a whole epoch, and then the checkpoint.
    int64_t timeoutMs = std::min<int64_t>(900'000, plan_.checkpointIntervalMicros / 1000 * 2 + 60'000);
    transaction_ = connectors_.openSinkTransaction(plan_.sink, plan_.flowName, timeoutMs);
  }
  if (!checkpoints_) return r;
  std::error_code ec;
  // The root exists once the flow has written a checkpoint (a new flow's
  // directory is removed by CREATE FLOW).
  const bool hadCheckpoints = std::filesystem::is_directory(checkpoints_->root(), ec);
  r.resetEpoch = checkpoints_->pendingReset();
  r.reset = r.reset || r.resetEpoch.has_value();
  // The output agrees with the newest checkpoint whose transaction
  // committed; a newer checkpoint's rows were aborted with its transaction,
  // so its epoch is processed (and written) again.
  const int64_t committed = transaction_ ? transaction_->recover() : -1;
  copyKeeper_.reset();
  if (stateCopy_ && needsState) {
    if (transaction_) {
      // Exactly-once: the copy is written in the output's transaction.
      try {
        stateCopy_->checkWithin(*transaction_);
      } catch (const SqlError& e) {
        transaction_.reset();
        throw SqlError(e.sqlstate(), fmt::format("flow \"{}\": {}", plan_.flowName, e.message()),
                       SqlError::npos, e.hint());
      }
    }
    copyKeeper_ = std::make_unique<StateCopyKeeper>(stateCopy_, warmCopy_);
  }
  // The copy, when newer than the flow's own checkpoints (it ran on another
  // node since), becomes its newest checkpoint (with exactly-once output,
  // one whose output committed).
  auto consultCopy = [&](const std::optional<CheckpointInfo>& local) {
    if (!copyKeeper_) return local;
    const uint64_t maxEpoch =
        transaction_ ? (committed >= 0 ? static_cast<uint64_t>(committed) : 0) : UINT64_MAX;
    std::optional<CheckpointInfo> found =
        copyKeeper_->restore(*checkpoints_, local, r.reset, maxEpoch, stateDir_ + ".copy");
    // A reset flow's copy holds no state of it from now on, even before
    // its first checkpoint replaces it.
    if (r.reset) stateCopy_->clear();
    if (found && copyKeeper_->source() == StateCopyKeeper::Source::Standby) {
      logLine(fmt::format("flow \"{}\": starting from this node's standby copy of epoch {}",
                          plan_.flowName, found->epoch));
    } else if (found && (!local || found->dir != local->dir)) {
      logLine(fmt::format("flow \"{}\": restoring the state copy of epoch {}", plan_.flowName,
                          found->epoch));
    }
    return found;
  };
  if (r.reset) {
    consultCopy(std::nullopt);
    // Checkpoints of a run after the reset that never finished its first
    // epoch are no state to go on from.
    if (!checkpoints_->epochs().empty()) checkpoints_->markReset(r.resetEpoch.value_or(epochs_.epoch()));
    if (transaction_ && committed >= 0) {
      r.resetEpoch = std::max<uint64_t>(r.resetEpoch.value_or(0), static_cast<uint64_t>(committed) + 1);
    }
  } else if (!transaction_ || committed >= 0) {
    CheckpointSearch found =
        checkpoints_->search(transaction_ ? static_cast<uint64_t>(committed) : UINT64_MAX);
    r.checkpoint = consultCopy(found.found);
    r.skipped = std::move(found.skipped);
    // State without the checkpoint its committed offsets (or its committed
    // output) belong to cannot be rebuilt: starting empty from those offsets
    // would run on with wrong results. A stateless flow has no state to
    // lose and goes on from its committed offsets.
    if (!r.checkpoint && hadCheckpoints && (needsState || transaction_)) {
      failUnrecoverable(r.skipped, committed);
    }
  }
  // In a cluster the state of a flow another node ran stays there: going
  // on from the offsets that node committed with empty state would count
  // only what comes next, so the state is built again from the sources.
  if (!r.reset && !r.checkpoint && !hadCheckpoints && needsState && rebuildWithoutCheckpoint_) {
    r.reset = true;
    // Epochs go on after the last one whose output committed, as a reset's do.
    if (transaction_ && committed >= 0) r.resetEpoch = static_cast<uint64_t>(committed) + 1;
  }
  stateStore_.reset();
  if (needsState && !stateDir_.empty()) {
    if (r.checkpoint) {
      CheckpointDir::restoreState(*r.checkpoint, stateDir_);
    } else {
      std::filesystem::remove_all(stateDir_, ec);
    }
  }
  if (r.checkpoint && migration_ && r.checkpoint->epoch <= migration_->lastOldEpoch) {
    migrateRestored(*r.checkpoint, needsState);
  }
  return r;
}

void FlowRuntime::failUnrecoverable(const std::vector<CheckpointSearch::Skipped>& skipped,
                                    int64_t committed) {
  std::string why;
  for (const auto& sk : skipped) {
    why += fmt::format("{}epoch {}: {}", why.empty() ? "" : "; ", sk.epoch, sk.reason);
  }
  std::string what =
      skipped.empty()
          ? fmt::format("no checkpoint is left in {}", checkpoints_->root())
          : fmt::format("no checkpoint in {} can be read ({})", checkpoints_->root(), why);
  if (transaction_) what += fmt::format(", and its output committed epoch {}", committed);
  std::string message = fmt::format(
      "flow \"{}\" cannot restore its state: {}; its committed offsets belong to that state, "
      "so it does not run on without it. START FLOW {} RESET STATE discards the state and reads "
      "the sources again from their startingOffsets",
      plan_.flowName, what, plan_.flowName);
  {
    std::lock_guard lock(mu_);
    state_ = FlowState::Failed;
    failure_ = message;
    failureCode_ = sqlstate::kDataCorrupted;
    skipped_ = skipped;
  }
  transaction_.reset();
  throw SqlError(sqlstate::kDataCorrupted, message, SqlError::npos,
                 "restore the flow's checkpoints from a backup, or run START FLOW " +
                     plan_.flowName + " RESET STATE to start it again from empty state");
}

void FlowRuntime::restorePositions(const Recovery& from,
                                   std::vector<std::unique_ptr<Task>>& tasks) {
  if (from.reset) {
    for (auto& t : tasks) {
      if (t->isSource) t->source->startFromStartingOffsets();
    }
  }
  if (!from.checkpoint) return;
  const CheckpointInfo& checkpoint = *from.checkpoint;
  for (auto& t : tasks) {
    for (const auto& w : checkpoint.taskWatermarks) {
      if (w.stage == t->stage && w.task == t->index) t->watermark.store(w.watermark);
    }
    if (!t->isSource) continue;
    std::vector<PartitionProgress> at;
    for (const auto& p : checkpoint.positions) {
      if (p.scan != t->scanIndex) continue;
      PartitionProgress pp;
      pp.topic = p.topic;
      pp.partition = p.partition;
      pp.startOffset = pp.endOffset = p.offset;
      pp.position = p.position;
      at.push_back(std::move(pp));
    }
    if (at.empty()) continue;
    try {
      t->source->seek(at);
    } catch (const SqlError& e) {
      // A restored position the source's log no longer holds
      // (connectors/restore_position.h) fails the flow until START FLOW
      // ... RESET STATE, as lost checkpoints do: no retry can bring the
      // records back.
      if (e.sqlstate() == sqlstate::kDataCorrupted) {
        std::lock_guard lock(mu_);
        state_ = FlowState::Failed;
        failure_ = e.message();
        failureCode_ = e.sqlstate();
      }
      throw;
    }
  }
}

}  // namespace rtsql
