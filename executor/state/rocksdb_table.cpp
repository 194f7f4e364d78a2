// A table of the RocksDB-backed state store: its write-back cache, LRU and
// dirty lists, ordered index of dirty keys, range scans merging RocksDB with
// the dirty entries, and evictions within the store-wide budget (see the top
// of rocksdb_store.cpp for the design).
#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <set>
#include <unordered_set>
#include <vector>

#include "executor/state/entry_index.h"
#include "executor/state/key_hash.h"
#include "executor/state/rocksdb_shared.h"
#include "executor/state/stored_key_filter.h"

namespace rtsql::rocks_detail {

namespace {

// What the dirty entries of a table may hold before the oldest are written
// (RocksTable::writeBehind), so about what the flush at an epoch's end
// writes: 1 MB, 5 ms of CPU with 1.2 KB keys (4 MB took 20 - 40 ms in one
// poll with four tables on the thread). A table whose hot keys hold more
// than that may write some of them twice in an epoch.
constexpr int64_t kWriteBehindBytes = 1 << 20;
// How many entries that cannot leave the cache now (dirty while the writes
// are held, or beyond one eviction's batch) an eviction passes over before
// it stops (RocksTable::maybeEvict).
constexpr int kMaxPassedOver = 64;
// How much one call writes of the dirty entries (RocksTable::writable):
// kDrainBatchBytes, a poll's worth of 1.2 KB records twice over, so that a
// poll that writes one costs about 1 ms more rather than the 5 ms of a
// megabyte. What piled up while the writes were held for a checkpoint is
// written only as the writes after the hold earn it: each byte put or
// erased lets the table write kDrainPerByte bytes of the oldest dirty
// entries, in batches of kDrainBatchBytes to kDrainCapBytes. The backlog
// thus drains at three times the rate it came in, spread over the polls
// that follow in proportion to their records, rather than in the first
// poll after the hold.
constexpr int64_t kDrainBatchBytes = 256 << 10;
constexpr int64_t kDrainPerByte = 4;
constexpr int64_t kDrainCapBytes = 1 << 20;

class RocksTable final : public StateTable {
 public:
  RocksTable(std::shared_ptr<StoreShared> shared, uint64_t id)
      : shared_(std::move(shared)), id_(id) {
    for (int i = 7; i >= 0; --i) prefix_ += static_cast<char>((id >> (8 * i)) & 0xff);
    // The first key after this table's range; an all-0xff prefix has none and
    // relies on the prefix check in scan().
    prefixEnd_ = prefix_;
    while (!prefixEnd_.empty() && static_cast<uint8_t>(prefixEnd_.back()) == 0xff)
      prefixEnd_.pop_back();
    if (!prefixEnd_.empty())
      prefixEnd_.back() = static_cast<char>(static_cast<uint8_t>(prefixEnd_.back()) + 1);
    size_ = countStored();
    complete_ = size_ == 0;
    shared_->openTables.fetch_add(1);
  }

  ~RocksTable() override {
    // Unflushed writes are dropped: state is only defined at epoch barriers,
    // where the task flushes.
    shared_->memoryBytes.fetch_sub(bytes_.load() + stored_.memoryBytes());
    for (Entry* e = head_; e;) {
      Entry* next = e->next;
      delete e;
      e = next;
    }
    for (Entry* e : spares_) delete e;
    shared_->openTables.fetch_sub(1);
    std::lock_guard lock(shared_->tablesMutex);
    shared_->tables.erase(id_);
  }

  void setHold(bool hold) {
    held_ = hold;
    evictBlocked_ = false;
    if (!hold) {
      // Everything dirty now was written during the hold (its barrier's
      // flush wrote the rest). What was earned meanwhile (at most one
      // batch) is written now, the rest as the next writes earn it.
      backlog_ = dirtyBytes_;
      writeBehind();
      maybeEvict();
    }
  }

  bool get(std::string_view key, std::string& value) override {
    const KeyRef ref = hashed(key);
    if (Entry* e = find(ref)) {
      touch(e);
      last_ = e;
      if (e->erased) return false;
      value = e->value;
      return true;
    }
    bool found = readStored(ref, &value);
    // Misses are cached too, as tombstones: the usual next step is a put of the
    // same key, which then knows without another read that the key is new.
    last_ = insert(ref, found ? std::string_view(value) : std::string_view(), /*dirty=*/false,
                   /*erased=*/!found);
    maybeEvict();
    return found;
  }

