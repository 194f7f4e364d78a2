// Transaction blocks and cursors (server/transaction.h, server/cursor.h) in
// the engine. A block's DDL runs on a copy of the catalog (the session's
// shadow, as a dry run's: planned and checked, nothing started); COMMIT runs
// the block's statements again on a copy of the catalog as it is then (other
// sessions may have changed it meanwhile), writes the catalog store once as
// that copy is, and only then applies them to the server's catalog and starts
// the flows the block created. A crash before the write leaves the catalog as
// before the block, after it as after: a restart replays the store. Statements
// a block cannot take back (INSERT, STOP/START FLOW, users) are refused in a
// block. In a cluster the one write is one block of the catalog topic, which
// every other node applies whole (server/cluster/catalog_block.h). A CREATE
// OR REPLACE of a running flow is checked in the block
// against the plan that runs; at COMMIT its running plan checkpoints before
// the write, the write records the state migration with the new catalog,
// and the new plan starts after it (as a replace on its own does,
// flow_replace.cpp). A flow an ALTER reaches goes on from its checkpoint
// after the write. Cursors run their query through the same path as a SELECT.
#include <fmt/format.h>

#include <filesystem>
#include <map>
#include <set>
#include <tuple>

#include "common/log.h"
#include "common/pg_session.h"
#include "common/schema.h"
#include "parser/parser.h"
#include "server/alter.h"
#include "server/block_statements.h"
#include "server/catalog_replay.h"
#include "server/create_text.h"
#include "server/engine.h"
#include "server/flow_replace.h"
#include "server/statement_timeout.h"
#include "server/system_catalog.h"
#include "server/views/view_reads.h"

