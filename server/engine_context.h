// What the engine's statement families share (server/engine.h): the catalog,
// the flow registry, the statement lock, the options, the catalog store and
// the services statements run with, and the few steps every family takes
// (which catalog a session changes, its plan context, writing the catalog
// store). Each family (ddl.h, flow_ddl.h, flow_replace.h, alter.h, ...) is
// given this context, and the other families it calls, explicitly; the
// Engine owns them all and only dispatches.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "executor/connector_provider.h"
#include "executor/slot_pool.h"
#include "parser/ast.h"
#include "planner/catalog.h"
#include "planner/planner.h"
#include "server/bounded_query.h"
#include "server/catalog_store.h"
#include "server/engine_options.h"
#include "server/engine_session.h"
#include "server/flows/flow_registry.h"
#include "server/query_handler.h"
#include "server/statement_lock.h"

namespace rtsql {

class KafkaTaps;
class LiveQueryQuota;
class Privileges;
class SystemCatalog;
class ViewInputProvider;
class ViewReads;

// The Engine's dispatch, for the families that run statements of their own:
// a transaction block's COMMIT and cursors, a replay of the catalog store.
class StatementDispatch {
 public:
  virtual ~StatementDispatch() = default;
  virtual void executeStatement(EngineSession& s, const ast::Statement& stmt,
                                ResultWriter& out) = 0;
  // Columns of one statement without running it.
  virtual std::optional<std::vector<ResultColumn>> describe(Session& session,
                                                            const std::string& sql) = 0;
};

// What a statement is about to make of the catalog (durability.cpp); unset
// members stand for the server's own (the catalog, its table inserts, the
// flows' controls).
struct CatalogChange {
  const Catalog* catalog = nullptr;
  const std::map<std::string, std::vector<std::string>>* inserts = nullptr;
  std::string flow;                      // lower-cased name of a flow whose control changes
  const FlowControl* control = nullptr;  // its control as it will be
  // The controls of several new flows (a transaction block's), by lower-cased name.
  const std::map<std::string, FlowControl>* controls = nullptr;
};

struct EngineContext {
  EngineContext(EngineOptions engineOptions, ConnectorProvider& serverConnectors);
  ~EngineContext();

  using Rows = std::vector<std::vector<std::optional<std::string>>>;

  EngineOptions options;
  // The server's connectors plus the changelogs of materialized views that
  // flows read (server/views/view_inputs.h); `connectors` is this.
  std::unique_ptr<ViewInputProvider> viewInputs;
  ConnectorProvider& connectors;
  Catalog catalog;
  SlotPool slots;
  std::unique_ptr<KafkaTaps> liveTaps;  // the Kafka consumers live queries share
  std::unique_ptr<Privileges> privileges;
  std::unique_ptr<LiveQueryQuota> liveQuota;
  StatementLock statements;  // see server/statement_lock.h
  std::unique_ptr<CatalogStore> store;  // null: nothing kept
  FlowRegistry flows;
  std::unique_ptr<ViewReads> views;  // SELECTs over materialized views (server/views/)
  // INSERTs per table, under the statement lock.
  std::map<std::string, std::vector<std::string>> tableInserts;
  std::vector<CatalogRecord> unrestored;  // records a restart could not apply, kept as they were
  // Records a restart put off because they needed a remote service (a
  // schema registry), and those after one that failed; under the lock
  // (catalog_replay.h tries them again).
  std::vector<CatalogRecord> deferred;
  // The Engine, which the families that run statements call.
  StatementDispatch* dispatch = nullptr;

