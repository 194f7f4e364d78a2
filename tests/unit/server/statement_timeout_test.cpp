// statement_timeout: the values SET accepts, and the deadline a statement sees
// through cancelled(), which turns its completion into 57014.
#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <vector>

#include "server/statement_timeout.h"

using namespace rtsql;

namespace {

// Records what a statement reported.
class Recorder final : public ResultWriter {
 public:
  void columns(const std::vector<ResultColumn>&) override {}
  void row(const std::vector<std::optional<std::string>>&) override { ++rows; }
  void complete(const std::string& tag) override { completed = tag; }
  void error(const SqlError& err) override { sqlstate = err.sqlstate(); }
  void notice(const std::string&) override {}
  bool cancelled() const override { return cancel; }

  int rows = 0;
  std::string completed, sqlstate;
  bool cancel = false;
};

// A statement that streams rows until it is cancelled, as a live query does,
// for at most `bound`.
void runUntilCancelled(ResultWriter& out, std::chrono::milliseconds bound) {
  const auto end = std::chrono::steady_clock::now() + bound;
  while (!out.cancelled() && std::chrono::steady_clock::now() < end) out.row({});
  out.complete("SELECT");
}

}  // namespace

TEST_CASE("statement_timeout: PostgreSQL's values") {
  CHECK(parseStatementTimeoutMs("0", 0) == 0);
  CHECK(parseStatementTimeoutMs("5000", 0) == 5000);
  CHECK(parseStatementTimeoutMs("250ms", 0) == 250);
  CHECK(parseStatementTimeoutMs("5s", 0) == 5000);
  CHECK(parseStatementTimeoutMs(" 5 s ", 0) == 5000);
  CHECK(parseStatementTimeoutMs("2min", 0) == 120000);
  CHECK(parseStatementTimeoutMs("1h", 0) == 3600000);
  CHECK(parseStatementTimeoutMs("1d", 0) == 86400000);
  for (const char* bad : {"", "abc", "-1", "5 sec", "1.5s", "30d", "99999999999999"}) {
    INFO(bad);
    try {
      parseStatementTimeoutMs(bad, 4);
      FAIL("accepted");
    } catch (const SqlError& e) {
      CHECK(e.sqlstate() == "22023");
      CHECK(e.position() == 4);
      CHECK_FALSE(e.hint().empty());
    }
  }
}

TEST_CASE("statement_timeout: a statement past its deadline ends with 57014") {
  Recorder out;
  DeadlineWriter timed(out, 50);
  const auto start = std::chrono::steady_clock::now();
  runUntilCancelled(timed, std::chrono::seconds(60));
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(30));
  CHECK(timed.expired());
  CHECK(out.rows > 0);
  CHECK(out.completed.empty());
  CHECK(out.sqlstate == "57014");

  // 0: no deadline; the statement's own end completes it.
  Recorder plain;
  DeadlineWriter unlimited(plain, 0);
  runUntilCancelled(unlimited, std::chrono::milliseconds(100));
  CHECK_FALSE(unlimited.expired());
  CHECK(plain.completed == "SELECT");

  // A cancel request still reaches the statement through the deadline writer.
  Recorder cancelled;
  cancelled.cancel = true;
  DeadlineWriter both(cancelled, 60000);
  CHECK(both.cancelled());
  CHECK_FALSE(both.expired());
}
