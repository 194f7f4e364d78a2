#include "client/printer.h"

#include <doctest/doctest.h>

#include <sstream>
#include <string>

#include "common/sql_text.h"

using namespace rtsql::client;

namespace {

ResultSet makeResult(std::vector<ResultColumn> columns, std::vector<ResultRow> rows) {
  ResultSet rs;
  rs.hasRows = true;
  rs.columns = std::move(columns);
  rs.rows = std::move(rows);
  rs.tag = "SELECT " + std::to_string(rs.rows.size());
  return rs;
}

}  // namespace

TEST_CASE("displayWidth counts terminal columns") {
  CHECK(displayWidth("abc") == 3);
  CHECK(displayWidth("") == 0);
  CHECK(displayWidth("caf\xC3\xA9") == 4);             // café, precomposed
  CHECK(displayWidth("cafe\xCC\x81") == 4);            // café, combining accent
  CHECK(displayWidth("\xE6\x97\xA5\xE6\x9C\xAC") == 4);  // 日本: two wide characters
  CHECK(displayWidth("\xF0\x9F\x98\x80") == 2);        // an emoji
  CHECK(displayWidth("\xFF" "a") == 2);                // an invalid byte still counts
  CHECK(displayWidth("\xE6\x97") == 2);                // a cut sequence: two bytes
}

TEST_CASE("formatTable aligns columns like psql") {
  auto rs = makeResult({{"id", true}, {"name", false}, {"amount", true}},
                       {{std::string("1"), std::string("alice"), std::string("10.5")},
                        {std::string("22"), std::nullopt, std::string("3")}});
  CHECK(formatTable(rs) ==
        " id | name  | amount\n"
        "----+-------+--------\n"
        "  1 | alice |   10.5\n"
        " 22 | NULL  |      3\n"
        "(2 rows)\n");
}

TEST_CASE("formatTable centres headers, says 1 row and handles empty results") {
  auto one = makeResult({{"x", false}}, {{std::string("hello")}});
  CHECK(formatTable(one) ==
        "   x\n"
        "-------\n"
        " hello\n"
        "(1 row)\n");
  auto none = makeResult({{"a", false}, {"b", false}}, {});
  CHECK(formatTable(none) ==
        " a | b\n"
        "---+---\n"
        "(0 rows)\n");
}

TEST_CASE("formatTable pads by display width, not bytes") {
  // 日本 is 6 bytes but 4 columns; é is 2 bytes but 1 column.
  auto rs = makeResult({{"city", false}, {"n", true}},
                       {{std::string("\xE6\x97\xA5\xE6\x9C\xAC"), std::string("1")},
                        {std::string("caf\xC3\xA9"), std::string("2")},
                        {std::string("ab"), std::string("3")}});
  CHECK(formatTable(rs) ==
        " city | n\n"
        "------+---\n"
        " \xE6\x97\xA5\xE6\x9C\xAC | 1\n"
        " caf\xC3\xA9 | 2\n"
        " ab   | 3\n"
        "(3 rows)\n");
}

TEST_CASE("formatTable shows multi-line cells with a continuation mark") {
  auto rs = makeResult({{"a", false}, {"b", false}},
                       {{std::string("one\ntwo"), std::string("x")}});
  CHECK(formatTable(rs) ==
        "  a  | b\n"
        "-----+---\n"
        " one+| x\n"
        " two |\n"
        "(1 row)\n");
}

TEST_CASE("formatResult prints command tags unless quiet") {
  ResultSet cmd;
  cmd.tag = "CREATE SOURCE";
  CHECK(formatResult(cmd) == "CREATE SOURCE\n");
  CHECK(formatResult(cmd, PrintOptions{true}) == "");
  // Rows still show in quiet mode.
  auto rs = makeResult({{"a", false}}, {{std::string("1")}});
  CHECK(formatResult(rs, PrintOptions{true}) == formatTable(rs));
}

TEST_CASE("prettyJson indents objects and arrays") {
  CHECK(prettyJson(R"({"id":"f","n":3,"a":[1,2],"e":{},"z":[ ]})") ==
        "{\n"
        "  \"id\": \"f\",\n"
        "  \"n\": 3,\n"
        "  \"a\": [\n"
        "    1,\n"
        "    2\n"
        "  ],\n"
        "  \"e\": {},\n"
        "  \"z\": []\n"
        "}");
  // Structural characters inside strings, and escaped quotes, stay as they are.
  CHECK(prettyJson(R"({"k":"a,b:{c}\"d\""})") == "{\n  \"k\": \"a,b:{c}\\\"d\\\"\"\n}");
  // Not JSON, or not balanced: unchanged.
  CHECK(prettyJson("hello") == "hello");
  CHECK(prettyJson("{\"a\":1") == "{\"a\":1");
  CHECK(prettyJson("{\"a\":1}}") == "{\"a\":1}}");
  CHECK(prettyJson("{\"a\":\"unterminated}") == "{\"a\":\"unterminated}");
}

TEST_CASE("a single progress column is shown as indented JSON") {
  auto rs = makeResult({{"progress", false}},
                       {{std::string(R"({"name":"f","batchId":4})")}});
  CHECK(formatResult(rs) == "{\n  \"name\": \"f\",\n  \"batchId\": 4\n}\n");
  // Another column name gets the ordinary table.
  auto other = makeResult({{"p", false}}, {{std::string(R"({"a":1})")}});
  CHECK(formatResult(other) == formatTable(other));
}

