// TimeIndexedTable: keys of the three shapes (keyed, time-ordered,
// key-then-time) laid out as documented, expiry up to and including the
// watermark (also at the largest time, and in batches larger than one scan),
// expiry before a bound, scans of one key within a time range, and visits
// that write to the table. Runs on the in-memory table and on RocksDB with a
// cache far smaller than the state.
#include "executor/state/time_indexed_table.h"

#include <doctest/doctest.h>

#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "common/row_codec.h"
#include "state_test_util.h"

using namespace rtsql;

namespace {

using testing::MemBackend;
using RocksBackend = testing::RocksBackend<9>;

std::string t(int64_t v) {
  std::string out;
  encodeKeyInt(out, v);
  return out;
}

// What a visit saw: (time, rest, value).
using Seen = std::vector<std::tuple<int64_t, std::string, std::string>>;
TimeIndexedTable::Visitor record(Seen& seen) {
  return [&seen](int64_t time, std::string_view rest, std::string_view value) {
    seen.emplace_back(time, std::string(rest), std::string(value));
  };
}

}  // namespace

#define BACKENDS MemBackend, RocksBackend

TEST_CASE("time-indexed table: keys are laid out as tag + parts") {
  MemBackend b;
  TimeIndexedTable table(b.table());
  table.put('K', "key", "v1");
  table.putAt('T', 42, "rest", "v2");
  table.putKeyAt('J', "key", 42, "rest", "v3");
  const std::map<std::string, std::string, std::less<>> want{
      {"Kkey", "v1"},
      {"T" + t(42) + "rest", "v2"},
      {"Jkey" + t(42) + "rest", "v3"},
  };
  CHECK(b.storage->data == want);
  std::string v;
  CHECK(table.get('K', "key", v));
  CHECK(v == "v1");
  CHECK(table.getAt('T', 42, "rest", v));
  CHECK(v == "v2");
  CHECK(table.getKeyAt('J', "key", 42, "rest", v));
  CHECK(v == "v3");
  CHECK_FALSE(table.getAt('T', 43, "rest", v));
  table.erase('K', "key");
  table.eraseAt('T', 42, "rest");
  table.eraseKeyAt('J', "key", 42, "rest");
  CHECK(table.size() == 0);
  CHECK_THROWS(TimeIndexedTable(nullptr));
}

TEST_CASE("time-indexed table: a put after a get of another tag or key writes its own key") {
  // put() reuses the key a get() of the same tag and key built; these must not.
  MemBackend b;
  TimeIndexedTable table(b.table());
  std::string v;
  const std::string longKey(1200, 'k');
  CHECK_FALSE(table.get('G', longKey, v));
  table.put('G', longKey, "g");
  CHECK_FALSE(table.get('G', longKey + "x", v));
  table.put('H', longKey + "x", "h");  // another tag, same size
  CHECK_FALSE(table.get('G', "ab", v));
  table.put('G', "ac", "ac");  // same tag and size, other bytes
  table.put('G', "ab", "ab");
  const std::map<std::string, std::string, std::less<>> want{
      {"G" + longKey, "g"}, {"H" + longKey + "x", "h"}, {"Gab", "ab"}, {"Gac", "ac"}};
  CHECK(b.storage->data == want);
}

TEST_CASE_TEMPLATE(
    "time-indexed table: expireThrough visits and erases times <= watermark in order", B,
    BACKENDS) {
  B b;
  TimeIndexedTable table(b.table());
  table.putAt('T', 30, "b", "3");
  table.putAt('T', -5, "a", "1");
  table.putAt('T', 10, "a", "2");
  table.putAt('T', 10, "b", "2b");
  table.putAt('T', 31, "a", "4");
  table.put('U', "other family", "x");  // a later tag is never expired
  table.put('S', "other family", "y");  // nor an earlier one
  Seen seen;
  table.expireThrough('T', 30, record(seen));
  CHECK(seen == Seen{{-5, "a", "1"}, {10, "a", "2"}, {10, "b", "2b"}, {30, "b", "3"}});
  CHECK(table.size() == 3);
  seen.clear();
  table.expireThrough('T', 30, record(seen));
  CHECK(seen.empty());

  // The largest watermark expires the whole family, up to the next tag.
  table.putAt('T', std::numeric_limits<int64_t>::max(), "z", "");
  table.expireThrough('T', std::numeric_limits<int64_t>::max(), record(seen));
  CHECK(seen == Seen{{31, "a", "4"}, {std::numeric_limits<int64_t>::max(), "z", ""}});
  CHECK(table.size() == 2);
}

TEST_CASE_TEMPLATE("time-indexed table: expireBefore excludes the bound", B, BACKENDS) {
  B b;
  TimeIndexedTable table(b.table());
  table.putAt('l', 9, "x", "");
  table.putAt('l', 10, "x", "");
  Seen seen;
  table.expireBefore('l', 10, record(seen));
  CHECK(seen == Seen{{9, "x", ""}});
  table.expireBefore('l', std::numeric_limits<int64_t>::min(), record(seen));
  CHECK(seen.size() == 1);
  CHECK(table.size() == 1);
}

