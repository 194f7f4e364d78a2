#include "connectors/datagen/datagen.h"

#include <doctest/doctest.h>

#include <chrono>
#include <functional>
#include <future>
#include <set>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/error.h"
#include "connector_test_util.h"
#include "connectors/registry.h"

using namespace rtsql;

namespace {

using testing::opts;
using testing::t;

ScanSpec scanOf(Schema schema, std::vector<std::pair<std::string, std::string>> kv) {
  ScanSpec scan;
  scan.name = "gen";
  scan.connector = "datagen";
  scan.options = opts(std::move(kv));
  scan.schema = std::move(schema);
  return scan;
}

Schema typesSchema() {
  Schema s;
  s.columns.push_back({"i", t(TypeId::Int), false});
  s.columns.push_back({"b", t(TypeId::BigInt), false});
  s.columns.push_back({"d", t(TypeId::Double), false});
  s.columns.push_back({"s", t(TypeId::String), false});
  s.columns.push_back({"flag", t(TypeId::Boolean), false});
  s.columns.push_back({"ts", t(TypeId::Timestamp), false});
  s.columns.push_back({"bin", t(TypeId::Binary), false});
  s.columns.push_back({"tags", DataType::arrayOf(t(TypeId::String)), false});
  s.columns.push_back({"geo", DataType::structOf({{"lat", t(TypeId::Double)}}), false});
  return s;
}

// Polls until `want` records came or `limitMs` passed.
std::vector<SourceRecord> pollFor(SourceTask& src, size_t want, int limitMs) {
  std::vector<SourceRecord> out;
  int64_t deadline = monotonicMicros() + int64_t{limitMs} * 1000;
  while (out.size() < want && monotonicMicros() < deadline) src.poll(out, want - out.size(), 50);
  return out;
}

void expectError(const std::function<void()>& f, const char* state, size_t pos, const char* text) {
  try {
    f();
    FAIL("expected an error");
  } catch (const SqlError& e) {
    CHECK(e.sqlstate() == state);
    CHECK(e.position() == pos);
    CHECK_MESSAGE(e.message().find(text) != std::string::npos, e.message());
  }
}

}  // namespace

TEST_CASE("datagen: rows are filled by type") {
  auto src = makeDatagenSource(scanOf(typesSchema(), {{"connector", "datagen"}, {"rows-per-second", "1000"}}), 0, 1);
  auto recs = pollFor(*src, 50, 5000);
  REQUIRE(recs.size() == 50);
  int64_t before = nowMicros();
  for (size_t n = 0; n < recs.size(); ++n) {
    const SourceRecord& r = recs[n];
    REQUIRE(r.row.size() == 9);
    CHECK(r.row[0].type() == TypeId::Int);
    CHECK(r.row[1].type() == TypeId::BigInt);
    CHECK(r.row[2].type() == TypeId::Double);
    CHECK(r.row[3].type() == TypeId::String);
    CHECK(r.row[3].asString().size() == 8);
    CHECK(r.row[4].type() == TypeId::Boolean);
    CHECK(r.row[5].type() == TypeId::Timestamp);
    CHECK(r.row[5].asInt() == r.timestampMicros);
    CHECK(r.row[6].type() == TypeId::Binary);
    CHECK(r.row[7].type() == TypeId::Array);
    CHECK(r.row[8].type() == TypeId::Struct);
    CHECK(r.partition == 0);
    CHECK(r.offset == static_cast<int64_t>(n));
    CHECK(r.timestampMicros <= before);
    CHECK(r.timestampMicros > before - 10'000'000);
  }
  CHECK(src->description() == "Datagen[rowsPerSecond=1000]");
  CHECK(src->decodeErrors() == 0);
}

