// The engine: what rtsqld does with a statement. It dispatches each statement
// over the catalog (planner/catalog.h) and the flow registry
// (server/flows/flow_registry.h), and implements the QueryHandler seam that
// the PostgreSQL wire protocol calls. Statement handlers are split by family:
// engine.cpp (dispatch, sessions, SET, constant SELECT), ddl.cpp
// (CREATE/DROP/INSERT), flow_ddl.cpp (CREATE/STOP/START FLOW), show.cpp
// (SHOW, DESCRIBE, EXPLAIN), user_ddl.cpp (users), block_statements.cpp
// (transaction blocks and cursors), server/views/ (reading materialized
// views). What outlives the process: durability.cpp (writing
// the catalog store), catalog_replay.cpp (its replay at start, and the
// changes another node of a cluster makes, run through the same handlers).
#pragma once

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "executor/connector_provider.h"
#include "executor/slot_pool.h"
#include "parser/ast.h"
#include "planner/catalog.h"
#include "planner/planner.h"
#include "server/bounded_query.h"
#include "planner/state_plan.h"
#include "server/catalog_store.h"
#include "server/cursor.h"
#include "server/flows/flow_registry.h"
#include "server/query_handler.h"
#include "server/statement_lock.h"
#include "server/transaction.h"

namespace rtsql {

class ClusterCatalog;
class SystemCatalog;
class KafkaTaps;
class LiveQueryQuota;
class Privileges;
class UserStore;
class ViewReads;
class ViewInputProvider;

struct EngineOptions {
  std::string dataDir;
  int slots = 64;
  std::string embeddedBootstrap;  // empty: no embedded broker
  // The --users-file users, shared with the protocol server; CREATE / ALTER /
  // DROP USER change them. Null without a users file.
  std::shared_ptr<UserStore> users;
  // Who may do what (server/privileges.h): the superusers besides the users
  // file's first user (--superuser), the directories statements may name files
  // in (--files-dir), and the task slots one user's live queries may hold
  // (--max-live-query-slots-per-user; 0: half of `slots`, at least 1).
  std::vector<std::string> superusers;
  std::vector<std::string> filesDirs;
  int maxLiveQuerySlotsPerUser = 0;
  // rtsqld --cluster: the cluster's catalog topic (server/cluster/catalog.h),
  // which then holds the catalog and places the flows (server/cluster/node.h).
  // Null for a server of its own.
  std::shared_ptr<ClusterCatalog> cluster;
};

class Engine : public QueryHandler, public FlowReads {
 public:
  Engine(EngineOptions options, ConnectorProvider& connectors);
  ~Engine() override;

  std::unique_ptr<Session> openSession(const std::string& user, const std::string& database) override;
  void execute(Session& session, const std::string& sql, ResultWriter& out) override;
  // Columns of one statement without running it (the extended protocol's Describe).
  std::optional<std::vector<ResultColumn>> describe(Session& session, const std::string& sql) override;
  // A lookup by key of a materialized view, recognised once for a prepared
  // statement (prepared_lookup.cpp).
  std::shared_ptr<PreparedQuery> prepare(Session& session, const std::string& text,
                                         const std::vector<ParameterAt>& parameters) override;
  char transactionStatus(const Session& session) const override;
  std::optional<std::vector<ResultColumn>> describeCursor(Session& session,
                                                          const std::string& name) override;

  // Brings back what the catalog store holds and starts the flow registry's
  // supervisor, which starts the flows that were running, from their last
  // checkpoints. Call once, before serving. Throws SqlError when the catalog
  // is damaged.
  void restore();
  // Stops every flow (each ends its epoch). What the catalog store says is
  // unchanged, so a restart brings the same flows back.
  void shutdown();

  // The HTTP endpoint's read views (server/flows/flow_reads.h): the flow registry's.
  std::vector<FlowInfo> flowInfos(bool withProgress) const override;
  std::optional<std::string> progress(const std::string& flow) const override;
  bool readPlan(const std::string& flow,
                const std::function<void(const PhysicalPlan&)>& read) const override;
  int slotsUsed() const override { return slots_.used(); }
  int slotsTotal() const override { return slots_.total(); }

