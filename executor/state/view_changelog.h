// A materialized view's changelog: what a flow or another view that reads the
// view in its FROM receives, every change of the view's rows exactly once
// across checkpoints and restarts of either flow.
//
// Where it lives: in the view's own state store, beside its rows. Each task of
// the view's sink stage appends the changes it applies to its key space of
// operator kViewChangelogOperatorId, an entry per change under the task's
// sequence number (8 bytes, big-endian), the task's next number under a key of
// its own. The entries reach RocksDB with the epoch's other writes and are
// held with them until the checkpoint (flow_epoch_end.cpp), so a checkpoint of
// the view holds its rows and its changelog as of one epoch, and the counters
// say where that changelog ends. Chosen over an internal Kafka topic because a
// view's flow has one sink and no transaction to share with one: a topic would
// need a second, transactional, writer per view and a broker for every server;
// the checkpoint directory is already the view's unit of consistency, and its
// reads (view_table.h) already open a checkpoint read-only.
//
// A reader (ViewChangelogSource, one source task with one partition) starts
// from the newest checkpoint of the view: its rows as of that epoch, as
// inserts (a view made before its readers still gives them every row), then
// the changelog entries after that checkpoint's counters, from each newer
// checkpoint in turn. Its position, checkpointed with the reading flow as the
// partition's resume token, is each view task's next sequence number (or,
// during the snapshot, the snapshot's epoch and the last key given), so a
// restart of either flow neither loses nor repeats a change: the reader only
// ever sees what a complete checkpoint of the view holds, and a view that
// recovers replays the same epochs after it.
//
// Expiry: every kViewChangelogExpiryMicros at most, each writer asks the
// server (setViewChangelogBound) up to where every reader of the view has
// checkpointed, and erases its entries below that, in its epoch's writes. The
// bound is the smallest position among the readers' newest checkpoints (none
// while a reader has none), and never past the counters of the view's newest
// checkpoint (a reader that starts later starts from a checkpoint at least as
// new). The server computes it under its statement lock, so no reader is
// being created meanwhile; it only tries the lock, and skips a round when a
// statement holds it.
//
// Cost: a reader sees a change once the view has checkpointed it (the view's
// checkpoint interval, 1 second by default, is the added latency); the
// writer reads each key's stored row to spell an update as the old row and
// the new one; each new checkpoint the reader moves to is a read-only open of
// its RocksDB files; a change is kept on disk until every reader has
// checkpointed past it (a stopped reader keeps the view's changes from its
// position on).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/row_kind.h"
#include "common/schema.h"
#include "executor/connector_provider.h"

namespace rtsql {

class StateStore;
class StateTable;

// The operator id of a view's changelog key spaces (one per task of its sink
// stage); no plan operator has it.
inline constexpr int kViewChangelogOperatorId = 0x7ffffff1;

// Each view task's next change to keep (entries below it may be erased), or
// nullopt to keep everything for now.
using ViewChangelogEnds = std::map<uint32_t, uint64_t>;
using ViewChangelogBound = std::function<std::optional<ViewChangelogEnds>(const std::string& view)>;
// How often a writer asks for its bound (first at its first flush).
inline constexpr int64_t kViewChangelogExpiryMicros = 10LL * 1000 * 1000;
// The process's answer to "up to where may view v's changelog go" (the
// server's); an empty function keeps everything.
void setViewChangelogBound(ViewChangelogBound bound);

// The end of each task's changelog in the newest complete checkpoint under
// `checkpointRoot` (a view's); nullopt when it has none.
std::optional<ViewChangelogEnds> checkpointedChangelogEnds(const std::string& checkpointRoot);
// Where the flow whose checkpoints are in `checkpointRoot` stands in view
// `view`'s changelog as of its newest complete checkpoint (the smallest
// position over its scans of the view); nullopt when that is not known (no
// checkpoint, or a position not read yet). `readsView` says whether that
// checkpoint has a position in the view at all (false: an empty answer).
std::optional<ViewChangelogEnds> readerPosition(const std::string& checkpointRoot,
                                                const std::string& view, bool* readsView);

// Task `task`'s changelog of view `view`, appended by its ViewTableWriter.
class ViewChangelogWriter {
 public:
  ViewChangelogWriter(StateStore& store, std::string view, int task);
  ~ViewChangelogWriter();

  // One change of the view's rows: `encodedRow` as common/row_codec.h
  // encodes it.
  void append(RowKind kind, std::string_view encodedRow);
  // Writes the epoch's entries and the next sequence number to the store.
  void flush();

 private:
  // Erases the entries below the bound the server gives, when it is time.
  void expire();

  std::unique_ptr<StateTable> table_;
  std::string view_;
  uint32_t task_ = 0;
  uint64_t next_ = 0;
  uint64_t low_ = 0;  // the first entry kept
  int64_t nextExpiryMicros_ = 0;
  bool dirty_ = false;
  std::string keyBuf_;
  std::string valueBuf_;
};

// The source task of a flow that reads view `view`, whose checkpoints are in
// `checkpointRoot` and whose rows have `schema`: the view's rows as of a
// checkpoint, then its changes (see above). One partition (0), resumed by its
// token.
std::unique_ptr<SourceTask> openViewChangelogSource(std::string view, std::string checkpointRoot,
                                                    Schema schema);

}  // namespace rtsql
