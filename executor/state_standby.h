// A standby replica of a flow's state: a warm copy kept on a node that does
// not run the flow, so that the node, when it takes the flow over, starts
// from it at once instead of reading the whole state copy
// (executor/state_copy.h) first.
//
// A standby follows the copy's committed records from its start (with a
// Follower, which fences no writer) and applies them to a RocksDB store of
// its own: the entries of one write are held until the write's checkpoint
// record comes, and then applied in one batch, so the store is always the
// state of exactly the last checkpoint applied (checkpoint()). A reset
// record empties it. Taking over writes that state into the flow's
// checkpoint directory as the copy's newest checkpoint, after reading on to
// it.
//
// The store is scratch: it lives in the directory given, is removed with the
// standby, and a node that restarts builds its standbys again from the copy.
//
// Reads of a materialized view on the standby's node (server/views/
// view_reads.h, rtsql.view_read) read the store through reader(): a RocksDB
// snapshot taken between two advance()s, when the store holds exactly the
// state of checkpoint(). A checkpoint's entries reach the store in one write
// batch, so no reader sees half of one, and a reader never holds up the next
// advance(). Each store (one per reset) has a directory of its own under the
// standby's, so a reader still held keeps its store readable after a reset,
// which removes that store's directory once the last reader lets it go.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "executor/checkpoint.h"
#include "executor/state/state_store.h"
#include "executor/state_copy.h"

namespace rtsql {

// What a read of a standby copy reads (StateStandby::reader()): the
// checkpoint its store holds (none: none applied yet) and a reader of that
// state (null with no checkpoint).
struct StandbyRead {
  std::optional<CheckpointInfo> checkpoint;
  std::shared_ptr<const StoredReader> state;
};

class StateStandby {
 public:
  // `dir` is the store's (removed first, and when the standby goes).
  StateStandby(std::shared_ptr<StateCopy> copy, std::string dir);
  ~StateStandby();
  StateStandby(const StateStandby&) = delete;
  StateStandby& operator=(const StateStandby&) = delete;

  // Applies what the copy committed since the last call, for at most
  // `maxMicros` (less when it catches up). Throws as Follower::poll.
  void advance(int64_t maxMicros);
  // The checkpoint whose state the store holds (nullopt: none yet).
  const std::optional<CheckpointInfo>& checkpoint() const { return checkpoint_; }
  // A reader of the store as it is now: the state of checkpoint(), when
  // called between two advance()s (by their caller); null before the first
  // checkpoint. It keeps its store open while held, and may be read from any
  // thread.
  std::shared_ptr<const StoredReader> reader() const;
  // Entries applied in all, for the log and the tests.
  int64_t applied() const { return applied_; }

  // Reads on until the store holds checkpoint `target` (giving up after
  // `quietMicros` without a record, or when a newer one comes first), then
  // writes it into `checkpoints` as checkpoint `target` (with its state) and
  // returns it; nullopt when the standby could not reach it. Throws as
  // advance() and CheckpointDir::write do.
  std::optional<CheckpointInfo> takeOver(CheckpointDir& checkpoints, const CheckpointInfo& target,
                                         int64_t quietMicros);

 private:
  void apply(StateCopy::Record&& record);
  void emptyStore();  // an empty store, nothing pending, no checkpoint
  void startOver();   // an empty store, following the copy from its start

  std::shared_ptr<StateCopy> copy_;
  std::string dir_;
  uint64_t stores_ = 0;  // stores made, which names each one's directory
  std::unique_ptr<StateStore> store_;
  std::unique_ptr<StateCopy::Follower> follower_;
  std::vector<StateChange> pending_;  // entries of the write whose checkpoint has not come
  std::optional<CheckpointInfo> checkpoint_;
  int64_t applied_ = 0;
  int64_t records_ = 0;  // records read in all
};

}  // namespace rtsql