  void put(std::string_view key, std::string_view value) override {
    // The usual put follows a get() of the same key (read, modify, write):
    // comparing the key with that entry's is cheaper than hashing it again.
    KeyRef ref{key, 0};
    Entry* e = nullptr;
    if (last_ && last_->key == key) {
      e = last_;
    } else {
      ref = hashed(key);
      e = find(ref);
    }
    if (e) {
      if (e->erased) size_.fetch_add(1);
      const int64_t delta =
          static_cast<int64_t>(value.size()) - static_cast<int64_t>(e->value.size());
      charge(delta);
      if (e->dirty) dirtyBytes_ += delta;
      e->value.assign(value.data(), value.size());
      e->erased = false;
      markDirty(e);
      touch(e);
    } else {
      if (!readStored(ref, nullptr)) size_.fetch_add(1);
      insert(ref, value, /*dirty=*/true, /*erased=*/false);
    }
    earn(key.size() + value.size());
    writeBehind();
    maybeEvict();
  }

  void erase(std::string_view key) override {
    const KeyRef ref = hashed(key);
    if (Entry* e = find(ref)) {
      if (!e->erased) {
        size_.fetch_sub(1);
        charge(-static_cast<int64_t>(e->value.size()));
        if (e->dirty) dirtyBytes_ -= static_cast<int64_t>(e->value.size());
        e->value.clear();
        e->value.shrink_to_fit();
        e->erased = true;
        markDirty(e);
      }
      touch(e);
    } else {
      bool existed = readStored(ref, nullptr);
      if (existed) size_.fetch_sub(1);
      // A clean tombstone for a key that was never stored saves a later read.
      insert(ref, {}, /*dirty=*/existed, /*erased=*/true);
    }
    earn(key.size());
    writeBehind();
    maybeEvict();
  }

  void scan(std::string_view from, std::string_view to,
            const std::function<bool(std::string_view key, std::string_view value)>& fn) override {
    if (!to.empty() && from >= to) return;
    indexDirty();
    // The dirty keys in range, copied: `fn` may put and erase, which changes
    // the index.
    std::vector<std::string> pending;
    for (auto i = dirtyIndex_.lower_bound(from); i != dirtyIndex_.end() && (to.empty() || *i < to);
         ++i)
      pending.emplace_back(*i);
    // A scan started by `fn` (none of the operators does) gets an iterator of
    // its own; so does a table without a first key after its range.
    std::optional<RangeIterator> own;
    rocksdb::Iterator* it;
    if (scanning_ || prefixEnd_.empty()) {
      own.emplace(*this, from, to);
      it = own->it.get();
    } else {
      it = seek(from, to);
    }
    struct Scanning {
      bool &flag, was;
      explicit Scanning(bool& f) : flag(f), was(f) { flag = true; }
      ~Scanning() { flag = was; }
    } scanning(scanning_);
    // Merges RocksDB with the dirty keys in key order. Each key is looked up
    // in the cache when visited, so a key that `fn` erased (or rewrote) ahead
    // of the scan is skipped (or shows its new value). The iterator reads a
    // fixed view of the database, so writes by `fn` do not disturb it.
    size_t next = 0;
    std::string key, current;
    for (;;) {
      std::string_view storedKey;
      bool stored = it->Valid();
      if (stored) {
        std::string_view full = view(it->key());
        stored = full.size() >= kPrefixSize && full.substr(0, kPrefixSize) == prefix_;
        if (stored) storedKey = full.substr(kPrefixSize);
        stored = stored && (to.empty() || storedKey < to);
      }
      bool fromCache;
      if (next < pending.size() && (!stored || pending[next] <= storedKey)) {
        key = pending[next];
        fromCache = true;
        if (stored && pending[next] == storedKey) it->Next();
        ++next;
      } else if (stored) {
        key.assign(storedKey);
        fromCache = false;
      } else {
        break;
      }
      bool more;
      const KeyRef ref = hashed(key);
      if (Entry* e = find(ref)) {
        if (!fromCache) it->Next();
        if (e->erased) continue;
        current = e->value;
        more = fn(key, current);
      } else if (fromCache) {
        // The dirty entry left the cache during the scan: it was evicted, so
        // written to RocksDB (after this iterator was made).
        if (!readStored(ref, &current)) continue;
        more = fn(key, current);
      } else {
        current.assign(view(it->value()));
        it->Next();
        more = fn(key, current);
      }
      if (!more) break;
    }
    if (!it->status().ok()) throwIo(shared_->path, "scan failed", it->status());
  }