 private:
  friend class PreparedViewLookup;  // prepared_lookup.cpp
  // Per-connection state: the user and the session's SET values.
  class EngineSession : public Session {
   public:
    std::string user;
    std::string database;  // as the client named it at startup
    Options settings;
    // SET rtsql.dry_run = on: this session's own copy of the catalog, which
    // its statements change instead of the server's; flows are only planned.
    std::unique_ptr<Catalog> shadow;
    // A replay of the catalog store (at start, or another node's change):
    // its statements were checked where they first ran, and are not written
    // back. With `holdsLock`, its maker holds the statement lock for all of
    // them (server/statement_lock.h).
    bool replay = false;
    bool holdsLock = false;
    // A transaction block (block_statements.cpp): its state, and the DDL it
    // ran on `shadow` (which the block made when `blockShadow`, rather than
    // a dry run), applied to the server's catalog at COMMIT.
    TransactionBlock block;
    std::vector<std::string> blockStatements;
    bool blockShadow = false;
    // SET in a block, as PostgreSQL has it: the settings as they were at
    // BEGIN (ROLLBACK goes back to them), as the block's SETs without its
    // SET LOCALs leave them (COMMIT keeps those), and both at each savepoint.
    Options settingsAtBegin;
    Options sessionSettings;
    std::vector<std::pair<Options, Options>> settingsAtSavepoints;
    Cursors cursors;
    // The epoch the session's last read of a materialized view saw (SHOW
    // rtsql.view_epoch).
    std::optional<uint64_t> viewEpoch;
  };
  Catalog& catalogOf(EngineSession& s) { return s.shadow ? *s.shadow : catalog_; }
  const Catalog& catalogOf(const EngineSession& s) const { return s.shadow ? *s.shadow : catalog_; }
  StatementLock::Guard guardFor(const EngineSession& s) {
    return s.holdsLock ? StatementLock::Guard::held() : StatementLock::Guard(statements_);
  }
  using Rows = std::vector<std::vector<std::optional<std::string>>>;

