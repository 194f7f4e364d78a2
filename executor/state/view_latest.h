// A materialized view's latest state, rows of epochs not committed yet
// included: what `SET rtsql.view_snapshot = 'latest'` reads
// (server/views/view_reads.h), where a read by default sees the last
// committed epoch (view_table.h).
//
// A view's sink tasks write their rows into their state tables, whose cache
// reaches RocksDB at each epoch end (a flush) or when it evicts. The latest
// state is therefore RocksDB as it is now with, over it, what each task wrote
// since its last flush. The writers (ViewTableWriter) keep those writes here
// as well, each key's last row or its erasure, and a flush forgets them once
// RocksDB holds them; a read takes every task's writes and a RocksDB snapshot
// at one moment (no flush in between), so it sees each task's rows as of one
// point of its stream. The tasks are not at one epoch: a latest read is no
// snapshot of one epoch, and may see rows that a failure will take back.
//
// A task keeps at most kMaxBytes of writes between two flushes; past that it
// stops keeping them until its next flush, and a latest read answers 54000
// meanwhile (a flow with a long checkpoint interval and many keys changing).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "executor/state/view_table.h"

namespace rtsql {

class StateStore;
class StoredReader;

class ViewLatest {
 public:
  static constexpr int64_t kMaxBytes = 32LL << 20;  // per task, between two flushes

  ViewLatest(std::string viewName, int tasks);

  // A writer of task `task` opened on `store`: nothing written since its
  // flush. Until then, and after detach(), latest reads have none to give.
  void attach(int task, StateStore& store);
  void detach(int task);
  // A task's write of the row `row` under `key` (the view's encoded key),
  // and of an erasure.
  void put(int task, std::string_view key, std::string_view row);
  void erase(int task, std::string_view key);
  // Runs `flush`, the task's writes reaching RocksDB, and forgets them, as
  // one step for reads.
  void flushed(int task, const std::function<void()>& flush);

  // The view as it is now, laid out as `layout` says (whose epoch() is
  // kLatestEpoch); null when a task has no writer (the flow is not running).
  // Throws SqlError 54000 when a task keeps no writes (kMaxBytes).
  std::shared_ptr<const ViewSnapshot> read(const ViewLayout& layout) const;

  // The epoch of a latest read's snapshot: none is one epoch's.
  static constexpr uint64_t kLatestEpoch = UINT64_MAX;

 private:
  using Writes = std::map<std::string, std::optional<std::string>, std::less<>>;
  struct Task {
    mutable std::mutex mu;
    bool attached = false;
    bool overflowed = false;
    int64_t bytes = 0;
    Writes writes;
  };
  void record(int task, std::string_view key, std::optional<std::string_view> row);

  std::string viewName_;
  std::vector<std::unique_ptr<Task>> tasks_;
  mutable std::mutex readersMu_;  // guards readers_
  std::function<std::shared_ptr<const StoredReader>()> readers_;
};

}  // namespace rtsql
