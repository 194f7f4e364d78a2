// What PostgreSQL's session functions ask of the session that runs a
// statement: current_user, current_database(), pg_backend_pid(), and the
// names behind the OIDs of the catalog as PostgreSQL shows it
// (pg_get_userbyid, ::regclass, obj_description). The server installs its
// session's answer (server/system_catalog.h) for the life of each statement,
// the way InterruptScope installs a cancel check: the functions are built
// when a statement is bound, on the statement's thread, and fold what they
// read into the expression then. Outside every scope (a flow planned at a
// restart, unit tests) they see a session of user and database "rtsql" with
// no objects. The planner asks it for the catalog's relations named in FROM.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/schema.h"
#include "common/value.h"

namespace rtsql {

class PgSession {
 public:
  virtual ~PgSession() = default;

  virtual std::string user() const = 0;
  virtual std::string database() const = 0;
  virtual int32_t backendPid() const = 0;

  // OID and name of every role (pg_roles), relation (pg_class), schema
  // (pg_namespace) and routine (pg_proc).
  struct Named {
    int64_t oid = 0;
    std::string name;
  };
  virtual std::vector<Named> roles() const = 0;
  virtual std::vector<Named> relations() const = 0;
  virtual std::vector<Named> namespaces() const = 0;
  // A routine's result and argument list as pg_get_function_result and
  // pg_get_function_arguments write them ("integer", "x integer, y text").
  struct Routine {
    int64_t oid = 0;
    std::string result;
    std::string arguments;
  };
  virtual std::vector<Routine> routines() const = 0;
  // pg_description: an object's (objsubid 0) or column's comment.
  struct Description {
    int64_t objoid = 0;
    int64_t classoid = 0;
    int32_t objsubid = 0;
    std::string text;
  };
  virtual std::vector<Description> descriptions() const = 0;

  // The catalog's relation a query names in FROM, as a static table's
  // columns and rows computed now: `name` as the planner has it,
  // "pg_catalog.pg_class", "information_schema.tables", or "pg_class" alone
  // (pg_catalog is in every search path). Null when it names none.
  struct Relation {
    Schema columns;
    std::shared_ptr<const std::vector<Row>> rows;
  };
  virtual std::optional<Relation> systemRelation(std::string_view name) const = 0;

  // The OIDs of the relations of a schema off the search path
  // (information_schema's), which pg_table_is_visible says are not visible,
  // so that tools listing the current schema's tables and views leave them out.
  virtual std::vector<int64_t> relationsOffSearchPath() const { return {}; }

  // The session's time zone as SET TIME ZONE named it (common/time_zone.h
  // reads it); UTC by default.
  virtual std::string timeZone() const { return "UTC"; }
  // Whether the session's expressions follow ANSI mode (`SET ansi_mode`,
  // common/ansi_mode.h reads it); on by default.
  virtual bool ansiMode() const { return true; }
  // A materialized view as pg_get_viewdef, pg_get_indexdef and
  // pg_get_constraintdef write it: its query, and its key as the primary
  // key <view>_pkey (an index and a constraint; no key columns when its
  // plan is not known yet).
  struct View {
    int64_t oid = 0;
    std::string name;
    std::string definition;
    int64_t indexOid = 0;
    int64_t constraintOid = 0;
    std::vector<std::string> keyColumns;
  };
  virtual std::vector<View> views() const { return {}; }
  // current_setting(name): the session's settings, then PostgreSQL's
  // read-only ones (pg_settings' names and values).
  virtual std::vector<std::pair<std::string, std::string>> settings() const { return {}; }
};

// Installs `session` for the current thread for the life of the scope, and
// puts the previous one back after.
class PgSessionScope {
 public:
  explicit PgSessionScope(const PgSession* session);
  ~PgSessionScope();
  PgSessionScope(const PgSessionScope&) = delete;
  PgSessionScope& operator=(const PgSessionScope&) = delete;

 private:
  const PgSession* previous_;
};

// The current thread's session, or null outside every scope.
const PgSession* currentPgSession();

}  // namespace rtsql