  void flush() override {
    evictBlocked_ = false;  // the dirty entries become clean
    backlog_ = 0;
    if (dirtyHead_) {
      // Key order makes the memtable inserts walk the skip list nearly
      // sequentially, which is several times faster than random order.
      std::vector<Entry*> dirty;
      for (Entry* e = dirtyHead_; e; e = e->dirtyNext) dirty.push_back(e);
      std::sort(dirty.begin(), dirty.end(),
                [](const Entry* a, const Entry* b) { return a->key < b->key; });
      batch_.Clear();
      dirtyIndex_.clear();
      for (Entry* e : dirty) {
        addToBatch(batch_, e);
        e->indexed = false;
        unmarkDirty(e);
      }
      write(batch_);
      // While the cache holds the whole table, a tombstone tells nothing a
      // missing entry does not: the deletions just written leave the cache.
      // Otherwise state that keeps erasing keys it will never see again (the
      // expiry of dedup and the stream join) would fill the cache with
      // tombstones until it evicts, and from then on every new key would
      // cost a RocksDB read.
      if (complete_) {
        for (Entry* e : dirty)
          if (e->erased) forget(e);
      }
    }
    // An epoch ends: let go of the old view of the database.
    iterStale_ = true;
    if (!scanning_) iter_.reset();
    maybeEvict();
  }

  uint64_t size() const override {
    return static_cast<uint64_t>(std::max<int64_t>(0, size_.load()));
  }
  int64_t memoryBytes() const override { return bytes_.load(std::memory_order_relaxed); }

 private:
  // A RocksDB iterator over this table's keys in [from, to) (to empty: to the
  // table's end), positioned at the first; it owns the bound it refers to.
  struct RangeIterator {
    std::string upper;
    rocksdb::Slice upperSlice;
    std::unique_ptr<rocksdb::Iterator> it;
    RangeIterator(const RocksTable& t, std::string_view from, std::string_view to)
        : upper(to.empty() ? t.prefixEnd_ : t.prefix_ + std::string(to)), upperSlice(upper) {
      rocksdb::ReadOptions ro = t.shared_->readOptions;
      if (!upper.empty()) ro.iterate_upper_bound = &upperSlice;
      it.reset(t.shared_->db->NewIterator(ro));
      it->Seek(t.prefix_ + std::string(from));
    }
  };

  // The table's kept iterator, positioned at the first stored key >= from
  // with an upper bound of `to` (empty: the table's end). It is made anew
  // after the table wrote to RocksDB, and released at every flush(), so that
  // it does not pin old memtables and files for long.
  rocksdb::Iterator* seek(std::string_view from, std::string_view to) {
    upper_.assign(prefix_);
    if (to.empty()) {
      upper_.assign(prefixEnd_);
    } else {
      upper_.append(to);
    }
    // The bound is read through the pointer the iterator was made with, so
    // changing it before a seek re-bounds the kept iterator.
    upperSlice_ = rocksdb::Slice(upper_);
    if (iterStale_) {
      iter_.reset();
      iterStale_ = false;
    }
    if (!iter_) {
      rocksdb::ReadOptions ro = shared_->readOptions;
      ro.iterate_upper_bound = &upperSlice_;
      iter_.reset(shared_->db->NewIterator(ro));
    }
    seekKey_.assign(prefix_);
    seekKey_.append(from);
    iter_->Seek(seekKey_);
    return iter_.get();
  }

  // Adds the entries that became dirty since the last scan to dirtyIndex_:
  // markDirty() puts them at the front of the dirty list.
  void indexDirty() {
    for (Entry* e = dirtyHead_; e && !e->indexed; e = e->dirtyNext) {
      dirtyIndex_.insert(std::string_view(e->key));
      e->indexed = true;
    }
  }

  // Writes a batch of this table's entries; the kept iterator no longer
  // sees RocksDB as it is.
  void write(rocksdb::WriteBatch& batch) {
    shared_->write(batch);
    iterStale_ = true;
    // A batch keeps its buffer when cleared: let go of one that an epoch's
    // flush made much larger than write-behind's.
    if (&batch == &batch_ && batch_.GetDataSize() > 4 * kWriteBehindBytes)
      batch_ = rocksdb::WriteBatch();
  }

