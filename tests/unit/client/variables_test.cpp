#include "client/variables.h"

#include <doctest/doctest.h>

using namespace rtsql::client;

TEST_CASE("-v arguments parse as name=value") {
  std::string name, value, error;
  REQUIRE(parseVariableAssignment("topic=clicks", &name, &value, &error));
  CHECK(name == "topic");
  CHECK(value == "clicks");
  REQUIRE(parseVariableAssignment("expr=a=b", &name, &value, &error));
  CHECK(value == "a=b");
  REQUIRE(parseVariableAssignment("empty=", &name, &value, &error));
  CHECK(value.empty());
  CHECK_FALSE(parseVariableAssignment("novalue", &name, &value, &error));
  CHECK(error.find("name=value") != std::string::npos);
  CHECK_FALSE(parseVariableAssignment("1x=2", &name, &value, &error));
  CHECK_FALSE(parseVariableAssignment("=2", &name, &value, &error));
  CHECK_FALSE(parseVariableAssignment("a-b=2", &name, &value, &error));
}

TEST_CASE(":name is replaced outside quotes and comments") {
  const Variables v = {{"src", "clicks"}, {"n", "10"}, {"who", "O'Brien"}};
  CHECK(substituteVariables("SELECT * FROM :src LIMIT :n", v) == "SELECT * FROM clicks LIMIT 10");
  CHECK(substituteVariables("SELECT ':src', \":src\", `:src`", v) ==
        "SELECT ':src', \":src\", `:src`");
  CHECK(substituteVariables("-- :src\nSELECT :n /* :src */", v) == "-- :src\nSELECT 10 /* :src */");
  // Doubled quotes stay inside the literal.
  CHECK(substituteVariables("SELECT 'it''s :n' || :n", v) == "SELECT 'it''s :n' || 10");
  // So does a quote after a backslash, as string literals read it.
  CHECK(substituteVariables("SELECT 'it\\'s :n' || :n", v) == "SELECT 'it\\'s :n' || 10");
  // The name ends at the first character that cannot be part of it.
  CHECK(substituteVariables("(:n,:n)", v) == "(10,10)");
  CHECK(substituteVariables(":srcx", v) == ":srcx");
}

TEST_CASE(":'name' and :\"name\" quote the value") {
  const Variables v = {{"who", "O'Brien"}, {"col", "my \"col\""}, {"dir", "C:\\"}};
  CHECK(substituteVariables("SELECT :'who'", v) == "SELECT 'O''Brien'");
  // A backslash doubled: string literals read backslash escapes.
  CHECK(substituteVariables("SELECT :'dir'", v) == "SELECT 'C:\\\\'");
  CHECK(substituteVariables("SELECT :\"col\"", v) == "SELECT \"my \"\"col\"\"\"");
}

TEST_CASE("undefined variables and casts are left alone") {
  const Variables v = {{"n", "10"}};
  CHECK(substituteVariables("SELECT :missing, :'missing'", v) == "SELECT :missing, :'missing'");
  CHECK(substituteVariables("SELECT x::BIGINT, :n::STRING", v) ==
        "SELECT x::BIGINT, 10::STRING");
  CHECK(substituteVariables("a : b :", v) == "a : b :");
  CHECK(substituteVariables("SELECT 'unterminated :n", v) == "SELECT 'unterminated :n");
  CHECK(substituteVariables("", v).empty());
}
