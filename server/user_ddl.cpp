// CREATE USER, ALTER USER, DROP USER and SHOW USERS: the users of the
// --users-file, changed while rtsqld runs.
//
// Who may run them: any authenticated user. rtsql has no privileges yet (any
// user may already create and drop flows, sources and sinks), so managing
// users is no different; what keeps strangers out is the password itself.
// Without --users-file every local client is trusted and there are no users
// to manage, so the statements fail.
//
// The password is in the statement only: it is hashed into a SCRAM-SHA-256
// verifier here and never logged, kept or put in a message. Errors of these
// statements carry no position, because a client shows the statement's line
// beside an error that has one (psql prints "LINE 1: ..."), and that line
// holds the password.
#include <fmt/format.h>

#include "common/error.h"
#include "server/engine.h"
#include "server/users.h"

namespace rtsql {

namespace {

SqlError noUsersFile() {
  return SqlError(sqlstate::kObjectNotInPrerequisiteState,
                  "users are managed only when rtsqld runs with a users file", SqlError::npos,
                  "Start rtsqld with --users-file FILE (see docs/security.md); without it every "
                  "local client is trusted and there are no users.");
}

}  // namespace

std::vector<ResultColumn> Engine::userColumns(const ast::UserStatement& stmt) {
  if (stmt.action == ast::UserAction::Show) return {{"name"}};
  return {};
}

void Engine::userStatement(EngineSession& s, const ast::UserStatement& stmt, ResultWriter& out) {
  UserStore* users = options_.users.get();
  if (users == nullptr) throw noUsersFile();

  switch (stmt.action) {
    case ast::UserAction::Show: {
      Rows rows;
      for (auto& name : users->names()) rows.push_back({std::move(name)});
      sendRows(out, userColumns(stmt), rows, fmt::format("SHOW {}", rows.size()));
      return;
    }
    case ast::UserAction::Create: {
      const bool created = users->create(stmt.name, stmt.password, stmt.ifNotExists);
      if (!created) out.notice(fmt::format("user \"{}\" already exists, skipping", stmt.name));
      // PostgreSQL's command tags, which drivers may look at.
      out.complete("CREATE ROLE");
      return;
    }
    case ast::UserAction::Alter:
      users->alter(stmt.name, stmt.password);
      out.complete("ALTER ROLE");
      return;
    case ast::UserAction::Drop: {
      if (stmt.name == s.user) {
        // As PostgreSQL refuses to drop the current user: it would lock the
        // session's own user out the moment it disconnects.
        throw SqlError(sqlstate::kObjectInUse, "current user cannot be dropped", SqlError::npos,
                       "Connect as another user to drop this one.");
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