  // A key to look up, as the caller holds it, with its hash (key_hash.h),
  // computed once when the key came in: the cache's index, its growth and
  // its evictions read the hash rather than hash a (possibly kilobyte) key
  // again, and the filter of stored keys takes the same hash.
  struct KeyRef {
    std::string_view bytes;
    uint64_t hash = 0;
  };
  static KeyRef hashed(std::string_view key) { return {key, stateKeyHash(key)}; }

  struct Entry {
    std::string key;
    uint64_t hash = 0;  // stateKeyHash(key)
    std::string value;
    Entry* prev = nullptr;  // LRU order, most recent first
    Entry* next = nullptr;
    Entry* dirtyPrev = nullptr;
    Entry* dirtyNext = nullptr;
    bool dirty = false;
    bool erased = false;  // a tombstone: a pending delete when dirty, a known absence when clean
    bool indexed = false;  // dirty and in dirtyIndex_
  };

  static int64_t entryBytes(std::string_view key, size_t valueSize) {
    return static_cast<int64_t>(key.size() + valueSize) + kEntryOverhead;
  }

  // Lets the table write kDrainPerByte times `bytes` more of a hold's
  // backlog (see kDrainPerByte), up to one batch's worth.
  void earn(size_t bytes) {
    drain_ = std::min(kDrainCapBytes, drain_ + kDrainPerByte * static_cast<int64_t>(bytes));
    if (drain_ >= kDrainBatchBytes) evictBlocked_ = evictBlocked_ && held_;
  }

  // The bytes of dirty entries one call may write now (0: none): what the
  // writes earned while a hold's backlog drains, kDrainBatchBytes otherwise
  // (the dirty entries then exceed their bound or the budget by less than
  // a record, so one batch is enough).
  int64_t writable() {
    backlog_ = std::min(backlog_, dirtyBytes_);
    if (backlog_ <= 0) return kDrainBatchBytes;
    return drain_ >= kDrainBatchBytes ? drain_ : 0;
  }

  void spend(int64_t written) {
    drain_ = std::max<int64_t>(0, drain_ - written);
    backlog_ -= written;
  }

  // Writes the oldest dirty entries (they stay cached, clean), one batch of
  // what may be written now (writable()), when the dirty ones hold more
  // than kWriteBehindBytes and the table's writes are not held. State that
  // gains a new key per record thus reaches RocksDB in small batches as it comes,
  // rather than all at the epoch's end, whose flush() would otherwise write
  // up to the whole cache at once while the records behind the barrier wait
  // (a pause that grew with the memory budget, not with the rate). A table
  // whose dirty entries are few (hot keys updated over and over) never gets
  // here and still writes each of them once per epoch.
  void writeBehind() {
    if (held_ || dirtyBytes_ <= kWriteBehindBytes) return;
    const int64_t limit = writable();
    if (limit == 0) return;
    behind_.clear();
    // One batch per call: in a steady state 256 KB each time the dirty
    // entries grew by that much; after a hold, what piled up drains over the next
    // puts, a batch every few of them (a poll of records writes a few times
    // what it brought), rather than a megabyte at each put, which made the
    // first poll after a hold write up to everything held.
    int64_t taken = 0;
    for (Entry* e = dirtyTail_; e && taken < limit; e = e->dirtyPrev) {
      behind_.push_back(e);
      taken += static_cast<int64_t>(e->key.size() + e->value.size());
    }
    spend(taken);
    std::sort(behind_.begin(), behind_.end(),
              [](const Entry* a, const Entry* b) { return a->key < b->key; });
    batch_.Clear();
    for (Entry* e : behind_) {
      addToBatch(batch_, e);
      unmarkDirty(e);
    }
    write(batch_);
  }

  Entry* find(const KeyRef& key) { return index_.find(key.bytes, key.hash); }

  void charge(int64_t delta) {
    bytes_.store(bytes_.load(std::memory_order_relaxed) + delta, std::memory_order_relaxed);
    shared_->memoryBytes.fetch_add(delta, std::memory_order_relaxed);
  }