TEST_CASE("datagen: field options") {
  Schema s;
  s.columns.push_back({"id", t(TypeId::BigInt), false});
  s.columns.push_back({"user", t(TypeId::String), false});
  s.columns.push_back({"amount", t(TypeId::Double), false});
  s.columns.push_back({"qty", t(TypeId::Int), false});
  s.columns.push_back({"code", t(TypeId::String), false});
  s.columns.push_back({"maybe", t(TypeId::Int), false});
  auto scan = scanOf(s, {{"rows-per-second", "100000"},
                         {"fields.id.kind", "sequence"},
                         {"fields.id.start", "100"},
                         {"fields.user.values", "alice, bob,carol"},
                         {"fields.amount.min", "10"},
                         {"fields.amount.max", "20"},
                         {"fields.qty.min", "-3"},
                         {"fields.qty.max", "3"},
                         {"fields.code.length", "3"},
                         {"fields.maybe.null-rate", "1"}});
  auto src = makeDatagenSource(scan, 0, 1);
  auto recs = pollFor(*src, 500, 5000);
  REQUIRE(recs.size() == 500);
  std::set<std::string> users;
  std::set<int64_t> qtys;
  for (size_t n = 0; n < recs.size(); ++n) {
    const Row& row = recs[n].row;
    CHECK(row[0] == Value::bigint(100 + static_cast<int64_t>(n)));
    users.insert(row[1].asString());
    CHECK(row[2].asDouble() >= 10);
    CHECK(row[2].asDouble() <= 20);
    qtys.insert(row[3].asInt());
    CHECK(row[4].asString().size() == 3);
    CHECK(row[5].isNull());
  }
  CHECK(users == std::set<std::string>{"alice", "bob", "carol"});
  CHECK(*qtys.begin() == -3);
  CHECK(*qtys.rbegin() == 3);
}

TEST_CASE("datagen: the same seed and task give the same rows") {
  Schema s;
  s.columns.push_back({"n", t(TypeId::BigInt), false});
  s.columns.push_back({"s", t(TypeId::String), false});
  auto scan = scanOf(s, {{"rows-per-second", "100000"}, {"seed", "7"}});
  auto a = pollFor(*makeDatagenSource(scan, 1, 2), 20, 5000);
  auto b = pollFor(*makeDatagenSource(scan, 1, 2), 20, 5000);
  auto other = pollFor(*makeDatagenSource(scan, 0, 2), 20, 5000);
  REQUIRE(a.size() == 20);
  REQUIRE(b.size() == 20);
  REQUIRE(other.size() == 20);
  bool differs = false;
  for (size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].row == b[i].row);
    CHECK(a[i].partition == 1);
    differs = differs || !(a[i].row == other[i].row);
  }
  CHECK(differs);
}

TEST_CASE("datagen: sequences are split over tasks and end the source") {
  Schema s;
  s.columns.push_back({"id", t(TypeId::Int), false});
  auto scan = scanOf(s, {{"rows-per-second", "100000"},
                         {"fields.id.kind", "sequence"},
                         {"fields.id.start", "1"},
                         {"fields.id.end", "10"}});
  std::set<int64_t> seen;
  for (int task = 0; task < 3; ++task) {
    auto src = makeDatagenSource(scan, task, 3);
    auto recs = pollFor(*src, 100, 500);
    CHECK(recs.size() == (task == 0 ? 4 : 3));
    for (const auto& r : recs) CHECK(seen.insert(r.row[0].asInt()).second);
  }
  CHECK(seen.size() == 10);
  CHECK(*seen.begin() == 1);
  CHECK(*seen.rbegin() == 10);
}

