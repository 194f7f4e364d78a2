// A materialized view's rows: the keyed table a view's flow writes into its
// state store (ViewTableWriter, the flow's sink), and a snapshot of it as of
// one committed epoch (ViewSnapshot) that statements read.
//
// Layout: each task of the flow's sink stage writes its own key space of the
// flow's state store (operator kViewTableOperatorId, the task's index), a row
// under the order-preserving encoding of its key columns (common/row_codec.h)
// with the row encoded as the value. A key lands in one task (the stage is
// shuffled by the query's keys), so the view is the union of the tasks' key
// spaces, and a scan in key order merges them. A lookup reads first the key
// space of the task the shuffle's hash of the key names (shuffleKeyHashOf),
// the others only when that one has no such key.
//
// Writes reach RocksDB with the flow's epochs and are held from a barrier to
// its checkpoint (StateStore::holdWrites), so each checkpoint's state holds
// the view exactly as of its epoch. A snapshot opens the state directory of
// one checkpoint read-only: every row of it is of that epoch, whatever the
// flow does meanwhile (runs on, fails, stops, restarts), and the open files
// stay readable after the checkpoint's retention removes the directory.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/schema.h"
#include "common/value.h"
#include "executor/connector_provider.h"

namespace rtsql {

class StateStore;
class StateTable;
class StoredReader;
class ViewChangelogWriter;
class ViewLatest;

// The operator id of a view's key spaces in its flow's state store; no plan
// operator has it (operator ids count up from 0).
inline constexpr int kViewTableOperatorId = 0x7ffffff0;

// What a view's rows look like: its columns, the columns of its unique key
// (in key order), and how many tasks write it.
struct ViewLayout {
  Schema schema;
  std::vector<int> key;
  int tasks = 1;
};

// The sink of a view's flow in task `task`: each key's latest row, a delete
// (or a retracted old row) taking the key out, and every change appended to
// the task's changelog (view_changelog.h). flush() writes the epoch's rows
// and changes to the state store.
class ViewTableWriter final : public SinkWriter {
 public:
  // `latest`, when given, is told each write (view_latest.h).
  ViewTableWriter(StateStore& store, std::vector<int> key, std::string viewName, int task,
                  std::shared_ptr<ViewLatest> latest = nullptr);
  ~ViewTableWriter() override;

  void write(const Row& row, int64_t sourceTimestampMicros) override;
  void writeChange(const Row& row, int64_t sourceTimestampMicros, RowKind kind) override;
  void flush(int timeoutMs) override;
  int64_t deliveryErrors() const override { return 0; }
  std::string description() const override;

 private:
  std::unique_ptr<StateTable> table_;
  std::unique_ptr<ViewChangelogWriter> changelog_;
  std::vector<int> key_;
  std::string viewName_;
  int task_;
  std::shared_ptr<ViewLatest> latest_;
  std::string keyBuf_;
  std::string valueBuf_;
  std::string oldBuf_;
};

// The prefix of task `task`'s key space of the view's rows in its flow's
// state store.
std::string viewTablePrefix(int task);

// The encoded key of a row of the view with these key values (in key order).
std::string encodeViewKey(const std::vector<Value>& keyValues);

// Rows one at a time, in key order; the view's schema says their columns.
class RowIterator {
 public:
  virtual ~RowIterator() = default;
  // The next row into `out`; false at the end.
  virtual bool next(Row& out) = 0;
};

class ViewSnapshot {
 public:
  // The view as of checkpoint `epoch`, whose state directory is `stateDir`.
  // Throws SqlError 58030 when the directory cannot be opened.
  static std::shared_ptr<const ViewSnapshot> open(const std::string& stateDir, uint64_t epoch,
                                                  ViewLayout layout);
  // A view with no checkpoint yet: no rows, and no epoch.
  static std::shared_ptr<const ViewSnapshot> empty(ViewLayout layout);
  // The view as `stored` reads it, a store that holds exactly the state of
  // checkpoint `epoch` (a standby copy's, executor/state_standby.h); the
  // reader keeps it readable while the snapshot is held (view_latest.cpp).
  static std::shared_ptr<const ViewSnapshot> ofStored(std::shared_ptr<const StoredReader> stored,
                                                      uint64_t epoch, ViewLayout layout);
  virtual ~ViewSnapshot() = default;

  // The epoch of the checkpoint it reads; none for an empty view that has
  // not checkpointed yet (epochs count from 0).
  std::optional<uint64_t> epoch() const { return epoch_; }
  const Schema& schema() const { return layout_.schema; }
  const std::vector<int>& key() const { return layout_.key; }

  // The row whose key columns hold `keyValues` (in key order, typed as the
  // key columns), if any.
  virtual std::optional<Row> lookup(const std::vector<Value>& keyValues) const = 0;
  // The rows whose encoded key k has from <= k < to (an empty `to`: no
  // upper bound), in key order.
  virtual std::unique_ptr<RowIterator> range(const std::string& from,
                                             const std::string& to) const = 0;
  // Every row, in key order.
  std::unique_ptr<RowIterator> scan() const { return range({}, {}); }

 protected:
  ViewSnapshot(std::optional<uint64_t> epoch, ViewLayout layout)
      : epoch_(epoch), layout_(std::move(layout)) {}

  std::optional<uint64_t> epoch_;
  ViewLayout layout_;
};

}  // namespace rtsql