  void executeStatement(EngineSession& s, const ast::Statement& stmt, ResultWriter& out);
  void createSource(EngineSession& s, const ast::CreateSource& stmt, ResultWriter& out);
  // The definitions CREATE SOURCE / SINK make of their statements, checked;
  // ALTER makes them of the statement with its new options.
  SourceDef defineSource(const EngineSession& s, const ast::CreateSource& stmt);
  SinkDef defineSink(const EngineSession& s, const ast::CreateSink& stmt);
  void createSink(EngineSession& s, const ast::CreateSink& stmt, ResultWriter& out);
  void createTable(EngineSession& s, const ast::CreateTable& stmt, ResultWriter& out);
  void insert(EngineSession& s, const ast::Insert& stmt, ResultWriter& out);
  void createFlow(EngineSession& s, const ast::CreateFlow& stmt, ResultWriter& out);
  // The catalog's definition of flow `stmt` planned as `plan` (flow_ddl.cpp):
  // what CREATE FLOW, a dry run's and a block's CREATE, and a replace record.
  static FlowDef flowDefinition(const ast::CreateFlow& stmt, const PhysicalPlan& plan,
                                const Catalog& catalog, const std::string& owner);
  // CREATE MATERIALIZED VIEW: its name is free among the relations (flow_ddl.cpp).
  void requireViewName(const EngineSession& s, const ast::CreateFlow& stmt) const;
  void createFunction(EngineSession& s, const ast::CreateFunction& stmt, ResultWriter& out);
  void createProcessor(EngineSession& s, const ast::CreateProcessor& stmt, ResultWriter& out);
  void drop(EngineSession& s, const ast::Drop& stmt, ResultWriter& out);
  void stopFlow(EngineSession& s, const ast::FlowCommand& stmt, ResultWriter& out);
  void startFlow(EngineSession& s, const ast::FlowCommand& stmt, ResultWriter& out);
  // flow_replace.cpp: CREATE OR REPLACE FLOW of a flow that exists (with the
  // statement lock held), and EXPLAIN of it.
  struct ReplacePlan {
    FlowRuntime* rt = nullptr;  // the running plan's runtime
    PhysicalPlan plan;          // the new plan
    StatePlan state;
  };
  ReplacePlan planReplace(EngineSession& s, const ast::CreateFlow& stmt);
  void replaceFlow(EngineSession& s, const ast::CreateFlow& stmt, ResultWriter& out);
  // CREATE OR REPLACE FLOW ... FROM SAVEPOINT: the new plan from a savepoint of it.
  void replaceFromSavepoint(EngineSession& s, const ast::CreateFlow& stmt, ResultWriter& out);
  std::vector<std::string> explainReplace(EngineSession& s, const ast::CreateFlow& stmt);
  // The pieces of a replace that a transaction block's COMMIT shares: with
  // the running plan stopped, the migration its newest checkpoint goes
  // through (put into `control` as the replace leaves it); the new plan into
  // the catalog and the registry, started when `start`.
  std::optional<StateMigration> replaceMigration(const std::string& flow, const ReplacePlan& r,
                                                 bool resetAll, const EngineSession& s,
                                                 FlowControl& control);
  void installReplaced(const std::string& flow, FlowDef def, ReplacePlan r,
                       const std::optional<StateMigration>& migration, bool resetAll,
                       const FlowControl& control, bool start, ResultWriter& out);
  // Throws 55000 with the reasons when the state plan refuses the replace.
  void requireCompatible(const ast::CreateFlow& stmt, const StatePlan& state);
  // savepoints.cpp: STOP FLOW ... WITH SAVEPOINT, START ... FROM SAVEPOINT,
  // SHOW / DROP SAVEPOINT(S).
  void savepointStatement(EngineSession& s, const ast::SavepointStatement& stmt, ResultWriter& out);
  std::string savepointDir(const std::string& flow) const;
  static const std::vector<ResultColumn> kSavepointColumns;
  // Throws 42501 unless the session's user may `verb` the flow, function or
  // processor `name`: its owner or a superuser. Nothing at a replay.
  void requireOwnerOf(const EngineSession& s, ast::ObjectKind kind, const std::string& name,
                      std::string_view verb, size_t pos) const;
  void userStatement(EngineSession& s, const ast::UserStatement& stmt, ResultWriter& out);
  // block_statements.cpp. admitInBlock() runs before every statement: in a
  // block, it refuses what a block cannot undo and says whether the statement
  // is one of the block's DDL, recorded when it succeeds.
  bool admitInBlock(EngineSession& s, const ast::Statement& stmt);
  void blockStatement(EngineSession& s, const ast::BlockStatement& stmt, ResultWriter& out);
  std::vector<ResultColumn> blockColumns(EngineSession& s, const ast::BlockStatement& stmt);
  void commitBlock(EngineSession& s, const std::vector<std::string>& statements, ResultWriter& out);
  void endBlock(EngineSession& s, bool committed);
  void declareCursor(EngineSession& s, const ast::BlockStatement& stmt, const BlockCommand& cmd,
                     ResultWriter& out);
  static std::vector<ResultColumn> userColumns(const ast::UserStatement& stmt);
  static std::vector<ResultColumn> showColumns(const ast::Show& stmt);
  static const std::vector<ResultColumn> kDescribeColumns;
  static const std::vector<ResultColumn> kExplainColumns;
  void show(EngineSession& s, const ast::Show& stmt, ResultWriter& out);
  void describe(const EngineSession& s, const ast::Describe& stmt, ResultWriter& out);
  void describeFunction(const EngineSession& s, const ast::Describe& stmt, ResultWriter& out);
  void explain(EngineSession& s, const ast::Explain& stmt, ResultWriter& out);
  // show_create.cpp: SHOW CREATE, and the statement it prints.
  static const std::vector<ResultColumn> kShowCreateColumns;
  void showCreate(EngineSession& s, const ast::ShowCreate& stmt, ResultWriter& out);
  std::string currentCreateText(ast::ObjectKind kind, const std::string& name,
                                const Catalog& catalog, bool reveal, bool* maskedAny) const;
  // alter.cpp: ALTER SOURCE | SINK | FLOW, and the restart of the flows it
  // changes (each from its last checkpoint), with the statement lock held.
  void alter(EngineSession& s, const ast::Alter& stmt, ResultWriter& out);
  void restartAltered(StatementLock::Guard& lock, const std::vector<std::string>& flows,
                      ResultWriter* out);
  // Another node's ALTER, read from the cluster's catalog: the object's new
  // statement `sql` replaces its definition in place, and the flows that use
  // it go on from their checkpoints. False when the change is not one ALTER
  // makes (the caller then drops and creates the object). Lock held.
  bool adoptAltered(EngineSession& replay, const std::string& kind, const std::string& name,
                    const std::string& sql);
  void set(EngineSession& s, const ast::Set& stmt, ResultWriter& out);
  void select(EngineSession& s, const ast::SelectStatement& stmt, ResultWriter& out);
  static bool isConstantQuery(const ast::Query& q);
  static std::string constantColumnName(const ast::SelectItem& item);
  PlanContext planContext(const EngineSession& s) const;
  // The catalog as PostgreSQL shows it to this session (pg_catalog_session.cpp),
  // which is also the PgSession its statements' functions read.
  std::unique_ptr<SystemCatalog> systemCatalog(const EngineSession& s) const;
  // The finite relations a bounded query of `s` may read (server/bounded_query.h);
  // a view's snapshot is opened for `out` (null: a Describe, columns only),
  // and the epoch it read goes to `viewEpoch`.
  BoundedLookup boundedLookup(const EngineSession& s, ResultWriter* out,
                              std::optional<uint64_t>* viewEpoch) const;
  // What a bounded query of `s` over `catalog` runs with.
  BoundedRun boundedRun(const EngineSession& s, const Catalog& catalog, BoundedLookup lookup);
  // The relations a flow's plan reads and writes; the catalog refuses to
  // drop them while the flow exists (55006).
  static std::vector<std::string> flowInputs(const PhysicalPlan& plan, const std::string& sink);
  static std::vector<std::pair<std::string, std::string>> settingsOf(const EngineSession& s);
  // The default of a setting a session may SET (client_encoding, TimeZone,
  // ...), which SHOW answers before any SET; null for any other name.
  static const std::string* settingDefault(const std::string& key);
  static void sendRows(ResultWriter& out, const std::vector<ResultColumn>& cols, const Rows& rows,
                       const std::string& tag);

