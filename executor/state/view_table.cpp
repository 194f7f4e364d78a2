// A materialized view's keyed table (view_table.h): its writer, a sink of the
// flow over a StateTable, and its snapshots, read-only RocksDB opens of a
// checkpoint's state.
#include "executor/state/view_table.h"

#include <rocksdb/cache.h>
#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/options.h>
#include <rocksdb/table.h>

#include <algorithm>

#include "common/row_codec.h"
#include "executor/shuffle.h"
#include "executor/state/rocksdb_shared.h"
#include "executor/state/state_store.h"
#include "executor/state/view_changelog.h"
#include "executor/state/view_latest.h"

namespace rtsql {

using rocks_detail::kPrefixSize;
using rocks_detail::slice;
using rocks_detail::view;

ViewTableWriter::ViewTableWriter(StateStore& store, std::vector<int> key, std::string viewName,
                                 int task, std::shared_ptr<ViewLatest> latest)
    : table_(store.table(kViewTableOperatorId, task)),
      changelog_(std::make_unique<ViewChangelogWriter>(store, viewName, task)),
      key_(std::move(key)),
      viewName_(std::move(viewName)),
      task_(task),
      latest_(std::move(latest)) {
  if (latest_) latest_->attach(task_, store);
}

ViewTableWriter::~ViewTableWriter() {
  if (latest_) latest_->detach(task_);
}

void ViewTableWriter::write(const Row& row, int64_t sourceTimestampMicros) {
  writeChange(row, sourceTimestampMicros, RowKind::Insert);
}

void ViewTableWriter::writeChange(const Row& row, int64_t, RowKind kind) {
  keyBuf_.clear();
  for (int k : key_) encodeKey(keyBuf_, row.at(static_cast<size_t>(k)));
  // The changelog spells each change from the row stored before it, so that
  // its readers get an update as the old row and the new one whatever the
  // view's flow sent (an update-mode aggregation sends only the new row).
  const bool had = table_->get(keyBuf_, oldBuf_);
  if (kind == RowKind::Insert || kind == RowKind::UpdateAfter) {
    valueBuf_.clear();
    encodeRow(valueBuf_, row);
    if (had && oldBuf_ == valueBuf_) return;  // no change
    if (latest_) latest_->put(task_, keyBuf_, valueBuf_);
    if (had) {
      changelog_->append(RowKind::UpdateBefore, oldBuf_);
      changelog_->append(RowKind::UpdateAfter, valueBuf_);
    } else {
      changelog_->append(RowKind::Insert, valueBuf_);
    }
    table_->put(keyBuf_, valueBuf_);
  } else {
    // A delete, or the old row of an update: the key's row is gone until an
    // UpdateAfter (next, when the key stays) puts the new one.
    if (!had) return;
    if (latest_) latest_->erase(task_, keyBuf_);
    changelog_->append(RowKind::Delete, oldBuf_);
    table_->erase(keyBuf_);
  }
}

void ViewTableWriter::flush(int) {
  if (latest_) {
    latest_->flushed(task_, [this] { table_->flush(); });
  } else {
    table_->flush();
  }
  changelog_->flush();
}

std::string ViewTableWriter::description() const {
  return "materialized view " + viewName_;
}

std::string encodeViewKey(const std::vector<Value>& keyValues) {
  std::string out;
  for (const Value& v : keyValues) encodeKey(out, v);
  return out;
}

std::string viewTablePrefix(int task) {
  const uint64_t id = (static_cast<uint64_t>(static_cast<uint32_t>(kViewTableOperatorId)) << 32) |
                      static_cast<uint32_t>(task);
  std::string prefix;
  for (int i = 7; i >= 0; --i) prefix += static_cast<char>((id >> (8 * i)) & 0xff);
  return prefix;
}

namespace {

// Blocks read by every snapshot of the process: bounded, whatever the views
// hold (RocksDB reads the rest from disk).
std::shared_ptr<rocksdb::Cache> sharedBlockCache() {
  static std::shared_ptr<rocksdb::Cache> cache = rocksdb::NewLRUCache(64 << 20);
  return cache;
}

class RocksViewSnapshot;

// A snapshot writes nothing into the checkpoint it reads, not even RocksDB's
// info log.
class NullLogger final : public rocksdb::Logger {
 public:
  using rocksdb::Logger::Logv;
  void Logv(const char*, va_list) override {}
};

// A k-way merge of the tasks' key spaces, each an iterator over its range.
class MergeIterator final : public RowIterator {
 public:
  MergeIterator(std::shared_ptr<const RocksViewSnapshot> owner,
                std::vector<std::unique_ptr<rocksdb::Iterator>> its,
                std::vector<std::string> uppers, std::vector<DataTypePtr> types)
      : owner_(std::move(owner)), its_(std::move(its)), uppers_(std::move(uppers)),
        types_(std::move(types)) {}

  bool next(Row& out) override {
    int best = -1;
    for (size_t i = 0; i < its_.size(); ++i) {
      rocksdb::Iterator& it = *its_[i];
      if (!valid(i)) continue;
      if (best < 0 || userKey(it) < userKey(*its_[static_cast<size_t>(best)])) {
        best = static_cast<int>(i);
      }
    }
    if (best < 0) return false;
    rocksdb::Iterator& it = *its_[static_cast<size_t>(best)];
    out = decodeRow(view(it.value()), types_);
    it.Next();
    return true;
  }

