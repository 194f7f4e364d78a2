#include "executor/state_standby.h"

#include <chrono>
#include <filesystem>
#include <thread>

#include "common/clock.h"

namespace rtsql {

StateStandby::StateStandby(std::shared_ptr<StateCopy> copy, std::string dir)
    : copy_(std::move(copy)), dir_(std::move(dir)) {
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
  startOver();
}

StateStandby::~StateStandby() {
  store_.reset();
  // Empty unless a reader still holds a store, whose directory goes with it.
  std::error_code ec;
  std::filesystem::remove(dir_, ec);
}

void StateStandby::emptyStore() {
  // The store closes (and removes its directory) once no reader holds it;
  // the next one is made beside it meanwhile.
  store_.reset();
  StateStoreOptions options;
  options.path = (std::filesystem::path(dir_) / std::to_string(++stores_)).string();
  options.destroyOnClose = true;
  store_ = StateStore::open(options);
  pending_.clear();
  checkpoint_.reset();
}

void StateStandby::startOver() {
  emptyStore();
  follower_ = copy_->follow(0);
}

void StateStandby::apply(StateCopy::Record&& record) {
  ++records_;
  switch (record.kind) {
    case StateCopy::Record::Kind::Entry:
      pending_.push_back(std::move(record.entry));
      return;
    case StateCopy::Record::Kind::Checkpoint:
      store_->write(pending_);
      applied_ += static_cast<int64_t>(pending_.size());
      pending_.clear();
      checkpoint_ = std::move(record.checkpoint);
      return;
    case StateCopy::Record::Kind::Reset:
      // What came before is no state of the flow: empty, read on from here.
      emptyStore();
      return;
  }
}

std::shared_ptr<const StoredReader> StateStandby::reader() const {
  if (!checkpoint_ || !store_) return nullptr;
  auto readers = store_->readers();
  return readers ? readers() : nullptr;
}

void StateStandby::advance(int64_t maxMicros) {
  if (!follower_->poll(maxMicros, [&](StateCopy::Record&& r) { apply(std::move(r)); })) {
    // Its start is no longer in the copy: read it again from its beginning.
    startOver();
  }
}

std::optional<CheckpointInfo> StateStandby::takeOver(CheckpointDir& checkpoints,
                                                     const CheckpointInfo& target,
                                                     int64_t quietMicros) {
  auto reached = [&] { return checkpoint_ && sameCheckpoint(*checkpoint_, target); };
  int64_t quietSince = monotonicMicros();
  while (!reached()) {
    // A checkpoint of a later epoch than the target: the target was passed
    // (another node writes on), and this state is not the one asked for.
    if (checkpoint_ && checkpoint_->epoch > target.epoch) return std::nullopt;
    const int64_t before = records_;
    advance(500'000);
    if (records_ != before) {
      quietSince = monotonicMicros();
    } else if (monotonicMicros() - quietSince > quietMicros) {
      return std::nullopt;
    } else {
      // Nothing came (a follower may answer at once, e.g. while the topic
      // is away): a pause, not a spin, before asking again.
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  CheckpointInfo info = *checkpoint_;
  info.hasState = true;
  checkpoints.write(info, [&](const std::string& dir) { store_->snapshot(dir); });
  return info;
}

}  // namespace rtsql
