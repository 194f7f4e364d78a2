// A materialized view's changelog (executor/state/view_changelog.h): what its
// table's writer appends (an update as the old row and the new one, a delete
// as the old row, nothing for a row written again unchanged), what a reader
// of the view's checkpoints gets (the rows of the newest one, then the
// changes of each newer one), a reader resumed from its position getting
// nothing twice, and the expiry of the changes below the readers' bound.
#include "executor/state/view_changelog.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "common/error.h"
#include "executor/checkpoint.h"
#include "executor/state/state_store.h"
#include "executor/state/view_table.h"
#include "tests/unit/executor/state_test_util.h"

using namespace rtsql;
using namespace rtsql::testing;

namespace {

Schema schema() {
  Schema s;
  s.columns = {Column{"user_id", DataType::of(TypeId::String), false},
               Column{"n", DataType::of(TypeId::BigInt), false}};
  return s;
}

Row row(const std::string& user, int64_t n) { return {Value::string(user), Value::bigint(n)}; }

std::unique_ptr<StateStore> openStore(const std::string& path) {
  StateStoreOptions o;
  o.path = path;
  return StateStore::open(o);
}

// Checkpoint `epoch` of the store, as a flow writes it.
void checkpoint(CheckpointDir& dir, StateStore& store, uint64_t epoch) {
  CheckpointInfo info;
  info.epoch = epoch;
  info.hasState = true;
  dir.write(info, [&](const std::string& stateDir) { store.snapshot(stateDir); });
}

const char* kindName(RowKind k) {
  switch (k) {
    case RowKind::Insert:
      return "+";
    case RowKind::UpdateBefore:
      return "-U";
    case RowKind::UpdateAfter:
      return "+U";
    case RowKind::Delete:
      return "-";
  }
  return "?";
}

// The reader's records, as "+a=1": polled until `want` have come (the
// reader looks for a new checkpoint every 100 ms), then for 300 ms more, so
// that one too many would show.
std::vector<std::string> drain(SourceTask& reader, size_t want) {
  std::vector<std::string> out;
  auto poll = [&] {
    std::vector<SourceRecord> got;
    reader.poll(got, 1000, 20);
    for (const SourceRecord& r : got) {
      out.push_back(std::string(kindName(r.kind)) + r.row[0].asString() + "=" +
                    std::to_string(r.row[1].asInt()));
    }
  };
  for (int i = 0; i < 500 && out.size() < want; ++i) poll();
  for (int i = 0; i < 15; ++i) poll();
  return out;
}

struct BoundReset {
  ~BoundReset() { setViewChangelogBound({}); }
};

}  // namespace

TEST_CASE("a reader of a view gets its rows as of a checkpoint, then each change once") {
  TempDir dir("view_changelog");
  auto store = openStore(dir.sub("state"));
  CheckpointDir checkpoints(dir.sub("checkpoints"), 3);
  ViewTableWriter t0(*store, {0}, "v", 0);
  ViewTableWriter t1(*store, {0}, "v", 1);
  t0.write(row("a", 1), 0);
  t1.write(row("b", 1), 0);
  t0.flush(1000);
  t1.flush(1000);
  checkpoint(checkpoints, *store, 1);

  auto reader = openViewChangelogSource("v", dir.sub("checkpoints"), schema());
  std::vector<std::string> first = drain(*reader, 2);
  std::sort(first.begin(), first.end());
  CHECK(first == std::vector<std::string>{"+a=1", "+b=1"});

  // An update spelled from the stored row (an update-mode aggregate sends
  // only the new one), a delete, a row written again unchanged, an insert.
  t0.writeChange(row("a", 2), 0, RowKind::UpdateAfter);
  t1.writeChange(row("b", 1), 0, RowKind::Delete);
  t0.write(row("a", 2), 0);
  t1.write(row("c", 3), 0);
  t0.flush(1000);
  t1.flush(1000);
  // Not checkpointed yet: nothing.
  CHECK(drain(*reader, 0).empty());
  checkpoint(checkpoints, *store, 2);
  std::vector<std::string> changes = drain(*reader, 4);
  std::sort(changes.begin(), changes.end());
  CHECK(changes == std::vector<std::string>{"+Ua=2", "+c=3", "-Ua=1", "-b=1"});

  // A reader resumed from the position the first one reached gets only
  // what came after it.
  std::vector<PartitionProgress> at = reader->progress();
  REQUIRE(at.size() == 1u);
  CHECK(at[0].position.rfind("c:", 0) == 0);
  t0.write(row("d", 4), 0);
  t0.flush(1000);
  t1.flush(1000);
  checkpoint(checkpoints, *store, 3);
  auto resumed = openViewChangelogSource("v", dir.sub("checkpoints"), schema());
  resumed->seek(at);
  CHECK(drain(*resumed, 1) == std::vector<std::string>{"+d=4"});
  bool reads = false;
  std::optional<ViewChangelogEnds> ends = checkpointedChangelogEnds(dir.sub("checkpoints"));
  REQUIRE(ends.has_value());
  CHECK(ends->at(0) == 4u);  // +a, -U a, +U a, +d
  CHECK(ends->at(1) == 3u);  // +b, -b, +c
  CHECK_FALSE(readerPosition(dir.sub("no_such_flow"), "v", &reads).has_value());
}

TEST_CASE("a view's changes below the readers' bound are erased, and a reader below it fails") {
  TempDir dir("view_changelog_expiry");
  BoundReset reset;
  auto store = openStore(dir.sub("state"));
  CheckpointDir checkpoints(dir.sub("checkpoints"), 3);
  std::vector<std::string> asked;
  setViewChangelogBound([&](const std::string& view) -> std::optional<ViewChangelogEnds> {
    asked.push_back(view);
    return ViewChangelogEnds{{0, 2}};
  });
  {
    ViewTableWriter t0(*store, {0}, "v", 0);
    t0.write(row("a", 1), 0);
    t0.write(row("b", 1), 0);
    t0.write(row("c", 1), 0);
    t0.write(row("d", 1), 0);
    t0.flush(1000);
  }
  CHECK(asked == std::vector<std::string>{"v"});
  checkpoint(checkpoints, *store, 1);

  // Entries 0 and 1 are gone: a reader that needs them says so.
  auto behind = openViewChangelogSource("v", dir.sub("checkpoints"), schema());
  PartitionProgress p;
  p.partition = 0;
  p.position = "c:0=0";
  behind->seek({p});
  std::vector<SourceRecord> got;
  CHECK_THROWS_AS(behind->poll(got, 100, 20), SqlError);

  auto atBound = openViewChangelogSource("v", dir.sub("checkpoints"), schema());
  p.position = "c:0=2";
  atBound->seek({p});
  CHECK(drain(*atBound, 2) == std::vector<std::string>{"+c=1", "+d=1"});
}
