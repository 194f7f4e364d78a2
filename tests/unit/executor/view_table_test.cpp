// A materialized view's keyed table (executor/state/view_table.h): what the
// writer keeps per key (latest row, deletes and retracted old rows taking the
// key out), and a snapshot of a state snapshot: lookups, the scan merging the
// tasks' key spaces in key order, ranges, and the snapshot unchanged by what
// the writer does after it.
#include "executor/state/view_table.h"

#include <doctest/doctest.h>

#include <vector>

#include "common/error.h"
#include "executor/shuffle.h"
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

std::unique_ptr<StateStore> openStore(const std::string& path) {
  StateStoreOptions o;
  o.path = path;
  return StateStore::open(o);
}

}  // namespace

TEST_CASE("a view's table keeps each key's latest row, and a snapshot reads it in key order") {
  TempDir dir("view_table");
  auto store = openStore(dir.sub("state"));
  {
    ViewTableWriter t0(*store, {0}, "v", 0);
    ViewTableWriter t1(*store, {0}, "v", 1);
    t0.write(row("c", 1), 0);
    t1.write(row("a", 1), 0);
    t0.write(row("b", 1), 0);
    t1.writeChange(row("a", 1), 0, RowKind::UpdateBefore);
    t1.writeChange(row("a", 2), 0, RowKind::UpdateAfter);
    t1.write(row("d", 7), 0);
    t1.writeChange(row("d", 7), 0, RowKind::Delete);
    t0.flush(1000);
    t1.flush(1000);
    store->snapshot(dir.sub("cp1"));

    // Written after the snapshot: not in it.
    t0.write(row("b", 5), 0);
    t0.flush(1000);
  }
  auto snap = ViewSnapshot::open(dir.sub("cp1"), 42, layout(2));
  CHECK(snap->epoch() == 42u);
  CHECK(scanned(*snap) == std::vector<std::string>{"a=2", "b=1", "c=1"});
  auto a = snap->lookup({Value::string("a")});
  REQUIRE(a.has_value());
  CHECK((*a)[1].asInt() == 2);
  CHECK_FALSE(snap->lookup({Value::string("d")}).has_value());
  CHECK_FALSE(snap->lookup({Value::string("zz")}).has_value());

  // A range of encoded keys: [b, c).
  auto it = snap->range(encodeViewKey({Value::string("b")}), encodeViewKey({Value::string("c")}));
  Row r;
  REQUIRE(it->next(r));
  CHECK(r[0].asString() == "b");
  CHECK_FALSE(it->next(r));

  // The directory may go (a checkpoint's retention): the open snapshot reads on.
  std::filesystem::remove_all(dir.sub("cp1"));
  CHECK(scanned(*snap) == std::vector<std::string>{"a=2", "b=1", "c=1"});
}

TEST_CASE("an empty view and a missing checkpoint") {
  auto empty = ViewSnapshot::empty(layout(3));
  CHECK_FALSE(empty->epoch().has_value());
  CHECK(scanned(*empty).empty());
  CHECK_FALSE(empty->lookup({Value::string("a")}).has_value());
  TempDir dir("view_missing");
  CHECK_THROWS_AS(ViewSnapshot::open(dir.sub("nope"), 1, layout(1)), SqlError);
}

TEST_CASE("a lookup finds each key in the task the shuffle gave it, or in any other") {
  TempDir dir("view_task");
  auto store = openStore(dir.sub("state"));
  constexpr int kTasks = 4;
  {
    std::vector<std::unique_ptr<ViewTableWriter>> tasks;
    for (int t = 0; t < kTasks; ++t)
      tasks.push_back(std::make_unique<ViewTableWriter>(*store, std::vector<int>{0}, "v", t));
    for (int k = 0; k < 40; ++k) {
      const Value key = Value::string("k" + std::to_string(k));
      // Where a stage shuffled by the key puts it; every fifth key elsewhere
      // (a view whose stage is shuffled by something else).
      size_t t = shuffleKeyHashOf({key}) % kTasks;
      if (k % 5 == 0) t = (t + 1) % kTasks;
      tasks[t]->write(row(key.asString(), k), 0);
    }
    for (auto& t : tasks) t->flush(1000);
    store->snapshot(dir.sub("cp"));
  }
  auto snap = ViewSnapshot::open(dir.sub("cp"), 1, layout(kTasks));
  for (int k = 0; k < 40; ++k) {
    auto r = snap->lookup({Value::string("k" + std::to_string(k))});
    REQUIRE(r.has_value());
    CHECK((*r)[1].asInt() == k);
  }
  CHECK_FALSE(snap->lookup({Value::string("k40")}).has_value());
}
