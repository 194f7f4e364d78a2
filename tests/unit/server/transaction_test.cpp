// Transaction blocks and cursors: the block's state machine (the status byte
// ReadyForQuery carries, 25P02 after a failure, savepoints), the words of
// each statement, and the engine: DDL in a block reaches the server's catalog
// and its store only at COMMIT, all of it or none, and cursors over constant
// and live queries.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "common/error.h"
#include "parser/parser.h"
#include "server/catalog_file.h"
#include "server/engine.h"
#include "server/transaction.h"
#include "server_test_util.h"
#include "../sql_error_of.h"

using namespace rtsql;
using rtsql::testing::RestoredEngine;
using rtsql::testing::ResultCapture;
using rtsql::testing::requireOk;
using rtsql::testing::sqlErrorOf;

namespace {

BlockCommand command(const std::string& sql) {
  std::vector<ast::StatementPtr> stmts = parseStatements(sql);
  REQUIRE(stmts.size() == 1);
  REQUIRE(stmts.front()->kind == ast::StatementKind::Block);
  return readBlockCommand(static_cast<const ast::BlockStatement&>(*stmts.front()));
}

using Fixture = rtsql::testing::EngineFixture<>;

// The names of the catalog store's records.
std::vector<std::string> storedNames(const Fixture& f) {
  std::vector<std::string> names;
  const auto path = f.dataDir() / "catalog";
  if (!std::filesystem::exists(path)) return names;
  for (const CatalogRecord& r : readCatalogFile(path.string())) names.push_back(r.name);
  return names;
}

bool has(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

const char* kSource = "CREATE SOURCE gen (a BIGINT) WITH (connector = 'datagen', rowsPerSecond = '50')";

}  // namespace

TEST_CASE("transaction block: the status byte through BEGIN, a failure and ROLLBACK") {
  TransactionBlock b;
  CHECK(b.status() == 'I');
  CHECK(b.begin());
  CHECK(b.status() == 'T');
  CHECK_FALSE(b.begin());  // BEGIN in a block: a warning, still in the block
  b.admit(false, 0);
  b.fail();
  CHECK(b.status() == 'E');
  const SqlError e = sqlErrorOf([&] { b.admit(false, 7); });
  CHECK(e.sqlstate() == sqlstate::kInFailedSqlTransaction);
  CHECK(e.message() ==
        "current transaction is aborted, commands ignored until end of transaction block");
  b.admit(true, 0);  // ROLLBACK runs
  CHECK(b.commit() == TransactionBlock::Ended::RolledBack);
  CHECK(b.status() == 'I');
  CHECK(b.commit() == TransactionBlock::Ended::NoBlock);
  CHECK(b.rollback() == TransactionBlock::Ended::NoBlock);
  b.fail();  // outside a block a failure changes nothing
  CHECK(b.status() == 'I');
  CHECK(b.begin());
  CHECK(b.commit() == TransactionBlock::Ended::Committed);
}

TEST_CASE("transaction block: savepoints") {
  TransactionBlock b;
  CHECK(sqlErrorOf([&] { b.savepoint("s", 0, 0); }).sqlstate() == sqlstate::kNoActiveSqlTransaction);
  REQUIRE(b.begin());
  b.savepoint("a", 1, 0);
  b.savepoint("b", 2, 0);
  b.savepoint("c", 3, 0);
  b.fail();
  // ROLLBACK TO ends the failure and keeps the savepoint, forgetting later ones.
  CHECK(b.rollbackTo("b", 0) == 2);
  CHECK(b.status() == 'T');
  CHECK(sqlErrorOf([&] { b.rollbackTo("c", 0); }).sqlstate() == sqlstate::kInvalidSavepoint);
  CHECK(b.rollbackTo("b", 0) == 2);
  b.release("a", 0);
  CHECK(sqlErrorOf([&] { b.release("b", 0); }).sqlstate() == sqlstate::kInvalidSavepoint);
  b.rollback();
  CHECK(sqlErrorOf([&] { b.release("a", 0); }).sqlstate() == sqlstate::kNoActiveSqlTransaction);
}

TEST_CASE("block statements: the words drivers and psql send") {
  using K = BlockCommand::Kind;
  CHECK(command("BEGIN").kind == K::Begin);
  CHECK(command("begin work").kind == K::Begin);
  CHECK(command("BEGIN ISOLATION LEVEL READ COMMITTED, READ WRITE").kind == K::Begin);
  CHECK(command("START TRANSACTION ISOLATION LEVEL SERIALIZABLE READ ONLY NOT DEFERRABLE").readOnly);
  CHECK(command("END").kind == K::Commit);
  CHECK(command("COMMIT TRANSACTION").kind == K::Commit);
  CHECK(command("ABORT").kind == K::Rollback);
  const BlockCommand to = command("ROLLBACK TO SAVEPOINT Sp1");
  CHECK(to.kind == K::RollbackTo);
  CHECK(to.name == "sp1");
  CHECK(command("ROLLBACK TO sp1").kind == K::RollbackTo);
  CHECK(command("RELEASE \"Sp1\"").name == "Sp1");
  CHECK(command("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ").kind == K::SetTransaction);
  CHECK(command("SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL READ COMMITTED").kind ==
        K::SetTransaction);
  const BlockCommand fetch = command("FETCH FORWARD 5 FROM _psql_cursor");
  CHECK(fetch.kind == K::Fetch);
  CHECK(fetch.count == 5);
  CHECK(fetch.name == "_psql_cursor");
  CHECK(command("FETCH ALL IN c").count == BlockCommand::kAll);
  CHECK(command("FETCH c").count == 1);
  CHECK(command("MOVE 3 c").kind == K::Move);
  CHECK(command("CLOSE ALL").all);
  const BlockCommand declare =
      command("DECLARE \"cur\" NO SCROLL CURSOR WITH HOLD FOR SELECT 1");
  CHECK(declare.kind == K::Declare);
  CHECK(declare.hold);
  CHECK(declare.name == "cur");
  CHECK(command("DECLARE c CURSOR WITHOUT HOLD FOR SELECT 1").hold == false);

  CHECK(sqlErrorOf([] { command("FETCH BACKWARD 1 FROM c"); }).sqlstate() ==
        sqlstate::kFeatureNotSupported);
  CHECK(sqlErrorOf([] { command("FETCH -1 FROM c"); }).sqlstate() ==
        sqlstate::kFeatureNotSupported);
  CHECK(sqlErrorOf([] { command("DECLARE c SCROLL CURSOR FOR SELECT 1"); }).sqlstate() ==
        sqlstate::kFeatureNotSupported);
  const SqlError bad = sqlErrorOf([] { command("BEGIN SOMETIME"); });
  CHECK(bad.sqlstate() == sqlstate::kSyntaxError);
  CHECK(bad.message() == "syntax error at or near \"SOMETIME\"");
  CHECK(bad.position() == 6);
  CHECK(sqlErrorOf([] { command("COMMIT LATER"); }).sqlstate() == sqlstate::kSyntaxError);
  // A word that names a column elsewhere is still a name.
  CHECK(parseStatements("SELECT begin, commit, fetch, transaction FROM t").size() == 1);
  // START and SET keep their own statements.
  CHECK_THROWS_AS(parseStatements("START FLOW f RESET"), SqlError);
  CHECK(parseStatements("SET transaction_isolation = 1").front()->kind == ast::StatementKind::Set);
}

TEST_CASE_FIXTURE(Fixture, "a transaction block's DDL reaches the catalog at COMMIT, all of it") {
  RestoredEngine e(options, connectors);
  requireOk(e.run("BEGIN"), "BEGIN");
  CHECK(e.engine.transactionStatus(*e.session) == 'T');
  requireOk(e.run(kSource), kSource);
  requireOk(e.run("CREATE TABLE codes (code STRING)"), "CREATE TABLE");
  // Not in the store, nor seen by another session, before COMMIT.
  CHECK_FALSE(has(storedNames(*this), "gen"));
  auto other = e.engine.openSession("rtsql", "rtsql");
  ResultCapture shown;
  e.engine.execute(*other, "SHOW SOURCES", shown);
  CHECK(shown.rows.empty());
  // The block sees its own.
  ResultCapture mine = e.run("SHOW SOURCES");
  requireOk(mine, "SHOW SOURCES");
  REQUIRE(mine.rows.size() == 1);

  ResultCapture commit = e.run("COMMIT");
  requireOk(commit, "COMMIT");
  CHECK(commit.tag == "COMMIT");
  CHECK(e.engine.transactionStatus(*e.session) == 'I');
  CHECK(has(storedNames(*this), "gen"));
  CHECK(has(storedNames(*this), "codes"));
  ResultCapture after;
  e.engine.execute(*other, "SHOW SOURCES", after);
  CHECK(after.rows.size() == 1);
}

TEST_CASE_FIXTURE(Fixture, "a failed statement fails the block: 25P02, and COMMIT rolls back") {
  RestoredEngine e(options, connectors);
  requireOk(e.run("BEGIN"), "BEGIN");
  requireOk(e.run(kSource), kSource);
  ResultCapture bad = e.run("CREATE SOURCE gen (a BIGINT) WITH (connector = 'datagen')");
  REQUIRE(bad.err);
  CHECK(e.engine.transactionStatus(*e.session) == 'E');
  ResultCapture ignored = e.run("SELECT 1");
  REQUIRE(ignored.err);
  CHECK(ignored.err->sqlstate() == sqlstate::kInFailedSqlTransaction);
  ResultCapture commit = e.run("COMMIT");
  requireOk(commit, "COMMIT");
  CHECK(commit.tag == "ROLLBACK");
  CHECK(e.engine.transactionStatus(*e.session) == 'I');
  CHECK_FALSE(has(storedNames(*this), "gen"));
  ResultCapture shown = e.run("SHOW SOURCES");
  CHECK(shown.rows.empty());
}

TEST_CASE_FIXTURE(Fixture, "ROLLBACK and ROLLBACK TO a savepoint discard the block's DDL") {
  {
    RestoredEngine e(options, connectors);
    e.runAll({"BEGIN", kSource, "SAVEPOINT s", "CREATE TABLE t1 (a BIGINT)", "ROLLBACK TO s",
              "CREATE TABLE t2 (a BIGINT)", "COMMIT"});
    const auto names = storedNames(*this);
    CHECK(has(names, "gen"));
    CHECK(has(names, "t2"));
    CHECK_FALSE(has(names, "t1"));
    e.runAll({"BEGIN", "DROP TABLE t2", "ROLLBACK"});
    CHECK(has(storedNames(*this), "t2"));
  }
  // What COMMIT wrote comes back after a restart.
  RestoredEngine again(options, connectors);
  ResultCapture tables = again.run("SHOW TABLES");
  requireOk(tables, "SHOW TABLES");
  CHECK(tables.rows.size() == 1);
}

TEST_CASE_FIXTURE(Fixture, "statements a block cannot take back are refused with 25001") {
  RestoredEngine e(options, connectors);
  e.runAll({"CREATE TABLE t (a BIGINT)", "BEGIN"});
  ResultCapture insert = e.run("INSERT INTO t VALUES (1)");
  REQUIRE(insert.err);
  CHECK(insert.err->sqlstate() == sqlstate::kActiveSqlTransaction);
  CHECK_FALSE(insert.err->hint().empty());
  e.runAll({"ROLLBACK", "BEGIN READ ONLY"});
  ResultCapture readOnly = e.run("CREATE TABLE u (a BIGINT)");
  REQUIRE(readOnly.err);
  CHECK(readOnly.err->sqlstate() == sqlstate::kReadOnlySqlTransaction);
}

TEST_CASE_FIXTURE(Fixture, "cursors over a constant query and a live one") {
  RestoredEngine e(options, connectors);
  // FETCH waits for rows up to this bound: generous, for a loaded machine.
  e.runAll({"SET rtsql.fetch_wait = '120s'"});
  ResultCapture outside = e.run("DECLARE c CURSOR FOR SELECT 1");
  REQUIRE(outside.err);
  CHECK(outside.err->sqlstate() == sqlstate::kNoActiveSqlTransaction);
  e.runAll({kSource, "BEGIN", "DECLARE c CURSOR FOR SELECT 1 AS one, 'x' AS two"});
  ResultCapture fetched = e.run("FETCH 5 FROM c");
  requireOk(fetched, "FETCH");
  CHECK(fetched.tag == "FETCH 1");
  REQUIRE(fetched.cols.size() == 2);
  CHECK(fetched.cols[0].name == "one");
  ResultCapture again = e.run("FETCH 5 FROM c");
  CHECK(again.tag == "FETCH 0");
  // A live query: rows as they come, at most as many as asked for.
  e.runAll({"DECLARE live NO SCROLL CURSOR FOR SELECT a FROM gen LIMIT 7"});
  ResultCapture first = e.run("FETCH FORWARD 3 FROM live");
  requireOk(first, "FETCH");
  CHECK(first.rows.size() == 3);
  ResultCapture rest = e.run("FETCH ALL FROM live");
  requireOk(rest, "FETCH ALL");
  CHECK(rest.rows.size() == 4);
  e.runAll({"SAVEPOINT before_dup"});
  ResultCapture dup = e.run("DECLARE live CURSOR FOR SELECT 1");
  REQUIRE(dup.err);
  CHECK(dup.err->sqlstate() == sqlstate::kDuplicateCursor);
  // The error failed the block; ROLLBACK TO the savepoint takes it back.
  e.runAll({"ROLLBACK TO before_dup", "CLOSE live", "COMMIT"});
  // A cursor without HOLD ended with the block.
  ResultCapture gone = e.run("FETCH 1 FROM c");
  REQUIRE(gone.err);
  CHECK(gone.err->sqlstate() == sqlstate::kInvalidCursorName);
  // WITH HOLD outside a block; its live query ends at CLOSE, its slots free.
  const int used = e.engine.slotsUsed();
  e.runAll({"DECLARE h CURSOR WITH HOLD FOR SELECT a FROM gen"});
  ResultCapture held = e.run("FETCH 2 FROM h");
  requireOk(held, "FETCH");
  CHECK(held.rows.size() == 2);
  e.runAll({"CLOSE h"});
  CHECK(e.engine.slotsUsed() == used);
}

TEST_CASE_FIXTURE(Fixture, "FETCH waits for rows within rtsql.fetch_wait, and ends at statement_timeout") {
  RestoredEngine e(options, connectors);
  e.runAll({"CREATE SOURCE slow (a BIGINT) WITH (connector = 'datagen', rowsPerSecond = '1')",
            "BEGIN", "DECLARE c CURSOR FOR SELECT a FROM slow", "SET rtsql.fetch_wait = '200ms'"});
  // Far more rows than a source of one row a second makes in the bound: the
  // FETCH returns what came by then.
  ResultCapture bounded = e.run("FETCH 100000 FROM c");
  requireOk(bounded, "FETCH");
  CHECK(bounded.rows.size() < 100000);
  CHECK(bounded.tag == "FETCH " + std::to_string(bounded.rows.size()));
  e.runAll({"SET rtsql.fetch_wait = '1h'", "SET statement_timeout = '200ms'"});
  ResultCapture timedOut = e.run("FETCH 100000 FROM c");
  REQUIRE(timedOut.err);
  CHECK(timedOut.err->sqlstate() == sqlstate::kQueryCanceled);
  e.runAll({"ROLLBACK"});
}
