#include "server/engine.h"

#include "common/file_beneath.h"
#include "common/interrupt.h"
#include "common/pg_session.h"
#include "connectors/format/format_functions.h"
#include "parser/parser.h"
#include "server/alter.h"
#include "server/block_statements.h"
#include "server/catalog_replay.h"
#include "server/ddl.h"
#include "server/dialect_hints.h"
#include "server/flow_ddl.h"
#include "server/flow_replace.h"
#include "server/handler_error.h"
#include "server/privileges.h"
#include "server/savepoints.h"
#include "server/session_text.h"
#include "server/select_statement.h"
#include "server/set_statement.h"
#include "server/show.h"
#include "server/show_create.h"
#include "server/statement_timeout.h"
#include "server/system_catalog.h"
#include "server/user_ddl.h"
#include "server/views/view_inputs.h"

namespace rtsql {

Engine::Engine(EngineOptions options, ConnectorProvider& connectors)
    : ctx_(std::move(options), connectors),
      ddl_(std::make_unique<ObjectDdl>(ctx_)),
      replace_(std::make_unique<FlowReplace>(ctx_)),
      flowDdl_(std::make_unique<FlowDdl>(ctx_, *replace_)),
      alter_(std::make_unique<AlterStatements>(ctx_, *ddl_)),
      savepoints_(std::make_unique<Savepoints>(ctx_)),
      show_(std::make_unique<ShowStatements>(ctx_, *replace_)),
      showCreate_(std::make_unique<ShowCreate>(ctx_)),
      users_(std::make_unique<UserDdl>(ctx_)),
      set_(std::make_unique<SetStatement>(ctx_)),
      select_(std::make_unique<QueryStatements>(ctx_)),
      replay_(std::make_unique<CatalogStoreReplay>(ctx_, *alter_)),
      blocks_(std::make_unique<BlockStatements>(ctx_, *replace_, *alter_, *replay_)) {
  ctx_.dispatch = this;
  // from_avro and the other functions over the formats, before any statement.
  format::installFormatFunctions(ctx_.options.dataDir);
  // Every file a statement names is opened beneath these (common/file_beneath.h).
  setServerFileRoots(ctx_.privileges->filesDirs());
  setViewChangelogBound(makeViewChangelogBound(
      ctx_.catalog, [this](const std::string& flow) { return ctx_.flows.flowDir(flow); },
      ctx_.statements.mutex()));
}

Engine::~Engine() {
  setViewChangelogBound({});
  shutdown();
  setServerFileRoots({});
}

std::unique_ptr<Session> Engine::openSession(const std::string& user, const std::string& database) {
  auto s = std::make_unique<EngineSession>();
  s->user = user;
  s->database = database.empty() ? user : database;
  return s;
}

void Engine::restore() { replay_->restore(); }

void Engine::beginShutdown() { ctx_.flows.beginShutdown(); }

void Engine::shutdown() {
  // A flow being started stops starting while the rest below stops.
  ctx_.flows.beginShutdown();
  // Nor bring back what a restart put off.
  replay_->stop();
  // Another node's change must not start a flow while the flows stop.
  if (ctx_.store) ctx_.store->stop();
  ctx_.flows.shutdown();
}

void Engine::execute(Session& session, const std::string& sql, ResultWriter& out) {
  auto& s = static_cast<EngineSession&>(session);
  // Whether the statements' positions are in the text with backslashes
  // doubled (a SET in the text changes the next text, not this one).
  const bool kept = keepsBackslashes(s.settings);
  try {
    std::vector<ast::StatementPtr> stmts = parseSessionStatements(s.settings, sql);
    for (const auto& stmt : stmts) {
      // A cancel that came while the text was parsed, or during the statement
      // before, cancels what has not started, as in PostgreSQL.
      if (out.cancelled()) throw Interrupted();
      // Each statement gets the session's statement_timeout from its start.
      const OptionEntry* timeout = s.settings.find("statement_timeout");
      DeadlineWriter writer(out, timeout ? parseStatementTimeoutMs(timeout->value, SqlError::npos) : 0);
      // A function that loops long on one value polls the same flag; the
      // watchdog of Python calls its part other threads may ask.
      InterruptScope interrupt(
          [](const void* w) { return static_cast<const ResultWriter*>(w)->cancelled(); },
          static_cast<const ResultWriter*>(&writer),
          [](const void* w) {
            return static_cast<const ResultWriter*>(w)->cancelledFromAnyThread();
          });
      // current_user, pg_get_userbyid, ::regclass... read the session and
      // its catalog as they are when the statement starts.
      std::unique_ptr<SystemCatalog> pg = ctx_.systemCatalog(s);
      PgSessionScope pgScope(pg.get());
      try {
        const bool blockDdl = blocks_->admitInBlock(s, *stmt);
        executeStatement(s, *stmt, writer);
        if (blockDdl) s.blockStatements.push_back(stmt->text);
      } catch (const Interrupted&) {
        if (writer.expired() || writer.deadlinePassed()) throw DeadlineWriter::timeoutError();
        throw;
      }
      // The statement ended early without completing; the rest do not run.
      if (writer.expired()) return;
    }
  } catch (...) {
    // A failure in a transaction block fails the block (server/transaction.h).
    s.block.fail();
    // QueryHandler::execute reports every failure and never throws.
    SqlError err = handlerError(std::current_exception());
    moveToWrittenText(err, kept, sql);
    hintDoubleQuotedString(err, sql);
    out.error(err);
  }
}

void Engine::executeStatement(EngineSession& s, const ast::Statement& stmt, ResultWriter& out) {
  using K = ast::StatementKind;
  switch (stmt.kind) {
    case K::CreateSource:
      return ddl_->createSource(s, static_cast<const ast::CreateSource&>(stmt), out);
    case K::CreateSink: return ddl_->createSink(s, static_cast<const ast::CreateSink&>(stmt), out);
    case K::CreateTable:
      return ddl_->createTable(s, static_cast<const ast::CreateTable&>(stmt), out);
    case K::Insert: return ddl_->insert(s, static_cast<const ast::Insert&>(stmt), out);
    case K::CreateFlow:
      return flowDdl_->createFlow(s, static_cast<const ast::CreateFlow&>(stmt), out);
    case K::CreateFunction:
      return ddl_->createFunction(s, static_cast<const ast::CreateFunction&>(stmt), out);
    case K::CreateProcessor:
      return ddl_->createProcessor(s, static_cast<const ast::CreateProcessor&>(stmt), out);
    case K::Drop: return ddl_->drop(s, static_cast<const ast::Drop&>(stmt), out);
    case K::StopFlow: return flowDdl_->stopFlow(s, static_cast<const ast::FlowCommand&>(stmt), out);
    case K::StartFlow:
      return flowDdl_->startFlow(s, static_cast<const ast::FlowCommand&>(stmt), out);
    case K::Show: return show_->show(s, static_cast<const ast::Show&>(stmt), out);
    case K::Describe: return show_->describe(s, static_cast<const ast::Describe&>(stmt), out);
    case K::Explain: return show_->explain(s, static_cast<const ast::Explain&>(stmt), out);
    case K::Set: return set_->set(s, static_cast<const ast::Set&>(stmt), out);
    case K::Select: return select_->select(s, static_cast<const ast::SelectStatement&>(stmt), out);
    case K::User:
      return users_->userStatement(s, static_cast<const ast::UserStatement&>(stmt), out);
    case K::ShowCreate:
      return showCreate_->showCreate(s, static_cast<const ast::ShowCreate&>(stmt), out);
    case K::Alter: return alter_->alter(s, static_cast<const ast::Alter&>(stmt), out);
    case K::Savepoint:
      return savepoints_->savepointStatement(s, static_cast<const ast::SavepointStatement&>(stmt),
                                             out);
    case K::Block:
      return blocks_->blockStatement(s, static_cast<const ast::BlockStatement&>(stmt), out);
  }
  throw InternalError("unknown statement kind");
}

std::optional<std::vector<ResultColumn>> Engine::describe(Session& session, const std::string& sql) {
  auto& s = static_cast<EngineSession&>(session);
  const bool kept = keepsBackslashes(s.settings);
  try {
    return describeStatement(s, sql);
  } catch (SqlError& err) {
    moveToWrittenText(err, kept, sql);
    throw;
  }
}

std::optional<std::vector<ResultColumn>> Engine::describeStatement(EngineSession& s,
                                                                   const std::string& sql) {
  std::vector<ast::StatementPtr> stmts = parseSessionStatements(s.settings, sql);
  if (stmts.size() != 1) return std::nullopt;
  const ast::Statement& stmt = *stmts.front();
  std::unique_ptr<SystemCatalog> pg = ctx_.systemCatalog(s);
  PgSessionScope pgScope(pg.get());
  using K = ast::StatementKind;
  switch (stmt.kind) {
    case K::Show: return ShowStatements::showColumns(static_cast<const ast::Show&>(stmt));
    case K::Describe: return ShowStatements::kDescribeColumns;
    case K::Explain: return ShowStatements::kExplainColumns;
    case K::ShowCreate: return ShowCreate::kShowCreateColumns;
    case K::User: return UserDdl::userColumns(static_cast<const ast::UserStatement&>(stmt));
    case K::Savepoint:
      if (static_cast<const ast::SavepointStatement&>(stmt).action == ast::SavepointAction::Show)
        return Savepoints::kSavepointColumns;
      return std::vector<ResultColumn>{};
    case K::Block: return blocks_->blockColumns(s, static_cast<const ast::BlockStatement&>(stmt));
    case K::Select:
      return select_->columns(s, *static_cast<const ast::SelectStatement&>(stmt).query);
    default: return std::vector<ResultColumn>{};  // DDL and commands return no rows
  }
}

std::vector<FlowInfo> Engine::flowInfos(bool withProgress) const {
  return ctx_.flows.flowInfos(withProgress);
}

std::optional<std::string> Engine::progress(const std::string& flow) const {
  return ctx_.flows.progress(flow);
}

bool Engine::readPlan(const std::string& flow,
                      const std::function<void(const PhysicalPlan&)>& read) const {
  return ctx_.flows.readPlan(flow, read);
}

}  // namespace rtsql
