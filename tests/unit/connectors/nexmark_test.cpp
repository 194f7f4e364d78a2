// The Nexmark generator and the nexmark source and blackhole sink built on it:
// the generator's events are exactly those rtsql_nexmark_gen has always
// written (fingerprints of its output), the source's options and columns are
// checked where they are written, and the source splits, bounds, paces and
// seeks the event sequence as its offsets say.
#include <doctest/doctest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/clock.h"
#include "connector_test_util.h"
#include "connectors/blackhole/blackhole_sink.h"
#include "connectors/nexmark/generator.h"
#include "connectors/nexmark/nexmark_source.h"
#include "connectors/registry.h"
#include "parser/parser.h"

using namespace rtsql;
using nexmark::EventKind;

namespace {

using testing::opts;
using testing::sqlErrorOf;

// FNV-1a over the JSON lines ("...\n") of one kind's events among events
// [0, events), as rtsql_nexmark_gen writes them to its files.
uint64_t fingerprint(int64_t seed, EventKind kind, int64_t events) {
  nexmark::Generator gen({seed, 1'700'000'000'000, 10000});
  nexmark::Person person;
  nexmark::Auction auction;
  nexmark::Bid bid;
  std::string json, key;
  uint64_t h = 0xcbf29ce484222325ULL;
  for (int64_t n = 0; n < events; ++n) {
    if (nexmark::kindOf(n) != kind) continue;
    switch (kind) {
      case EventKind::Person:
        gen.person(n, person);
        nexmark::toJson(person, json, key);
        break;
      case EventKind::Auction:
        gen.auction(n, auction);
        nexmark::toJson(auction, json, key);
        break;
      case EventKind::Bid:
        gen.bid(n, bid);
        nexmark::toJson(bid, json, key);
        break;
    }
    json += '\n';
    for (unsigned char c : json) {
      h ^= c;
      h *= 0x100000001b3ULL;
    }
  }
  return h;
}

std::unique_ptr<ast::CreateSource> parseSource(const std::string& sql) {
  auto stmts = parseStatements(sql);
  REQUIRE(stmts.size() == 1);
  return std::unique_ptr<ast::CreateSource>(static_cast<ast::CreateSource*>(stmts[0].release()));
}

const char* kBidColumns =
    "auction BIGINT, bidder BIGINT, price BIGINT, channel STRING, url STRING, date_time TIMESTAMP, "
    "extra STRING";

ScanSpec scanOf(const std::string& columns, std::vector<std::pair<std::string, std::string>> kv) {
  kv.insert(kv.begin(), {"connector", "nexmark"});
  ScanSpec scan;
  scan.name = "src";
  scan.connector = "nexmark";
  scan.options = opts(kv);
  auto stmt = parseSource("CREATE SOURCE src (" + columns + ") WITH (connector = 'nexmark')");
  scan.schema = bindNexmarkSchema(*stmt, scan.options);
  return scan;
}

// Every record the task makes until it has nothing more (a bounded source), at
// most `limit`.
std::vector<SourceRecord> drain(SourceTask& src, size_t limit = 1'000'000) {
  std::vector<SourceRecord> out;
  while (out.size() < limit) {
    const size_t before = out.size();
    src.poll(out, 512, 0);
    if (out.size() == before) break;
  }
  return out;
}

}  // namespace

TEST_CASE("nexmark generator: the events rtsql_nexmark_gen wrote before it moved") {
  // Fingerprints of `rtsql_nexmark_gen --no-kafka --events 20000 --event-rate
  // 10000 --base-time 1700000000000 --seed S` as built from bench/nexmark/nexmark_gen.cpp
  // before the generator moved to connectors/nexmark/: bench/nexmark/nexmark.sh --check
  // compares queries with a reference over these very events.
  CHECK(fingerprint(0, EventKind::Person, 20000) == 0x40aaf764909be9fbULL);
  CHECK(fingerprint(0, EventKind::Auction, 20000) == 0x117e67d5f5c09949ULL);
  CHECK(fingerprint(0, EventKind::Bid, 20000) == 0x42ccb284ec6b3ba1ULL);
  CHECK(fingerprint(7, EventKind::Person, 20000) == 0x538f807847f8598bULL);
  CHECK(fingerprint(7, EventKind::Auction, 20000) == 0x7c403db2c8611adaULL);
  CHECK(fingerprint(7, EventKind::Bid, 20000) == 0xf603e64c301d473cULL);

  nexmark::Generator gen({0, 1'700'000'000'000, 10000});
  nexmark::Bid bid;
  std::string json, key;
  gen.bid(4, bid);
  nexmark::toJson(bid, json, key);
  CHECK(json.rfind(
            "{\"auction\":1000,\"bidder\":1001,\"price\":32530001,\"channel\":\"channel-5683\","
            "\"url\":\"https://www.nexmark.com/vbzx/kom_/fies/item.htm?query=1&channel_id=5683\","
            "\"date_time\":\"2023-11-14 22:13:20.000\",",
            0) == 0);
  CHECK(key == "1000");
}