  const std::string& storedKey(std::string_view key) {
    keyBuf_.assign(prefix_);
    keyBuf_.append(key);
    return keyBuf_;
  }

  // Reads the key from RocksDB into `value` (or only tests presence when null).
  // A key the filter of stored keys never saw is not read: it is not there.
  bool readStored(const KeyRef& key, std::string* value) {
    if (complete_ || !stored_.mayContain(key.hash)) return false;
    rocksdb::PinnableSlice pinned;
    auto s = shared_->db->Get(shared_->readOptions, shared_->db->DefaultColumnFamily(),
                              slice(storedKey(key.bytes)), &pinned);
    if (s.IsNotFound()) return false;
    if (!s.ok()) throwIo(shared_->path, "read failed", s);
    if (value) value->assign(pinned.data(), pinned.size());
    return true;
  }

  // The number of keys stored under the prefix: the exact size of a table
  // opened on existing state (e.g. a restored snapshot). Each goes into the
  // filter of stored keys.
  int64_t countStored() {
    rocksdb::ReadOptions ro = shared_->readOptions;
    rocksdb::Slice upperSlice(prefixEnd_);
    if (!prefixEnd_.empty()) ro.iterate_upper_bound = &upperSlice;
    std::unique_ptr<rocksdb::Iterator> it(shared_->db->NewIterator(ro));
    int64_t n = 0;
    for (it->Seek(prefix_); it->Valid() && it->key().starts_with(prefix_); it->Next()) {
      noteStored(stateKeyHash(view(it->key()).substr(kPrefixSize)));
      ++n;
    }
    if (!it->status().ok()) throwIo(shared_->path, "scan failed", it->status());
    return n;
  }

  Entry* insert(const KeyRef& key, std::string_view value, bool dirty, bool erased) {
    Entry* e;
    if (spares_.empty()) {
      e = new Entry;
    } else {
      e = spares_.back();
      spares_.pop_back();
      spareBytes_ -= e->key.capacity() + e->value.capacity();
    }
    e->key.assign(key.bytes.data(), key.bytes.size());
    e->hash = key.hash;
    index_.insert(e);
    e->value.assign(value.data(), value.size());
    e->erased = erased;
    if (dirty) markDirty(e);
    linkFront(e);
    charge(entryBytes(key.bytes, value.size()));
    return e;
  }

  void linkFront(Entry* e) {
    e->prev = nullptr;
    e->next = head_;
    if (head_) head_->prev = e;
    head_ = e;
    if (!tail_) tail_ = e;
  }

  void unlink(Entry* e) {
    (e->prev ? e->prev->next : head_) = e->next;
    (e->next ? e->next->prev : tail_) = e->prev;
    e->prev = e->next = nullptr;
  }

  void touch(Entry* e) {
    if (head_ == e) return;
    unlink(e);
    linkFront(e);
  }

  void markDirty(Entry* e) {
    if (e->dirty) return;
    e->dirty = true;
    e->dirtyPrev = nullptr;
    e->dirtyNext = dirtyHead_;
    if (dirtyHead_) dirtyHead_->dirtyPrev = e;
    dirtyHead_ = e;
    if (!dirtyTail_) dirtyTail_ = e;
    dirtyBytes_ += static_cast<int64_t>(e->key.size() + e->value.size());
  }

  void unmarkDirty(Entry* e) {
    if (!e->dirty) return;
    e->dirty = false;
    if (e->indexed) {
      dirtyIndex_.erase(std::string_view(e->key));
      e->indexed = false;
    }
    dirtyBytes_ -= static_cast<int64_t>(e->key.size() + e->value.size());
    (e->dirtyPrev ? e->dirtyPrev->dirtyNext : dirtyHead_) = e->dirtyNext;
    (e->dirtyNext ? e->dirtyNext->dirtyPrev : dirtyTail_) = e->dirtyPrev;
    e->dirtyPrev = e->dirtyNext = nullptr;
  }

  // The stored key is the prefix and the cached key, handed to the batch in
  // two parts: the batch copies them into its buffer once, where building the
  // stored key first would copy every (possibly kilobyte) key twice.
  // A value written goes into the filter of stored keys.
  void addToBatch(rocksdb::WriteBatch& batch, const Entry* e) {
    const rocksdb::Slice parts[2] = {slice(prefix_), slice(e->key)};
    const rocksdb::SliceParts key(parts, 2);
    rocksdb::Status s;
    if (e->erased) {
      s = batch.Delete(key);
    } else {
      const rocksdb::Slice value = slice(e->value);
      s = batch.Put(key, rocksdb::SliceParts(&value, 1));
      noteStored(e->hash);
    }
    if (!s.ok()) throwIo(shared_->path, "write failed", s);
  }

