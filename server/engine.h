// The engine: what rtsqld does with a statement. It implements the
// QueryHandler seam that the PostgreSQL wire protocol calls, and dispatches
// each statement, one call per kind, to the family that runs it over the
// catalog (planner/catalog.h) and the flow registry
// (server/flows/flow_registry.h). The families share an EngineContext
// (engine_context.h: the catalog, the registry, the statement lock, the
// options, the catalog store) and are given the other families they call:
// ddl.h (CREATE/DROP/INSERT), flow_ddl.h (CREATE/STOP/START FLOW),
// flow_replace.h (CREATE OR REPLACE FLOW), alter.h (ALTER), savepoints.h,
// show.h (SHOW, DESCRIBE, EXPLAIN), show_create.h, user_ddl.h (users),
// block_statements.h (transaction blocks and cursors), set_statement.h,
// select_statement.h (SELECT, with server/views/ for materialized views).
// What outlives the process: durability.cpp (writing the catalog store),
// catalog_replay.h (its replay at start, and the changes another node of a
// cluster makes, run through the same dispatch).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "server/engine_context.h"
#include "server/engine_options.h"
#include "server/engine_session.h"
#include "server/flows/flow_reads.h"
#include "server/query_handler.h"

namespace rtsql {

class AlterStatements;
class BlockStatements;
class CatalogStoreReplay;
class FlowDdl;
class FlowReplace;
class ObjectDdl;
class QueryStatements;
class Savepoints;
class SetStatement;
class ShowCreate;
class ShowStatements;
class UserDdl;

class Engine : public QueryHandler, public FlowReads, private StatementDispatch {
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
  // The server stops: no flow is started any more, and a start in progress
  // ends at its next wait (server/flows/flow_registry.h). Any thread, at
  // once (the signal's handler); shutdown() follows.
  void beginShutdown();
  // Stops every flow (each ends its epoch). What the catalog store says is
  // unchanged, so a restart brings the same flows back.
  void shutdown();

  // The HTTP endpoint's read views (server/flows/flow_reads.h): the flow registry's.
  std::vector<FlowInfo> flowInfos(bool withProgress) const override;
  std::optional<std::string> progress(const std::string& flow) const override;
  bool readPlan(const std::string& flow,
                const std::function<void(const PhysicalPlan&)>& read) const override;
  int slotsUsed() const override { return ctx_.slots.used(); }
  int slotsTotal() const override { return ctx_.slots.total(); }

 private:
  // The dispatch: one call per statement kind.
  void executeStatement(EngineSession& s, const ast::Statement& stmt, ResultWriter& out) override;
  // describe(), its errors' positions in the text as parsed.
  std::optional<std::vector<ResultColumn>> describeStatement(EngineSession& s,
                                                             const std::string& sql);

  EngineContext ctx_;
  // The statement families, each given the context and the families it calls.
  std::unique_ptr<ObjectDdl> ddl_;
  std::unique_ptr<FlowReplace> replace_;
  std::unique_ptr<FlowDdl> flowDdl_;
  std::unique_ptr<AlterStatements> alter_;
  std::unique_ptr<Savepoints> savepoints_;
  std::unique_ptr<ShowStatements> show_;
  std::unique_ptr<ShowCreate> showCreate_;
  std::unique_ptr<UserDdl> users_;
  std::unique_ptr<SetStatement> set_;
  std::unique_ptr<QueryStatements> select_;
  std::unique_ptr<CatalogStoreReplay> replay_;
  std::unique_ptr<BlockStatements> blocks_;
};

}  // namespace rtsql
