// describeConfigProblem(): the line of an rtsqld --config file that is wrong,
// and the option that was meant.
#include <doctest/doctest.h>

#include <sstream>

#include "server/config_file.h"

namespace rtsql {
namespace {

const std::vector<std::string> kKnown = {"port", "host", "http-port", "data-dir",
                                         "embedded-kafka", "users-file"};
const std::vector<std::string> kCommandLineOnly = {"config", "hash-password", "help", "version"};

std::optional<std::string> problemOf(const std::string& text) {
  std::istringstream in(text);
  return describeConfigProblem(in, kKnown, kCommandLineOnly);
}

TEST_CASE("a file of known options, comments and flags has no problem") {
  CHECK_FALSE(problemOf("# rtsqld\nport = 5433\n\n; a comment\n  host = 127.0.0.1  \n"
                        "embedded-kafka # the ephemeral broker\n"));
}

TEST_CASE("a misspelt name is named with its line and the option meant") {
  auto p = problemOf("port = 5433\nhtpt-port = 9464\n");
  REQUIRE(p);
  CHECK(*p == "line 2: rtsqld has no option `htpt-port`; did you mean `http-port = ...`?");
  p = problemOf("data_dir = /var/lib/rtsql\n");
  REQUIRE(p);
  CHECK(*p == "line 1: rtsqld has no option `data_dir`; did you mean `data-dir = ...`?");
}

TEST_CASE("a name far from every option gets no guess") {
  auto p = problemOf("colour = blue\n");
  REQUIRE(p);
  CHECK(*p == "line 1: rtsqld has no option `colour`");
}

TEST_CASE("a line without '=' that is no flag is not name = value") {
  auto p = problemOf("port 5433\n");
  REQUIRE(p);
  CHECK(*p == "line 1: `port 5433` is not `name = value`; did you mean `port = ...`?");
}

TEST_CASE("sections and command-line options are refused by name") {
  auto p = problemOf("[server]\nport = 1\n");
  REQUIRE(p);
  CHECK(p->rfind("line 1: `[server]`", 0) == 0);
  p = problemOf("port = 1\nconfig = other.conf\n");
  REQUIRE(p);
  CHECK(*p == "line 2: `config` is an option of the command line only");
}

TEST_CASE("closestOptionName keeps to near misses") {
  CHECK(closestOptionName("prot", kKnown) == "port");
  CHECK(closestOptionName("users_file", kKnown) == "users-file");
  CHECK(closestOptionName("hots", kKnown) == "host");
  CHECK(closestOptionName("x", kKnown).empty());
}

}  // namespace
}  // namespace rtsql