  // The share of the store's budget this table may hold: an equal part of
  // it for each open table.
  int64_t share() const {
    return shared_->budget / std::max(1, shared_->openTables.load(std::memory_order_relaxed));
  }

  // Adds a key written to RocksDB (or found there) to the filter of stored
  // keys. While the cache holds the whole table (complete_) no read is made
  // and the filter is left empty: the first eviction seeds it from the cache
  // (seedStored). Its memory counts in the store's budget, as this table's:
  // at most a quarter of the table's share, past which the filter saturates
  // (every new key is read again).
  void noteStored(uint64_t hash) {
    if (!complete_) chargeFilter(stored_.add(hash, share() / 4));
  }

  // The cache no longer holds the whole table: what RocksDB may hold of it
  // is what the cache holds now (every key the table wrote went through it,
  // and left it only as a deletion written). One walk over the cache, with
  // the hashes its keys carry.
  void seedStored() {
    index_.forEach([&](const Entry& e) { chargeFilter(stored_.add(e.hash, share() / 4)); });
  }

  void chargeFilter(int64_t delta) {
    if (delta != 0) shared_->memoryBytes.fetch_add(delta, std::memory_order_relaxed);
  }

  // What the table holds in memory against its share: its entries and its
  // filter of stored keys.
  int64_t held() const { return bytes_.load(std::memory_order_relaxed) + stored_.memoryBytes(); }

  // Evicts least recently used entries while the store is over its budget and
  // this table holds more than its share. Evicting stops at 98% of the limit
  // that triggered it, so that the next few inserts do not each evict again;
  // no lower, so that one eviction (which frees each entry it takes) stays
  // short: state that grows by a key per record evicts a little every few
  // polls rather than a tenth of the budget in one.
  void maybeEvict() {
    int64_t budget = shared_->budget;
    int64_t total = shared_->memoryBytes.load(std::memory_order_relaxed);
    if (total <= budget || evictBlocked_) return;
    const int64_t share = this->share();
    // A filter of stored keys that grew while fewer tables were open may
    // hold more of the share now than evicting entries could make up for.
    if (stored_.memoryBytes() > share / 2) chargeFilter(stored_.saturate());
    int64_t mine = held();
    if (mine <= share) return;
    int64_t target = std::max(mine - (total - budget * 49 / 50), share * 49 / 50);
    const int64_t limit = held_ ? 0 : writable();
    rocksdb::WriteBatch& batch = batch_;
    batch.Clear();
    bool wrote = false;
    int64_t written = 0;
    Entry* e = tail_;
    int passedOver = 0;
    bool evicted = false;
    while (e && held() > target) {
      Entry* victim = e;
      e = e->prev;
      // A dirty entry stays while the writes are held; and, as with writing
      // behind, one call writes one batch (writable()), and what piled up during
      // a hold only as the writes after it earn it (writable()): the cache
      // stays over its budget meanwhile. Past a few such entries
      // the walk stops: when the least recently used entries are all dirty
      // (state that gains a new key per record), walking on to the clean
      // ones passed over the whole cache at every write, which made loading
      // millions of keys slow down to a crawl.
      if (victim->dirty &&
          (limit == 0 ||
           (written > 0 &&
            written + static_cast<int64_t>(victim->key.size() + victim->value.size()) > limit))) {
        if (++passedOver >= kMaxPassedOver) break;
        continue;
      }
      evicted = true;
      if (victim->dirty) {
        written += static_cast<int64_t>(victim->key.size() + victim->value.size());
        addToBatch(batch, victim);
        unmarkDirty(victim);
        wrote = true;
      }
      evict(victim);
    }
    if (wrote) {
      spend(written);
      write(batch);
    }
    // Nothing could leave while the writes are held, or before the writes
    // earn a batch: none will until the hold ends (setHold) or they have
    // (earn()), so the walk is not made again at every write.
    if (!evicted) evictBlocked_ = true;
  }

  void evict(Entry* e) {
    if (complete_) {
      complete_ = false;
      seedStored();
    }
    forget(e);
  }

