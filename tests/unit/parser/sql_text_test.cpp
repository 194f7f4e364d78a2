#include <doctest/doctest.h>

#include "common/sql_text.h"

using rtsql::endsStatement;
using rtsql::lineAndColumn;
using rtsql::splitStatements;

TEST_CASE("splitStatements splits at top-level semicolons and keeps offsets") {
  std::string_view script = "SELECT 1;\n  SELECT 2 ;SELECT 3";
  auto parts = splitStatements(script);
  REQUIRE(parts.size() == 3);
  CHECK(parts[0].text == "SELECT 1");
  CHECK(parts[0].offset == 0);
  CHECK(parts[1].text == "SELECT 2");
  CHECK(parts[1].offset == 12);
  CHECK(script.substr(parts[1].offset, 8) == "SELECT 2");
  CHECK(parts[2].text == "SELECT 3");
  CHECK(parts[2].offset == 22);
}

TEST_CASE("splitStatements ignores semicolons inside quotes and comments") {
  std::string_view script =
      "INSERT INTO t VALUES ('a;b', 'it''s;');\n"
      "SELECT \"we;ird\", `x;y` FROM t -- trailing; comment\n"
      ";\n"
      "SELECT /* a ; b */ 1;";
  auto parts = splitStatements(script);
  REQUIRE(parts.size() == 3);
  CHECK(parts[0].text == "INSERT INTO t VALUES ('a;b', 'it''s;')");
  CHECK(parts[1].text == "SELECT \"we;ird\", `x;y` FROM t -- trailing; comment");
  CHECK(parts[2].text == "SELECT /* a ; b */ 1");
  CHECK(script.substr(parts[2].offset).starts_with("SELECT /*"));
}

TEST_CASE("splitStatements reads a backslash in a string as the parser does") {
  auto parts = splitStatements("SELECT 'it\\'s; here', '\\\\'; SELECT 2");
  REQUIRE(parts.size() == 2);
  CHECK(parts[0].text == "SELECT 'it\\'s; here', '\\\\'");
  CHECK(parts[1].text == "SELECT 2");
}

TEST_CASE("splitStatements drops empty and comment-only pieces") {
  auto parts = splitStatements(";;  \n -- just a comment\n; /* block */ ;\n\t");
  CHECK(parts.empty());
  parts = splitStatements("-- leading comment\nSHOW FLOWS;\n-- trailing comment\n");
  REQUIRE(parts.size() == 1);
  CHECK(parts[0].text == "-- leading comment\nSHOW FLOWS");
  CHECK(parts[0].offset == 0);
  CHECK(splitStatements("").empty());
}

TEST_CASE("splitStatements keeps an unterminated quote in the last piece") {
  auto parts = splitStatements("SELECT 1; SELECT 'abc; SELECT 2");
  REQUIRE(parts.size() == 2);
  CHECK(parts[1].text == "SELECT 'abc; SELECT 2");
  parts = splitStatements("SELECT 1 /* never closed ; SELECT 2");
  REQUIRE(parts.size() == 1);
}

TEST_CASE("endsStatement looks at the last top-level token") {
  CHECK(endsStatement("SELECT 1;"));
  CHECK(endsStatement("SELECT 1;  \n"));
  CHECK(endsStatement("SELECT 1; -- done"));
  CHECK(endsStatement("SELECT 1; /* done */"));
  CHECK(endsStatement(";"));
  CHECK_FALSE(endsStatement(""));
  CHECK_FALSE(endsStatement("SELECT 1"));
  CHECK_FALSE(endsStatement("SELECT 1; SELECT 2"));
  CHECK_FALSE(endsStatement("SELECT 'a;"));
  CHECK_FALSE(endsStatement("SELECT 'a;'"));
  CHECK_FALSE(endsStatement("SELECT 1 -- comment;"));
  CHECK_FALSE(endsStatement("SELECT 1 /* open ;"));
  CHECK_FALSE(endsStatement("SELECT \"a;"));
  CHECK(endsStatement("SELECT 'it''s';"));
}

TEST_CASE("lineAndColumn counts lines and characters") {
  std::string_view text = "ab\ncd\n\u00e9x";
  CHECK(lineAndColumn(text, 0) == std::pair{1, 1});
  CHECK(lineAndColumn(text, 1) == std::pair{1, 2});
  CHECK(lineAndColumn(text, 2) == std::pair{1, 3});  // the newline itself
  CHECK(lineAndColumn(text, 3) == std::pair{2, 1});
  CHECK(lineAndColumn(text, 6) == std::pair{3, 1});
  CHECK(lineAndColumn(text, 8) == std::pair{3, 2});  // after the two-byte é
  CHECK(lineAndColumn(text, 9) == std::pair{3, 3});
  CHECK(lineAndColumn(text, 1000) == std::pair{3, 3});  // clamped to the end
}

TEST_CASE("splitStatements keeps $$ text whole") {
  std::string_view script =
      "CREATE FUNCTION f(a INT) RETURNS INT LANGUAGE PYTHON AS $$\n  x = ';'; y = 'it''s'\n"
      "  return a $$; SELECT a$$b; SELECT 1";
  auto parts = splitStatements(script);
  REQUIRE(parts.size() == 3);
  CHECK(parts[0].text.ends_with("return a $$"));
  // `a$$b` is a name, as the lexer reads it: no $$ text starts there.
  CHECK(parts[1].text == "SELECT a$$b");
  CHECK(parts[2].text == "SELECT 1");
  CHECK_FALSE(endsStatement("CREATE FUNCTION f() RETURNS INT LANGUAGE PYTHON AS $$ return 1;"));
  CHECK(endsStatement("CREATE FUNCTION f() RETURNS INT LANGUAGE PYTHON AS $$ return 1; $$;"));
}
