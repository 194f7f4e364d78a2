// What the catalog as PostgreSQL shows it (server/system_catalog.h) knows of
// an engine session: its user and database, the connection's process ID,
// the users file's users as roles, and the session's settings.
#include "server/engine_context.h"
#include "server/system_catalog.h"
#include "server/users.h"
#include "server/views/view_reads.h"

namespace rtsql {

std::unique_ptr<SystemCatalog> EngineContext::systemCatalog(const EngineSession& s) const {
  SessionView view;
  view.user = s.user.empty() ? std::string("rtsql") : s.user;
  view.database = s.database.empty() ? view.user : s.database;
  view.backendPid = s.backendPid;
  if (options.users) {
    view.roles = options.users->names();
    // The users file's first user is a superuser, and PostgreSQL's bootstrap one.
    const std::string first = options.users->firstUser();
    std::erase(view.roles, first);
    view.roles.insert(view.roles.begin(), first);
    view.superusers = options.superusers;
  }
  view.settings = settingsOf(s);
  // A view's layout is its running plan's, which the flow registry gives
  // under its own lock (server/views/view_reads.h), so a statement that holds
  // the statement lock reads it too.
  view.viewLayout = [views = views.get()](const std::string& name)
      -> std::optional<std::pair<Schema, std::vector<int>>> {
    std::optional<ViewLayout> l = views->layout(name);
    if (!l) return std::nullopt;
    return std::make_pair(std::move(l->schema), std::move(l->key));
  };
  return std::make_unique<SystemCatalog>(catalogOf(s), std::move(view));
}

}  // namespace rtsql
