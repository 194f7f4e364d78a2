#include "client/backslash.h"

#include <doctest/doctest.h>

#include <chrono>
#include <sstream>

#include "client/script.h"

using namespace rtsql::client;

TEST_CASE("listing commands map to SHOW statements") {
  CHECK(backslashSql(parseBackslash("\\flows")) == "SHOW FLOWS");
  CHECK(backslashSql(parseBackslash("  \\sources  ")) == "SHOW SOURCES");
  CHECK(backslashSql(parseBackslash("\\sinks")) == "SHOW SINKS");
  CHECK(backslashSql(parseBackslash("\\tables")) == "SHOW TABLES");
  CHECK(parseBackslash("\\q").kind == BackslashKind::kQuit);
  CHECK(parseBackslash("\\?").kind == BackslashKind::kHelp);
  CHECK(parseBackslash("\\r").kind == BackslashKind::kReset);
  CHECK(backslashSql(parseBackslash("\\q")).empty());
}

TEST_CASE("\\progress takes one flow name") {
  const auto c = parseBackslash("\\progress fraud_alerts");
  REQUIRE(c.kind == BackslashKind::kProgress);
  CHECK(backslashSql(c) == "SHOW PROGRESS fraud_alerts");
  CHECK(backslashSql(parseBackslash("\\progress \"My Flow\"")) == "SHOW PROGRESS \"My Flow\"");
  CHECK(parseBackslash("\\progress").kind == BackslashKind::kInvalid);
  CHECK(parseBackslash("\\progress a b").kind == BackslashKind::kInvalid);
  // Nothing that could smuggle a second statement in.
  const auto bad = parseBackslash("\\progress f;DROP");
  CHECK(bad.kind == BackslashKind::kInvalid);
  CHECK(bad.error.find("not a flow name") != std::string::npos);
  CHECK(parseBackslash("\\progress \"a\"b\"").kind == BackslashKind::kInvalid);
  CHECK(parseBackslash("\\progress 1f").kind == BackslashKind::kInvalid);
}

TEST_CASE("\\d describes one object or lists all") {
  const auto all = parseBackslash("\\d");
  REQUIRE(all.kind == BackslashKind::kDescribe);
  CHECK(all.argument.empty());
  // \d alone is several statements, run by runDescribe.
  CHECK(backslashSql(all).empty());
  const auto one = parseBackslash("  \\d clicks ");
  REQUIRE(one.kind == BackslashKind::kDescribe);
  CHECK(one.argument == "clicks");
  CHECK(backslashSql(one) == "DESCRIBE clicks");
  CHECK(backslashSql(parseBackslash("\\d \"My Source\"")) == "DESCRIBE \"My Source\"");
  CHECK(parseBackslash("\\d a b").kind == BackslashKind::kInvalid);
  const auto bad = parseBackslash("\\d x;DROP SOURCE y");
  CHECK(bad.kind == BackslashKind::kInvalid);
}

TEST_CASE("\\i takes the rest of the line as the file name") {
  auto c = parseBackslash("\\i setup.sql");
  REQUIRE(c.kind == BackslashKind::kInclude);
  CHECK(c.argument == "setup.sql");
  CHECK(backslashSql(c).empty());
  c = parseBackslash("  \\i  dir/my file.sql  ");
  REQUIRE(c.kind == BackslashKind::kInclude);
  CHECK(c.argument == "dir/my file.sql");
  CHECK(parseBackslash("\\i '/tmp/a b.sql'").argument == "/tmp/a b.sql");
  const auto none = parseBackslash("\\i");
  CHECK(none.kind == BackslashKind::kInvalid);
  CHECK(none.error.find("needs a file name") != std::string::npos);
  CHECK(parseBackslash("\\i   ").kind == BackslashKind::kInvalid);
}

TEST_CASE("\\timing toggles or sets") {
  CHECK(parseBackslash("\\timing").timing == TimingMode::kToggle);
  CHECK(parseBackslash("\\timing on").timing == TimingMode::kOn);
  CHECK(parseBackslash("\\timing off").timing == TimingMode::kOff);
  CHECK(parseBackslash("\\timing maybe").kind == BackslashKind::kInvalid);
}

TEST_CASE("\\watch takes an interval in seconds") {
  auto c = parseBackslash("\\watch");
  REQUIRE(c.kind == BackslashKind::kWatch);
  CHECK(c.seconds == doctest::Approx(kWatchDefaultSeconds));
  c = parseBackslash("\\watch 5");
  REQUIRE(c.kind == BackslashKind::kWatch);
  CHECK(c.seconds == doctest::Approx(5.0));
  CHECK(parseBackslash("\\watch 0.5").seconds == doctest::Approx(0.5));
  CHECK(parseBackslash("\\watch 0").kind == BackslashKind::kInvalid);
  CHECK(parseBackslash("\\watch -1").kind == BackslashKind::kInvalid);
  CHECK(parseBackslash("\\watch 5s").kind == BackslashKind::kInvalid);
  CHECK(parseBackslash("\\watch nan").kind == BackslashKind::kInvalid);
  CHECK(parseBackslash("\\watch 1e9").kind == BackslashKind::kInvalid);
  CHECK(parseBackslash("\\watch 1 2").kind == BackslashKind::kInvalid);
}

TEST_CASE("unknown commands and stray arguments are errors with a message") {
  const auto c = parseBackslash("\\x");
  CHECK(c.kind == BackslashKind::kInvalid);
  CHECK(c.error.find("unknown command \\x") != std::string::npos);
  CHECK(parseBackslash("\\flows extra").kind == BackslashKind::kInvalid);
  CHECK(parseBackslash("\\q now").kind == BackslashKind::kInvalid);
  CHECK(parseBackslash("flows").kind == BackslashKind::kInvalid);
  CHECK(parseBackslash("").kind == BackslashKind::kInvalid);
}

TEST_CASE("\\timing prints milliseconds with three decimals") {
  std::ostringstream out;
  printTiming(std::chrono::microseconds(12345), out);
  CHECK(out.str() == "Time: 12.345 ms\n");
}
