// The catalog as PostgreSQL shows it: pg_catalog's relations (pg_class,
// pg_attribute, pg_namespace, pg_type, pg_proc, pg_database, pg_roles, ...)
// and information_schema's (schemata, tables, columns, views, routines),
// computed from rtsql's catalog (planner/catalog.h) and one session when a
// query is planned. psql's \d, drivers' metadata calls and BI tools read
// them; docs/operations.md ("Clients and tools") says what each sees.
//
// What is where: sources and static tables are tables (relkind 'r') of the
// schema public, sinks foreign tables ('f', no columns: a sink takes the
// columns of the flow that writes it), each with a pg_description naming its
// connector and, for a sink, the flows that write it. A source's hidden
// metadata columns (_key, _timestamp, ...) are attributes with negative
// numbers, as PostgreSQL's system columns are, so tools that list attnum > 0
// leave them out. User functions are pg_proc rows. Flows have no place in
// PostgreSQL's catalog beyond that description: SHOW FLOWS lists them.
//
// OIDs are stable: PostgreSQL's own for its schemas, types and catalog
// relations, and for rtsql's objects a hash of their kind and name, so an OID
// a client read in one query finds the same object in the next (psql's \d
// name reads a relation's OID, then its columns by that OID).
//
// The SystemCatalog is also the statement's PgSession (common/pg_session.h):
// current_user, pg_get_userbyid, ::regclass and obj_description read it.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/pg_session.h"
#include "common/schema.h"
#include "common/value.h"
#include "planner/catalog.h"

namespace rtsql {

// What the catalog shows of the session that asks.
struct SessionView {
  std::string user = "rtsql";
  std::string database = "rtsql";
  int32_t backendPid = 0;
  // The roles (pg_roles, pg_user): the users file's users, or without one
  // the session's user alone. The first is the bootstrap superuser (OID 10).
  std::vector<std::string> roles;
  std::vector<std::string> superusers;
  // The session's settings (SET and their defaults), for pg_settings.
  std::vector<std::pair<std::string, std::string>> settings;
  // A materialized view's columns and its key's columns (indexes into
  // them), which its flow's running plan has and the catalog does not;
  // nullopt when it has none (not planned yet). Asked only once a query
  // reads a catalog relation, not for every statement.
  std::function<std::optional<std::pair<Schema, std::vector<int>>>(const std::string& view)>
      viewLayout;
};

// One relation's columns and rows, as a static table's.
struct SystemRelation {
  std::string schema;  // pg_catalog or information_schema
  std::string name;
  Schema columns;
  std::shared_ptr<const std::vector<Row>> rows;
};

// PostgreSQL's settings that drivers read and no statement changes, with
// their values (SHOW server_version_num, standard_conforming_strings, ...).
const std::vector<std::pair<std::string, std::string>>& pgReadOnlySettings();

class SystemCatalog final : public PgSession {
 public:
  SystemCatalog(const Catalog& catalog, SessionView session);

  // The relation `schema.name`: schema "pg_catalog" or "information_schema",
  // or empty for an unqualified name, which finds pg_catalog's (as
  // PostgreSQL's search path does). Names are case-insensitive. Null when
  // there is no such relation.
  std::optional<SystemRelation> relation(std::string_view schema, std::string_view name) const;
  // Whether `schema` is one of the two schemas above.
  static bool isSystemSchema(std::string_view schema);
  // Every system relation as schema.name, sorted.
  static std::vector<std::string> relationNames();

  // PgSession.
  std::string user() const override { return session_.user; }
  std::string database() const override { return session_.database; }
  int32_t backendPid() const override { return session_.backendPid; }
  std::vector<Named> roles() const override;
  std::vector<Named> relations() const override;
  std::vector<Named> namespaces() const override;
  std::vector<Routine> routines() const override;
  std::vector<Description> descriptions() const override;
  std::optional<Relation> systemRelation(std::string_view name) const override;
  std::vector<int64_t> relationsOffSearchPath() const override;
  std::string timeZone() const override;
  bool ansiMode() const override;
  std::vector<View> views() const override;
  std::vector<std::pair<std::string, std::string>> settings() const override;

  // The OID of rtsql's object `name` (any relation, or a function with
  // `function`); nullopt when there is none.
  std::optional<int64_t> relationOid(std::string_view name) const;

  static constexpr int64_t kPgCatalogOid = 11;
  static constexpr int64_t kPublicOid = 2200;
  static constexpr int64_t kInformationSchemaOid = 13000;
  static constexpr int64_t kBootstrapRoleOid = 10;
  static constexpr int64_t kDatabaseOid = 5;

  // A relation as pg_class and pg_attribute show it.
  struct RelationEntry {
    int64_t oid = 0;
    std::string name;
    int64_t namespaceOid = kPublicOid;
    char kind = 'r';  // r table, f foreign table (a sink), v view, m materialized view, i index
    Schema columns;   // hidden ones are system columns (negative attnum)
    std::string description;
    // A materialized view: its query, and its key as a primary key
    // (<view>_pkey, an index and a constraint). `key` holds attnums.
    std::string definition;
    std::vector<int> key;
    int64_t indexOid = 0;
    int64_t constraintOid = 0;
    // An index (kind i): the relation it indexes.
    int64_t indexedOid = 0;
    // A sink: its foreign server (its connector) and the options
    // pg_foreign_table shows ('format=json', 'topic=t'; never a secret).
    int64_t serverOid = 0;
    std::vector<std::string> foreignOptions;
  };
  struct RoutineEntry {
    int64_t oid = 0;
    std::string name;
    std::vector<std::pair<std::string, DataTypePtr>> params;
    DataTypePtr returns;
    std::string language;  // sql | python
    std::string body;
    std::string owner;
  };

 private:
  int64_t roleOid(const std::string& name) const;
  std::vector<Row> rowsOf(const std::string& key) const;
  // Fills in the materialized views' columns and keys (and their indexes'),
  // once, from SessionView::viewLayout.
  void resolveViews() const;

  SessionView session_;
  // rtsql's objects, then the system relations; the views' columns are
  // resolved when first read.
  mutable std::vector<RelationEntry> relations_;
  mutable std::once_flag viewsResolved_;
  std::vector<RoutineEntry> routines_;
  std::map<std::string, int64_t> roleOids_;  // lower-cased name -> OID
  std::map<std::string, int64_t> serverOids_;  // a sink's connector -> its foreign server's OID
};

}  // namespace rtsql
