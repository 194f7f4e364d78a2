// The RocksDB-backed StateStore and its tables.
//
// One RocksDB database holds the state of a flow. A table's keys are prefixed
// with its operator id and task index, each as 4 big-endian bytes; the prefix is
// fixed-width, so the key spaces of two tables never overlap and a table's keys
// are one contiguous range.
//
// Every table keeps a write-back cache: a hash map from key to entry, where an
// entry is a value, a tombstone (the key is erased, or known to be absent) and a
// dirty flag. Entries are linked in LRU order and, when dirty, also in a dirty
// list, so that flush() costs the dirty entries only.
//
// A range scan merges RocksDB, which holds what the table last wrote, with the
// dirty entries, which a scan finds through an ordered index of the dirty
// keys. The index is brought up to date by the scans themselves (new dirty
// entries are at the front of the dirty list), so a table that never scans
// never pays for it. A scan thus writes nothing, and the RocksDB iterator it
// reads is kept and only re-positioned until the table writes again (at
// flush() or an eviction): a per-record probe of the stream join is an
// ordered-set lookup and a seek, not a write batch and a new iterator. The memory budget is
// store-wide: all tables charge one atomic counter. A table is used by one task
// thread and can only evict its own entries, so when the store is over budget a
// table evicts its least recently used entries down to its fair share (budget /
// open tables); a table under its share leaves the excess to the tables above
// theirs, which evict on their next access or flush. Evicting a dirty entry
// writes it, in one batch with the other dirty entries of that eviction.
// Dirty entries are also written behind, the oldest first, in batches of
// 256 KB once they hold more than a megabyte, so that the
// flush at an epoch's end writes little (see RocksTable::writeBehind).
//
// A table's size() is exact: a put of a key the cache does not hold must know
// whether RocksDB has it. While the cache holds every entry of the table
// (it opened empty and never evicted) the answer is no, without a read; after
// that a filter of the keys the table wrote (stored_key_filter.h, over the
// one hash each key carries, key_hash.h) answers "not there" for almost
// every new key, and only a "maybe" reads.
//
// Durability: writes go to RocksDB with the write-ahead log disabled. The state
// of a flow is only meaningful at an epoch barrier, and that is what snapshot()
// captures: the checkpoint flushes the memtables into SST files. Between
// snapshots there is nothing a WAL could usefully recover, so it would only cost
// write bandwidth. RocksDB still flushes the memtables when the database closes.
#include <rocksdb/cache.h>
#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/options.h>
#include <rocksdb/statistics.h>
#include <rocksdb/table.h>
#include <rocksdb/utilities/checkpoint.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <cstdlib>
#include <atomic>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "executor/state/rocksdb_shared.h"

namespace rtsql {

using rocks_detail::holdRocksTableWrites;
using rocks_detail::makeRocksTable;
using rocks_detail::slice;
using rocks_detail::StoreShared;
using rocks_detail::throwIo;
using rocks_detail::view;

namespace {

uint64_t tableId(int operatorId, int task) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(operatorId)) << 32) |
         static_cast<uint32_t>(task);
}

class RocksStateStore final : public StateStore {
 public:
  explicit RocksStateStore(std::shared_ptr<StoreShared> shared) : shared_(std::move(shared)) {}

  std::unique_ptr<StateTable> table(int operatorId, int task) override {
    uint64_t id = tableId(operatorId, task);
    {
      // Two tables on one key space would have two incoherent caches.
      std::lock_guard lock(shared_->tablesMutex);
      if (!shared_->tables.emplace(id, nullptr).second)
        throw InternalError(
            fmt::format("state table of operator {} task {} is already open", operatorId, task));
    }
    try {
      auto table = makeRocksTable(shared_, id);
      std::lock_guard lock(shared_->tablesMutex);
      shared_->tables[id] = table.get();
      return table;
    } catch (...) {
      std::lock_guard lock(shared_->tablesMutex);
      shared_->tables.erase(id);
      throw;
    }
  }

  void holdWrites(int operatorId, int task, bool hold) override {
    StateTable* table = nullptr;
    {
      std::lock_guard lock(shared_->tablesMutex);
      auto it = shared_->tables.find(tableId(operatorId, task));
      if (it != shared_->tables.end()) table = it->second;
    }
    // The table belongs to the calling task's thread, so it is used unlocked.
    if (table) holdRocksTableWrites(*table, hold);
  }