namespace rtsql {

namespace {

// Rows of a live query that wait for FETCH; the query waits while they are this many.
constexpr size_t kCursorBufferRows = 10000;

SqlError refusedInBlock(std::string_view what, size_t pos) {
  return SqlError(sqlstate::kActiveSqlTransaction,
                  fmt::format("{} cannot run inside a transaction block", what), pos,
                  "a transaction block applies only CREATE, CREATE OR REPLACE, ALTER and DROP "
                  "at COMMIT; run it after COMMIT or ROLLBACK");
}

bool isBlockDdl(ast::StatementKind kind) {
  using K = ast::StatementKind;
  switch (kind) {
    case K::CreateSource:
    case K::CreateSink:
    case K::CreateTable:
    case K::CreateFlow:
    case K::CreateFunction:
    case K::CreateProcessor:
    case K::Alter:
    case K::Drop: return true;
    default: return false;
  }
}

// Whether the statement ends a failed block (and so runs in one).
bool endsBlock(const ast::Statement& stmt) {
  if (stmt.kind != ast::StatementKind::Block) return false;
  const auto& b = static_cast<const ast::BlockStatement&>(stmt);
  const std::string& head = b.words.front().text;
  return head == "COMMIT" || head == "END" || head == "ROLLBACK" || head == "ABORT";
}

}  // namespace

char Engine::transactionStatus(const Session& session) const {
  return static_cast<const EngineSession&>(session).block.status();
}

std::optional<std::vector<ResultColumn>> Engine::describeCursor(Session& session,
                                                                const std::string& name) {
  auto& s = static_cast<EngineSession&>(session);
  auto it = s.cursors.find(name);
  if (it == s.cursors.end()) return std::nullopt;
  return it->second->columns();
}

bool BlockStatements::admitInBlock(EngineSession& s, const ast::Statement& stmt) {
  if (!s.block.active()) return false;
  s.block.admit(endsBlock(stmt), stmt.pos);
  using K = ast::StatementKind;
  switch (stmt.kind) {
    case K::Insert: throw refusedInBlock("INSERT", stmt.pos);
    case K::StopFlow: throw refusedInBlock("STOP FLOW", stmt.pos);
    case K::StartFlow: throw refusedInBlock("START FLOW", stmt.pos);
    case K::Savepoint:
      if (static_cast<const ast::SavepointStatement&>(stmt).action == ast::SavepointAction::Show) {
        return false;
      }
      throw refusedInBlock("a savepoint of a flow", stmt.pos);
    case K::CreateFlow:
      // A savepoint is copied in place at once, as the savepoint statements
      // are: nothing a block could take back.
      if (!static_cast<const ast::CreateFlow&>(stmt).fromSavepoint.empty())
        throw refusedInBlock("CREATE OR REPLACE FLOW ... FROM SAVEPOINT", stmt.pos);
      break;
    case K::User:
      if (static_cast<const ast::UserStatement&>(stmt).action == ast::UserAction::Show) return false;
      throw refusedInBlock("a user statement", stmt.pos);
    case K::Set:
      if (iequals(static_cast<const ast::Set&>(stmt).key, "rtsql.dry_run")) {
        throw refusedInBlock("SET rtsql.dry_run", stmt.pos);
      }
      return false;
    default: break;
  }
  if (!isBlockDdl(stmt.kind)) return false;
  // A dry run's statements change its own catalog, in a block or not.
  if (s.shadow && !s.blockShadow) return false;
  if (s.block.readOnly()) {
    throw SqlError(sqlstate::kReadOnlySqlTransaction,
                   "cannot change the catalog in a read-only transaction", stmt.pos);
  }
  if (!s.shadow) {
    std::lock_guard lock(ctx_.statements.mutex());
    s.shadow = std::make_unique<Catalog>(ctx_.catalog);
    s.blockShadow = true;
  }
  return true;
}

void BlockStatements::endBlock(EngineSession& s, bool committed) {
  s.blockStatements.clear();
  if (s.blockShadow) {
    s.shadow.reset();
    s.blockShadow = false;
  }
  // A cursor without HOLD ends with its block; one WITH HOLD outlives a
  // COMMIT, as in PostgreSQL, but not a ROLLBACK.
  std::erase_if(s.cursors, [&](const auto& c) { return !committed || !c.second->hold(); });
}

void BlockStatements::blockStatement(EngineSession& s, const ast::BlockStatement& stmt,
                                     ResultWriter& out) {
  using K = BlockCommand::Kind;
  const BlockCommand cmd = readBlockCommand(stmt);
  const std::string& head = stmt.words.front().text;
  switch (cmd.kind) {
    case K::Begin:
      if (!s.block.begin()) {
        out.warning(sqlstate::kActiveSqlTransaction, "there is already a transaction in progress");
      } else {
        s.block.setReadOnly(cmd.readOnly);
        s.settingsAtBegin = s.settings;
        s.sessionSettings = s.settings;
        s.settingsAtSavepoints.clear();
      }
      return out.complete(head == "START" ? "START TRANSACTION" : "BEGIN");
    case K::Commit: {
      const std::vector<std::string> statements = std::move(s.blockStatements);
      const bool dryRun = s.shadow && !s.blockShadow;
      const TransactionBlock::Ended ended = s.block.commit();
      endBlock(s, ended == TransactionBlock::Ended::Committed);
      if (ended == TransactionBlock::Ended::NoBlock) {
        out.warning(sqlstate::kNoActiveSqlTransaction, "there is no transaction in progress");
      } else if (ended == TransactionBlock::Ended::RolledBack) {
        s.settings = s.settingsAtBegin;
        return out.complete("ROLLBACK");
      } else {
        // The block's DDL runs with the settings it ran with in the block;
        // then its SET LOCALs end, and its SETs stay unless COMMIT failed.
        try {
          if (!statements.empty() && !dryRun) commitBlock(s, statements, out);
        } catch (...) {
          s.settings = s.settingsAtBegin;
          throw;
        }
        s.settings = s.sessionSettings;
      }
      return out.complete("COMMIT");
    }
    case K::Rollback:
      if (s.block.rollback() == TransactionBlock::Ended::NoBlock) {
        out.warning(sqlstate::kNoActiveSqlTransaction, "there is no transaction in progress");
      } else {
        s.settings = s.settingsAtBegin;
      }
      endBlock(s, false);
      return out.complete("ROLLBACK");
    case K::Savepoint:
      s.block.savepoint(cmd.name, s.blockStatements.size(), cmd.namePos);
      s.settingsAtSavepoints.emplace_back(s.settings, s.sessionSettings);
      return out.complete("SAVEPOINT");
    case K::Release:
      s.block.release(cmd.name, cmd.namePos);
      s.settingsAtSavepoints.resize(s.block.savepointCount());
      return out.complete("RELEASE");
    case K::RollbackTo: {
      const size_t mark = s.block.rollbackTo(cmd.name, cmd.namePos);
      // The settings as they were at the savepoint.
      s.settingsAtSavepoints.resize(s.block.savepointCount());
      if (!s.settingsAtSavepoints.empty()) {
        std::tie(s.settings, s.sessionSettings) = s.settingsAtSavepoints.back();
      }
      if (mark < s.blockStatements.size() && s.blockShadow) {
        // The block's catalog as it was at the savepoint: its statements
        // before it, run again on the catalog as it is now.
        s.blockStatements.resize(mark);
        {
          std::lock_guard lock(ctx_.statements.mutex());
          s.shadow = std::make_unique<Catalog>(ctx_.catalog);
        }
        ReplayWriter discard;
        for (const std::string& sql : s.blockStatements) replay_.replayStatement(s, sql, discard);
      }
      return out.complete("ROLLBACK");
    }
    case K::SetTransaction:
      if (head == "SET" && !iequals(stmt.words[1].text, "SESSION")) {
        if (!s.block.active()) {
          out.warning(sqlstate::kNoActiveSqlTransaction,
                      "SET TRANSACTION can only be used in transaction blocks");
        } else {
          s.block.setReadOnly(cmd.readOnly);
        }
      }
      return out.complete("SET");
    case K::Declare: return declareCursor(s, stmt, cmd, out);
    case K::Fetch:
    case K::Move: {
      auto it = s.cursors.find(cmd.name);
      if (it == s.cursors.end()) {
        throw SqlError(sqlstate::kInvalidCursorName,
                       fmt::format("cursor \"{}\" does not exist", cmd.name), cmd.namePos);
      }
      const OptionEntry* wait = s.settings.find("rtsql.fetch_wait");
      const int64_t waitMs = parseStatementTimeoutMs(wait ? wait->value : "5000", SqlError::npos);
      std::vector<Cursor::Row> rows = it->second->fetch(cmd.count, waitMs, out);
      if (cmd.kind == K::Move) return out.complete(fmt::format("MOVE {}", rows.size()));
      out.columns(it->second->columns());
      for (const auto& r : rows) out.row(r);
      return out.complete(fmt::format("FETCH {}", rows.size()));
    }
    case K::Close:
      if (cmd.all) {
        s.cursors.clear();
        return out.complete("CLOSE CURSOR ALL");
      }
      if (!s.cursors.erase(cmd.name)) {
        throw SqlError(sqlstate::kInvalidCursorName,
                       fmt::format("cursor \"{}\" does not exist", cmd.name), cmd.namePos);
      }
      return out.complete("CLOSE CURSOR");
  }
}

std::vector<ResultColumn> BlockStatements::blockColumns(EngineSession& s,
                                                       const ast::BlockStatement& stmt) {
  const BlockCommand cmd = readBlockCommand(stmt);
  if (cmd.kind != BlockCommand::Kind::Fetch) return {};
  auto it = s.cursors.find(cmd.name);
  if (it == s.cursors.end()) {
    throw SqlError(sqlstate::kInvalidCursorName,
                   fmt::format("cursor \"{}\" does not exist", cmd.name), cmd.namePos);
  }
  return it->second->columns();
}

void BlockStatements::declareCursor(EngineSession& s, const ast::BlockStatement& stmt,
                                    const BlockCommand& cmd, ResultWriter& out) {
  if (!cmd.hold && !s.block.active()) {
    throw SqlError(sqlstate::kNoActiveSqlTransaction,
                   "DECLARE CURSOR can only be used in transaction blocks", stmt.pos,
                   "BEGIN first, or DECLARE ... CURSOR WITH HOLD");
  }
  if (cmd.binary) {
    throw SqlError(sqlstate::kFeatureNotSupported, "BINARY cursors are not supported",
                   cmd.namePos, "declare it without BINARY; a driver asks for binary columns "
                                "through the extended query protocol instead");
  }
  if (s.cursors.count(cmd.name)) {
    throw SqlError(sqlstate::kDuplicateCursor,
                   fmt::format("cursor \"{}\" already exists", cmd.name), cmd.namePos);
  }
  // The query runs as a SELECT of its own session would, on the cursor's
  // thread: a copy of this session's settings and catalog, so that the
  // session's next statements run beside it.
  struct CursorQuery {
    EngineSession session;
    std::vector<ast::StatementPtr> statements;
  };
  auto q = std::make_shared<CursorQuery>();
  q->session.user = s.user;
  q->session.database = s.database;
  q->session.backendPid = s.backendPid;
  q->session.settings = s.settings;
  if (s.shadow) {
    q->session.shadow = std::make_unique<Catalog>(*s.shadow);
    q->session.blockShadow = s.blockShadow;
  }
  std::vector<ResultColumn> columns;
  try {
    q->statements = parseStatements(stmt.queryText);
    columns = ctx_.dispatch->describe(q->session, stmt.queryText).value();
  } catch (SqlError& e) {
    // Positions in the query's own text, made positions in the statement's.
    if (e.position() != SqlError::npos) e.setPosition(e.position() + stmt.queryPos);
    throw;
  }
  Cursor::Run run = [this, q](ResultWriter& w) {
    // The catalog as PostgreSQL shows it, and current_user and the like,
    // read the statement's PgSession, installed per thread.
    std::unique_ptr<SystemCatalog> pg = ctx_.systemCatalog(q->session);
    PgSessionScope pgScope(pg.get());
    ctx_.dispatch->executeStatement(q->session, *q->statements.front(), w);
  };
  s.cursors.emplace(cmd.name, std::make_unique<Cursor>(std::move(columns), std::move(run),
                                                       cmd.hold, kCursorBufferRows));
  out.complete("DECLARE CURSOR");
}

void BlockStatements::commitBlock(EngineSession& s, const std::vector<std::string>& statements,
                                  ResultWriter& out) {
  std::unique_lock lock(ctx_.statements.mutex());
  ReplayWriter discard;
  // Checked again on the catalog as it is now, as a dry run: another session
  // may have changed it since the block ran them.
  EngineSession check;
  check.user = s.user;
  check.settings = s.settings;
  check.holdsLock = true;
  check.blockShadow = true;
  check.shadow = std::make_unique<Catalog>(ctx_.catalog);
  std::vector<ast::StatementPtr> parsed;
  std::set<std::string> created;  // lower-cased names of the flows the block creates
  std::map<std::string, size_t> lastFlowStatement;  // per flow, its last CREATE [OR REPLACE]
  for (const std::string& sql : statements) {
    try {
      std::vector<ast::StatementPtr> one = parseStatements(sql);
      const ast::Statement& stmt = *one.front();
      if (stmt.kind == ast::StatementKind::CreateFlow) {
        const std::string name = toLower(static_cast<const ast::CreateFlow&>(stmt).name);
        if (!check.shadow->findFlow(name)) created.insert(name);
        lastFlowStatement[name] = parsed.size();
      }
      ctx_.dispatch->executeStatement(check, stmt, discard);
      parsed.push_back(std::move(one.front()));
    } catch (SqlError& e) {
      e.setPosition(SqlError::npos);
      e.withHint(fmt::format("at COMMIT, on the catalog as other sessions left it: {}; the "
                             "transaction block was rolled back",
                             sql));
      throw;
    }
  }
  std::erase_if(created, [&](const std::string& name) { return !check.shadow->findFlow(name); });
  // The flows the block creates run from COMMIT on, with the session's settings.
  std::map<std::string, FlowControl> controls;
  for (const std::string& name : created) {
    FlowControl control;
    control.wantRunning = true;
    control.settings = ctx_.settingsOf(s);
    controls[name] = control;
  }

  // The running flows the block replaces: each planned against the catalog
  // as the block leaves it, its state plan checked, before anything stops.
  struct Replaced {
    FlowDef def;
    FlowReplace::ReplacePlan plan;
    bool resetAll = false;
    bool wasRunning = false;
    std::optional<StateMigration> migration;
  };
  std::map<std::string, Replaced> replaced;
  for (const auto& [name, index] : lastFlowStatement) {
    const auto& last = static_cast<const ast::CreateFlow&>(*parsed[index]);
    Catalog::FlowPtr before = ctx_.catalog.findFlow(name);
    Catalog::FlowPtr after = check.shadow->findFlow(name);
    if (created.count(name) || !last.orReplace || !before || !after || before->sql == after->sql) {
      continue;
    }
    ast::StatementPtr def = parseDefinition(after->sql, ast::StatementKind::CreateFlow);
    auto& stmt = static_cast<ast::CreateFlow&>(*def);
    stmt.resetState = last.resetState;
    stmt.resetOperators = last.resetOperators;
    Replaced r;
    try {
      r.plan = replace_.planReplace(check, stmt);
      if (r.plan.state.unchanged) continue;
      replace_.requireCompatible(stmt, r.plan.state);
      ctx_.flows.requireNotStopping(name, SqlError::npos, "CREATE OR REPLACE FLOW");
    } catch (SqlError& e) {
      // Positions in the definition as the block left it, not in a statement.
      e.setPosition(SqlError::npos);
      e.withHint(fmt::format("at COMMIT, replacing flow \"{}\"; the transaction block was "
                             "rolled back",
                             after->name));
      throw;
    }
    r.def = *after;
    r.def.checkpointIntervalMicros = r.plan.plan.checkpointIntervalMicros;
    r.def.options = r.plan.plan.flowOptions;
    r.resetAll = last.resetState && last.resetOperators.empty();
    replaced.emplace(name, std::move(r));
  }
  // The epoch boundary of each: its running plan ends its epoch and
  // checkpoints it, and the migration to the new plan is recorded with the
  // catalog.
  for (auto& [name, r] : replaced) {
    r.wasRunning = r.plan.rt->state() == FlowState::Running;
    {
      FlowRegistry::Stopping stopping(ctx_.flows, name);
      r.plan.rt->stop();
    }
    FlowControl control;
    r.migration = replace_.replaceMigration(name, r.plan, r.resetAll, s, control);
    controls[name] = control;
  }
  // The one write: the store holds the catalog as before the block or as
  // after it, never between.
  CatalogChange change;
  change.catalog = check.shadow.get();
  change.controls = &controls;
  try {
    ctx_.persistCatalog(change);
  } catch (...) {
    // The catalog still holds the running plans: they go on as they were.
    for (auto& [name, r] : replaced) {
      if (r.wasRunning) ctx_.flows.startRuntime(name, *r.plan.rt);
    }
    throw;
  }

  // Then the server's catalog, as a replay of the store would make it. A
  // flow the block creates or replaces gets its definition as the block
  // leaves it, at its last CREATE; an ALTER of it is in that definition.
  EngineSession apply;
  apply.user = s.user;
  apply.settings = s.settings;
  apply.replay = true;
  apply.holdsLock = true;
  std::set<std::string> altered;  // flows that go on from their checkpoints with an ALTER
  for (size_t i = 0; i < parsed.size(); ++i) {
    const ast::StatementPtr& stmt = parsed[i];
    try {
      if (stmt->kind == ast::StatementKind::Alter) {
        const auto& alter = static_cast<const ast::Alter&>(*stmt);
        const std::string name = toLower(alter.name);
        const bool ofFlow = alter.object == ast::ObjectKind::Flow;
        if (ofFlow && (created.count(name) || replaced.count(name))) continue;
        ctx_.dispatch->executeStatement(apply, *stmt, discard);
        for (const std::string& f : ofFlow ? std::vector<std::string>{name}
                                           : ctx_.catalog.flowsUsing(alter.name)) {
          if (!created.count(toLower(f)) && !replaced.count(toLower(f))) altered.insert(f);
        }
        continue;
      }
      if (stmt->kind == ast::StatementKind::Drop) {
        // A flow the block created and dropped never reached the server.
        const auto& drop = static_cast<const ast::Drop&>(*stmt);
        if (drop.object == ast::ObjectKind::Flow && !ctx_.catalog.findFlow(drop.name)) continue;
      }
      if (stmt->kind != ast::StatementKind::CreateFlow) {
        ctx_.dispatch->executeStatement(apply, *stmt, discard);
        continue;
      }
      const std::string name = toLower(static_cast<const ast::CreateFlow&>(*stmt).name);
      if (lastFlowStatement[name] != i) continue;
      if (auto it = replaced.find(name); it != replaced.end()) {
        Replaced& r = it->second;
        const bool viewRebuilt = r.plan.state.viewTable && !r.plan.state.keepsViewTable();
        replace_.installReplaced(r.def.name, r.def, std::move(r.plan), r.migration,
                                 r.resetAll, controls[name],
                                 r.wasRunning || controls[name].wantRunning, out);
        if (viewRebuilt) ctx_.views->forget(r.def.name);  // its old rows' snapshot
        continue;
      }
      if (!created.count(name)) continue;  // IF NOT EXISTS of one that exists, or unchanged
      Catalog::FlowPtr def = check.shadow->findFlow(name);
      // A new flow starts with empty state: a dropped flow's files go.
      std::error_code ec;
      std::filesystem::remove_all(ctx_.flows.flowDir(def->name), ec);
      CatalogRecord record{"flow", def->name, def->sql, true, ctx_.settingsOf(s), s.user};
      replay_.restoreFlow(record);
      FlowRuntime* rt = ctx_.flows.findRuntime(def->name);
      if (rt && ctx_.flows.runsHere(def->name, rt) && rt->state() != FlowState::Running) {
        try {
          ctx_.flows.startRuntime(def->name, *rt);
        } catch (const SqlError& e) {
          // Recorded as running: the supervisor starts it again.
          out.warning("01000", fmt::format("flow \"{}\" did not start yet: {}", def->name,
                                           e.message()));
        }
      }
    } catch (const std::exception& e) {
      // The store says the block happened; a restart brings back what could
      // not be applied now.
      const auto* sqlError = dynamic_cast<const SqlError*>(&e);
      const std::string why = sqlError ? sqlError->message() : e.what();
      logLine(fmt::format("transaction block committed, but \"{}\" failed here: {}", stmt->text,
                          why));
      out.warning(sqlError ? sqlError->sqlstate() : sqlstate::kInternalError,
                  fmt::format("committed, but not applied until a restart: {}: {}", stmt->text,
                              why));
    }
  }
  // The flows an ALTER of the block reaches go on from their last
  // checkpoints with the change, as after an ALTER on its own.
  StatementLock::Guard held = StatementLock::Guard::held();
  alter_.restartAltered(held, std::vector<std::string>(altered.begin(), altered.end()), &out);
}

}  // namespace rtsql
