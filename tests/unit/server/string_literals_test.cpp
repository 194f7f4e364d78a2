// Backslashes in string literals across sessions and restarts
// (parser/string_literals.h): a session that keeps them as written stores
// statements that read the same to every session, and a catalog written when
// rtsql kept every backslash as written is converted when it is read.
#include <doctest/doctest.h>

#include <fmt/format.h>

#include <string>

#include "common/crc32.h"
#include "server/catalog_file.h"
#include "server/engine.h"
#include "server_test_util.h"

using namespace rtsql;
using rtsql::testing::RestoredEngine;
using rtsql::testing::ResultCapture;

namespace {

using Fixture = rtsql::testing::EngineFixture<>;

std::string field(std::string_view s) { return fmt::format("{}:{}", s.size(), s); }

// A catalog file as an rtsqld that kept backslashes as written wrote it: no
// `rtsql.string_literals` among a record's settings.
std::string oldCatalog(const std::string& sql) {
  std::string body = field("insert") + field("t") + field(sql) + field("1") + field("0") + "\n";
  return fmt::format("rtsql-catalog 1 {} {:08x}\n", body.size(), crc32(body.data(), body.size())) +
         body;
}

std::string one(RestoredEngine& e, const std::string& sql) {
  ResultCapture c = e.run(sql);
  REQUIRE_MESSAGE(!c.err, sql);
  REQUIRE(c.rows.size() == 1);
  REQUIRE(c.rows[0][0]);
  return *c.rows[0][0];
}

}  // namespace

TEST_CASE("a catalog record written before string literals read escapes keeps its meaning") {
  std::vector<CatalogRecord> records =
      parseCatalogFile(oldCatalog(R"(INSERT INTO t VALUES ('C:\dir\', E'a\\b', 'it''s\n'))"));
  REQUIRE(records.size() == 1);
  CHECK(records[0].sql == R"(INSERT INTO t VALUES ('C:\\dir\\', E'a\\b', 'it''s\\n'))");
  CHECK(records[0].settings.empty());
  // Written again, the record says how it reads and is not converted twice.
  std::vector<CatalogRecord> again = parseCatalogFile(formatCatalogFile(records));
  REQUIRE(again.size() == 1);
  CHECK(again[0].sql == records[0].sql);
  CHECK(again[0].settings.empty());
}

TEST_CASE_FIXTURE(Fixture,
                  "rows a session that keeps backslashes as written inserts read the same after a "
                  "restart") {
  {
    RestoredEngine first(options, connectors);
    first.runAll({"SET rtsql.escaped_string_literals = on", "CREATE TABLE paths (p STRING)",
                  R"(INSERT INTO paths VALUES ('C:\dir\'))"});
    CHECK(one(first, "SELECT p FROM paths") == R"(C:\dir\)");
    CHECK(one(first, "SHOW standard_conforming_strings") == "on");
    first.engine.shutdown();
  }
  RestoredEngine restarted(options, connectors);
  CHECK(one(restarted, "SELECT p FROM paths") == R"(C:\dir\)");
  // A new session reads Spark's escapes.
  CHECK(one(restarted, R"(SELECT '\\d\t')") == "\\d\t");
  CHECK(one(restarted, "SHOW standard_conforming_strings") == "off");
  restarted.engine.shutdown();
}

TEST_CASE_FIXTURE(Fixture,
                  "an error after a backslash literal points into the text as the client wrote it") {
  RestoredEngine e(options, connectors);
  e.runAll({"CREATE TABLE t (k STRING)"});
  // Parsed with each backslash of a plain literal doubled, the statement's
  // positions are in that text; the client is told where it wrote them.
  const std::string sql = R"(SELECT 'a\b\c', nope FROM t)";
  for (const char* kept : {"off", "on"}) {
    INFO(kept);
    e.runAll({fmt::format("SET rtsql.escaped_string_literals = {}", kept)});
    ResultCapture c = e.run(sql);
    REQUIRE(c.err);
    CHECK(c.err->sqlstate() == "42703");
    CHECK(c.err->position() == sql.find("nope"));
  }
  // A SET in the same text changes how the next text reads, not this one.
  ResultCapture c = e.run("SET rtsql.escaped_string_literals = off; " + sql);
  REQUIRE(c.err);
  CHECK(c.err->position() == sql.find("nope") + 41);
  // Describe (a prepared statement's Parse) says the same.
  e.runAll({"SET rtsql.escaped_string_literals = on"});
  try {
    e.engine.describe(*e.session, sql);
    FAIL("described");
  } catch (const SqlError& err) {
    CHECK(err.position() == sql.find("nope"));
  }
}