TEST_CASE("charIndexToByteOffset walks UTF-8 characters") {
  const std::string s = "a\xC3\xA9z";  // a é z
  CHECK(charIndexToByteOffset(s, 0) == 0);
  CHECK(charIndexToByteOffset(s, 1) == 1);
  CHECK(charIndexToByteOffset(s, 2) == 3);
  CHECK(charIndexToByteOffset(s, 3) == 4);
  CHECK(charIndexToByteOffset(s, 99) == 4);
}

TEST_CASE("formatError maps a statement position to the script's line and column") {
  // Three statements; the third starts on line 4 and its error (the 'FORM' on
  // its second line) is at character 10 of the statement text sent.
  const std::string script =
      "CREATE TABLE t (a INT);\n"
      "-- a comment\n"
      "INSERT INTO t VALUES (1);\n"
      "SELECT a\n"
      "  FORM t;\n";
  const size_t offset = script.find("SELECT");
  const std::string statement = script.substr(offset, script.rfind(';') - offset);
  REQUIRE(statement.find("FORM") == 11);

  ServerError e;
  e.sqlstate = "42601";
  e.message = "syntax error at or near \"FORM\"";
  e.hint = "did you mean FROM?";
  e.position = 12;  // 1-based, the 'F' of FORM
  CHECK(formatError(e, script, offset, "deploy.sql") ==
        "deploy.sql:5:3: ERROR [42601]: syntax error at or near \"FORM\"\n"
        "    FORM t;\n"
        "    ^\n"
        "HINT: did you mean FROM?\n");
  // Without a file name (the REPL) psql's LINE prefix is used.
  CHECK(formatError(e, script, offset) ==
        "ERROR [42601]: syntax error at or near \"FORM\"\n"
        "LINE 5:   FORM t;\n"
        "          ^\n"
        "HINT: did you mean FROM?\n");
}

TEST_CASE("formatError counts positions in characters and keeps tabs aligned") {
  // The error is after a two-byte character and a tab: character 3 (1-based),
  // which is also its column.
  const std::string text = "\xC3\xA9\tX bad";
  ServerError e;
  e.sqlstate = "42703";
  e.message = "column \"X\" does not exist";
  e.position = 3;
  CHECK(formatError(e, text, 0, "f.sql") ==
        "f.sql:1:3: ERROR [42703]: column \"X\" does not exist\n"
        "  \xC3\xA9\tX bad\n"
        "   \t^\n");
}

TEST_CASE("formatError without a position names the statement's start") {
  const std::string script = "SELECT 1;\n\n  DROP FLOW f;\n";
  ServerError e;
  e.sqlstate = "42704";
  e.message = "flow \"f\" does not exist";
  e.detail = "no such flow";
  CHECK(formatError(e, script, script.find(';') + 1, "x.sql") ==
        "x.sql:3:3: ERROR [42704]: flow \"f\" does not exist\n"
        "DETAIL: no such flow\n");
  CHECK(formatError(e, script, 0) ==
        "ERROR [42704]: flow \"f\" does not exist\nDETAIL: no such flow\n");
}

TEST_CASE("formatError puts a caret after the end for an end-of-input error") {
  const std::string text = "SELECT (1";
  ServerError e;
  e.sqlstate = "42601";
  e.message = "syntax error at end of input";
  e.position = 10;
  CHECK(formatError(e, text, 0) ==
        "ERROR [42601]: syntax error at end of input\n"
        "LINE 1: SELECT (1\n"
        "                 ^\n");
}

TEST_CASE("formatError cuts very long lines around the error") {
  const std::string text = std::string(300, 'a') + " bad " + std::string(300, 'b');
  ServerError e;
  e.sqlstate = "42601";
  e.message = "m";
  e.position = 302;  // 'b' of "bad"
  const std::string out = formatError(e, text, 0, "long.sql");
  std::istringstream lines(out);
  std::string head, quoted, caret;
  std::getline(lines, head);
  std::getline(lines, quoted);
  std::getline(lines, caret);
  CHECK(head == "long.sql:1:302: ERROR [42601]: m");
  CHECK(quoted.size() < 120);
  CHECK(quoted.substr(0, 5) == "  ...");
  CHECK(quoted.substr(quoted.size() - 3) == "...");
  // The caret is under the 'b' of "bad".
  REQUIRE(caret.size() <= quoted.size());
  CHECK(caret.back() == '^');
  CHECK(quoted.substr(caret.size() - 1, 3) == "bad");
}

TEST_CASE("an error in the third statement of a split script points into the file") {
  // The way script mode uses it: splitStatements gives each statement and its
  // offset, the server's position counts from the start of the statement sent.
  const std::string script =
      "CREATE SOURCE s (a INT) WITH (connector = 'datagen');\n"
      "\n"
      "/* the flow */\n"
      "CREATE FLOW f INTO k AS\n"
      "  SELECT amout\n"
      "  FROM s;\n";
  const auto statements = rtsql::splitStatements(script);
  REQUIRE(statements.size() == 2);
  const auto& flow = statements[1];
  const size_t inStatement = flow.text.find("amout");
  REQUIRE(inStatement != std::string::npos);

  ServerError e;
  e.sqlstate = "42703";
  e.message = "column \"amout\" does not exist";
  e.hint = "Perhaps you meant \"a\".";
  e.position = inStatement + 1;
  CHECK(formatError(e, script, flow.offset, "deploy.sql") ==
        "deploy.sql:5:10: ERROR [42703]: column \"amout\" does not exist\n"
        "    SELECT amout\n"
        "           ^\n"
        "HINT: Perhaps you meant \"a\".\n");
}
