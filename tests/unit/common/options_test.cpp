#include <doctest/doctest.h>

#include "common/options.h"

using namespace rtsql;

namespace {
Options opts() {
  return Options({{"connector", "kafka", 10, 22},
                  {"maxPartitions", "abc", 40, 56},
                  {"Subscrib", "clicks", 70, 81},
                  {"kafka.bootstrap.servers", "127.0.0.1:9092", 90, 117},
                  {"includeHeaders", "TRUE", 130, 148},
                  {"format", "xml", 150, 160},
                  {"n", "12", 170, 175}});
}
}  // namespace

TEST_CASE("options: lookup is case-insensitive") {
  Options o = opts();
  CHECK(o.has("CONNECTOR"));
  CHECK(o.getString("Connector") == "kafka");
  CHECK(o.getString("missing", "dflt") == "dflt");
  CHECK(o.find("nope") == nullptr);
  CHECK(o.getBool("includeheaders", false));
  CHECK(o.getBool("absent", true));
  CHECK(o.getInt("n", 0) == 12);
  CHECK(o.getInt("absent", 7) == 7);
}

TEST_CASE("options: bad integer is reported at the value") {
  Options o = opts();
  try {
    o.getInt("maxPartitions", 1);
    FAIL("expected an error");
  } catch (const SqlError& e) {
    CHECK(e.sqlstate() == "22023");
    CHECK(e.message() == "invalid value 'abc' for option 'maxPartitions': expected an integer");
    CHECK(e.position() == 56);
  }
  try {
    o.getInt("n", 1, 1, 8);
    FAIL("expected an error");
  } catch (const SqlError& e) {
    CHECK(e.sqlstate() == "22023");
    CHECK(e.message() == "invalid value '12' for option 'n': must be between 1 and 8");
    CHECK(e.position() == 175);
  }
  CHECK_THROWS_AS(o.getBool("connector", false), SqlError);
}

TEST_CASE("options: require and enum") {
  Options o = opts();
  CHECK(o.require("connector", 0).value == "kafka");
  try {
    o.require("topic", 3);
    FAIL("expected an error");
  } catch (const SqlError& e) {
    CHECK(e.sqlstate() == "22023");
    CHECK(e.message() == "missing required option 'topic'");
    CHECK(e.position() == 3);
  }
  CHECK(o.getEnum("connector", "x", {"kafka", "file"}) == "kafka");
  CHECK(o.getEnum("absent", "json", {"json", "csv"}) == "json");
  try {
    o.getEnum("format", "json", {"json", "csv", "raw"});
    FAIL("expected an error");
  } catch (const SqlError& e) {
    CHECK(e.position() == 160);
    CHECK(e.hint() == "expected one of: 'json', 'csv', 'raw'");
  }
}

TEST_CASE("options: prefixes and unknown keys") {
  Options o = opts();
  auto kafka = o.withPrefix("KAFKA.");
  REQUIRE(kafka.size() == 1);
  CHECK(kafka[0].first == "bootstrap.servers");
  CHECK(kafka[0].second == "127.0.0.1:9092");
  try {
    o.checkKnown({"connector", "maxPartitions", "subscribe", "includeHeaders", "format", "n"}, {"kafka."});
    FAIL("expected an error");
  } catch (const SqlError& e) {
    CHECK(e.sqlstate() == "22023");
    CHECK(e.message() == "unknown option 'Subscrib'");
    CHECK(e.position() == 70);
    CHECK(e.hint() == "did you mean 'subscribe'?");
  }
  CHECK_NOTHROW(o.checkKnown({"connector", "maxPartitions", "subscrib", "includeHeaders", "format", "n"}, {"kafka."}));
  Options far({{"zzzzzzzz", "1", 0, 5}});
  try {
    far.checkKnown({"path"});
    FAIL("expected an error");
  } catch (const SqlError& e) {
    CHECK(e.hint() == "known options: 'path'");
  }
}

TEST_CASE("options: set and text") {
  Options o({{"path", "a.csv", 0, 0}});
  o.set("PATH", "b.csv");
  o.set("header", "true");
  CHECK(o.getString("path") == "b.csv");
  CHECK(o.entries().size() == 2);
  o.set("kafka.acks", "it's");
  CHECK(o.toString() == "path = 'b.csv', header = 'true', 'kafka.acks' = 'it''s'");
}

TEST_CASE("options: intervals, reported at the value when bad or out of range") {
  Options o({{"watermark.idle.timeout", "2 seconds", 10, 36},
             {"short", "5 ms", 40, 50},
             {"bad", "soon", 60, 70}});
  CHECK(o.getInterval("watermark.idle.timeout", 0, 0, INT64_MAX) == 2'000'000);
  CHECK(o.getInterval("absent", 7, 0, 10) == 7);
  try {
    o.getInterval("bad", 0, 0, INT64_MAX);
    FAIL("expected an error");
  } catch (const SqlError& e) {
    CHECK(e.sqlstate() == "22023");
    CHECK(e.message() == "invalid value 'soon' for option 'bad': expected an interval");
    CHECK(e.position() == 70);
    CHECK_FALSE(e.hint().empty());
  }
  try {
    o.getInterval("short", 0, 100'000, 86'400'000'000LL);
    FAIL("expected an error");
  } catch (const SqlError& e) {
    CHECK(e.sqlstate() == "22023");
    CHECK(e.message() ==
          "invalid value '5 ms' for option 'short': must be between 100 milliseconds and 86400 seconds");
    CHECK(e.position() == 50);
  }
}