TEST_CASE("nexmark generator: kinds, counts and event time") {
  CHECK(nexmark::kindOf(0) == EventKind::Person);
  CHECK(nexmark::kindOf(1) == EventKind::Auction);
  CHECK(nexmark::kindOf(3) == EventKind::Auction);
  CHECK(nexmark::kindOf(4) == EventKind::Bid);
  CHECK(nexmark::kindOf(49) == EventKind::Bid);
  CHECK(nexmark::kindOf(50) == EventKind::Person);
  for (int64_t n : {0, 1, 2, 4, 5, 49, 50, 51, 99, 100, 12345}) {
    int64_t counts[3] = {0, 0, 0};
    for (int64_t i = 0; i < n; ++i) ++counts[static_cast<int>(nexmark::kindOf(i))];
    CHECK(nexmark::countBefore(EventKind::Person, n) == counts[0]);
    CHECK(nexmark::countBefore(EventKind::Auction, n) == counts[1]);
    CHECK(nexmark::countBefore(EventKind::Bid, n) == counts[2]);
  }
  nexmark::Generator gen({0, 1000, 100});
  CHECK(gen.eventTimeMs(0) == 1000);
  CHECK(gen.eventTimeMs(1) == 1010);
  CHECK(gen.eventTimeMs(250) == 3500);
  // The seed changes the values, not the ids or the times.
  nexmark::Generator other({1, 1000, 100});
  nexmark::Auction a, b;
  gen.auction(51, a);
  other.auction(51, b);
  CHECK(a.id == b.id);
  CHECK(a.dateTimeMs == b.dateTimeMs);
  CHECK(a.description != b.description);
}

TEST_CASE("nexmark source: options are checked where they are written") {
  auto check = [](std::vector<std::pair<std::string, std::string>> kv, const char* state,
                  size_t pos, const char* text) {
    kv.insert(kv.begin(), {"connector", "nexmark"});
    SqlError e = sqlErrorOf([&] { validateSourceOptions("nexmark", opts(kv), 7); });
    CHECK(e.sqlstate() == state);
    CHECK(e.position() == pos);
    CHECK_MESSAGE(e.message().find(text) != std::string::npos, e.message());
    return e;
  };
  SqlError e = check({}, "22023", 7, "'nexmark.table'");
  CHECK(e.hint().find("nexmark.table") != std::string::npos);
  e = check({{"nexmark.table", "bids"}}, "22023", 150, "'bids'");
  CHECK(e.hint().find("'person', 'auction', 'bid'") != std::string::npos);
  e = check({{"nexmark.table", "bid"}, {"rate", "5"}}, "22023", 200, "unknown option 'rate'");
  check({{"nexmark.table", "bid"}, {"events", "-1"}}, "22023", 250, "events");
  check({{"nexmark.table", "bid"}, {"events", "many"}}, "22023", 250, "expected an integer");
  check({{"nexmark.table", "bid"}, {"events-per-second", "-5"}}, "22023", 250, "events-per-second");
  check({{"nexmark.table", "bid"}, {"partitions", "0"}}, "22023", 250, "partitions");
  check({{"nexmark.table", "bid"}, {"partitions", "5000"}}, "22023", 250, "between 1 and 1024");
  check({{"nexmark.table", "bid"}, {"event-rate", "0"}}, "22023", 250, "event-rate");
  e = check({{"nexmark.table", "bid"}, {"base-time", "yesterday"}}, "22023", 250, "base-time");
  CHECK(e.hint().find("2024-01-01") != std::string::npos);
  check({{"nexmark.table", "bid"}, {"watermark.idle.timeout", "1 ms"}}, "22023", 250,
        "watermark.idle.timeout");
  CHECK_NOTHROW(validateSourceOptions("nexmark",
                                      opts({{"connector", "nexmark"},
                                            {"nexmark.table", "Auction"},
                                            {"events", "100"},
                                            {"events-per-second", "10"},
                                            {"event-rate", "2.5"},
                                            {"base-time", "2020-02-02 10:00:00"},
                                            {"partitions", "4"},
                                            {"seed", "-3"},
                                            {"watermark.idle.timeout", "5 seconds"}}),
                                      7));
}