  // durability.cpp. What a statement is about to make of the catalog; unset
  // members stand for the server's own (catalog_, tableInserts_, controls).
  struct CatalogChange {
    const Catalog* catalog = nullptr;
    const std::map<std::string, std::vector<std::string>>* inserts = nullptr;
    std::string flow;                      // lower-cased name of a flow whose control changes
    const FlowControl* control = nullptr;  // its control as it will be
    // The controls of several new flows (a transaction block's), by lower-cased name.
    const std::map<std::string, FlowControl>* controls = nullptr;
  };
  // Writes the catalog store as `change` describes it, with the statement
  // lock held; throws SqlError, and then the caller changes nothing.
  void persistCatalog(const CatalogChange& change);
  // Makes `change` to `catalog` durably: on a copy first, the store written
  // as the copy then is, and only then `catalog` (the server's; a dry run's
  // or a replay's is changed at once). Returns what `change` returned.
  bool changeCatalog(const EngineSession& s, Catalog& catalog,
                     const std::function<bool(Catalog&)>& change, CatalogChange extra);
  bool changeCatalog(const EngineSession& s, Catalog& catalog,
                     const std::function<bool(Catalog&)>& change);
  void persistWantRunning(const std::string& flow, bool run);

  // catalog_replay.cpp
  void replayStatement(EngineSession& s, const std::string& sql, ResultWriter& out);
  void restoreFlow(const CatalogRecord& record);
  // Plans a catalog flow that has no runtime yet. With the statement lock held.
  FlowRuntime* planRestoredFlow(const std::string& name);
  // Applies what another writer of the catalog store changed. On its thread.
  void applyChange(const StoredChange& change);
  void restoreDeferred();

  EngineOptions options_;
  // The server's connectors plus the changelogs of materialized views that
  // flows read (server/views/view_inputs.h); connectors_ is this.
  std::unique_ptr<ViewInputProvider> viewInputs_;
  ConnectorProvider& connectors_;
  Catalog catalog_;
  SlotPool slots_;
  std::unique_ptr<KafkaTaps> liveTaps_;  // the Kafka consumers live queries share
  std::unique_ptr<Privileges> privileges_;
  std::unique_ptr<LiveQueryQuota> liveQuota_;
  StatementLock statements_;  // see server/statement_lock.h
  std::unique_ptr<CatalogStore> store_;  // null: nothing kept
  FlowRegistry flows_;
  std::unique_ptr<ViewReads> views_;  // SELECTs over materialized views (server/views/)
  // INSERTs per table, under the statement lock.
  std::map<std::string, std::vector<std::string>> tableInserts_;
  std::vector<CatalogRecord> unrestored_;  // records a restart could not apply, kept as they were
  // Records a restart put off because they needed a remote service (a
  // schema registry), and those after one that failed; under the lock. The
  // restorer thread tries them again until they all come back.
  std::vector<CatalogRecord> deferred_;
  std::thread restorer_;
  std::mutex restorerMu_;
  std::condition_variable restorerCv_;
  std::atomic<bool> restorerStop_{false};
};

}  // namespace rtsql
