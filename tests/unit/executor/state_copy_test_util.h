// A state copy held in memory the way the Kafka topic holds it (a log of
// writes, each the changed entries and a checkpoint, read by a follower as
// records with offsets), and the helpers the copy's and the standby's tests
// share: a RocksDB store, its contents, a state key, one epoch of a flow.
#pragma once

#include <doctest/doctest.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/error.h"
#include "executor/state_copy.h"
#include "tests/unit/executor/state_test_util.h"

namespace rtsql::testing {

// The copy as a log of writes, read the way a reader of the topic applies it.
class MemCopy : public StateCopy {
 public:
  struct Write {
    std::optional<CheckpointInfo> checkpoint;  // none: a clear()
    std::vector<StateChange> changes;
  };
  std::vector<Write> log;
  bool failNext = false;

  int reads = 0;  // whole reads

  std::optional<CheckpointInfo> newestCheckpoint() override {
    --reads;  // read() below is how the log is applied, not a whole read
    return read().checkpoint;
  }
  Contents read() override {
    ++reads;
    Contents out;
    std::map<std::string, std::string> state;
    for (const Write& w : log) {
      if (!w.checkpoint) {
        out.checkpoint.reset();
        state.clear();
        continue;
      }
      for (const StateChange& c : w.changes) {
        out.keys.insert(c.key);
        if (c.value) {
          state[c.key] = *c.value;
        } else {
          state.erase(c.key);
        }
      }
      out.checkpoint = w.checkpoint;
    }
    if (out.checkpoint) {
      for (auto& [k, v] : state) out.entries.push_back({k, v});
    }
    return out;
  }
  void write(const CheckpointInfo& info, const std::vector<StateChange>& changes,
             SinkTransaction* within) override {
    REQUIRE(within == nullptr);  // the keeper passes on what its caller gives
    if (failNext) {
      failNext = false;
      throw SqlError(sqlstate::kConnectionFailure, "broker away");
    }
    log.push_back({info, changes});
  }
  void checkWithin(SinkTransaction&) override {}
  void clear() override { log.push_back({std::nullopt, {}}); }
  void close() override {}
  void destroy() override {}
  // The log as a follower reads it: each write's entries, then its
  // checkpoint record (a clear(): a reset record), offsets from 0; the
  // offsets before `logStart` are gone.
  std::vector<Record> records() const {
    std::vector<Record> out;
    for (const Write& w : log) {
      if (!w.checkpoint) {
        out.push_back({Record::Kind::Reset, 0, {}, std::nullopt});
      } else {
        for (const StateChange& c : w.changes)
          out.push_back({Record::Kind::Entry, 0, c, std::nullopt});
        out.push_back({Record::Kind::Checkpoint, 0, {}, w.checkpoint});
      }
    }
    for (size_t i = 0; i < out.size(); ++i) out[i].offset = static_cast<int64_t>(i);
    return out;
  }
  int64_t logStart = 0;
  class MemFollower : public Follower {
   public:
    // From 0: from the log's start, wherever it is now.
    MemFollower(const MemCopy& copy, int64_t from)
        : copy_(copy), next_(from == 0 ? copy.logStart : from) {}
    bool poll(int64_t, const std::function<void(Record&&)>& fn) override {
      if (next_ < copy_.logStart) return false;
      std::vector<Record> all = copy_.records();
      for (; next_ < static_cast<int64_t>(all.size()); ++next_) fn(std::move(all[next_]));
      return true;
    }

   private:
    const MemCopy& copy_;
    int64_t next_;
  };
  std::unique_ptr<Follower> follow(int64_t from) override {
    return std::make_unique<MemFollower>(*this, from);
  }
  std::map<std::string, std::string> state() {
    std::map<std::string, std::string> out;
    for (auto& e : read().entries) out[e.key] = *e.value;
    return out;
  }
};

inline std::unique_ptr<StateStore> openStore(const std::string& path, bool record) {
  StateStoreOptions o;
  o.path = path;
  o.recordChanges = record;
  return StateStore::open(o);
}

inline std::map<std::string, std::string> contents(StateStore& store) {
  std::map<std::string, std::string> out;
  store.forEach(
      [&](std::string_view k, std::string_view v) { out[std::string(k)] = std::string(v); });
  return out;
}

inline std::string prefixed(int op, const std::string& key) {
  std::string p(8, '\0');
  p[3] = static_cast<char>(op);
  return p + key;
}

// One epoch of a flow: the writes, then the checkpoint and its copy.
inline void epoch(StateStore& store, StateCopyKeeper& keeper, CheckpointDir& dir, uint64_t n,
                  const std::function<void(StateTable&)>& writes, std::string* failed = nullptr) {
  {
    auto table = store.table(1, 0);
    writes(*table);
    table->flush();
  }
  CheckpointInfo info;
  info.epoch = n;
  info.epochEndMicros = static_cast<int64_t>(n) * 1000;
  info.hasState = true;
  std::vector<StateChange> changes;
  dir.write(info, [&](const std::string& d) {
    store.snapshot(d, &changes);
    keeper.collect(store, changes);
  });
  std::string error = keeper.write(info, std::move(changes));
  if (failed) *failed = error;
}

}  // namespace rtsql::testing
