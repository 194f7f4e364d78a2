// User-defined SQL functions in the engine: the catalog file keeps them
// before everything else, in creation order, so that a restart brings back a
// function before the functions and flows that call it; SHOW FUNCTIONS lists
// them beside the built-in ones; a dry run creates them in the session's copy
// of the catalog only. A function a newer release's built-in took the name
// of is not restored, nor is what calls it.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "common/expr.h"
#include "common/functions/spark_differences.h"
#include "server/catalog_file.h"
#include "server/engine.h"
#include "server_test_util.h"
#include "tests/unit/stderr_capture.h"

using namespace rtsql;
using rtsql::testing::requireOk;
using rtsql::testing::RestoredEngine;
using rtsql::testing::ResultCapture;

namespace {

using Fixture = rtsql::testing::EngineFixture<>;

std::string readFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

}  // namespace

TEST_CASE_FIXTURE(Fixture,
                  "functions are kept first in the catalog file, in creation order, and restored") {
  const std::string out = (tmp.path / "out.jsonl").string();
  {
    RestoredEngine first(options, connectors);
    // `zz_base` sorts after `aa_user`, which calls it: only the creation order replays.
    first.runAll({"CREATE SOURCE gen (a BIGINT) WITH (connector = 'datagen', rowsPerSecond = '1')",
                  "CREATE SINK out WITH (connector = 'file', path = '" + out + "')",
                  "CREATE FUNCTION zz_base(x BIGINT) RETURNS BIGINT AS x + 1",
                  "CREATE FUNCTION aa_user(x BIGINT) RETURNS BIGINT AS zz_base(x) * 2",
                  "CREATE FLOW f INTO out AS SELECT aa_user(a) AS b FROM gen"});
    std::vector<CatalogRecord> records = readCatalogFile((dataDir() / "catalog").string());
    REQUIRE(records.size() == 5);
    CHECK(records[0].kind == "function");
    CHECK(records[0].name == "zz_base");
    CHECK(records[0].sql == "CREATE FUNCTION zz_base(x BIGINT) RETURNS BIGINT AS x + 1");
    CHECK(records[1].kind == "function");
    CHECK(records[1].name == "aa_user");
    CHECK(records[2].kind == "source");
    first.engine.shutdown();
  }
  RestoredEngine second(options, connectors);
  ResultCapture show = second.run("SHOW USER FUNCTIONS");
  requireOk(show, "SHOW USER FUNCTIONS");
  REQUIRE(show.rows.size() == 2);
  CHECK(*show.rows[0][0] == "aa_user");
  CHECK(*show.rows[0][2] == "aa_user(x BIGINT)");
  CHECK(*show.rows[0][4] == "zz_base(x) * 2");
  CHECK(*show.rows[1][0] == "zz_base");
  // The flow came back planned, so it still holds its function.
  ResultCapture drop = second.run("DROP FUNCTION aa_user");
  REQUIRE(drop.err);
  CHECK(drop.err->sqlstate() == "2BP01");
  CHECK(drop.err->message() == "cannot drop function aa_user: flow \"f\" calls it");
  ResultCapture explain = second.run("EXPLAIN SELECT aa_user(a) FROM gen");
  requireOk(explain, "EXPLAIN");
  bool inlined = false;
  for (const auto& row : explain.rows) {
    if (row[0]->find("Project ((a + 1) * 2)") != std::string::npos) inlined = true;
  }
  CHECK(inlined);
  second.engine.shutdown();
}

TEST_CASE_FIXTURE(Fixture, "SHOW FUNCTIONS lists user functions among the built-in ones") {
  RestoredEngine server(options, connectors);
  server.runAll({"CREATE FUNCTION Shout(s STRING) RETURNS STRING AS upper(s) || '!'"});
  ResultCapture all = server.run("SHOW FUNCTIONS");
  requireOk(all, "SHOW FUNCTIONS");
  REQUIRE(all.cols.size() == 7);
  CHECK(all.cols[0].name == "function");
  CHECK(all.cols[1].name == "kind");
  CHECK(all.cols[5].name == "language");
  CHECK(all.cols[6].name == "spark");
  size_t user = 0, builtin = 0;
  std::string previous;
  for (const auto& row : all.rows) {
    CHECK(toLower(*row[0]) >= previous);  // sorted by name
    previous = toLower(*row[0]);
    if (*row[1] == "user") {
      ++user;
      CHECK(*row[0] == "Shout");
      CHECK(*row[2] == "Shout(s STRING)");
      CHECK(*row[3] == "STRING");
      CHECK(*row[4] == "upper(s) || '!'");
      CHECK(*row[5] == "SQL");
      CHECK_FALSE(row[6].has_value());
    } else {
      ++builtin;
      CHECK(*row[1] == "builtin");
      CHECK_FALSE(row[2].has_value());
      // Where a built-in differs from Spark: the catalog's line, else NULL.
      std::optional<std::string_view> spark = sparkDifference(*row[0]);
      CHECK(row[6] == (spark ? std::optional<std::string>(std::string(*spark)) : std::nullopt));
    }
  }
  CHECK(user == 1);
  CHECK(builtin == functionNames().size());

  ResultCapture described = server.run("DESCRIBE FUNCTION shout");
  requireOk(described, "DESCRIBE FUNCTION");
  REQUIRE(described.rows.size() == 5);
  CHECK(*described.rows[0][0] == "s");
  CHECK(*described.rows[0][2] == "parameter");
  CHECK(*described.rows[2][0] == "language");
  CHECK(*described.rows[2][1] == "SQL");
  CHECK(*described.rows[3][0] == "owner");
  CHECK(*described.rows[4][0] == "body");
  CHECK(*described.rows[4][1] == "upper(s) || '!'");
  ResultCapture missing = server.run("DESCRIBE FUNCTION nosuch");
  REQUIRE(missing.err);
  CHECK(missing.err->sqlstate() == "42883");
  CHECK(missing.err->position() == 18);
  server.engine.shutdown();
}