TEST_CASE("nexmark source: the columns are fields of the table, of their type") {
  const Connector& c = *ConnectorRegistry::builtin().find("nexmark");
  Options bid = opts({{"connector", "nexmark"}, {"nexmark.table", "bid"}});
  // No column list: every field of the table.
  auto all = parseSource("CREATE SOURCE b WITH (connector = 'nexmark', 'nexmark.table' = 'bid')");
  CHECK(c.bindSourceSchema(*all, bid).toString() ==
        "(auction BIGINT, bidder BIGINT, price BIGINT, channel STRING, url STRING, date_time "
        "TIMESTAMP, "
        "extra STRING)");
  // Some of them, in any order and case.
  auto some = parseSource(
      "CREATE SOURCE b (Date_Time TIMESTAMP, price BIGINT) WITH (connector = 'nexmark')");
  CHECK(c.bindSourceSchema(*some, bid).size() == 2);

  const std::string unknown =
      "CREATE SOURCE b (price BIGINT, seller BIGINT) WITH (connector = 'nexmark')";
  auto stmt = parseSource(unknown);
  SqlError e = sqlErrorOf([&] { c.bindSourceSchema(*stmt, bid); });
  CHECK(e.sqlstate() == "42703");
  CHECK(e.position() == unknown.find("seller"));
  CHECK(e.message() == "nexmark table 'bid' has no column \"seller\"");
  CHECK(e.hint().find("auction BIGINT") != std::string::npos);

  const std::string wrong = "CREATE SOURCE b (price INT) WITH (connector = 'nexmark')";
  stmt = parseSource(wrong);
  e = sqlErrorOf([&] { c.bindSourceSchema(*stmt, bid); });
  CHECK(e.sqlstate() == "42804");
  CHECK(e.position() == wrong.find("INT"));
  CHECK(e.hint() == "declare it as price BIGINT");
}

TEST_CASE("nexmark source: rows are the generator's events of the table") {
  ScanSpec scan =
      scanOf("price BIGINT, auction BIGINT, date_time TIMESTAMP, extra STRING",
             {{"nexmark.table", "bid"}, {"events", "1000"}, {"base-time", "2023-11-14 22:13:20"}});
  auto src = makeNexmarkSource(scan, 0, 1);
  auto recs = drain(*src);
  REQUIRE(recs.size() == static_cast<size_t>(nexmark::countBefore(EventKind::Bid, 1000)));
  nexmark::Generator gen({0, 1'700'000'000'000, 10000});
  nexmark::Bid bid;
  for (const SourceRecord& r : recs) {
    // With one partition the offset is the event number.
    REQUIRE(nexmark::kindOf(r.offset) == EventKind::Bid);
    gen.bid(r.offset, bid);
    REQUIRE(r.row.size() == 4);
    CHECK(r.row[0].asInt() == bid.price);
    CHECK(r.row[1].asInt() == bid.auction);
    CHECK(r.row[2].asInt() == bid.dateTimeMs * 1000);
    CHECK(r.row[3].asString() == bid.extra);
    CHECK(r.partition == 0);
  }
  CHECK(recs.front().offset == 4);
  auto p = src->progress();
  REQUIRE(p.size() == 1);
  CHECK(p[0].endOffset == 1000);
  CHECK(p[0].latestOffset == 1000);
  CHECK(src->caughtUp(0));
  CHECK(src->description() == "Nexmark[bid, events=1000]");
}

TEST_CASE("nexmark source: partitions split the sequence among the tasks, each event once") {
  std::set<int64_t> all;
  std::map<int32_t, int64_t> ends;
  const int64_t events = 2003;
  for (int task = 0; task < 2; ++task) {
    ScanSpec scan = scanOf(
        "id BIGINT, date_time TIMESTAMP",
        {{"nexmark.table", "auction"}, {"events", std::to_string(events)}, {"partitions", "3"}});
    auto src = makeNexmarkSource(scan, task, 2);
    std::map<int32_t, int64_t> lastTime;
    for (const SourceRecord& r : drain(*src)) {
      // Partition p of 3 holds the events 3k + p; in order of event time.
      const int64_t n = r.offset * 3 + r.partition;
      CHECK(r.partition % 2 == task);
      CHECK(r.row[0].asInt() == 1000 + nexmark::countBefore(EventKind::Auction, n));
      CHECK(r.row[1].asInt() >= lastTime[r.partition]);
      lastTime[r.partition] = r.row[1].asInt();
      CHECK(all.insert(n).second);
    }
    for (const PartitionProgress& p : src->progress()) ends[p.partition] = p.endOffset;
  }
  CHECK(static_cast<int64_t>(all.size()) == nexmark::countBefore(EventKind::Auction, events));
  // 2003 events: 668 in partition 0, 668 in 1, 667 in 2.
  CHECK(ends == std::map<int32_t, int64_t>{{0, 668}, {1, 668}, {2, 667}});
}

