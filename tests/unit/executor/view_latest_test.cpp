// A materialized view's latest state (executor/state/view_latest.h): the
// rows its writers wrote since their last flush over what RocksDB holds,
// read while nothing is flushed, after a flush, with deletes hiding stored
// rows, across tasks in key order, and none while a task has no writer.
#include "executor/state/view_latest.h"

#include <doctest/doctest.h>

#include <vector>

#include "executor/state/state_store.h"
#include "tests/unit/executor/state_test_util.h"

using namespace rtsql;
using namespace rtsql::testing;

namespace {

ViewLayout layout(int tasks) {
  ViewLayout l;
  l.schema.columns = {Column{"user_id", DataType::of(TypeId::String), false},
                      Column{"n", DataType::of(TypeId::BigInt), false}};
  l.key = {0};
  l.tasks = tasks;
  return l;
}

Row row(const std::string& user, int64_t n) { return {Value::string(user), Value::bigint(n)}; }

std::vector<std::string> scanned(const ViewSnapshot& snap) {
  std::vector<std::string> out;
  auto it = snap.scan();
  Row r;
  while (it->next(r)) out.push_back(r[0].asString() + "=" + std::to_string(r[1].asInt()));
  return out;
}

std::optional<int64_t> looked(const ViewSnapshot& snap, const std::string& user) {
  std::optional<Row> r = snap.lookup({Value::string(user)});
  if (!r) return std::nullopt;
  return (*r)[1].asInt();
}

}  // namespace

TEST_CASE("a view's latest state is its writers' rows since their flush over the stored rows") {
  TempDir dir("view_latest");
  StateStoreOptions o;
  o.path = dir.sub("state");
  auto store = StateStore::open(o);
  auto latest = std::make_shared<ViewLatest>("v", 2);
  // No writer yet: no latest state to give.
  CHECK(latest->read(layout(2)) == nullptr);
  {
    ViewTableWriter t0(*store, {0}, "v", 0, latest);
    ViewTableWriter t1(*store, {0}, "v", 1, latest);
    t0.write(row("c", 1), 0);
    t1.write(row("a", 1), 0);
    // Nothing flushed: the rows are the writers' only.
    auto before = latest->read(layout(2));
    REQUIRE(before != nullptr);
    CHECK(before->epoch() == ViewLatest::kLatestEpoch);
    CHECK(scanned(*before) == std::vector<std::string>{"a=1", "c=1"});
    CHECK(looked(*before, "c") == 1);
    CHECK(!looked(*before, "b"));

    // Flushed: the same rows, now from RocksDB.
    t0.flush(0);
    t1.flush(0);
    auto flushed = latest->read(layout(2));
    CHECK(scanned(*flushed) == std::vector<std::string>{"a=1", "c=1"});

    // An update, a new key and a delete over the stored rows.
    t1.writeChange(row("a", 1), 0, RowKind::UpdateBefore);
    t1.writeChange(row("a", 5), 0, RowKind::UpdateAfter);
    t0.write(row("b", 2), 0);
    t0.writeChange(row("c", 1), 0, RowKind::Delete);
    auto now = latest->read(layout(2));
    CHECK(scanned(*now) == std::vector<std::string>{"a=5", "b=2"});
    CHECK(looked(*now, "a") == 5);
    CHECK(!looked(*now, "c"));
    auto from = now->range(encodeViewKey({Value::string("b")}), {});
    Row r;
    REQUIRE(from->next(r));
    CHECK(r[0].asString() == "b");
    CHECK(!from->next(r));
    // A read taken before is unchanged by the writes after it.
    CHECK(scanned(*flushed) == std::vector<std::string>{"a=1", "c=1"});

    t0.flush(0);
    t1.flush(0);
    CHECK(scanned(*latest->read(layout(2))) == std::vector<std::string>{"a=5", "b=2"});
  }
  // The writers gone (the flow stopped): none again.
  CHECK(latest->read(layout(2)) == nullptr);
}

TEST_CASE("a view read from a store of one checkpoint's state: its rows, at that epoch") {
  // What a standby copy's reads see (executor/state_standby.h): a reader of a
  // store that holds exactly one checkpoint, read as the view's snapshot.
  TempDir dir("view_latest");
  StateStoreOptions o;
  o.path = dir.sub("state");
  auto store = StateStore::open(o);
  {
    ViewTableWriter t0(*store, {0}, "v", 0);
    ViewTableWriter t1(*store, {0}, "v", 1);
    t0.write(row("c", 3), 0);
    t1.write(row("a", 1), 0);
    t1.write(row("b", 2), 0);
    t0.flush(1000);
    t1.flush(1000);
  }
  auto readers = store->readers();
  REQUIRE(readers);
  std::shared_ptr<const ViewSnapshot> snap = ViewSnapshot::ofStored(readers(), 7, layout(2));
  // Written on: the snapshot reads the store as the reader was taken.
  {
    ViewTableWriter t0(*store, {0}, "v", 0);
    t0.write(row("d", 4), 0);
    t0.flush(1000);
  }
  CHECK(snap->epoch() == std::optional<uint64_t>(7));
  CHECK(scanned(*snap) == std::vector<std::string>{"a=1", "b=2", "c=3"});
  CHECK(looked(*snap, "b") == std::optional<int64_t>(2));
  CHECK(looked(*snap, "c") == std::optional<int64_t>(3));
  CHECK_FALSE(looked(*snap, "d").has_value());
}