  Catalog& catalogOf(EngineSession& s) { return s.shadow ? *s.shadow : catalog; }
  const Catalog& catalogOf(const EngineSession& s) const { return s.shadow ? *s.shadow : catalog; }
  StatementLock::Guard guardFor(const EngineSession& s) {
    return s.holdsLock ? StatementLock::Guard::held() : StatementLock::Guard(statements);
  }
  PlanContext planContext(const EngineSession& s) const;
  // The catalog as PostgreSQL shows it to this session (pg_catalog_session.cpp),
  // which is also the PgSession its statements' functions read.
  std::unique_ptr<SystemCatalog> systemCatalog(const EngineSession& s) const;
  // The finite relations a bounded query of `s` may read (server/bounded_query.h);
  // a view's snapshot is opened for `out` (null: a Describe, columns only),
  // and the view with the epoch it read goes to `epochs`. With `select`
  // (the statement the query is), a view another node holds is read from
  // that node (server/views/view_remote.h) rather than refused, or from
  // the standby copy kept here (ViewReads::readOf, standbyAfter); with
  // `holderFailed` (the statement's holder could not answer it whole), from
  // the standby copy at once.
  BoundedLookup boundedLookup(const EngineSession& s, ResultWriter* out, ViewEpochs* epochs,
                              const ast::SelectStatement* select = nullptr,
                              bool holderFailed = false) const;
  // planBoundedQuery() of `query` for `s` with `ctx`. When the session did
  // not SET shuffle.partitions and the plan needs more task slots than are
  // free now (the node's, and the user's quota for one who is not a
  // superuser), planned again with the shuffle.partitions that fits them
  // (server/query_slots.h): the answer is the same with any, and the default
  // is no choice of the user's. A session's own setting is kept (53000 when
  // short).
  PhysicalPlan planBounded(const EngineSession& s, const ast::Query& query, PlanContext ctx) const;
  // planQuery() of the live query `query` for `s`, fitted to the free task
  // slots as planBounded() fits a bounded query.
  PhysicalPlan planLive(const EngineSession& s, const ast::Query& query) const;
  // `plan` with `ctx`, planned again with the shuffle.partitions that fit
  // the free slots where the session set none and it needs more: what
  // planBounded() and planLive() do.
  PhysicalPlan planFitted(const EngineSession& s, PlanContext ctx,
                          const std::function<PhysicalPlan(const PlanContext&)>& plan) const;
  // What a bounded query of `s` over `over` runs with.
  BoundedRun boundedRun(const EngineSession& s, const Catalog& over, BoundedLookup lookup);
  // Throws 42501 unless the session's user may `verb` the flow, function or
  // processor `name`: its owner or a superuser. Nothing at a replay.
  void requireOwnerOf(const EngineSession& s, ast::ObjectKind kind, const std::string& name,
                      std::string_view verb, size_t pos) const;
  // Plans a catalog flow that has no runtime yet (catalog_replay.cpp). With
  // the statement lock held.
  FlowRuntime* planRestoredFlow(const std::string& name);

  // durability.cpp. Writes the catalog store as `change` describes it, with
  // the statement lock held; throws SqlError, and then the caller changes
  // nothing.
  void persistCatalog(const CatalogChange& change);
  // Makes `change` to `catalog` durably: on a copy first, the store written
  // as the copy then is, and only then `catalog` (the server's; a dry run's
  // or a replay's is changed at once). Returns what `change` returned.
  bool changeCatalog(const EngineSession& s, Catalog& target,
                     const std::function<bool(Catalog&)>& change, CatalogChange extra);
  bool changeCatalog(const EngineSession& s, Catalog& target,
                     const std::function<bool(Catalog&)>& change);
  void persistWantRunning(const std::string& flow, bool run);

  // The relations a flow's plan reads and writes; the catalog refuses to
  // drop them while the flow exists (55006).
  static std::vector<std::string> flowInputs(const PhysicalPlan& plan, const std::string& sink);
  static std::vector<std::pair<std::string, std::string>> settingsOf(const EngineSession& s);
  static void sendRows(ResultWriter& out, const std::vector<ResultColumn>& cols, const Rows& rows,
                       const std::string& tag);
};

}  // namespace rtsql