TEST_CASE("nexmark source: the options CREATE SOURCE read are what the task runs with") {
  const Connector& nexmark = *ConnectorRegistry::builtin().find("nexmark");
  ScanSpec scan = scanOf("price BIGINT", {{"nexmark.table", "bid"}, {"events", "1000"}});
  // The plan carries what the connector read at CREATE SOURCE; the text is
  // not read again when the task opens.
  scan.parsed = std::make_shared<const SourceOptions>(nexmark.parseSource(opts(
      {{"connector", "nexmark"}, {"nexmark.table", "bid"}, {"events", "100"}, {"partitions", "3"}})));
  REQUIRE(scan.parsed->own != nullptr);
  CHECK(nexmarkPartitions(scan) == 3);
  auto src = makeNexmarkSource(scan, 0, 1);
  CHECK(src->description() == "Nexmark[bid, events=100]");
  CHECK(static_cast<int64_t>(drain(*src).size()) == nexmark::countBefore(EventKind::Bid, 100));
}

TEST_CASE("nexmark source: seek resumes at the offset, making the same events") {
  ScanSpec scan = scanOf(kBidColumns, {{"nexmark.table", "bid"}, {"events", "600"}, {"seed", "3"}});
  auto first = makeNexmarkSource(scan, 0, 1);
  auto whole = drain(*first);
  auto resumed = makeNexmarkSource(scan, 0, 1);
  PartitionProgress at;
  at.partition = 0;
  at.endOffset = 250;
  resumed->seek({at});
  auto rest = drain(*resumed);
  size_t skip = 0;
  while (whole[skip].offset < 250) ++skip;
  REQUIRE(rest.size() == whole.size() - skip);
  for (size_t i = 0; i < rest.size(); ++i) {
    CHECK(rest[i].offset == whole[skip + i].offset);
    CHECK(rest[i].row == whole[skip + i].row);
  }
  // The epoch's start: the seek position, then what commit() is given.
  CHECK(resumed->progress()[0].startOffset == 250);
  at.endOffset = 400;
  resumed->commit({at});
  CHECK(resumed->progress()[0].startOffset == 400);
}

TEST_CASE("nexmark source: events-per-second paces the generator") {
  ScanSpec scan = scanOf("price BIGINT", {{"nexmark.table", "bid"}, {"events-per-second", "200"}});
  auto src = makeNexmarkSource(scan, 0, 1);
  const int64_t t0 = monotonicMicros();
  std::vector<SourceRecord> out;
  while (out.size() < 10) src->poll(out, 512, 100);
  const int64_t elapsed = monotonicMicros() - t0;
  // 10 bids take 11 events at least: 50 ms at 200 events/s. Only the lower
  // bound is certain on a busy machine.
  CHECK(elapsed >= 45'000);
  const auto p = src->progress();
  CHECK(p[0].latestOffset >= p[0].endOffset);
  CHECK(src->description() == "Nexmark[bid, eventsPerSecond=200]");

  // Restored at offset 100,000, pacing counts from there: the next events are
  // due at once, not after the 500 s that 100,000 events take at 200/s.
  auto resumed = makeNexmarkSource(scan, 0, 1);
  PartitionProgress at;
  at.partition = 0;
  at.endOffset = 100'000;
  resumed->seek({at});
  std::vector<SourceRecord> more;
  const int64_t limit = monotonicMicros() + 30'000'000;
  while (more.empty() && monotonicMicros() < limit) resumed->poll(more, 512, 100);
  REQUIRE_FALSE(more.empty());
  CHECK(more.front().offset >= 100'000);
}

TEST_CASE("blackhole sink: counts every task's rows, no options but connector") {
  SinkSpec sink;
  sink.name = "nowhere";
  sink.connector = "blackhole";
  auto a = makeBlackholeSink(sink, "f", 0);
  auto b = makeBlackholeSink(sink, "f", 1);
  auto other = makeBlackholeSink(sink, "g", 0);
  Row row{Value::bigint(1)};
  for (int i = 0; i < 5; ++i) a->write(row, 0);
  for (int i = 0; i < 3; ++i) b->write(row, 0);
  a->flush(1000);
  CHECK(a->description() == "Blackhole[rows=8]");
  CHECK(b->description() == "Blackhole[rows=8]");
  CHECK(other->description() == "Blackhole[rows=0]");
  CHECK(a->deliveryErrors() == 0);
  b.reset();
  CHECK(a->description() == "Blackhole[rows=8]");
  a.reset();
  // A new run of the flow counts from 0.
  auto again = makeBlackholeSink(sink, "f", 0);
  CHECK(again->description() == "Blackhole[rows=0]");

  CHECK_NOTHROW(validateSinkOptions("blackhole", opts({{"connector", "blackhole"}}), 3));
  SqlError e = sqlErrorOf([&] {
    validateSinkOptions("blackhole", opts({{"connector", "blackhole"}, {"topic", "x"}}), 3);
  });
  CHECK(e.sqlstate() == "22023");
  CHECK(e.position() == 100);
  CHECK(e.message() == "unknown option 'topic'");
}
