// A standby replica (executor/state_standby.h) over a real RocksDB store and a
// copy held in memory: it follows the copy checkpoint by checkpoint, holds
// exactly the state of the last one it read, reads on to the copy's newest
// when taken over, empties at a reset, starts over when its place in the copy
// is gone; and a keeper that takes over from it reads no copy.
#include "executor/state_standby.h"

#include <doctest/doctest.h>

#include "tests/unit/executor/state_copy_test_util.h"

using namespace rtsql;
using namespace rtsql::testing;

namespace {

// What a standby holds, taken over into `dir` as checkpoint `target`.
std::map<std::string, std::string> takenOver(StateStandby& standby, TempDir& tmp,
                                             const std::string& name,
                                             const CheckpointInfo& target) {
  CheckpointDir dir(tmp.sub(name), 3);
  std::optional<CheckpointInfo> got = standby.takeOver(dir, target, 1'000'000);
  REQUIRE(got.has_value());
  CHECK(got->epoch == target.epoch);
  CHECK(dir.latest()->epoch == target.epoch);
  CheckpointDir::restoreState(*got, tmp.sub(name + "-state"));
  auto store = openStore(tmp.sub(name + "-state"), false);
  return contents(*store);
}

// A flow running with its copy: its checkpoints, its store and its keeper.
struct Running {
  std::shared_ptr<MemCopy> copy = std::make_shared<MemCopy>();
  CheckpointDir here;
  std::unique_ptr<StateStore> store;
  StateCopyKeeper keeper{copy};

  Running(TempDir& tmp, const std::string& name)
      : here(tmp.sub(name + "-ck"), 3), store(openStore(tmp.sub(name + "-state"), true)) {
    keeper.restore(here, std::nullopt, false, UINT64_MAX, tmp.sub(name + "-scratch"));
  }
  void epoch(uint64_t n, const std::function<void(StateTable&)>& writes) {
    testing::epoch(*store, keeper, here, n, writes);
  }
};

}  // namespace

TEST_CASE(
    "a standby holds the state of the last checkpoint it read, and reads on when taken over") {
  TempDir tmp("state_standby_test");
  Running flow(tmp, "flow");
  auto& copy = flow.copy;

  StateStandby standby(copy, tmp.sub("standby"));
  standby.advance(1'000'000);
  CHECK_FALSE(standby.checkpoint().has_value());  // nothing written yet

  flow.epoch(1, [](StateTable& t) {
    t.put("k1", "1");
    t.put("k2", "1");
  });
  standby.advance(1'000'000);
  REQUIRE(standby.checkpoint().has_value());
  CHECK(standby.checkpoint()->epoch == 1);
  CHECK(standby.applied() == 2);

  // Two more epochs the standby has not read: taking it over reads on to the
  // newest, and it then holds exactly the running flow's state.
  flow.epoch(2, [](StateTable& t) {
    t.put("k1", "2");
    t.erase("k2");
  });
  flow.epoch(3, [](StateTable& t) { t.put("k3", "3"); });
  const CheckpointInfo newest = *copy->read().checkpoint;
  REQUIRE(newest.epoch == 3);
  CHECK(takenOver(standby, tmp, "taken", newest) == contents(*flow.store));
}

