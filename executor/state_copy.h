// A copy of a flow's checkpoints off this machine, so that another machine can
// take the flow over with its state: in a cluster, a compacted Kafka topic
// per flow (connectors/kafka/state_copy_topic.h).
//
// The copy holds the state entries (keys with their table prefix, as
// executor/state/state_store.h stores them) and the metadata of the
// checkpoint they are the state of. It is written at each checkpoint with the
// entries that changed since the one before, together with that checkpoint's
// metadata, atomically; so reading it gives the state of exactly one
// checkpoint, the newest one written.
//
// A flow keeps the copy in step through a StateCopyKeeper (below): at start it
// reads the copy and restores from it when it is newer than the flow's own
// newest checkpoint (the flow ran on another machine since); when its own
// state is not the copy's (a local checkpoint newer than the copy, a reset),
// its next write is a whole one: every entry, and a removal for each key of
// the copy the state does not have. A write that fails is not lost: its
// changes go with the next one.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "executor/checkpoint.h"
#include "executor/connector_provider.h"
#include "executor/state/state_store.h"

namespace rtsql {

class StateCopy {
 public:
  virtual ~StateCopy() = default;

  struct Contents {
    std::optional<CheckpointInfo> checkpoint;  // the newest checkpoint it holds
    std::vector<StateChange> entries;          // that checkpoint's state (values all set)
    std::set<std::string> keys;  // every key the copy may still hold, stale ones included
  };
  // Reads the whole copy. Throws SqlError 08006 when it cannot be read.
  virtual Contents read() = 0;
  // The checkpoint the copy is the state of, when it can be told without
  // reading the whole copy (from its end); nullopt otherwise, and for a copy
  // that holds none. Throws as read() does.
  virtual std::optional<CheckpointInfo> newestCheckpoint() = 0;
  // Writes checkpoint `info` with `changes` (since the copy's previous
  // checkpoint, or, for a whole write, every entry and a removal of each key
  // the state no longer has), in one atomic write. With `within` (an
  // exactly-once flow's output transaction), the write is added to that open
  // transaction instead of one of the copy's own: it becomes visible exactly
  // when the epoch's rows do, so the copy is always at the epoch whose output
  // committed last. Throws SqlError 08006.
  virtual void write(const CheckpointInfo& info, const std::vector<StateChange>& changes,
                     SinkTransaction* within) = 0;
  // Throws SqlError 0A000 when writes cannot be added to `transaction` (it
  // writes to another Kafka cluster than the copy's).
  virtual void checkWithin(SinkTransaction& transaction) = 0;
  // Marks the copy empty: a new flow of the same name, or a reset of its
  // state. What it held is then no state of the flow (its keys are still
  // given by read(), for the next whole write to remove). Throws SqlError 08006.
  virtual void clear() = 0;
  // Lets go of the connections the copy holds until its next use.
  virtual void close() = 0;
  // Removes the copy for good (its flow was dropped). Throws SqlError 08006.
  virtual void destroy() = 0;

  // One committed record of the copy, as a follower reads it.
  struct Record {
    enum class Kind { Entry, Checkpoint, Reset };
    Kind kind = Kind::Entry;
    int64_t offset = 0;
    StateChange entry;                         // Kind::Entry
    std::optional<CheckpointInfo> checkpoint;  // Kind::Checkpoint
  };
  // A reader of the copy's committed records, in order, that fences no
  // writer: a standby's (executor/state_standby.h), which keeps reading while
  // the flow runs elsewhere.
  class Follower {
   public:
    virtual ~Follower() = default;
    // Gives `fn` the records committed after those given before (from the
    // follower's first offset at the first call), until none comes for a
    // moment or `maxMicros` have passed. Returns false when the first offset
    // is no longer in the copy (the caller starts over from 0). Throws
    // SqlError 08006 when the copy cannot be read, XX001 for a damaged
    // record.
    virtual bool poll(int64_t maxMicros, const std::function<void(Record&&)>& fn) = 0;
  };
  // A follower from offset `from` on.
  virtual std::unique_ptr<Follower> follow(int64_t from) = 0;
};

// The copy as one flow keeps it, from the start of a run to its end.
class StateCopyKeeper {
 public:
  // A warm copy of the state on this node (a standby's, kept in step with
  // the copy while the flow ran elsewhere: executor/state_standby.h): given
  // the copy's newest checkpoint, writes that checkpoint's state into the
  // checkpoint directory and returns it; nullopt when it cannot.
  using Warm = std::function<std::optional<CheckpointInfo>(CheckpointDir&, const CheckpointInfo&)>;
  // Where restore() found the state it returned.
  enum class Source { Local, Standby, Copy };

  explicit StateCopyKeeper(std::shared_ptr<StateCopy> copy, Warm warm = nullptr)
      : copy_(std::move(copy)), warm_(std::move(warm)) {}

  // At start, before the state store opens: reads the copy and, when it holds
  // a checkpoint newer than `local` (the flow's own newest; with
  // `maxEpoch`, only one of an epoch at most that), writes it into
  // `checkpoints` as the flow's newest checkpoint, which is returned. With
  // `reset`, the copy is read only to be replaced. A copy whose newest
  // checkpoint is `local` itself (a node restarted on its own last
  // checkpoint) is not read further; nor is one whose newest checkpoint the
  // warm copy gives. Throws as StateCopy::read and CheckpointDir::write do.
  std::optional<CheckpointInfo> restore(CheckpointDir& checkpoints,
                                        const std::optional<CheckpointInfo>& local, bool reset,
                                        uint64_t maxEpoch, const std::string& scratchDir);
  Source source() const { return source_; }
  // In the snapshot of a checkpoint (every task flushed and held): adds to
  // `changes` what the copy needs beyond them (every entry of `store`, when
  // the copy is not the state's).
  void collect(StateStore& store, std::vector<StateChange>& changes);
  // After the checkpoint is durable: writes it to the copy. A failure is
  // returned (empty: written); its changes go with the next write. With
  // `within`, the write is added to that open transaction (see
  // StateCopy::write), which the caller then commits; a failure of either
  // fails the flow's run, whose next run starts from the copy as it is.
  std::string write(const CheckpointInfo& info, std::vector<StateChange> changes,
                    SinkTransaction* within = nullptr);

 private:
  std::shared_ptr<StateCopy> copy_;
  Warm warm_;
  Source source_ = Source::Local;
  bool whole_ = true;            // the next write replaces the whole copy
  std::set<std::string> stale_;  // keys the copy may hold, while whole_
  std::map<std::string, std::optional<std::string>> unwritten_;  // changes of failed writes
};

}  // namespace rtsql
