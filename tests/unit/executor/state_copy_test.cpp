// A flow's state copy (executor/state_copy.h) kept in step by StateCopyKeeper,
// over a real RocksDB state store and a copy held in memory the way the Kafka
// topic holds it (a log of writes, each the changed entries and a checkpoint):
// the store records what changed between snapshots; a keeper restores a copy
// newer than the local checkpoint; a keeper out of step writes the whole state
// and removes the copy's stale keys; a failed write's changes go with the next.
#include "executor/state_copy.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <map>

#include "common/error.h"
#include "tests/unit/executor/state_copy_test_util.h"

using namespace rtsql;

using namespace rtsql::testing;

TEST_CASE("a state store records what changed between two snapshots, each key once") {
  testing::TempDir tmp("state_copy_test");
  auto store = openStore(tmp.sub("s"), true);
  {
    auto t = store->table(1, 0);
    t->put("a", "1");
    t->put("b", "2");
    t->put("a", "3");
    t->flush();
  }
  std::vector<StateChange> changes;
  store->snapshot(tmp.sub("c1"), &changes);
  REQUIRE(changes.size() == 2);
  CHECK(changes[0].key == prefixed(1, "a"));
  CHECK(changes[0].value == std::optional<std::string>("3"));
  {
    auto t = store->table(1, 0);
    t->erase("b");
    t->flush();
  }
  changes.clear();
  store->snapshot(tmp.sub("c2"), &changes);
  REQUIRE(changes.size() == 1);
  CHECK(changes[0].key == prefixed(1, "b"));
  CHECK_FALSE(changes[0].value.has_value());
  // A store that does not record gives nothing.
  auto plain = openStore(tmp.sub("p"), false);
  plain->table(1, 0)->put("x", "y");
  changes.clear();
  plain->snapshot(tmp.sub("c3"), &changes);
  CHECK(changes.empty());
}

TEST_CASE("the copy follows each checkpoint, and another machine restores the newest one") {
  testing::TempDir tmp("state_copy_test");
  auto copy = std::make_shared<MemCopy>();
  CheckpointDir here(tmp.sub("here"), 3);
  auto store = openStore(tmp.sub("state"), true);
  StateCopyKeeper keeper(copy);
  CHECK_FALSE(
      keeper.restore(here, std::nullopt, false, UINT64_MAX, tmp.sub("scratch")).has_value());
  epoch(*store, keeper, here, 1, [](StateTable& t) {
    t.put("k1", "1");
    t.put("k2", "1");
  });
  epoch(*store, keeper, here, 2, [](StateTable& t) {
    t.put("k1", "2");
    t.erase("k2");
  });
  // Incremental writes: the second holds only what changed.
  REQUIRE(copy->log.size() == 2);
  CHECK(copy->log[1].changes.size() == 2);
  CHECK(copy->state() == contents(*store));

  // Another machine, with no checkpoint of its own, restores epoch 2 from the copy.
  CheckpointDir there(tmp.sub("there"), 3);
  StateCopyKeeper heir(copy);
  std::optional<CheckpointInfo> got =
      heir.restore(there, std::nullopt, false, UINT64_MAX, tmp.sub("scratch2"));
  REQUIRE(got.has_value());
  CHECK(got->epoch == 2);
  CHECK(there.latest()->epoch == 2);
  CheckpointDir::restoreState(*got, tmp.sub("state2"));
  auto restored = openStore(tmp.sub("state2"), true);
  CHECK(contents(*restored) == contents(*store));
  // In step with the copy: its next write is incremental.
  epoch(*restored, heir, there, 3, [](StateTable& t) { t.put("k3", "3"); });
  CHECK(copy->log.back().changes.size() == 1);

  // The first machine's own checkpoint (epoch 2) is older than the copy's (3):
  // the copy wins when the flow comes back.
  StateCopyKeeper back(copy);
  got = back.restore(here, here.latest(), false, UINT64_MAX, tmp.sub("scratch3"));
  REQUIRE(got.has_value());
  CHECK(got->epoch == 3);
  // With exactly-once output committed only up to epoch 2, the copy of epoch 3
  // is not used.
  StateCopyKeeper bounded(copy);
  CheckpointDir fresh(tmp.sub("fresh"), 3);
  CHECK_FALSE(bounded.restore(fresh, std::nullopt, false, 2, tmp.sub("scratch4")).has_value());
}