  void snapshot(const std::string& dir, std::vector<StateChange>* changes) override {
    rocksdb::Checkpoint* raw = nullptr;
    auto s = rocksdb::Checkpoint::Create(shared_->db, &raw);
    std::unique_ptr<rocksdb::Checkpoint> checkpoint(raw);
    // log_size_for_flush = 0 flushes the memtables first, which is what makes
    // the checkpoint complete without a WAL.
    if (s.ok()) s = checkpoint->CreateCheckpoint(dir, /*log_size_for_flush=*/0);
    if (!s.ok()) throwIo(shared_->path, fmt::format("snapshot into '{}' failed", dir), s);
    // Every table is flushed and held while a snapshot is taken: no write
    // comes between the checkpoint and this.
    if (changes && shared_->recordChanges) {
      std::lock_guard lock(shared_->changesMutex);
      changes->reserve(changes->size() + shared_->changes.size());
      for (auto& [key, value] : shared_->changes) changes->push_back({key, std::move(value)});
      shared_->changes.clear();
    }
  }

  void write(const std::vector<StateChange>& entries) override {
    rocksdb::WriteBatch batch;
    for (const StateChange& e : entries) {
      if (e.value) {
        batch.Put(slice(e.key), slice(*e.value)).PermitUncheckedError();
      } else {
        batch.Delete(slice(e.key)).PermitUncheckedError();
      }
    }
    shared_->write(batch);
  }

  std::function<std::shared_ptr<const StoredReader>()> readers() override {
    // Weakly: a closed store is not kept open (its next open takes RocksDB's lock).
    return [weak = std::weak_ptr<StoreShared>(shared_)]() -> std::shared_ptr<const StoredReader> {
      std::shared_ptr<StoreShared> shared = weak.lock();
      return shared ? readRocksNow(std::move(shared)) : nullptr;
    };
  }

  void forEach(const std::function<void(std::string_view, std::string_view)>& fn) override {
    std::unique_ptr<rocksdb::Iterator> it(shared_->db->NewIterator(shared_->readOptions));
    for (it->SeekToFirst(); it->Valid(); it->Next()) fn(view(it->key()), view(it->value()));
    if (!it->status().ok()) throwIo(shared_->path, "reading the state failed", it->status());
  }

  int64_t diskBytes() const override {
    uint64_t sst = 0, mem = 0;
    shared_->db->GetIntProperty(rocksdb::DB::Properties::kTotalSstFilesSize, &sst);
    shared_->db->GetIntProperty(rocksdb::DB::Properties::kCurSizeAllMemTables, &mem);
    return static_cast<int64_t>(sst + mem);
  }

  std::map<std::string, uint64_t> engineStats() const override {
    std::map<std::string, uint64_t> out;
    rocksdb::DB* db = shared_->db;
    for (const char* name :
         {"rocksdb.num-files-at-level0", "rocksdb.num-files-at-level1",
          "rocksdb.num-files-at-level2", "rocksdb.num-files-at-level3",
          "rocksdb.cur-size-all-mem-tables", "rocksdb.num-immutable-mem-table",
          "rocksdb.estimate-pending-compaction-bytes", "rocksdb.num-running-compactions",
          "rocksdb.num-running-flushes", "rocksdb.actual-delayed-write-rate",
          "rocksdb.is-write-stopped", "rocksdb.total-sst-files-size",
          "rocksdb.block-cache-usage"}) {
      // Named without "rocksdb."; the file counts per level are text.
      uint64_t v = 0;
      std::string text;
      if (db->GetIntProperty(name, &v)) {
        out[name + 8] = v;
      } else if (db->GetProperty(name, &text)) {
        out[name + 8] = std::strtoull(text.c_str(), nullptr, 10);
      }
    }
    out["cache-bytes"] = static_cast<uint64_t>(std::max<int64_t>(0, shared_->memoryBytes.load()));
    // The counts of write stalls by cause, since the database opened.
    std::map<std::string, std::string> cf;
    if (db->GetMapProperty(rocksdb::DB::Properties::kCFStats, &cf)) {
      for (const auto& [name, value] : cf)
        if (name.starts_with("io_stalls.")) out[name] = std::strtoull(value.c_str(), nullptr, 10);
    }
    if (const auto& st = shared_->options.statistics) {
      out["stall-micros"] = st->getTickerCount(rocksdb::STALL_MICROS);
      out["flush-write-bytes"] = st->getTickerCount(rocksdb::FLUSH_WRITE_BYTES);
      out["compact-read-bytes"] = st->getTickerCount(rocksdb::COMPACT_READ_BYTES);
      out["compact-write-bytes"] = st->getTickerCount(rocksdb::COMPACT_WRITE_BYTES);
      out["bytes-written"] = st->getTickerCount(rocksdb::BYTES_WRITTEN);
      out["memtable-hit"] = st->getTickerCount(rocksdb::MEMTABLE_HIT);
      out["memtable-miss"] = st->getTickerCount(rocksdb::MEMTABLE_MISS);
      out["bloom-useful"] = st->getTickerCount(rocksdb::BLOOM_FILTER_USEFUL);
      // Point reads (a table's read behind a new key, or of an evicted entry).
      out["keys-read"] = st->getTickerCount(rocksdb::NUMBER_KEYS_READ);
      rocksdb::HistogramData h;
      st->histogramData(rocksdb::FLUSH_TIME, &h);
      out["flushes"] = h.count;
      out["flush-micros"] = h.sum;
      st->histogramData(rocksdb::COMPACTION_TIME, &h);
      out["compactions"] = h.count;
      out["compaction-micros"] = h.sum;
      st->histogramData(rocksdb::DB_WRITE, &h);
      out["write-micros-max"] = static_cast<uint64_t>(h.max);
    }
    return out;
  }