TEST_CASE("datagen: number-of-rows stops the source, split over tasks") {
  Schema s;
  s.columns.push_back({"x", t(TypeId::Int), false});
  auto scan = scanOf(s, {{"rowsPerSecond", "100000"}, {"number-of-rows", "5"}});
  auto t0 = makeDatagenSource(scan, 0, 2);
  auto t1 = makeDatagenSource(scan, 1, 2);
  CHECK(pollFor(*t0, 100, 300).size() == 3);
  CHECK(pollFor(*t1, 100, 300).size() == 2);
  // A finished task waits out the timeout instead of returning at once.
  std::vector<SourceRecord> out;
  int64_t start = monotonicMicros();
  t0->poll(out, 10, 100);
  CHECK(out.empty());
  CHECK(monotonicMicros() - start >= 90'000);
  CHECK(t0->description() == "Datagen[rowsPerSecond=100000, numberOfRows=5]");
}

TEST_CASE("datagen: rate pacing") {
  // Checked against the clock read around the polls, not against an assumed
  // duration: on a loaded machine the loop runs longer than planned, and the
  // source must then have delivered what became due meanwhile, never more.
  // A source's schedule starts within its first poll: row n is due n / rate
  // seconds after that.
  Schema s;
  s.columns.push_back({"x", t(TypeId::BigInt), false});
  auto paced = [](SourceTask& src, double perSecond, int64_t forMicros) {
    std::vector<SourceRecord> out;
    const int64_t firstCall = monotonicMicros();
    src.poll(out, 1000, 100);
    const int64_t firstReturn = monotonicMicros();
    CHECK(out.size() == 1);  // the first row is due at once
    int polls = 1;
    int64_t lastCall = firstReturn;
    while (monotonicMicros() - firstCall < forMicros && polls < 100000) {
      lastCall = monotonicMicros();
      src.poll(out, 1000, 100);
      ++polls;
    }
    const int64_t end = monotonicMicros();
    // Everything due when the last poll began was delivered...
    double dueAtLastCall = perSecond * static_cast<double>(lastCall - firstReturn) / 1e6;
    CHECK(static_cast<double>(out.size()) >= dueAtLastCall);
    // ...and nothing ahead of its time.
    double dueAtEnd = perSecond * static_cast<double>(end - firstCall) / 1e6 + 1;
    CHECK(static_cast<double>(out.size()) <= dueAtEnd + 1);
    // Waiting, not spinning: far fewer polls than rows times a small factor.
    CHECK(polls < 1000);
    return out.size();
  };
  auto src = makeDatagenSource(scanOf(s, {{"rows-per-second", "200"}}), 0, 1);
  CHECK(paced(*src, 200, 1'000'000) > 1);
  // Two tasks share the total rate.
  auto half = makeDatagenSource(scanOf(s, {{"rows-per-second", "200"}}), 1, 2);
  CHECK(paced(*half, 100, 500'000) > 1);
}

TEST_CASE("datagen: poll returns within its timeout when nothing is due") {
  Schema s;
  s.columns.push_back({"x", t(TypeId::BigInt), false});
  auto src = makeDatagenSource(scanOf(s, {{"rows-per-second", "1"}}), 0, 1);
  std::vector<SourceRecord> out;
  src->poll(out, 10, 50);
  CHECK(out.size() == 1);  // the first row is due at once
  int64_t start = monotonicMicros();
  src->poll(out, 10, 50);
  int64_t took = monotonicMicros() - start;
  CHECK(out.size() == 1);
  CHECK(took >= 40'000);
  CHECK(took < 10'000'000);  // returns, however loaded the machine
  out.clear();
  src->poll(out, 10, 0);  // no wait at all
  CHECK(out.empty());
}

TEST_CASE("datagen: progress and commit") {
  Schema s;
  s.columns.push_back({"x", t(TypeId::BigInt), false});
  auto src = makeDatagenSource(scanOf(s, {{"rows-per-second", "100000"}}), 2, 3);
  auto recs = pollFor(*src, 10, 5000);
  REQUIRE(recs.size() == 10);
  auto p = src->progress();
  REQUIRE(p.size() == 1);
  CHECK(p[0].partition == 2);
  CHECK(p[0].startOffset == 0);
  CHECK(p[0].endOffset == 10);
  CHECK(p[0].latestOffset >= 10);
  src->commit();
  recs = pollFor(*src, 5, 5000);
  p = src->progress();
  CHECK(p[0].startOffset == 10);
  CHECK(p[0].endOffset == 15);
  CHECK(recs.front().offset == 10);
}

TEST_CASE("datagen: hidden metadata columns") {
  Schema s;
  s.columns.push_back({"x", t(TypeId::Int), false});
  s.columns.push_back({"_timestamp", t(TypeId::Timestamp), true});
  s.columns.push_back({"_partition", t(TypeId::Int), true});
  s.columns.push_back({"_offset", t(TypeId::BigInt), true});
  auto src = makeDatagenSource(scanOf(s, {{"rows-per-second", "100000"}}), 1, 2);
  auto recs = pollFor(*src, 2, 5000);
  REQUIRE(recs.size() == 2);
  CHECK(recs[1].row[1] == Value::timestamp(recs[1].timestampMicros));
  CHECK(recs[1].row[2] == Value::integer(1));
  CHECK(recs[1].row[3] == Value::bigint(1));
}

TEST_CASE("datagen: option errors") {
  auto v = [](std::vector<std::pair<std::string, std::string>> kv) {
    return [kv]() { validateDatagenOptions(opts(kv), 7); };
  };
  expectError(v({{"connector", "datagen"}, {"rows-per-second", "0"}}), "22023", 150, "rows-per-second");
  expectError(v({{"rowsPerSecond", "fast"}}), "22023", 50, "rowsPerSecond");
  expectError(v({{"number-of-rows", "-1"}}), "22023", 50, "number-of-rows");
  expectError(v({{"rows-per-secnd", "5"}}), "22023", 0, "unknown option 'rows-per-secnd'");
  expectError(v({{"fields.x.kind", "constant"}}), "22023", 50, "fields.x.kind");
  expectError(v({{"fields.x.min", "ten"}}), "22023", 50, "not a number");
  expectError(v({{"fields.x.min", "5"}, {"fields.x.max", "1"}}), "22023", 150, "below the minimum");
  expectError(v({{"fields.x.length", "-2"}}), "22023", 50, "fields.x.length");
  expectError(v({{"fields.x.colour", "red"}}), "22023", 0, "unknown datagen field property 'colour'");
  expectError(v({{"fields.x", "1"}}), "22023", 0, "invalid datagen option 'fields.x'");
  expectError(v({{"fields.x.null-rate", "2"}}), "22023", 50, "fields.x.null-rate");
  CHECK_NOTHROW(validateDatagenOptions(
      opts({{"connector", "datagen"}, {"rows-per-second", "5"}, {"fields.a.kind", "random"}}), 0));

  // With the schema: field options must name a column and fit its type.
  Schema s;
  s.columns.push_back({"n", t(TypeId::Int), false});
  s.columns.push_back({"flag", t(TypeId::Boolean), false});
  auto w = [s](std::vector<std::pair<std::string, std::string>> kv) {
    return [s, kv]() { validateDatagenOptions(opts(kv), s, 7); };
  };
  expectError(w({{"fields.nope.min", "1"}}), "42703", 0, "names no column 'nope'");
  expectError(w({{"fields.flag.kind", "sequence"}}), "22023", 50, "a sequence cannot fill column 'flag'");
  expectError(w({{"fields.flag.max", "3"}}), "22023", 50, "needs a numeric column");
  expectError(w({{"fields.n.max", "3000000000"}}), "22023", 50, "out of range for INT");
  expectError(w({{"fields.n.values", "1,two"}}), "22023", 50, "value 'two'");
  // makeDatagenSource checks the schema too.
  expectError([&]() { makeDatagenSource(scanOf(s, {{"fields.zz.kind", "random"}}), 0, 1); }, "42703", 0,
              "zz");
}

TEST_CASE("datagen: a task runs with the options CREATE SOURCE read, not the text") {
  Schema s;
  s.columns.push_back({"id", t(TypeId::BigInt), false});
  ScanSpec scan = scanOf(s, {{"connector", "datagen"}, {"rows-per-second", "1000"}});
  scan.parsed = std::make_shared<const SourceOptions>(
      ConnectorRegistry::builtin().find("datagen")->parseSource(
          opts({{"connector", "datagen"}, {"rows-per-second", "7"}, {"number-of-rows", "3"}})));
  REQUIRE(scan.parsed->own);
  CHECK(makeDatagenSource(scan, 0, 1)->description() == "Datagen[rowsPerSecond=7, numberOfRows=3]");
  // A spec built by hand is read from its text.
  scan.parsed = nullptr;
  CHECK(makeDatagenSource(scan, 0, 1)->description() == "Datagen[rowsPerSecond=1000]");
}

// A finished generator waits out the poll's timeout (so that its task does not
// spin) unless woken; the 60 s bound only keeps a broken build from hanging.
TEST_CASE("datagen: a wake ends the wait of a finished generator") {
  Schema s;
  s.columns.push_back({"id", t(TypeId::BigInt), false});
  auto task = makeDatagenSource(
      scanOf(s, {{"connector", "datagen"}, {"rows-per-second", "1000"}, {"number-of-rows", "1"}}),
      0, 1);
  CHECK(task->wakes());
  std::vector<SourceRecord> out;
  task->poll(out, 10, 1000);
  REQUIRE(out.size() == 1);
  auto polled = std::async(std::launch::async, [&] { task->poll(out, 10, 120'000); });
  bool returned = false;
  for (int i = 0; i < 600 && !returned; ++i) {
    task->wake();
    returned = polled.wait_for(std::chrono::milliseconds(100)) == std::future_status::ready;
  }
  CHECK(returned);
  CHECK(out.size() == 1);
}