TEST_CASE("a keeper out of step writes the whole state and removes the copy's stale keys") {
  testing::TempDir tmp("state_copy_test");
  auto copy = std::make_shared<MemCopy>();
  // The copy holds an older flow's state: k-old and k-both.
  copy->log.push_back(
      {CheckpointInfo{}, {{prefixed(1, "k-old"), "x"}, {prefixed(1, "k-both"), "x"}}});
  copy->log.back().checkpoint->epoch = 7;
  copy->clear();  // a new flow of the same name
  CheckpointDir dir(tmp.sub("ck"), 3);
  StateCopyKeeper keeper(copy);
  // The cleared copy is no state: nothing to restore.
  CHECK_FALSE(keeper.restore(dir, std::nullopt, false, UINT64_MAX, tmp.sub("scratch")).has_value());
  auto store = openStore(tmp.sub("state"), true);
  epoch(*store, keeper, dir, 1, [](StateTable& t) {
    t.put("k-both", "1");
    t.put("k-new", "1");
  });
  // A whole write: both entries, and a removal of k-old.
  const auto& whole = copy->log.back().changes;
  CHECK(whole.size() == 3);
  CHECK(copy->state() == contents(*store));
  std::set<std::string> keys = copy->read().keys;
  CHECK(keys.count(prefixed(1, "k-old")) == 1);  // still a key of the log, now removed
  // Incremental afterwards.
  epoch(*store, keeper, dir, 2, [](StateTable& t) { t.put("k-new", "2"); });
  CHECK(copy->log.back().changes.size() == 1);
  CHECK(copy->state() == contents(*store));
}

TEST_CASE("a failed write's changes go with the next one") {
  testing::TempDir tmp("state_copy_test");
  auto copy = std::make_shared<MemCopy>();
  CheckpointDir dir(tmp.sub("ck"), 3);
  auto store = openStore(tmp.sub("state"), true);
  StateCopyKeeper keeper(copy);
  keeper.restore(dir, std::nullopt, false, UINT64_MAX, tmp.sub("scratch"));
  epoch(*store, keeper, dir, 1, [](StateTable& t) { t.put("a", "1"); });
  copy->failNext = true;
  std::string failed;
  epoch(
      *store, keeper, dir, 2, [](StateTable& t) { t.put("b", "2"); }, &failed);
  CHECK(failed.find("broker away") != std::string::npos);
  CHECK(copy->read().checkpoint->epoch == 1);
  epoch(
      *store, keeper, dir, 3, [](StateTable& t) { t.erase("a"); }, &failed);
  CHECK(failed.empty());
  CHECK(copy->read().checkpoint->epoch == 3);
  CHECK(copy->state() == contents(*store));
  CHECK(copy->state() == std::map<std::string, std::string>{{prefixed(1, "b"), "2"}});
}

TEST_CASE("a flow restarted on its own newest checkpoint does not read the whole copy") {
  testing::TempDir tmp("state_copy_test");
  auto copy = std::make_shared<MemCopy>();
  CheckpointDir dir(tmp.sub("ck"), 3);
  auto store = openStore(tmp.sub("state"), true);
  StateCopyKeeper keeper(copy);
  keeper.restore(dir, std::nullopt, false, UINT64_MAX, tmp.sub("scratch"));
  epoch(*store, keeper, dir, 1, [](StateTable& t) { t.put("a", "1"); });
  epoch(*store, keeper, dir, 2, [](StateTable& t) { t.put("b", "1"); });
  store.reset();

  // The same machine comes back on its checkpoint of epoch 2, the copy's.
  copy->reads = 0;
  StateCopyKeeper again(copy);
  std::optional<CheckpointInfo> got =
      again.restore(dir, dir.latest(), false, UINT64_MAX, tmp.sub("scratch2"));
  REQUIRE(got.has_value());
  CHECK(got->epoch == 2);
  CHECK(got->dir == dir.latest()->dir);  // its own, not one written from the copy
  CHECK(copy->reads == 0);
  // In step: the next write holds only what changed.
  CheckpointDir::restoreState(*got, tmp.sub("state2"));
  auto restored = openStore(tmp.sub("state2"), true);
  epoch(*restored, again, dir, 3, [](StateTable& t) { t.put("c", "1"); });
  CHECK(copy->log.back().changes.size() == 1);
  CHECK(copy->state() == contents(*restored));

  // A checkpoint older than the copy's newest is not in step: the copy is read.
  CheckpointDir other(tmp.sub("other"), 3);
  CheckpointInfo old = *dir.latest();
  old.epoch = 1;
  old.epochEndMicros = 1000;
  StateCopyKeeper behind(copy);
  copy->reads = 0;
  got = behind.restore(other, old, false, UINT64_MAX, tmp.sub("scratch3"));
  CHECK(copy->reads == 1);
  REQUIRE(got.has_value());
  CHECK(got->epoch == 3);
}
