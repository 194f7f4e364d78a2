// Test state backends shared by the stateful operators' tests: an in-memory
// StateTable over a std::map (tables made from the same storage see the same
// data, so a test can "reopen" state), and the RocksDB store with a cache far
// smaller than the state, so reads go to disk; and a scratch directory.
#pragma once

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include "executor/state/state_store.h"

namespace rtsql::testing {

// An in-memory StateTable over a std::map, shared by the tables made from the
// same storage so a test can reopen the "same" state.
struct MemStorage {
  std::map<std::string, std::string, std::less<>> data;
  int flushes = 0;
};

class MemStateTable : public StateTable {
 public:
  explicit MemStateTable(std::shared_ptr<MemStorage> s) : s_(std::move(s)) {}
  bool get(std::string_view key, std::string& value) override {
    auto it = s_->data.find(key);
    if (it == s_->data.end()) return false;
    value = it->second;
    return true;
  }
  void put(std::string_view key, std::string_view value) override {
    s_->data[std::string(key)] = std::string(value);
  }
  void erase(std::string_view key) override {
    auto it = s_->data.find(key);
    if (it != s_->data.end()) s_->data.erase(it);
  }
  void scan(std::string_view from, std::string_view to,
            const std::function<bool(std::string_view, std::string_view)>& fn) override {
    auto it = s_->data.lower_bound(from);
    while (it != s_->data.end() && std::string_view(it->first) < to) {
      std::string key = it->first;
      if (!fn(key, it->second)) return;
      it = s_->data.upper_bound(key);
    }
  }
  void flush() override { ++s_->flushes; }
  uint64_t size() const override { return s_->data.size(); }
  int64_t memoryBytes() const override {
    int64_t n = 0;
    for (const auto& [k, v] : s_->data) n += static_cast<int64_t>(k.size() + v.size());
    return n;
  }

 private:
  std::shared_ptr<MemStorage> s_;
};

// The state backends every test runs on: the in-memory map, and the RocksDB
// store with a cache far smaller than the state, so reads go to disk.
struct MemBackend {
  std::shared_ptr<MemStorage> storage = std::make_shared<MemStorage>();
  std::unique_ptr<StateTable> table() { return std::make_unique<MemStateTable>(storage); }
  int flushes() const { return storage->flushes; }
};

template <int kOperatorId>
struct RocksBackend {
  RocksBackend() {
    static int counter = 0;
    StateStoreOptions o;
    o.path = (std::filesystem::temp_directory_path() /
              ("rtsql-state-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++)))
                 .string();
    o.cacheBytes = 256;
    o.destroyOnClose = true;
    store = StateStore::open(o);
  }
  std::unique_ptr<StateTable> table() { return store->table(kOperatorId, 0); }
  int flushes() const { return -1; }  // not observable; the restart test covers it
  std::unique_ptr<StateStore> store;
};

// A fresh directory under /tmp named after `what`, removed with everything in
// it at scope exit.
struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::string& what) {
    static std::atomic<int> counter{0};
    path = std::filesystem::path("/tmp") / ("rtsql_" + what + "_" + std::to_string(::getpid()) +
                                            "_" + std::to_string(counter.fetch_add(1)));
    std::filesystem::remove_all(path);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string sub(const std::string& name) const { return (path / name).string(); }
};

}  // namespace rtsql::testing