 private:
  bool valid(size_t i) const {
    rocksdb::Iterator& it = *its_[i];
    if (!it.Valid()) {
      if (!it.status().ok())
        throw SqlError(sqlstate::kIoError, "reading a materialized view failed: " +
                                               it.status().ToString());
      return false;
    }
    return uppers_[i].empty() || view(it.key()) < std::string_view(uppers_[i]);
  }
  static std::string_view userKey(rocksdb::Iterator& it) {
    return view(it.key()).substr(kPrefixSize);
  }

  std::shared_ptr<const RocksViewSnapshot> owner_;  // keeps the database open
  std::vector<std::unique_ptr<rocksdb::Iterator>> its_;
  std::vector<std::string> uppers_;
  std::vector<DataTypePtr> types_;
};

class RocksViewSnapshot final : public ViewSnapshot,
                                public std::enable_shared_from_this<RocksViewSnapshot> {
 public:
  RocksViewSnapshot(uint64_t epoch, ViewLayout layout, rocksdb::DB* db)
      : ViewSnapshot(epoch, std::move(layout)), db_(db), types_(layout_.schema.types()) {
    for (int t = 0; t < layout_.tasks; ++t) prefixes_.push_back(viewTablePrefix(t));
  }
  ~RocksViewSnapshot() override {
    if (db_) {
      db_->Close().PermitUncheckedError();
      delete db_;
    }
  }

  std::optional<Row> lookup(const std::vector<Value>& keyValues) const override {
    // A key is in one task's key space: the one the stage's shuffle gave it,
    // which hashes the query's keys (the view's key columns, in key order,
    // for a GROUP BY) as shuffleKeyHashOf() does. That task is read first;
    // the others only when it does not have the key (a miss, or a view whose
    // key is not what its stage is shuffled by: a join's, a top-N's).
    std::string key(kPrefixSize, '\0');
    for (const Value& v : keyValues) encodeKey(key, v);
    const size_t tasks = prefixes_.size();
    const size_t first = tasks > 1 ? shuffleKeyHashOf(keyValues) % tasks : 0;
    rocksdb::PinnableSlice value;
    for (size_t i = 0; i < tasks; ++i) {
      key.replace(0, kPrefixSize, prefixes_[(first + i) % tasks]);
      value.Reset();
      auto s = db_->Get(readOptions_, db_->DefaultColumnFamily(), slice(key), &value);
      if (s.IsNotFound()) continue;
      if (!s.ok()) {
        throw SqlError(sqlstate::kIoError,
                       "reading a materialized view failed: " + s.ToString());
      }
      return decodeRow(view(value), types_);
    }
    return std::nullopt;
  }

  std::unique_ptr<RowIterator> range(const std::string& from,
                                     const std::string& to) const override {
    std::vector<std::unique_ptr<rocksdb::Iterator>> its;
    std::vector<std::string> uppers;
    for (const std::string& prefix : prefixes_) {
      std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions()));
      it->Seek(slice(prefix + from));
      its.push_back(std::move(it));
      uppers.push_back(to.empty() ? prefixEnd(prefix) : prefix + to);
    }
    return std::make_unique<MergeIterator>(shared_from_this(), std::move(its), std::move(uppers),
                                           types_);
  }

 private:
  static std::string prefixEnd(std::string prefix) {
    while (!prefix.empty() && static_cast<uint8_t>(prefix.back()) == 0xff) prefix.pop_back();
    if (!prefix.empty()) prefix.back() = static_cast<char>(static_cast<uint8_t>(prefix.back()) + 1);
    return prefix;
  }

  rocksdb::DB* db_;
  const rocksdb::ReadOptions readOptions_;
  std::vector<DataTypePtr> types_;
  std::vector<std::string> prefixes_;
};

class EmptyViewSnapshot final : public ViewSnapshot {
 public:
  explicit EmptyViewSnapshot(ViewLayout layout)
      : ViewSnapshot(std::nullopt, std::move(layout)) {}
  std::optional<Row> lookup(const std::vector<Value>&) const override { return std::nullopt; }
  std::unique_ptr<RowIterator> range(const std::string&, const std::string&) const override {
    struct None final : RowIterator {
      bool next(Row&) override { return false; }
    };
    return std::make_unique<None>();
  }
};

}  // namespace

namespace rocks_detail {

rocksdb::DB* openCheckpointReadOnly(const std::string& stateDir, uint64_t epoch) {
  rocksdb::Options o;
  // Every file is opened now: the snapshot reads them even once the
  // checkpoint's retention has removed the directory.
  o.max_open_files = -1;
  o.info_log = std::make_shared<NullLogger>();
  rocksdb::BlockBasedTableOptions table;
  table.block_cache = sharedBlockCache();
  table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  o.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  rocksdb::DB* db = nullptr;
  auto s = rocksdb::DB::OpenForReadOnly(o, stateDir, &db);
  if (!s.ok()) {
    throw SqlError(sqlstate::kIoError, "cannot open the materialized view's checkpoint of epoch " +
                                           std::to_string(epoch) + ": " + s.ToString());
  }
  return db;
}

}  // namespace rocks_detail

std::shared_ptr<const ViewSnapshot> ViewSnapshot::open(const std::string& stateDir, uint64_t epoch,
                                                       ViewLayout layout) {
  rocksdb::DB* db = rocks_detail::openCheckpointReadOnly(stateDir, epoch);
  return std::make_shared<RocksViewSnapshot>(epoch, std::move(layout), db);
}

std::shared_ptr<const ViewSnapshot> ViewSnapshot::empty(ViewLayout layout) {
  return std::make_shared<EmptyViewSnapshot>(std::move(layout));
}

}  // namespace rtsql
