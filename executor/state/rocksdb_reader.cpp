// A StoredReader over the RocksDB state store (state_store.h): a RocksDB
// snapshot of the database, read from any thread while the tasks write on.
#include <rocksdb/snapshot.h>

#include "executor/state/rocksdb_shared.h"

namespace rtsql::rocks_detail {

namespace {

class RocksReader final : public StoredReader, public std::enable_shared_from_this<RocksReader> {
 public:
  explicit RocksReader(std::shared_ptr<StoreShared> shared)
      : shared_(std::move(shared)), snapshot_(shared_->db->GetSnapshot()) {
    options_ = shared_->readOptions;
    options_.snapshot = snapshot_;
  }
  ~RocksReader() override { shared_->db->ReleaseSnapshot(snapshot_); }

  std::optional<std::string> get(std::string_view key) const override {
    std::string value;
    auto s = shared_->db->Get(options_, slice(key), &value);
    if (s.IsNotFound()) return std::nullopt;
    if (!s.ok()) throwIo(shared_->path, "reading the state failed", s);
    return value;
  }

  std::unique_ptr<Cursor> seek(std::string_view from) const override {
    std::unique_ptr<rocksdb::Iterator> it(shared_->db->NewIterator(options_));
    it->Seek(slice(from));
    return std::make_unique<RocksCursor>(shared_from_this(), std::move(it));
  }

 private:
  class RocksCursor final : public Cursor {
   public:
    RocksCursor(std::shared_ptr<const RocksReader> owner, std::unique_ptr<rocksdb::Iterator> it)
        : owner_(std::move(owner)), it_(std::move(it)) {}
    bool valid() const override {
      if (it_->Valid()) return true;
      if (!it_->status().ok())
        throwIo(owner_->shared_->path, "reading the state failed", it_->status());
      return false;
    }
    std::string_view key() const override { return view(it_->key()); }
    std::string_view value() const override { return view(it_->value()); }
    void next() override { it_->Next(); }

   private:
    std::shared_ptr<const RocksReader> owner_;  // keeps the snapshot
    std::unique_ptr<rocksdb::Iterator> it_;
  };

  std::shared_ptr<StoreShared> shared_;
  const rocksdb::Snapshot* snapshot_;
  rocksdb::ReadOptions options_;
};

}  // namespace

std::shared_ptr<const StoredReader> readRocksNow(std::shared_ptr<StoreShared> shared) {
  return std::make_shared<RocksReader>(std::move(shared));
}

}  // namespace rtsql::rocks_detail
