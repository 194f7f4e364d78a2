// The state copies of dropped flows kept for the slot's next holder
// (server/cluster/dropped_copies.h): deleted only once this node holds the
// flow's slot, not when a flow of the name was created again, and a failed
// deletion tried again a bounded number of times.
#include "server/cluster/dropped_copies.h"

#include <doctest/doctest.h>

#include <set>

#include "common/error.h"

using namespace rtsql;

namespace {

// A copy that counts its deletions and fails the first `failures` of them.
class CountingCopy final : public StateCopy {
 public:
  explicit CountingCopy(int failures = 0) : failures_(failures) {}
  Contents read() override { return {}; }
  std::optional<CheckpointInfo> newestCheckpoint() override { return std::nullopt; }
  void write(const CheckpointInfo&, const std::vector<StateChange>&, SinkTransaction*) override {}
  void checkWithin(SinkTransaction&) override {}
  void clear() override {}
  void close() override {}
  void destroy() override {
    ++attempts;
    if (attempts <= failures_) {
      throw SqlError(sqlstate::kConnectionFailure, "the broker did not answer");
    }
  }
  std::unique_ptr<Follower> follow(int64_t) override { return nullptr; }

  int attempts = 0;

 private:
  int failures_;
};

}  // namespace

TEST_CASE("a dropped flow's copy is deleted once this node holds the flow's slot") {
  DroppedCopies dropped;
  auto cnt = std::make_shared<CountingCopy>();
  auto other = std::make_shared<CountingCopy>();
  dropped.add("Cnt", cnt, 0);
  dropped.add("other", other, 0);
  std::set<std::string> held;
  auto holds = [&](const std::string& name) { return held.count(name) > 0; };

  // No slot held: nothing is deleted, both are kept.
  CHECK(dropped.deleteHeld(holds, 1) == 0);
  CHECK(cnt->attempts == 0);
  CHECK(dropped.size() == 2);

  // The slot of cnt comes here (names are lower-cased).
  held.insert("cnt");
  CHECK(dropped.deleteHeld(holds, 1) == 1);
  CHECK(cnt->attempts == 1);
  CHECK(other->attempts == 0);
  CHECK(dropped.size() == 1);
  // Deleted once: not again at the next look.
  CHECK(dropped.deleteHeld(holds, 1) == 0);
  CHECK(cnt->attempts == 1);
}

TEST_CASE("a flow created again under the name keeps its copy") {
  DroppedCopies dropped;
  auto cnt = std::make_shared<CountingCopy>();
  auto shard = std::make_shared<CountingCopy>();
  dropped.add("cnt", cnt, 0);
  dropped.add("cnt#1", shard, 0);
  dropped.add("cntx", std::make_shared<CountingCopy>(), 0);
  dropped.forget("CNT");
  // The flow's copy and its sharded copies' are forgotten; another flow's stays.
  CHECK(dropped.size() == 1);
  CHECK(dropped.deleteHeld([](const std::string&) { return true; }, 1) == 1);
  CHECK(cnt->attempts == 0);
  CHECK(shard->attempts == 0);
}

TEST_CASE("a deletion that fails is tried again, a bounded number of times") {
  DroppedCopies dropped;
  auto twice = std::make_shared<CountingCopy>(2);
  auto never = std::make_shared<CountingCopy>(1000);
  dropped.add("twice", twice, 0);
  dropped.add("never", never, 0);
  auto all = [](const std::string&) { return true; };
  CHECK(dropped.deleteHeld(all, 1) == 0);
  CHECK(dropped.deleteHeld(all, 1) == 0);
  CHECK(dropped.deleteHeld(all, 1) == 1);
  CHECK(twice->attempts == 3);
  for (int i = 0; i < DroppedCopies::kMaxAttempts; ++i) dropped.deleteHeld(all, 1);
  CHECK(never->attempts == DroppedCopies::kMaxAttempts);
  CHECK(dropped.size() == 0);
}

TEST_CASE("a copy no node took the slot of for long is let go") {
  DroppedCopies dropped;
  auto cnt = std::make_shared<CountingCopy>();
  dropped.add("cnt", cnt, 1000);
  auto none = [](const std::string&) { return false; };
  CHECK(dropped.deleteHeld(none, 1000 + DroppedCopies::kKeepMicros) == 0);
  CHECK(dropped.size() == 1);
  CHECK(dropped.deleteHeld(none, 1001 + DroppedCopies::kKeepMicros) == 0);
  CHECK(dropped.size() == 0);
  // Not deleted when the slot comes after that.
  CHECK(dropped.deleteHeld([](const std::string&) { return true; },
                           2000 + DroppedCopies::kKeepMicros) == 0);
  CHECK(cnt->attempts == 0);
}