 private:
  std::shared_ptr<StoreShared> shared_;
};

}  // namespace

std::unique_ptr<StateStore> StateStore::open(const StateStoreOptions& options) {
  auto shared = std::make_shared<StoreShared>();
  shared->path = options.path;
  shared->budget = std::max<int64_t>(0, options.cacheBytes);
  shared->recordChanges = options.recordChanges;

  std::error_code ec;
  std::filesystem::create_directories(options.path, ec);
  if (ec)
    throw SqlError(sqlstate::kIoError,
                   fmt::format("state store at '{}': cannot create the directory: {}", options.path,
                               ec.message()));

  rocksdb::Options& o = shared->options;
  o.create_if_missing = true;
  o.compression = rocksdb::kLZ4Compression;
  // Levels 0 and 1 are rewritten soonest: compressing them costs the
  // compactions CPU that the new keys of a growing state need.
  o.compression_per_level = {rocksdb::kNoCompression, rocksdb::kNoCompression,
                             rocksdb::kLZ4Compression};
  o.max_background_jobs = 4;
  // A memtable about as large as the tables' budget: a checkpoint flushes
  // the memtable anyway, so state that gains a new key per record leaves one
  // level-0 file per epoch rather than one per 16 MB, and level 0 needs a
  // quarter of the compactions (the tables write behind in small batches,
  // which no longer make a memtable as large as their epoch's writes).
  o.write_buffer_size =
      static_cast<size_t>(std::clamp<int64_t>(options.cacheBytes, 16 << 20, 64 << 20));
  o.max_write_buffer_number = 3;
  // No bloom filter of the memtables' keys: it hashed every key written (a
  // kilobyte key costs as much to hash as to copy) to spare the read behind
  // a put of a new key a search of the skip list, and the tables now skip
  // that read for a key their filter of stored keys never saw
  // (stored_key_filter.h).
  // Room for the level-0 files a burst of new keys leaves before compaction
  // catches up, rather than slowing every write down at 20.
  o.level0_slowdown_writes_trigger = 40;
  o.level0_stop_writes_trigger = 64;
  o.max_open_files = 512;
  o.keep_log_file_num = 2;
  o.info_log_level = rocksdb::InfoLogLevel::WARN_LEVEL;
  if (options.statistics) o.statistics = rocksdb::CreateDBStatistics();
  // A store that is destroyed on close need not write its memtables first.
  o.avoid_flush_during_shutdown = options.destroyOnClose;
  rocksdb::BlockBasedTableOptions table;
  // RocksDB's block cache holds the cold state read back from disk; it is
  // separate from the tables' write-back budget and sized from it.
  table.block_cache = rocksdb::NewLRUCache(
      static_cast<size_t>(std::clamp<int64_t>(options.cacheBytes / 2, 1 << 20, 256LL << 20)));
  // Bloom filters make the read behind a put of a new key (needed for an exact
  // size()) cheap: it usually never touches an SST block.
  table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  // A hash index in each data block: a point read (a view's lookup by key,
  // the read behind a put) finds its key in the block without a binary
  // search of the block's restart points.
  table.data_block_index_type = rocksdb::BlockBasedTableOptions::kDataBlockBinaryAndHash;
  o.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));

  shared->writeOptions.disableWAL = true;
  auto s = rocksdb::DB::Open(o, options.path, &shared->db);
  if (!s.ok()) {
    shared->db = nullptr;
    throwIo(options.path, "cannot open", s);
  }
  // Set only once the database is ours: a failed open must never delete a
  // directory that may hold another store's state.
  shared->destroyOnClose = options.destroyOnClose;
  return std::make_unique<RocksStateStore>(std::move(shared));
}

}  // namespace rtsql
