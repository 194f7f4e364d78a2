// CREATE USER, ALTER USER, DROP USER and SHOW USERS: the users of the
// --users-file, changed while rtsqld runs.
//
// Who may run them (server/privileges.h): superusers create, alter and drop
// users; every user may change their own password and list the users, with
// who among them is a superuser. The users file's first user cannot be
// dropped: it owns the server. Without --users-file every local client is
// trusted and there are no users to manage, so the statements fail.
//
// The password is in the statement only: it is hashed into a SCRAM-SHA-256
// verifier here and never logged, kept or put in a message. Errors of these
// statements carry no position, because a client shows the statement's line
// beside an error that has one (psql prints "LINE 1: ..."), and that line
// holds the password.
#include <fmt/format.h>

#include "common/error.h"
#include "server/privileges.h"
#include "server/user_ddl.h"
#include "server/users.h"

namespace rtsql {

namespace {

SqlError noUsersFile() {
  return SqlError(sqlstate::kObjectNotInPrerequisiteState,
                  "users are managed only when rtsqld runs with a users file", SqlError::npos,
                  "Start rtsqld with --users-file FILE (see docs/security.md); without it every "
                  "local client is trusted and there are no users.");
}

const char* const kAskASuperuser =
    "Connect as a superuser: the users file's first user, or a user named by rtsqld --superuser.";

}  // namespace

std::vector<ResultColumn> UserDdl::userColumns(const ast::UserStatement& stmt) {
  if (stmt.action == ast::UserAction::Show) return {{"name"}, {"superuser", pgtype::kBool}};
  return {};
}

void UserDdl::userStatement(EngineSession& s, const ast::UserStatement& stmt, ResultWriter& out) {
  UserStore* users = ctx_.options.users.get();
  if (users == nullptr) throw noUsersFile();

  switch (stmt.action) {
    case ast::UserAction::Show: {
      EngineContext::Rows rows;
      for (auto& name : users->names()) {
        std::string super = ctx_.privileges->isSuperuser(name) ? "t" : "f";
        rows.push_back({std::move(name), std::move(super)});
      }
      ctx_.sendRows(out, userColumns(stmt), rows, fmt::format("SHOW {}", rows.size()));
      return;
    }
    case ast::UserAction::Create: {
      ctx_.privileges->requireSuperuser(s.user, "create users", kAskASuperuser);
      const bool created = users->create(stmt.name, stmt.password, stmt.ifNotExists);
      if (!created) out.notice(fmt::format("user \"{}\" already exists, skipping", stmt.name));
      // PostgreSQL's command tags, which drivers may look at.
      out.complete("CREATE ROLE");
      return;
    }
    case ast::UserAction::Alter:
      // Every user may change their own password, as in PostgreSQL.
      if (stmt.name != s.user) {
        ctx_.privileges->requireSuperuser(
            s.user, fmt::format("change the password of user \"{}\"", stmt.name),
            "A user may change only their own password; a superuser may change anyone's.");
      }
      users->alter(stmt.name, stmt.password);
      out.complete("ALTER ROLE");
      return;
    case ast::UserAction::Drop: {
      ctx_.privileges->requireSuperuser(s.user, "drop users", kAskASuperuser);
      if (stmt.name == s.user) {
        // As PostgreSQL refuses to drop the current user: it would lock the
        // session's own user out the moment it disconnects.
        throw SqlError(sqlstate::kObjectInUse, "current user cannot be dropped", SqlError::npos,
                       "Connect as another user to drop this one.");
      }
      if (stmt.name == users->firstUser()) {
        // As PostgreSQL keeps its bootstrap superuser: were the first user
        // dropped, the next one in the file would become a superuser at the
        // next start, which no one decided.
        throw SqlError(sqlstate::kObjectInUse,
                       fmt::format("cannot drop \"{}\", the first user of the users file",
                                   stmt.name),
                       SqlError::npos,
                       "The first user of the users file owns the server; to change who that is, "
                       "edit the file while rtsqld is stopped.");
      }
      const bool dropped = users->drop(stmt.name, stmt.ifExists);
      if (!dropped) out.notice(fmt::format("user \"{}\" does not exist, skipping", stmt.name));
      out.complete("DROP ROLE");
      return;
    }
  }
  throw InternalError("unknown user statement");
}

}  // namespace rtsql
