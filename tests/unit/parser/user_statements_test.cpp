// CREATE / ALTER / DROP USER and SHOW USERS: their shapes, and that no syntax
// error ever echoes a password.
#include <doctest/doctest.h>

#include <memory>
#include <string>

#include "common/error.h"
#include "parser/parser.h"

using namespace rtsql;
using namespace rtsql::ast;

namespace {

std::unique_ptr<UserStatement> parseUser(const std::string& sql) {
  auto all = parseStatements(sql);
  REQUIRE(all.size() == 1);
  REQUIRE(all[0]->kind == StatementKind::User);
  StatementPtr first = std::move(all[0]);
  return std::unique_ptr<UserStatement>(static_cast<UserStatement*>(first.release()));
}

SqlError errorOf(const std::string& sql) {
  try {
    parseStatements(sql);
  } catch (const SqlError& e) {
    return e;
  }
  FAIL("no error for: " << sql);
  return SqlError("", "");
}

}  // namespace

TEST_CASE("user statements: CREATE USER in PostgreSQL's spellings") {
  auto u = parseUser("CREATE USER alice WITH PASSWORD 'it''s secret'");
  CHECK(u->action == UserAction::Create);
  CHECK(u->name == "alice");
  CHECK(u->namePos == 12);
  CHECK(u->password == "it's secret");
  CHECK(u->passwordPos == 32);
  CHECK_FALSE(u->ifNotExists);
  // The statement's text is not kept: it holds the password.
  CHECK(u->text.empty());

  u = parseUser("create user if not exists \"Bob Smith\" password 'pw'");
  CHECK(u->action == UserAction::Create);
  CHECK(u->ifNotExists);
  CHECK(u->name == "Bob Smith");
  CHECK(u->password == "pw");
}

TEST_CASE("user statements: ALTER USER, DROP USER, SHOW USERS") {
  auto a = parseUser("ALTER USER alice WITH PASSWORD 'new'");
  CHECK(a->action == UserAction::Alter);
  CHECK(a->name == "alice");
  CHECK(a->password == "new");
  CHECK(parseUser("alter user alice password 'x'")->password == "x");

  auto d = parseUser("DROP USER alice");
  CHECK(d->action == UserAction::Drop);
  CHECK(d->name == "alice");
  CHECK_FALSE(d->ifExists);
  CHECK(parseUser("DROP USER IF EXISTS alice")->ifExists);

  auto s = parseUser("SHOW USERS");
  CHECK(s->action == UserAction::Show);
  CHECK(s->name.empty());
  CHECK(parseUser("show users")->action == UserAction::Show);
}

TEST_CASE("user statements: the new keywords stay usable as names") {
  auto all = parseStatements(
      "SELECT user, users, password, alter FROM logins WHERE user = 'x'; "
      "SHOW user_agent; CREATE SOURCE users (user STRING, password STRING)");
  REQUIRE(all.size() == 3);
  CHECK(all[0]->kind == StatementKind::Select);
  CHECK(all[1]->kind == StatementKind::Show);
  CHECK(all[2]->kind == StatementKind::CreateSource);
}

TEST_CASE("user statements: syntax errors never show the password") {
  for (const char* sql : {"CREATE USER alice WITH PASSWORD hunter2",
                          "ALTER USER alice PASSWORD hunter2 'x'",
                          "CREATE USER alice PASSWORD \"hunter2\"",
                          "CREATE USER alice PASSWORD 'hunter2",
                          "ALTER USER alice WITH PASSWORD 'hunter2"}) {
    CAPTURE(sql);
    SqlError e = errorOf(sql);
    CHECK(e.sqlstate() == sqlstate::kSyntaxError);
    CHECK(e.message().find("hunter2") == std::string::npos);
    CHECK(e.hint().find("hunter2") == std::string::npos);
    CHECK(e.message().find("PASSWORD") != std::string::npos);
    // No position either: clients print the statement's line beside one.
    CHECK_FALSE(e.hasPosition());
  }
  // Errors elsewhere in the statement name their token as usual.
  SqlError e = errorOf("CREATE USER alice WITH PASSWORD 'x' LOGIN");
  CHECK(e.message().find("LOGIN") != std::string::npos);
  CHECK(e.message().find("'x'") == std::string::npos);
}
