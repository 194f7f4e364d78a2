// A materialized view's latest state (view_latest.h): the writes its sink
// tasks made since their last flush, over a RocksDB snapshot of the rest.
#include "executor/state/view_latest.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/error.h"
#include "common/row_codec.h"
#include "executor/shuffle.h"
#include "executor/state/state_store.h"

namespace rtsql {

namespace {

// What an entry of a task's writes costs beyond its bytes: the map node and
// the strings' headers, rounded up.
constexpr int64_t kEntryOverhead = 96;

using Writes = std::map<std::string, std::optional<std::string>, std::less<>>;

// One task's rows in key order from a key on: its writes since its flush
// over the stored rows, a write hiding the stored row of its key.
class TaskRows {
 public:
  TaskRows(const Writes& writes, std::unique_ptr<StoredReader::Cursor> stored, std::string prefix,
           const std::string& from, const std::string& to)
      : writes_(writes.lower_bound(from)), writesEnd_(writes.end()), stored_(std::move(stored)),
        prefix_(std::move(prefix)), to_(to) {
    settle();
  }
  bool valid() const { return at_ != None; }
  std::string_view key() const { return at_ == Write ? std::string_view(writes_->first) : storedKey(); }
  std::string_view value() const {
    return at_ == Write ? std::string_view(*writes_->second) : stored_->value();
  }
  void next() {
    if (at_ == Write) {
      ++writes_;
    } else {
      stored_->next();
    }
    settle();
  }

 private:
  enum At { None, Write, Stored };

  bool storedValid() const {
    if (!stored_->valid()) return false;
    std::string_view k = stored_->key();
    if (k.substr(0, prefix_.size()) != prefix_) return false;
    return to_.empty() || k.substr(prefix_.size()) < std::string_view(to_);
  }
  std::string_view storedKey() const { return stored_->key().substr(prefix_.size()); }
  bool writeValid() const {
    return writes_ != writesEnd_ && (to_.empty() || writes_->first < to_);
  }

  // Goes to the next row: the smaller key of the two, a write winning a tie
  // (the stored row of its key is skipped), an erasure skipped with it.
  void settle() {
    for (;;) {
      const bool w = writeValid();
      const bool s = storedValid();
      if (!w && !s) {
        at_ = None;
        return;
      }
      if (s) {
        if (w && storedKey() == std::string_view(writes_->first)) {
          stored_->next();  // hidden by the write
          continue;
        }
        if (!w || storedKey() < std::string_view(writes_->first)) {
          at_ = Stored;
          return;
        }
      }
      if (writes_->second) {
        at_ = Write;
        return;
      }
      ++writes_;  // erased
    }
  }

  Writes::const_iterator writes_;
  Writes::const_iterator writesEnd_;
  std::unique_ptr<StoredReader::Cursor> stored_;
  std::string prefix_;
  std::string to_;
  At at_ = None;
};

class LatestMerge final : public RowIterator {
 public:
  LatestMerge(std::shared_ptr<const ViewSnapshot> owner, std::vector<TaskRows> tasks,
              std::vector<DataTypePtr> types)
      : owner_(std::move(owner)), tasks_(std::move(tasks)), types_(std::move(types)) {}

  bool next(Row& out) override {
    TaskRows* best = nullptr;
    for (TaskRows& t : tasks_) {
      if (t.valid() && (!best || t.key() < best->key())) best = &t;
    }
    if (!best) return false;
    out = decodeRow(best->value(), types_);
    best->next();
    return true;
  }