TEST_CASE_FIXTURE(Fixture, "a dry run creates and drops functions in the session's copy only") {
  RestoredEngine server(options, connectors);
  server.runAll({"CREATE FUNCTION keep(x INT) RETURNS INT AS x"});
  const std::string before = readFile(dataDir() / "catalog");
  server.runAll({"SET rtsql.dry_run = on",
                 "CREATE FUNCTION tried(x INT) RETURNS INT AS keep(x) + 1", "DROP FUNCTION tried",
                 "CREATE FUNCTION tried(x INT) RETURNS INT AS x"});
  ResultCapture dry = server.run("SHOW USER FUNCTIONS");
  CHECK(dry.rows.size() == 2);
  server.runAll({"SET rtsql.dry_run = off"});
  ResultCapture real = server.run("SHOW USER FUNCTIONS");
  REQUIRE(real.rows.size() == 1);
  CHECK(*real.rows[0][0] == "keep");
  CHECK(readFile(dataDir() / "catalog") == before);
  server.engine.shutdown();
}

using rtsql::testing::StderrCapture;

TEST_CASE_FIXTURE(Fixture,
                  "a user function a built-in took the name of fails its callers at restart") {
  // A catalog written by a release before `first` was a built-in aggregate:
  // the user function `first`, a function calling it, and flows calling each.
  const std::string out = (tmp.path / "out.jsonl").string();
  const std::string flowF = "CREATE FLOW f INTO out AS SELECT first(a) AS b FROM gen";
  const std::string flowG = "CREATE FLOW g INTO out AS SELECT twice_first(a) AS b FROM gen";
  writeCatalogFile(
      (dataDir() / "catalog").string(),
      {{"function", "first", "CREATE FUNCTION first(x BIGINT) RETURNS BIGINT AS x + 1", true, {}, {}},
       {"function", "twice_first",
        "CREATE FUNCTION twice_first(x BIGINT) RETURNS BIGINT AS first(x) * 2", true, {}, {}},
       {"source", "gen", "CREATE SOURCE gen (a BIGINT) WITH (connector = 'datagen', rowsPerSecond = '1')",
        true, {}, {}},
       {"sink", "out", "CREATE SINK out WITH (connector = 'file', path = '" + out + "')", true, {}, {}},
       {"flow", "f", flowF, false, {}, {}},
       {"flow", "g", flowG, false, {}, {}},
       {"flow", "h", "CREATE FLOW h INTO out AS SELECT a + 1 AS b FROM gen", false, {}, {}}});
  std::string log;
  {
    StderrCapture capture(tmp.path / "stderr.log");
    RestoredEngine server(options, connectors);
    // Neither flow was planned with the built-in `first` in the function's place.
    ResultCapture flows = server.run("SHOW FLOWS");
    requireOk(flows, "SHOW FLOWS");
    REQUIRE(flows.rows.size() == 1);
    CHECK(*flows.rows[0][0] == "h");
    ResultCapture functions = server.run("SHOW USER FUNCTIONS");
    requireOk(functions, "SHOW USER FUNCTIONS");
    CHECK(functions.rows.empty());
    // The function cannot be made again under its old name; under another, a
    // flow created again under its old name replaces the one not restored.
    ResultCapture again = server.run("CREATE FUNCTION first(x BIGINT) RETURNS BIGINT AS x + 1");
    REQUIRE(again.err);
    CHECK(again.err->sqlstate() == "42723");
    CHECK(again.err->message() == "function first is a built-in function");
    CHECK(again.err->hint().find("choose another name") != std::string::npos);
    server.runAll({"CREATE FUNCTION my_first(x BIGINT) RETURNS BIGINT AS x + 1",
                   "CREATE FLOW f INTO out AS SELECT my_first(a) AS b FROM gen"});
    server.engine.shutdown();
    log = capture.text();
  }
  CHECK(log.find("cannot restore function \"first\": a built-in function of this version has its "
                 "name") != std::string::npos);
  CHECK(log.find("cannot restore function \"twice_first\": function \"twice_first\" calls user "
                 "function \"first\", which was not restored: a built-in function of this "
                 "version has its name") != std::string::npos);
  CHECK(log.find("cannot restore flow \"f\": flow \"f\" calls user function \"first\"") !=
        std::string::npos);
  CHECK(log.find("cannot restore flow \"g\": flow \"g\" calls user function \"twice_first\", "
                 "which was not restored; it is kept") != std::string::npos);
  // The catalog file keeps what was not restored as it was, but for the flow
  // made again under its name.
  std::vector<CatalogRecord> records = readCatalogFile((dataDir() / "catalog").string());
  auto count = [&](const std::string& kind, const std::string& sql) {
    return std::count_if(records.begin(), records.end(), [&](const CatalogRecord& r) {
      return r.kind == kind && (sql.empty() || r.sql == sql);
    });
  };
  CHECK(count("function", "CREATE FUNCTION first(x BIGINT) RETURNS BIGINT AS x + 1") == 1);
  CHECK(count("function", "CREATE FUNCTION twice_first(x BIGINT) RETURNS BIGINT AS first(x) * 2") ==
        1);
  CHECK(count("flow", flowG) == 1);
  CHECK(count("flow", flowF) == 0);
  CHECK(count("flow", "CREATE FLOW f INTO out AS SELECT my_first(a) AS b FROM gen") == 1);
  CHECK(count("flow", "") == 3);
}
