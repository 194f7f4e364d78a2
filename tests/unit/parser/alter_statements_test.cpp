// ALTER SOURCE | SINK | FLOW ... SET / RESET and SHOW CREATE: their shapes and
// positions, and that the words they use stay usable as names.
#include <doctest/doctest.h>

#include <memory>
#include <string>

#include "common/error.h"
#include "parser/parser.h"

using namespace rtsql;
using namespace rtsql::ast;

namespace {

template <typename T>
std::unique_ptr<T> parseOne(const std::string& sql, StatementKind kind) {
  auto all = parseStatements(sql);
  REQUIRE(all.size() == 1);
  REQUIRE(all[0]->kind == kind);
  StatementPtr first = std::move(all[0]);
  return std::unique_ptr<T>(static_cast<T*>(first.release()));
}

}  // namespace

TEST_CASE("ALTER ... SET: the kind, the name and each option at its place") {
  auto a = parseOne<Alter>(
      "ALTER SOURCE clicks SET ('on.error' = 'skip', startingOffsets = latest)",
      StatementKind::Alter);
  CHECK(a->object == ObjectKind::Source);
  CHECK(a->objectPos == 6);
  CHECK(a->name == "clicks");
  CHECK(a->namePos == 13);
  CHECK_FALSE(a->reset);
  REQUIRE(a->options.size() == 2);
  CHECK(a->options[0].key == "on.error");
  CHECK(a->options[0].keyPos == 25);
  CHECK(a->options[0].value == "skip");
  CHECK(a->options[0].valuePos == 38);
  CHECK(a->options[1].key == "startingOffsets");
  CHECK(a->options[1].value == "latest");
}

TEST_CASE("ALTER ... RESET: keys only; any object kind parses, for a clear refusal later") {
  auto a = parseOne<Alter>("alter flow f reset ('checkpoint.interval', late.rows)",
                           StatementKind::Alter);
  CHECK(a->object == ObjectKind::Flow);
  CHECK(a->reset);
  REQUIRE(a->options.size() == 2);
  CHECK(a->options[0].key == "checkpoint.interval");
  CHECK(a->options[1].key == "late.rows");
  CHECK(a->options[1].keyPos == 43);
  auto t = parseOne<Alter>("ALTER TABLE t SET (a = 'b')", StatementKind::Alter);
  CHECK(t->object == ObjectKind::Table);
  CHECK_THROWS_AS(parseStatements("ALTER SOURCE s SET ()"), SqlError);
}

TEST_CASE("SHOW CREATE: every kind of object") {
  auto s = parseOne<ShowCreate>("SHOW CREATE FLOW \"My Flow\"", StatementKind::ShowCreate);
  CHECK(s->object == ObjectKind::Flow);
  CHECK(s->name == "My Flow");
  CHECK(s->namePos == 17);
  CHECK(parseOne<ShowCreate>("show create processor p", StatementKind::ShowCreate)->object ==
        ObjectKind::Processor);
  // SHOW of a variable is unchanged.
  CHECK(parseStatements("SHOW create")[0]->kind == StatementKind::Show);
}

TEST_CASE("CREATE FLOW keeps TRIGGER REALTIME and where its query starts") {
  auto f = parseOne<CreateFlow>("CREATE FLOW f INTO s TRIGGER REALTIME AS SELECT 1",
                                StatementKind::CreateFlow);
  CHECK(f->triggerRealtime);
  CHECK(f->queryPos == 41);
  CHECK(f->queryText == "SELECT 1");
  CHECK_FALSE(parseOne<CreateFlow>("CREATE FLOW f INTO s AS SELECT 1", StatementKind::CreateFlow)
                  ->triggerRealtime);
}

TEST_CASE("alter, set and reset stay usable as names") {
  auto all = parseStatements("SELECT alter, set, reset FROM alter");
  REQUIRE(all.size() == 1);
  CHECK(all[0]->kind == StatementKind::Select);
}
