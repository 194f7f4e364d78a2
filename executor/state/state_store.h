// Operator state. Every stateful operator keeps its state through this one
// interface, backed by RocksDB: one database per flow (under the server's data
// directory), one key space per operator and task (keys are prefixed with the
// operator id and the task index), and a write-back cache of hot entries in
// memory. State larger than the memory budget therefore works: cold entries
// live on disk and are read back on demand.
//
// A StateTable is used by one task thread only; the StateStore is shared by the
// tasks of a flow. snapshot() takes a consistent RocksDB checkpoint of what the
// tables have flushed: a task flushes its tables at each epoch end, so the
// snapshot after all tasks flushed epoch N is exactly the state at epoch N's
// barrier (the basis for checkpoints and recovery).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rtsql {

struct StateStoreOptions {
  std::string path;                         // the RocksDB directory (created when missing)
  int64_t cacheBytes = 64LL * 1024 * 1024;  // in-memory budget over all tables of the store
  bool destroyOnClose = false;              // remove the directory when the store closes
  // Keep what every write changed until the next snapshot, which hands it over
  // (a copy of the state elsewhere takes it: executor/state_copy.h).
  bool recordChanges = false;
  // Keep RocksDB's statistics (write stalls, flushes, compactions) for
  // engineStats(); costs a little CPU per write, so only benchmarks ask.
  bool statistics = false;
};

// One entry of the store as written: its key with the table's prefix (the
// operator id and task index, 8 bytes), and its value (none: erased).
struct StateChange {
  std::string key;
  std::optional<std::string> value;
};

class StateTable;

// What a store's RocksDB holds at one moment (the tables' flushed writes, and
// those a table's cache evicted), read from any thread while the tasks write
// on: a RocksDB snapshot, which keeps the database open while it is held.
// Keys are the stored ones, with their table's prefix.
class StoredReader {
 public:
  virtual ~StoredReader() = default;
  // The value stored under `key`, if any.
  virtual std::optional<std::string> get(std::string_view key) const = 0;
  // Entries in key order from the first key >= `from`.
  class Cursor {
   public:
    virtual ~Cursor() = default;
    // Throws SqlError 58030 when RocksDB fails to read.
    virtual bool valid() const = 0;
    virtual std::string_view key() const = 0;
    virtual std::string_view value() const = 0;
    virtual void next() = 0;
  };
  virtual std::unique_ptr<Cursor> seek(std::string_view from) const = 0;
};

class StateStore {
 public:
  // Opens (creating when missing) the database at options.path. Throws SqlError
  // 58030 naming the path when RocksDB cannot open it.
  static std::unique_ptr<StateStore> open(const StateStoreOptions& options);
  virtual ~StateStore() = default;

  // The key space of operator `operatorId` in task `task`. One table per key
  // space may be open at a time (InternalError otherwise); destroying a table
  // drops its unflushed writes.
  virtual std::unique_ptr<StateTable> table(int operatorId, int task) = 0;
  // A RocksDB checkpoint of every flushed write into `dir` (which must not exist).
  // With recordChanges, `changes` (when given) receives the entries written
  // since the previous snapshot, each key once with its last value, and the
  // record starts again.
  virtual void snapshot(const std::string& dir, std::vector<StateChange>* changes = nullptr) = 0;
  // Writes entries as they are (keys with their prefix), bypassing the tables;
  // only while no table is open (building a store from a copy).
  virtual void write(const std::vector<StateChange>& entries) = 0;
  // Visits every stored entry (keys with their prefix) in key order; only
  // while no table is open or all are flushed and held.
  virtual void forEach(const std::function<void(std::string_view key, std::string_view value)>& fn) = 0;
  // Holds back the writes of table (operatorId, task) that are not flush()es:
  // while held, the table neither evicts dirty entries nor writes them for a
  // scan, so RocksDB keeps exactly what its last flush() wrote. A task holds its
  // tables from its epoch barrier until the flow's checkpoint of that epoch is
  // taken, which is what makes the snapshot the state at the barrier while the
  // task goes on processing. Memory may exceed the budget meanwhile, and
  // after, while what piled up is written over the next writes (at a few
  // times the rate they come, so that no poll writes the whole of it). Called by
  // the table's task thread only; a table that is not open is ignored.
  virtual void holdWrites(int operatorId, int task, bool hold) = 0;
  // Takes a StoredReader of the store as it is at each call, from any thread
  // (null once the store has closed); a reader keeps the database open while
  // it is held, so a reader is for one read. Null for a store that cannot be
  // read so.
  virtual std::function<std::shared_ptr<const StoredReader>()> readers() { return {}; }
  // Bytes of live data on disk (approximate).
  virtual int64_t diskBytes() const = 0;
  // What the storage engine reports about itself, by name: level-0 files,
  // memtable bytes, write stalls, flushes and compactions (with
  // StateStoreOptions::statistics). For benchmarks and diagnostics; empty
  // for a store that has none.
  virtual std::map<std::string, uint64_t> engineStats() const { return {}; }
};

class StateTable {
 public:
  virtual ~StateTable() = default;

  // Point access. Reads hit the cache first, then RocksDB; writes go to the
  // cache and reach RocksDB at flush(), when the cache is over its budget, or
  // in small batches once the unflushed writes pass a megabyte (never
  // while the writes are held).
  virtual bool get(std::string_view key, std::string& value) = 0;
  virtual void put(std::string_view key, std::string_view value) = 0;
  virtual void erase(std::string_view key) = 0;
  // Visits the entries with from <= key < to in key order (cached writes
  // included) until `fn` returns false. Keys are this table's own keys (without
  // the prefix). Entries may be erased by `fn` through erase(). An empty `to`
  // means no upper bound (the rest of the table).
  virtual void scan(std::string_view from, std::string_view to,
                    const std::function<bool(std::string_view key, std::string_view value)>& fn) = 0;
  // Writes every dirty cached entry to RocksDB in one batch.
  virtual void flush() = 0;
  // Live entries in this table (exact: maintained on put/erase of new/old keys).
  virtual uint64_t size() const = 0;
  // Bytes of this table's entries held in memory.
  virtual int64_t memoryBytes() const = 0;
};

}  // namespace rtsql
