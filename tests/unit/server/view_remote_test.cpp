// What a node sends the holder of a view another node holds, for a query
// it runs itself (server/views/view_remote.h): the columns the query may
// use, and the WHERE conjuncts that read only that view.
#include <doctest/doctest.h>

#include "common/error.h"
#include "parser/parser.h"
#include "server/views/view_remote.h"

using namespace rtsql;

namespace {

Schema viewSchema() {
  Schema s;
  s.columns.push_back({"k", DataType::of(TypeId::String)});
  s.columns.push_back({"c", DataType::of(TypeId::BigInt)});
  s.columns.push_back({"s", DataType::of(TypeId::BigInt)});
  s.columns.push_back({"tags", DataType::arrayOf(DataType::of(TypeId::String))});
  return s;
}

// The scan of view `v` for `sql`, the last statement of the text the client
// sent (`lead` before it).
RemoteViewScan scanOf(const std::string& sql, const std::string& lead = "") {
  std::vector<ast::StatementPtr> stmts = parseStatements(lead + sql);
  REQUIRE(!stmts.empty());
  const auto& select = static_cast<const ast::SelectStatement&>(*stmts.back());
  return remoteViewScan(*select.query, select.text, select.pos, "v", viewSchema());
}

}  // namespace

TEST_CASE("remote view: only the columns the query names are read, every one under a star") {
  RemoteViewScan scan = scanOf("SELECT a.k, v.s FROM t a JOIN v ON a.k = v.k");
  CHECK(scan.columns == std::vector<int>{0, 2});
  CHECK(scan.text == R"(SELECT "k", "s" FROM "v" AS "v")");
  CHECK(scan.filters == 0);
  // A star of the view, or of no qualifier: every column; a star of another
  // relation alone does not.
  CHECK_THROWS_AS(scanOf("SELECT * FROM t JOIN v ON t.k = v.k"), SqlError);
  CHECK_THROWS_AS(scanOf("SELECT x.* FROM t JOIN v x ON t.k = x.k"), SqlError);
  CHECK(scanOf("SELECT t.*, x.c FROM t JOIN v x ON t.k = x.k").columns ==
        std::vector<int>{0, 1});
  // No column at all (a count): the first, for the rows.
  CHECK(scanOf("SELECT count(*) FROM t CROSS JOIN v").columns == std::vector<int>{0});
}

TEST_CASE("remote view: an array column the query needs is refused with 0A000 at the view") {
  try {
    scanOf("SELECT v.tags FROM t JOIN v ON t.k = v.k");
    FAIL("no error");
  } catch (const SqlError& e) {
    CHECK(e.sqlstate() == "0A000");
    CHECK(e.position() == 26);  // of the view's name
  }
}

TEST_CASE("remote view: the WHERE conjuncts that read only the view go with its read") {
  RemoteViewScan scan = scanOf(
      "SELECT x.k FROM t JOIN v AS x ON t.k = x.k "
      "WHERE x.s > 3 AND t.n = 1 AND (x.c = 2 OR x.c < lower(x.k)) AND x.s + t.n > 0 "
      "AND x.c < rand()",
      "SELECT 1;\n");
  CHECK(scan.filters == 2);
  CHECK(scan.text ==
        "SELECT \"k\", \"c\", \"s\" FROM \"v\" AS \"x\" WHERE (\nx.s > 3\n) AND "
        "(\nx.c = 2 OR x.c < lower(x.k)\n)");
  // The view alone in its SELECT: unqualified columns are its own.
  CHECK(scanOf("SELECT k FROM v WHERE s > 1 AND nope = 2").filters == 1);
  // Unqualified columns in a join may be another relation's.
  CHECK(scanOf("SELECT v.k FROM t JOIN v ON t.k = v.k WHERE s > 1").filters == 0);
}

TEST_CASE("remote view: a filter that calls a function not deterministic stays here") {
  // The function registry says which are (isDeterministicFunction): one of
  // chance, of the clock, of the session, or a user's function stays here.
  CHECK(scanOf("SELECT k FROM v WHERE upper(k) = 'A' AND abs(s) > 1").filters == 2);
  for (const char* filter : {"s > rand()", "c < unix_timestamp()", "k = current_user",
                             "k <> CURRENT_DATE", "k = uuid()", "my_udf(s) > 1",
                             "upper(k) = version()"}) {
    INFO(filter);
    CHECK(scanOf(std::string("SELECT k FROM v WHERE s > 0 AND ") + filter).filters == 1);
  }
}

TEST_CASE("remote view: a filter on the wall clock goes with the read, in the session's zone") {
  // The session's time zone goes with the read (server/session_settings.h),
  // so hour(ts) = 10 means on the holder what it means here.
  std::vector<ast::StatementPtr> stmts = parseStatements("SELECT k FROM v WHERE hour(ts) = 10");
  const auto& select = static_cast<const ast::SelectStatement&>(*stmts.back());
  Schema schema = viewSchema();
  schema.columns.push_back({"ts", DataType::of(TypeId::Timestamp)});
  const RemoteViewScan scan = remoteViewScan(*select.query, select.text, select.pos, "v", schema);
  CHECK(scan.filters == 1);
  CHECK(scan.text == "SELECT \"k\", \"ts\" FROM \"v\" AS \"v\" WHERE (\nhour(ts) = 10\n)");
}

TEST_CASE("remote view: no filter goes below an outer join that may make the view NULL") {
  CHECK(scanOf("SELECT t.k FROM t LEFT JOIN v ON t.k = v.k WHERE v.s IS NULL").filters == 0);
  CHECK(scanOf("SELECT t.k FROM v RIGHT JOIN t ON t.k = v.k WHERE v.s IS NULL").filters == 0);
  CHECK(scanOf("SELECT t.k FROM t FULL JOIN v ON t.k = v.k WHERE v.s > 1").filters == 0);
  // The side an outer join keeps whole is filtered before it.
  CHECK(scanOf("SELECT t.k FROM v LEFT JOIN t ON t.k = v.k WHERE v.s > 1").filters == 1);
  // In a subquery of FROM, its own WHERE.
  CHECK(scanOf("SELECT t.k FROM t JOIN (SELECT k FROM v WHERE c > 2) z ON t.k = z.k").filters ==
        1);
}

TEST_CASE("remote view: a view named twice is read whole for both") {
  RemoteViewScan scan =
      scanOf("SELECT a.k FROM v a JOIN v b ON a.k = b.k WHERE a.s > 1 AND b.c < 2");
  CHECK(scan.filters == 0);
  CHECK(scan.columns == std::vector<int>{0, 1, 2});
}