TEST_CASE_TEMPLATE(
    "time-indexed table: expiry beyond one batch reaches every entry, and the visitor may write", B,
    BACKENDS) {
  B b;
  TimeIndexedTable table(b.table(), 64);
  constexpr int kEntries = 1000;  // more than one expiry batch
  for (int i = 0; i < kEntries; ++i) {
    const std::string key = std::to_string(i);
    table.putAt('T', i, key, "");
    table.put('K', key, "live");
  }
  int visited = 0;
  int64_t last = -1;
  bool ordered = true;
  table.expireThrough('T', kEntries - 2,
                      [&](int64_t time, std::string_view rest, std::string_view) {
                        ordered = ordered && time > last;
                        last = time;
                        ++visited;
                        table.erase('K', rest);  // as dedup forgets the key an index entry names
                      });
  CHECK(ordered);
  CHECK(visited == kEntries - 1);
  CHECK(table.size() == 2);
  std::string v;
  CHECK(table.get('K', std::to_string(kEntries - 1), v));
}

TEST_CASE_TEMPLATE("time-indexed table: scanKey visits one key's entries within [lo, hi]", B,
                   BACKENDS) {
  B b;
  TimeIndexedTable table(b.table());
  // Keys are self-delimiting, as encodeKey() makes them: "k1|" and "k10|".
  for (int64_t time : {5, 10, 15, 20, 25}) table.putKeyAt('L', "k1|", time, t(time * 2), "v");
  table.putKeyAt('L', "k10|", 15, t(0), "other key");
  table.putKeyAt('L', "k1|", 15, t(31), "second at 15");
  Seen seen;
  table.scanKey('L', "k1|", 10, 20, record(seen));
  CHECK(seen ==
        Seen{{10, t(20), "v"}, {15, t(30), "v"}, {15, t(31), "second at 15"}, {20, t(40), "v"}});
  seen.clear();
  table.scanKey('L', "k1|", 21, 20, record(seen));  // an empty range
  CHECK(seen.empty());
  table.scanKey('L', "k1|", std::numeric_limits<int64_t>::min(),
                std::numeric_limits<int64_t>::max(), record(seen));
  CHECK(seen.size() == 6);

  // The visitor may update the entry it sees.
  table.scanKey('L', "k1|", 5, 5, [&](int64_t time, std::string_view rest, std::string_view) {
    table.putKeyAt('L', "k1|", time, rest, "updated");
  });
  std::string v;
  CHECK(table.getKeyAt('L', "k1|", 5, t(10), v));
  CHECK(v == "updated");
}

TEST_CASE_TEMPLATE("time-indexed table: firstAt is the time of a family's first entry", B,
                   BACKENDS) {
  B b;
  TimeIndexedTable table(b.table());
  CHECK(!table.firstAt('F').has_value());
  table.putAt('F', 30, "x", "");
  table.putAt('F', 20, "y", "");
  table.putAt('G', 5, "z", "");  // another family
  table.putAt('E', 1, "z", "");
  CHECK(table.firstAt('F') == std::optional<int64_t>(20));
  Seen seen;
  table.expireThrough('F', 25, record(seen));
  CHECK(table.firstAt('F') == std::optional<int64_t>(30));
  table.putAt('F', -7, "w", "");  // below what expiry passed
  CHECK(table.firstAt('F') == std::optional<int64_t>(-7));
  table.expireThrough('F', 100, record(seen));
  CHECK(!table.firstAt('F').has_value());
  CHECK(table.firstAt('G') == std::optional<int64_t>(5));
}

TEST_CASE("time-indexed table: forEachAt visits a family without erasing it") {
  MemBackend b;
  TimeIndexedTable table(b.table());
  table.putAt('W', 20, "g", "");
  table.putAt('W', 10, "g", "");
  table.put('X', "", "");
  Seen seen;
  table.forEachAt('W', record(seen));
  CHECK(seen == Seen{{10, "g", ""}, {20, "g", ""}});
  CHECK(table.size() == 3);
  table.flush();
  CHECK(b.flushes() == 1);
  CHECK(table.memoryBytes() > 0);
}

TEST_CASE_TEMPLATE(
    "time-indexed table: expiry after expiry starts where the last one ended, and an entry put "
    "below it still expires",
    B, BACKENDS) {
  B b;
  TimeIndexedTable table(b.table());
  for (int64_t i = 0; i < 20; ++i) table.putAt('T', i, "a", "");
  Seen seen;
  table.expireThrough('T', 9, record(seen));
  CHECK(seen.size() == 10);
  table.flush();
  // Nothing is older than the last expiry: nothing to visit.
  seen.clear();
  table.expireBefore('T', 10, record(seen));
  table.expireThrough('T', 5, record(seen));
  CHECK(seen.empty());
  // An entry older than what expiry passed (a late put) is found again.
  table.putAt('T', 3, "late", "");
  table.putAt('T', std::numeric_limits<int64_t>::min(), "no time", "");
  table.expireThrough('T', 12, record(seen));
  CHECK(seen == Seen{{std::numeric_limits<int64_t>::min(), "no time", ""},
                     {3, "late", ""},
                     {10, "a", ""},
                     {11, "a", ""},
                     {12, "a", ""}});
  // Expiring the whole family, then an entry at any time.
  seen.clear();
  table.expireThrough('T', std::numeric_limits<int64_t>::max(), record(seen));
  CHECK(seen.size() == 7);
  table.putAt('T', -5, "again", "");
  seen.clear();
  table.expireThrough('T', 0, record(seen));
  CHECK(seen == Seen{{-5, "again", ""}});
  CHECK(table.size() == 0);
}