 private:
  std::shared_ptr<const ViewSnapshot> owner_;  // keeps the writes and the reader
  std::vector<TaskRows> tasks_;
  std::vector<DataTypePtr> types_;
};

// The stored rows of a view with, over them, each task's writes since its
// flush: the latest state, or (no writes) a store that holds exactly one
// checkpoint's state (ViewSnapshot::ofStored).
class LatestSnapshot final : public ViewSnapshot,
                             public std::enable_shared_from_this<LatestSnapshot> {
 public:
  LatestSnapshot(ViewLayout layout, std::vector<Writes> writes,
                 std::shared_ptr<const StoredReader> stored,
                 uint64_t epoch = ViewLatest::kLatestEpoch)
      : ViewSnapshot(epoch, std::move(layout)), writes_(std::move(writes)),
        stored_(std::move(stored)), types_(layout_.schema.types()) {}

  std::optional<Row> lookup(const std::vector<Value>& keyValues) const override {
    const std::string key = encodeViewKey(keyValues);
    // A key is written by one task; its write since the flush hides what is stored.
    for (size_t t = 0; t < writes_.size(); ++t) {
      auto it = writes_[t].find(key);
      if (it != writes_[t].end()) {
        if (it->second) return decodeRow(*it->second, types_);
        return std::nullopt;
      }
    }
    // The stored row: first in the key space of the task the shuffle gave
    // the key (as a committed snapshot reads it, view_table.cpp), then the others.
    const size_t tasks = writes_.size();
    const size_t first = tasks > 1 ? shuffleKeyHashOf(keyValues) % tasks : 0;
    for (size_t i = 0; i < tasks; ++i) {
      const int t = static_cast<int>((first + i) % tasks);
      if (auto v = stored_->get(viewTablePrefix(t) + key)) return decodeRow(*v, types_);
    }
    return std::nullopt;
  }

  std::unique_ptr<RowIterator> range(const std::string& from,
                                     const std::string& to) const override {
    std::vector<TaskRows> tasks;
    for (size_t t = 0; t < writes_.size(); ++t) {
      std::string prefix = viewTablePrefix(static_cast<int>(t));
      auto cursor = stored_->seek(prefix + from);
      tasks.emplace_back(writes_[t], std::move(cursor), std::move(prefix), from, to);
    }
    return std::make_unique<LatestMerge>(shared_from_this(), std::move(tasks), types_);
  }

 private:
  std::vector<Writes> writes_;
  std::shared_ptr<const StoredReader> stored_;
  std::vector<DataTypePtr> types_;
};

}  // namespace

std::shared_ptr<const ViewSnapshot> ViewSnapshot::ofStored(
    std::shared_ptr<const StoredReader> stored, uint64_t epoch, ViewLayout layout) {
  std::vector<Writes> none(static_cast<size_t>(std::max(layout.tasks, 1)));
  return std::make_shared<LatestSnapshot>(std::move(layout), std::move(none), std::move(stored),
                                          epoch);
}

ViewLatest::ViewLatest(std::string viewName, int tasks) : viewName_(std::move(viewName)) {
  for (int t = 0; t < tasks; ++t) tasks_.push_back(std::make_unique<Task>());
}

void ViewLatest::attach(int task, StateStore& store) {
  if (task < 0 || static_cast<size_t>(task) >= tasks_.size()) return;
  Task& t = *tasks_[static_cast<size_t>(task)];
  std::lock_guard lock(t.mu);
  t.attached = true;
  t.overflowed = false;
  t.bytes = 0;
  t.writes.clear();
  std::lock_guard readers(readersMu_);
  readers_ = store.readers();
}

void ViewLatest::detach(int task) {
  if (task < 0 || static_cast<size_t>(task) >= tasks_.size()) return;
  Task& t = *tasks_[static_cast<size_t>(task)];
  std::lock_guard lock(t.mu);
  t.attached = false;
  t.writes.clear();
  t.bytes = 0;
}

void ViewLatest::record(int task, std::string_view key, std::optional<std::string_view> row) {
  Task& t = *tasks_[static_cast<size_t>(task)];
  std::lock_guard lock(t.mu);
  if (t.overflowed) return;
  auto it = t.writes.find(key);
  if (it == t.writes.end()) {
    it = t.writes.emplace(std::string(key), std::nullopt).first;
    t.bytes += kEntryOverhead + static_cast<int64_t>(key.size());
  } else if (it->second) {
    t.bytes -= static_cast<int64_t>(it->second->size());
  }
  if (row) {
    it->second = std::string(*row);
    t.bytes += static_cast<int64_t>(row->size());
  } else {
    it->second.reset();
  }
  if (t.bytes > kMaxBytes) {
    // Kept no more until the flush: reads answer 54000 meanwhile.
    t.overflowed = true;
    Writes().swap(t.writes);
    t.bytes = 0;
  }
}

void ViewLatest::put(int task, std::string_view key, std::string_view row) {
  record(task, key, row);
}

void ViewLatest::erase(int task, std::string_view key) { record(task, key, std::nullopt); }

void ViewLatest::flushed(int task, const std::function<void()>& flush) {
  Task& t = *tasks_[static_cast<size_t>(task)];
  std::lock_guard lock(t.mu);
  flush();
  t.writes.clear();
  t.bytes = 0;
  t.overflowed = false;
}

std::shared_ptr<const ViewSnapshot> ViewLatest::read(const ViewLayout& layout) const {
  if (static_cast<size_t>(layout.tasks) != tasks_.size()) return nullptr;
  // Every task's writes and the stored rows at one moment: no task flushes
  // while its lock is held, and the locks are taken in task order.
  std::vector<std::unique_lock<std::mutex>> locks;
  for (const auto& t : tasks_) locks.emplace_back(t->mu);
  std::vector<Writes> writes;
  for (const auto& t : tasks_) {
    if (!t->attached) return nullptr;
    if (t->overflowed) {
      throw SqlError(sqlstate::kProgramLimitExceeded,
                     fmt::format("the latest state of materialized view \"{}\" is more than {} "
                                 "MiB ahead of its last flush",
                                 viewName_, kMaxBytes >> 20),
                     SqlError::npos,
                     "read its last committed epoch (SET rtsql.view_snapshot = 'committed'), or "
                     "again after its next checkpoint");
    }
    writes.push_back(t->writes);
  }
  std::shared_ptr<const StoredReader> stored;
  {
    std::lock_guard lock(readersMu_);
    if (!readers_) return nullptr;
    stored = readers_();
  }
  if (!stored) return nullptr;
  locks.clear();
  return std::make_shared<LatestSnapshot>(layout, std::move(writes), std::move(stored));
}

}  // namespace rtsql