  // Removes a clean entry from the cache.
  void forget(Entry* e) {
    if (last_ == e) last_ = nullptr;
    unlink(e);
    charge(-entryBytes(e->key, e->value.size()));
    index_.erase(e);
    keepSpare(e);
  }

  // Keeps an entry that left the cache, with its key's and value's buffers,
  // for the next insert(), or frees it. State that gains a new key per
  // record evicts about as many entries as it inserts: a kilobyte key then
  // goes into the buffer an evicted one had, where a new one would be a
  // kilobyte allocation per record (past the allocator's per-thread cache,
  // which takes blocks up to 1,032 bytes). The spares hold at most a 64th of
  // the table's share of the budget (and 256 KiB), so all tables' spares
  // hold at most a 64th of the store's budget; they are not charged to it.
  void keepSpare(Entry* e) {
    const size_t bytes = e->key.capacity() + e->value.capacity();
    const auto bound = static_cast<size_t>(std::min<int64_t>(kMaxSpareBytes, share() / 64));
    if (spareBytes_ + bytes > bound) {
      delete e;
      return;
    }
    e->prev = e->next = e->dirtyPrev = e->dirtyNext = nullptr;
    e->dirty = e->erased = e->indexed = false;
    spareBytes_ += bytes;
    spares_.push_back(e);
  }

  std::shared_ptr<StoreShared> shared_;
  uint64_t id_;
  std::string prefix_;
  std::string prefixEnd_;
  std::string keyBuf_;
  // The cached entries by key; the table owns them (every one is in the LRU
  // list, which the destructor walks).
  EntryIndex<Entry> index_;
  Entry* head_ = nullptr;
  Entry* tail_ = nullptr;
  Entry* dirtyHead_ = nullptr;
  Entry* dirtyTail_ = nullptr;  // the entry dirty the longest
  // Key and value bytes of the dirty entries (see writeBehind()).
  int64_t dirtyBytes_ = 0;
  // Bytes of a hold's backlog the table may write now (earn()).
  int64_t drain_ = 0;
  // Bytes of the dirty entries put while the writes were held that are not
  // written yet (writable()).
  int64_t backlog_ = 0;
  // The entry the last get() found or made (see put()).
  Entry* last_ = nullptr;
  // Entries that left the cache, kept for reuse (keepSpare), and the bytes
  // of their buffers.
  static constexpr int64_t kMaxSpareBytes = 256 << 10;
  std::vector<Entry*> spares_;
  size_t spareBytes_ = 0;
  // Reused by every write of the table, so that a batch grows its buffer once.
  rocksdb::WriteBatch batch_;
  std::vector<Entry*> behind_;
  // The keys this table may have in RocksDB (stored_key_filter.h): a new
  // key the filter never saw needs no read behind its put, even once the
  // cache no longer holds every entry.
  StoredKeyFilter stored_;
  // True while the cache holds every entry of the table (it started empty and
  // has never evicted), so a key missing from the cache is absent and needs no
  // read. This is the common case of state that fits its budget.
  bool complete_ = false;
  bool held_ = false;  // see StateStore::holdWrites
  // Nothing could be evicted: the writes are held, or have not earned a
  // batch (maybeEvict).
  bool evictBlocked_ = false;
  // The dirty keys a scan has seen (Entry::indexed), in key order; the views
  // point at the map's keys.
  std::set<std::string_view> dirtyIndex_;
  // The iterator scans re-use (seek()), its upper bound and seek key, and
  // whether the table wrote since it was made.
  std::unique_ptr<rocksdb::Iterator> iter_;
  bool iterStale_ = false;
  std::string upper_, seekKey_;
  rocksdb::Slice upperSlice_;
  bool scanning_ = false;
  // Written by the owning task only; atomic so that progress reporting may read
  // them from another thread.
  std::atomic<int64_t> bytes_{0};
  std::atomic<int64_t> size_{0};
};

}  // namespace

std::unique_ptr<StateTable> makeRocksTable(std::shared_ptr<StoreShared> shared, uint64_t id) {
  return std::make_unique<RocksTable>(std::move(shared), id);
}

void holdRocksTableWrites(StateTable& table, bool hold) {
  static_cast<RocksTable&>(table).setHold(hold);
}

}  // namespace rtsql::rocks_detail
