// A flow's checkpoints on disk.
//
// A checkpoint is what recovery needs to resume a flow exactly at an epoch
// barrier: the source positions of every partition at the barrier, the flow's
// watermark, and a snapshot of its operator state taken when every task had
// flushed that epoch (executor/state/state_store.h). Each checkpoint is one
// directory under the flow's checkpoint root, named by its epoch:
//
//   <root>/00000000000000000042/checkpoint.meta   positions, watermark, sizes
//   <root>/00000000000000000042/state/            RocksDB checkpoint (stateful flows)
//
// A checkpoint is written into "<epoch>.tmp", every file and directory in it
// is fsync'ed, and only then is it renamed to its final name (and the root
// fsync'ed): a crash at any instant leaves either no trace of it or a complete
// one. The metadata carries a length and a CRC-32 of its body, so a torn or
// damaged file is detected and that checkpoint skipped for an older one, and
// the skip is reported (CheckpointSearch), never silent. Directories left as
// ".tmp" by a crash are removed when the root is read.
//
// A reset (START FLOW f RESET STATE) removes every checkpoint and leaves a
// marker file, "<root>/RESET", holding the epoch the flow goes on from: until
// the first checkpoint after it is durable, a start begins with empty state at
// the sources' startingOffsets again.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace rtsql {

struct CheckpointPosition {
  int scan = 0;           // index of the flow's source (PhysicalPlan::scans)
  std::string topic;      // empty for sources without topics
  int32_t partition = 0;
  int64_t offset = -1;    // the next offset to read after the barrier
  std::string position = {};  // PartitionProgress::position: the source's resume token, or empty
};

struct CheckpointTaskWatermark {
  int stage = 0;
  int task = 0;
  int64_t watermark = INT64_MIN;  // the task's watermark at its barrier
};

struct CheckpointInfo {
  uint64_t epoch = 0;
  int64_t epochEndMicros = 0;  // wall clock when the epoch's last task reached the barrier
  int64_t writtenMicros = 0;   // wall clock when the checkpoint became complete
  int64_t durationMicros = 0;  // epoch end to complete: snapshot, files, fsyncs
  int64_t stateBytes = 0;      // bytes of the state snapshot on disk
  int64_t watermark = INT64_MIN;
  bool hasState = false;
  std::vector<CheckpointPosition> positions;
  std::vector<CheckpointTaskWatermark> taskWatermarks;
  std::string dir;  // where it is (filled when read or written)
};

// What a search for the checkpoint to restore found.
struct CheckpointSearch {
  std::optional<CheckpointInfo> found;  // the newest intact one in range
  // Checkpoints in range that could not be read, newest first, with why: the
  // ones newer than `found`, or all of them when none was found.
  struct Skipped {
    uint64_t epoch = 0;
    std::string reason;
  };
  std::vector<Skipped> skipped;
};

// The same checkpoint: the same epoch, ended at the same instant (two runs
// that reached the same epoch number apart, on two machines, did not).
bool sameCheckpoint(const CheckpointInfo& a, const CheckpointInfo& b);

// The metadata file's text, and back. parseCheckpointMeta returns nullopt for
// text that is truncated, damaged, or not a checkpoint.
std::string formatCheckpointMeta(const CheckpointInfo& info);
std::optional<CheckpointInfo> parseCheckpointMeta(const std::string& text);

// fsync of a file or a directory, and of a directory with everything under
// it: what makes a write, a hard link or a rename durable. Throw SqlError
// 58030.
void syncFileOrDirectory(const std::string& path, bool directory);
void syncDirectoryTree(const std::string& dir);

class CheckpointDir {
 public:
  // `retain`: how many complete checkpoints to keep (at least 1).
  CheckpointDir(std::string root, int retain);

  const std::string& root() const { return root_; }

  // Writes checkpoint `info.epoch`. When info.hasState, `writeState(dir)` must
  // create `dir` with the state snapshot. Sets info.dir, writtenMicros,
  // durationMicros (from epochEndMicros) and stateBytes. Older checkpoints
  // beyond the retention count are deleted afterwards. Throws SqlError 58030
  // when the disk refuses.
  void write(CheckpointInfo& info, const std::function<void(const std::string& dir)>& writeState);

  // The newest complete, intact checkpoint, or nullopt. Removes the leftovers
  // of interrupted writes; skips (and keeps, for inspection) damaged ones.
  // With `maxEpoch`, the newest one of an epoch at most that (exactly-once
  // recovery: the newest checkpoint whose output transaction committed).
  std::optional<CheckpointInfo> latest(uint64_t maxEpoch = UINT64_MAX);
  // latest(), with the damaged checkpoints it passed over.
  CheckpointSearch search(uint64_t maxEpoch = UINT64_MAX);

  // Removes every checkpoint and marks the flow reset, to go on from epoch
  // `nextEpoch` (see above). Throws SqlError 58030.
  void markReset(uint64_t nextEpoch);
  // The epoch a reset flow goes on from, while the reset is pending.
  std::optional<uint64_t> pendingReset() const;
  // The first checkpoint after a reset is durable (and committed): the
  // reset is done. Cheap when none is pending.
  void clearReset();
  // Epochs of the complete checkpoints, oldest first.
  std::vector<uint64_t> epochs() const;
  // Whether a checkpoint was ever completed here (or a reset marked): the
  // directory holds more than the leftovers of a first write that a crash
  // interrupted. Retention never removes the newest checkpoint, so a
  // directory that did hold one and holds none now lost it.
  bool everWritten() const;

  // Replaces `stateDir` with a copy of the checkpoint's state (SST files are
  // immutable and hard-linked; the rest is copied, as RocksDB rewrites it).
  // With a checkpoint without state, `stateDir` is just removed.
  static void restoreState(const CheckpointInfo& info, const std::string& stateDir);

 private:
  std::string pathOf(uint64_t epoch) const;

  std::string root_;
  int retain_;
};

}  // namespace rtsql