TEST_CASE("a standby does not give a checkpoint it cannot reach") {
  TempDir tmp("state_standby_test");
  Running flow(tmp, "flow");
  auto& copy = flow.copy;
  flow.epoch(1, [](StateTable& t) { t.put("a", "1"); });
  flow.epoch(2, [](StateTable& t) { t.put("a", "2"); });

  StateStandby standby(copy, tmp.sub("standby"));
  CheckpointDir there(tmp.sub("there"), 3);
  // A checkpoint the copy never held (another run's epoch 2): read past, refused.
  CheckpointInfo other = *copy->read().checkpoint;
  other.epochEndMicros += 1;
  CHECK_FALSE(standby.takeOver(there, other, 200'000).has_value());
  // One later than the copy's newest: nothing comes, refused after the quiet time.
  other.epoch = 9;
  CHECK_FALSE(standby.takeOver(there, other, 200'000).has_value());
  CHECK_FALSE(there.latest().has_value());
}

TEST_CASE("a reset empties a standby, and one whose place in the copy is gone starts over") {
  TempDir tmp("state_standby_test");
  Running flow(tmp, "flow");
  auto& copy = flow.copy;
  flow.epoch(1, [](StateTable& t) { t.put("old", "1"); });

  StateStandby standby(copy, tmp.sub("standby"));
  standby.advance(1'000'000);
  REQUIRE(standby.checkpoint().has_value());

  // A new flow of the name: the copy is cleared, then written whole.
  copy->clear();
  StateCopyKeeper fresh(copy);
  fresh.restore(flow.here, std::nullopt, true, UINT64_MAX, tmp.sub("scratch2"));
  auto store2 = openStore(tmp.sub("state2"), true);
  CheckpointDir here2(tmp.sub("here2"), 3);
  epoch(*store2, fresh, here2, 5, [](StateTable& t) { t.put("new", "1"); });
  const CheckpointInfo newest = *copy->read().checkpoint;
  CHECK(takenOver(standby, tmp, "after-reset", newest) == contents(*store2));
  CHECK(contents(*store2).count(prefixed(1, "old")) == 0);

  // A second standby stopped after the first write; the copy's records
  // before the reset are then gone (the broker no longer has them): it
  // reads the copy again from where it starts now.
  Running second(tmp, "second");
  auto& copy2 = second.copy;
  second.epoch(1, [](StateTable& t) { t.put("gone", "1"); });
  StateStandby behind(copy2, tmp.sub("behind"));
  behind.advance(1'000'000);
  REQUIRE(behind.checkpoint().has_value());
  copy2->log.push_back({CheckpointInfo{}, {{prefixed(1, "x"), "9"}}});
  copy2->log.back().checkpoint->epoch = 2;
  copy2->log.back().checkpoint->epochEndMicros = 2000;
  copy2->clear();
  copy2->log.push_back({CheckpointInfo{}, {{prefixed(1, "kept"), "1"}}});
  copy2->log.back().checkpoint->epoch = 3;
  copy2->log.back().checkpoint->epochEndMicros = 3000;
  copy2->logStart =
      static_cast<int64_t>(copy2->records().size()) - 2;  // the reset's records gone too
  behind.advance(1'000'000);                              // its next offset is gone: it starts over
  behind.advance(1'000'000);
  REQUIRE(behind.checkpoint().has_value());
  CHECK(behind.checkpoint()->epoch == 3);
  CHECK(takenOver(behind, tmp, "started-over", *copy2->read().checkpoint) ==
        std::map<std::string, std::string>{{prefixed(1, "kept"), "1"}});
}

TEST_CASE("a flow that takes over from a standby reads no copy and stays in step") {
  TempDir tmp("state_standby_test");
  Running flow(tmp, "flow");
  auto& copy = flow.copy;
  flow.epoch(1, [](StateTable& t) { t.put("a", "1"); });
  flow.epoch(2, [](StateTable& t) { t.put("b", "2"); });

  StateStandby standby(copy, tmp.sub("standby"));
  standby.advance(1'000'000);
  CheckpointDir there(tmp.sub("there"), 3);
  copy->reads = 0;
  StateCopyKeeper heir(copy, [&](CheckpointDir& dir, const CheckpointInfo& target) {
    return standby.takeOver(dir, target, 1'000'000);
  });
  std::optional<CheckpointInfo> got =
      heir.restore(there, std::nullopt, false, UINT64_MAX, tmp.sub("scratch2"));
  REQUIRE(got.has_value());
  CHECK(got->epoch == 2);
  CHECK(heir.source() == StateCopyKeeper::Source::Standby);
  CHECK(copy->reads == 0);
  CheckpointDir::restoreState(*got, tmp.sub("state2"));
  auto restored = openStore(tmp.sub("state2"), true);
  CHECK(contents(*restored) == contents(*flow.store));
  // In step: the next write holds only what changed.
  epoch(*restored, heir, there, 3, [](StateTable& t) { t.put("c", "3"); });
  CHECK(copy->log.back().changes.size() == 1);
  CHECK(copy->state() == contents(*restored));

  // With exactly-once output committed only up to epoch 2, the standby is not
  // asked for epoch 3: the keeper goes on as without one.
  bool asked = false;
  StateCopyKeeper bounded(copy, [&](CheckpointDir&, const CheckpointInfo&) {
    asked = true;
    return std::optional<CheckpointInfo>();
  });
  CheckpointDir fresh(tmp.sub("fresh"), 3);
  CHECK_FALSE(bounded.restore(fresh, std::nullopt, false, 2, tmp.sub("scratch4")).has_value());
  CHECK_FALSE(asked);
  // A standby that cannot give the newest: the copy is read, as without one.
  StateCopyKeeper failing(copy, [&](CheckpointDir&, const CheckpointInfo&) {
    asked = true;
    return std::optional<CheckpointInfo>();
  });
  copy->reads = 0;
  CheckpointDir fresh2(tmp.sub("fresh2"), 3);
  got = failing.restore(fresh2, std::nullopt, false, UINT64_MAX, tmp.sub("scratch5"));
  CHECK(asked);
  REQUIRE(got.has_value());
  CHECK(got->epoch == 3);
  CHECK(failing.source() == StateCopyKeeper::Source::Copy);
  CHECK(copy->reads == 1);
}

namespace {

// Every entry `reader` reads, in key order.
std::map<std::string, std::string> readAll(const StoredReader& reader) {
  std::map<std::string, std::string> out;
  for (auto c = reader.seek(""); c->valid(); c->next())
    out.emplace(std::string(c->key()), std::string(c->value()));
  return out;
}

}  // namespace

TEST_CASE("a standby's reader reads exactly the checkpoint it holds, past the next and a reset") {
  TempDir tmp("state_standby_test");
  Running flow(tmp, "flow");
  auto& copy = flow.copy;
  StateStandby standby(copy, tmp.sub("standby"));
  standby.advance(1'000'000);
  CHECK(standby.reader() == nullptr);  // no checkpoint applied yet

  flow.epoch(1, [](StateTable& t) {
    t.put("a", "1");
    t.put("b", "1");
  });
  standby.advance(1'000'000);
  REQUIRE(standby.checkpoint().has_value());
  std::shared_ptr<const StoredReader> first = standby.reader();
  REQUIRE(first != nullptr);
  const auto atOne = contents(*flow.store);
  CHECK(readAll(*first) == atOne);
  CHECK(first->get(prefixed(1, "a")) == std::optional<std::string>("1"));

  // The next checkpoint applied: the reader taken before still reads epoch
  // 1, a new one reads epoch 2.
  flow.epoch(2, [](StateTable& t) {
    t.put("a", "2");
    t.erase("b");
    t.put("c", "2");
  });
  standby.advance(1'000'000);
  REQUIRE(standby.checkpoint()->epoch == 2);
  CHECK(readAll(*first) == atOne);
  std::shared_ptr<const StoredReader> second = standby.reader();
  REQUIRE(second != nullptr);
  CHECK(readAll(*second) == contents(*flow.store));
  CHECK_FALSE(second->get(prefixed(1, "b")).has_value());

  // A reset empties the standby (no reader until its next checkpoint); the
  // readers held still read what they read, from their own store.
  copy->clear();
  standby.advance(1'000'000);
  CHECK_FALSE(standby.checkpoint().has_value());
  CHECK(standby.reader() == nullptr);
  CHECK(readAll(*second).count(prefixed(1, "c")) == 1);
  CHECK(readAll(*first) == atOne);
}
