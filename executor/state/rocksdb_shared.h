// What the RocksDB-backed state store (rocksdb_store.cpp) and its tables
// (rocksdb_table.cpp) share: the open database, its options, the store-wide
// memory budget and the changes recorded for the state copy. Internal to
// executor/state/; the layout of the keys is described in rocksdb_store.cpp.
#pragma once

#include <fmt/format.h>
#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/write_batch.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "common/error.h"
#include "executor/state/state_store.h"

namespace rtsql::rocks_detail {


// What an entry costs beyond its key and value bytes: the entry (the two
// std::string headers, the key's hash, the list links) with its allocation,
// and its slots in the cache's index (entry_index.h), about.
constexpr int64_t kEntryOverhead = 144;
constexpr size_t kPrefixSize = 8;

[[noreturn]] inline void throwIo(const std::string& path, std::string_view what,
                          const rocksdb::Status& s) {
  throw SqlError(sqlstate::kIoError,
                 fmt::format("state store at '{}': {}: {}", path, what, s.ToString()));
}

inline rocksdb::Slice slice(std::string_view s) {
  return rocksdb::Slice(s.data(), s.size());
}
inline std::string_view view(const rocksdb::Slice& s) {
  return std::string_view(s.data(), s.size());
}

// What the tables of one store share. Tables hold it by shared_ptr, so the
// database stays open until the store and all its tables are gone.
struct StoreShared {
  std::string path;
  bool destroyOnClose = false;
  int64_t budget = 0;
  rocksdb::Options options;
  rocksdb::DB* db = nullptr;
  rocksdb::WriteOptions writeOptions;
  rocksdb::ReadOptions readOptions;

  std::atomic<int64_t> memoryBytes{0};
  std::atomic<int> openTables{0};
  std::mutex tablesMutex;
  std::unordered_map<uint64_t, StateTable*> tables;  // the open tables by (operatorId, task)

  ~StoreShared() {
    if (db) {
      // Close() flushes memtables (the WAL is off) unless the store is about to
      // be destroyed; its status is moot in a destructor.
      db->Close().PermitUncheckedError();
      delete db;
    }
    if (destroyOnClose) {
      rocksdb::DestroyDB(path, options).PermitUncheckedError();
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
  }

  // recordChanges: what the writes since the last snapshot changed.
  bool recordChanges = false;
  std::mutex changesMutex;
  std::map<std::string, std::optional<std::string>> changes;

  struct Recorder : rocksdb::WriteBatch::Handler {
    std::map<std::string, std::optional<std::string>>& into;
    explicit Recorder(std::map<std::string, std::optional<std::string>>& m) : into(m) {}
    void Put(const rocksdb::Slice& key, const rocksdb::Slice& value) override {
      into[key.ToString()] = value.ToString();
    }
    void Delete(const rocksdb::Slice& key) override { into[key.ToString()] = std::nullopt; }
  };

  void write(rocksdb::WriteBatch& batch) {
    auto s = db->Write(writeOptions, &batch);
    if (!s.ok()) throwIo(path, "write failed", s);
    if (recordChanges) {
      std::lock_guard lock(changesMutex);
      Recorder recorder(changes);
      batch.Iterate(&recorder).PermitUncheckedError();
    }
  }
};

// A table of the store: operator `id`'s state in one task (rocksdb_table.cpp).
std::unique_ptr<StateTable> makeRocksTable(std::shared_ptr<StoreShared> shared, uint64_t id);
// Holds (or lets go) a table's writes while a snapshot is taken.
void holdRocksTableWrites(StateTable& table, bool hold);

// A StoredReader of the database as it is now (rocksdb_reader.cpp).
std::shared_ptr<const StoredReader> readRocksNow(std::shared_ptr<StoreShared> shared);

// Opens the state directory of a view's checkpoint (epoch `epoch`)
// read-only, every file at once so that it stays readable after the
// checkpoint's retention removes the directory (view_table.cpp). The caller
// closes and deletes it. Throws SqlError 58030.
rocksdb::DB* openCheckpointReadOnly(const std::string& stateDir, uint64_t epoch);

}  // namespace rtsql::rocks_detail
