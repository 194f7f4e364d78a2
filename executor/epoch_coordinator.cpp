// Epoch ends, task reports, checkpoints and the commit order
// (executor/epoch_coordinator.h).
#include "executor/epoch_coordinator.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "common/clock.h"
#include "common/json.h"
#include "common/log.h"
#include "executor/state/state_store.h"
#include "executor/state_copy.h"

namespace rtsql {

void EpochCoordinator::restored(const CheckpointInfo& checkpoint) {
  std::lock_guard lock(mu_);
  epoch_ = checkpoint.epoch + 1;
  lastCheckpoint_ = checkpoint;
}

void EpochCoordinator::reset(uint64_t epoch) {
  std::lock_guard lock(mu_);
  // Epochs only grow, so that the progress's batchId and an exactly-once
  // sink's committed epoch do.
  epoch_ = std::max(epoch_, epoch);
  lastCheckpoint_.reset();
}

void EpochCoordinator::forgetCheckpoint() {
  std::lock_guard lock(mu_);
  lastCheckpoint_.reset();
}

void EpochCoordinator::beginRun(int tasks, int64_t intervalMicros, Durability durability,
                                std::function<int64_t()> flowWatermark,
                                std::function<void()> wakeTasks) {
  std::lock_guard lock(mu_);
  tasks_ = tasks;
  intervalMicros_ = intervalMicros;
  durability_ = durability;
  flowWatermark_ = std::move(flowWatermark);
  wakeTasks_ = std::move(wakeTasks);
  requested_ = 0;
  committable_ = 0;
  final_ = false;
  stopRequested_ = false;
  done_ = false;
  reported_ = 0;
  runBase_ = epoch_;
  startEpoch(nowMicros());
}

void EpochCoordinator::startEpoch(int64_t startMicros) {
  epochStartMicros_ = startMicros;
  pending_ = std::make_unique<EpochSummary>();
  pending_->id = epoch_;
  pending_->startMicros = startMicros;
}

void EpochCoordinator::report(const EpochSummary& mine) {
  std::lock_guard lock(mu_);
  pending_->add(mine);
  if (++reported_ < tasks_) return;
  // Every task has ended the epoch: it is complete.
  pending_->endMicros = nowMicros();
  pending_->watermark = flowWatermark_ ? flowWatermark_() : INT64_MIN;
  last_ = std::move(pending_);
  ++epoch_;
  reported_ = 0;
  startEpoch(last_->endMicros);
  // The coordinator makes it durable, then lets the tasks commit.
  cv_.notify_all();
}

void EpochCoordinator::run() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    const uint64_t epoch = epoch_;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(intervalMicros_);
    cv_.wait_until(lock, deadline, [&] { return stopping_.load() || stopRequested_.load(); });
    if (stopping_) break;
    // Only the coordinator asks for epoch ends, one at a time: a stop during an
    // epoch's end waits for it, then ends the next one as the final epoch.
    const bool final = stopRequested_.load();
    if (final) final_.store(true, std::memory_order_release);
    requested_.store(epoch - runBase_ + 1, std::memory_order_release);
    if (wakeTasks_) wakeTasks_();
    // Tasks end the epoch between records; wait until the last one has.
    cv_.wait(lock, [&] { return stopping_ || epoch_ > epoch; });
    if (stopping_) break;
    if (durability_.checkpoints) {
      CheckpointInfo info;
      info.epoch = last_->id;
      info.epochEndMicros = last_->endMicros;
      info.watermark = last_->watermark;
      info.positions = last_->positions;
      info.taskWatermarks = last_->taskWatermarks;
      info.hasState = durability_.state != nullptr;
      const Durability d = durability_;
      lock.unlock();
      std::vector<StateChange> changes;
      try {
        d.checkpoints->write(info, [&](const std::string& dir) {
          d.state->snapshot(dir, d.copy ? &changes : nullptr);
          if (d.copy) d.copy->collect(*d.state, changes);
        });
      } catch (const SqlError& e) {
        fail_(fmt::format("cannot write the checkpoint of epoch {}: {}", info.epoch, e.message()),
              e.sqlstate());
        lock.lock();
        break;
      }
      if (d.transaction) {
        // The epoch's rows become visible to read_committed consumers, with the
        // epoch recorded in the same transaction; the next epoch's opens at once.
        // The state copy rides it too: a copy written after the commit could
        // miss a committed epoch (a node killed in between), whose input the
        // next node would then process, and write, again.
        try {
          if (d.copy) {
            std::string failed = d.copy->write(info, std::move(changes), d.transaction);
            if (!failed.empty()) {
              throw SqlError(sqlstate::kConnectionFailure, "its state copy: " + failed);
            }
          }
          d.transaction->commit(info.epoch);
          if (!final) d.transaction->begin();
        } catch (const SqlError& e) {
          fail_(fmt::format("cannot commit the output of epoch {}: {}", info.epoch, e.message()),
                e.sqlstate());
          lock.lock();
          break;
        }
      }
      if (d.copy && !d.transaction) {
        // The copy follows the checkpoint; one it misses is caught up by the
        // next (the flow goes on meanwhile: its checkpoints are on disk here).
        std::string failed = d.copy->write(info, std::move(changes));
        if (!failed.empty()) {
          logLine(fmt::format("flow \"{}\": checkpoint of epoch {} not copied yet: {}", flowName_,
                              info.epoch, failed));
        }
      }
      d.checkpoints->clearReset();  // a reset is done once a checkpoint after it is
      lock.lock();
      lastCheckpoint_ = std::move(info);
    }
    // Everything before the barriers is durable: sources may commit them.
    committable_.store(epoch - runBase_ + 1, std::memory_order_release);
    if (wakeTasks_) wakeTasks_();
    if (final) break;
  }
  done_ = true;
  cv_.notify_all();
}

void EpochCoordinator::finish(int64_t timeoutMicros) {
  std::unique_lock lock(mu_);
  // The coordinator ends the epoch in progress as the final one: sources stop
  // reading at their barrier, everything before it is flushed, checkpointed
  // and committed.
  stopRequested_ = true;
  cv_.notify_all();
  cv_.wait_for(lock, std::chrono::microseconds(timeoutMicros),
               [&] { return stopping_.load() || done_; });
}

void EpochCoordinator::wake() {
  // Under the lock, so that a waiter that has just found `stopping` false is
  // waiting already and gets the notification.
  std::lock_guard lock(mu_);
  cv_.notify_all();
}

uint64_t EpochCoordinator::epoch() const {
  std::lock_guard lock(mu_);
  return epoch_;
}

std::optional<CheckpointInfo> EpochCoordinator::lastCheckpoint() const {
  std::lock_guard lock(mu_);
  return lastCheckpoint_;
}

std::optional<uint64_t> EpochCoordinator::lastCheckpointEpoch() const {
  std::lock_guard lock(mu_);
  if (!lastCheckpoint_) return std::nullopt;
  return lastCheckpoint_->epoch;
}

std::optional<std::vector<PartitionProgress>> PendingOffsets::take(uint64_t durable) {
  std::optional<std::vector<PartitionProgress>> upTo;
  while (!pending_.empty() && pending_.front().first < durable) {
    upTo = std::move(pending_.front().second);
    pending_.pop_front();
  }
  return upTo;
}

}  // namespace rtsql
