#include "server/engine.h"

#include <fmt/format.h>

#include <filesystem>

#include "common/expr.h"
#include "common/file_beneath.h"
#include "common/interrupt.h"
#include "common/pg_session.h"
#include "common/schema.h"
#include "connectors/format/codec.h"
#include "connectors/kafka/tap.h"
#include "parser/parser.h"
#include "planner/user_function.h"
#include "server/handler_error.h"
#include "server/bounded_query.h"
#include "server/live_query.h"
#include "server/cluster/node.h"
#include "server/live_query_quota.h"
#include "server/pg_values.h"
#include "server/privileges.h"
#include "server/statement_timeout.h"
#include "server/system_catalog.h"
#include "server/users.h"
#include "server/views/view_inputs.h"
#include "server/views/view_reads.h"

namespace rtsql {

// Settings a session may SET and SHOW, with their defaults. The PostgreSQL ones
// are there because drivers set them on connect.
namespace {
const std::vector<std::pair<std::string, std::string>> kSettings = {
    {"shuffle.partitions", "8"},
    {"application_name", ""},
    {"client_encoding", "UTF8"},
    {"datestyle", "ISO, MDY"},
    {"timezone", "UTC"},
    {"extra_float_digits", "1"},
    {"search_path", "public"},
    {"rtsql.dry_run", "off"},
    {"statement_timeout", "0"},
    {"rtsql.bounded_max_rows", "1000000"},
    {"rtsql.fetch_wait", "5000"},  // how long FETCH waits for a cursor's rows (server/cursor.h)
    {kViewSnapshotSetting, "committed"},  // what a read of a view sees (server/views/view_reads.h)
};

const std::pair<std::string, std::string>* findSetting(const std::string& key) {
  for (const auto& s : kSettings) {
    if (iequals(s.first, key)) return &s;
  }
  return nullptr;
}

}  // namespace

const std::string* Engine::settingDefault(const std::string& key) {
  const std::pair<std::string, std::string>* s = findSetting(key);
  return s ? &s->second : nullptr;
}

Engine::Engine(EngineOptions options, ConnectorProvider& connectors)
    : options_(std::move(options)),
      viewInputs_(std::make_unique<ViewInputProvider>(
          connectors,
          [this](const std::string& view) {
            return (std::filesystem::path(flows_.flowDir(view)) / "checkpoints").string();
          })),
      connectors_(*viewInputs_),
      slots_(options_.slots),
      liveTaps_(std::make_unique<KafkaTaps>(options_.embeddedBootstrap)),
      privileges_(std::make_unique<Privileges>(
          options_.users, options_.superusers, options_.filesDirs,
          std::vector<std::string>{options_.dataDir,
                                   options_.users ? options_.users->path() : std::string()})),
      liveQuota_(std::make_unique<LiveQueryQuota>(options_.maxLiveQuerySlotsPerUser > 0
                                                      ? options_.maxLiveQuerySlotsPerUser
                                                      : options_.slots / 2)),
      store_(makeCatalogStore(options_.cluster, options_.dataDir)),
      flows_(options_.dataDir, connectors_, slots_, catalog_, statements_,
             makePlacement(options_.cluster, options_.dataDir)) {
  // Every file a statement names is opened beneath these (common/file_beneath.h).
  setServerFileRoots(privileges_->filesDirs());
  views_ = std::make_unique<ViewReads>(flows_);
  setViewChangelogBound(makeViewChangelogBound(
      catalog_, [this](const std::string& flow) { return flows_.flowDir(flow); },
      statements_.mutex()));
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

void Engine::shutdown() {
  // Nor bring back what a restart put off.
  {
    std::lock_guard lock(restorerMu_);
    restorerStop_ = true;
  }
  restorerCv_.notify_all();
  if (restorer_.joinable()) restorer_.join();
  // Another node's change must not start a flow while the flows stop.
  if (store_) store_->stop();
  flows_.shutdown();
}

void Engine::execute(Session& session, const std::string& sql, ResultWriter& out) {
  auto& s = static_cast<EngineSession&>(session);
  try {
    std::vector<ast::StatementPtr> stmts = parseStatements(sql);
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
      std::unique_ptr<SystemCatalog> pg = systemCatalog(s);
      PgSessionScope pgScope(pg.get());
      try {
        const bool blockDdl = admitInBlock(s, *stmt);
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
    out.error(handlerError(std::current_exception()));
  }
}

void Engine::executeStatement(EngineSession& s, const ast::Statement& stmt, ResultWriter& out) {
  using K = ast::StatementKind;
  switch (stmt.kind) {
    case K::CreateSource: return createSource(s, static_cast<const ast::CreateSource&>(stmt), out);
    case K::CreateSink: return createSink(s, static_cast<const ast::CreateSink&>(stmt), out);
    case K::CreateTable: return createTable(s, static_cast<const ast::CreateTable&>(stmt), out);
    case K::Insert: return insert(s, static_cast<const ast::Insert&>(stmt), out);
    case K::CreateFlow: return createFlow(s, static_cast<const ast::CreateFlow&>(stmt), out);
    case K::CreateFunction:
      return createFunction(s, static_cast<const ast::CreateFunction&>(stmt), out);
    case K::CreateProcessor:
      return createProcessor(s, static_cast<const ast::CreateProcessor&>(stmt), out);
    case K::Drop: return drop(s, static_cast<const ast::Drop&>(stmt), out);
    case K::StopFlow: return stopFlow(s, static_cast<const ast::FlowCommand&>(stmt), out);
    case K::StartFlow: return startFlow(s, static_cast<const ast::FlowCommand&>(stmt), out);
    case K::Show: return show(s, static_cast<const ast::Show&>(stmt), out);
    case K::Describe: return describe(s, static_cast<const ast::Describe&>(stmt), out);
    case K::Explain: return explain(s, static_cast<const ast::Explain&>(stmt), out);
    case K::Set: return set(s, static_cast<const ast::Set&>(stmt), out);
    case K::Select: return select(s, static_cast<const ast::SelectStatement&>(stmt), out);
    case K::User: return userStatement(s, static_cast<const ast::UserStatement&>(stmt), out);
    case K::ShowCreate: return showCreate(s, static_cast<const ast::ShowCreate&>(stmt), out);
    case K::Alter: return alter(s, static_cast<const ast::Alter&>(stmt), out);
    case K::Savepoint:
      return savepointStatement(s, static_cast<const ast::SavepointStatement&>(stmt), out);
    case K::Block: return blockStatement(s, static_cast<const ast::BlockStatement&>(stmt), out);
  }
  throw InternalError("unknown statement kind");
}

void Engine::set(EngineSession& s, const ast::Set& stmt, ResultWriter& out) {
  const auto* setting = findSetting(stmt.key);
  if (!setting) {
    throw SqlError(sqlstate::kUndefinedObject,
                   fmt::format("unrecognized configuration parameter \"{}\"", stmt.key), stmt.keyPos,
                   "known parameters: shuffle.partitions");
  }
  if (iequals(setting->first, "shuffle.partitions")) {
    Options probe({OptionEntry{setting->first, stmt.value, stmt.keyPos, stmt.keyPos}});
    probe.getInt(setting->first, 8, 1, 4096);  // validates
  }
  if (iequals(setting->first, "statement_timeout")) parseStatementTimeoutMs(stmt.value, stmt.keyPos);  // validates
  if (iequals(setting->first, "rtsql.bounded_max_rows")) {
    Options probe({OptionEntry{setting->first, stmt.value, stmt.keyPos, stmt.keyPos}});
    probe.getInt(setting->first, 1000000, 1, int64_t{1} << 40);  // validates
  }
  if (iequals(setting->first, "rtsql.fetch_wait")) parseStatementTimeoutMs(stmt.value, stmt.keyPos);  // validates
  if (iequals(setting->first, kViewSnapshotSetting)) checkViewRead(stmt.value, stmt.keyPos);
  if (iequals(setting->first, "rtsql.dry_run")) {
    std::string v = toLower(stmt.value);
    bool on = v == "on" || v == "true" || v == "1";
    if (!on && v != "off" && v != "false" && v != "0") {
      throw SqlError(sqlstate::kInvalidParameterValue,
                     fmt::format("invalid value '{}' for rtsql.dry_run", stmt.value), stmt.keyPos,
                     "on or off");
    }
    // Turning it on copies the catalog as it is now; off drops the copy.
    if (on && !s.shadow) s.shadow = std::make_unique<Catalog>(catalog_);
    if (!on) s.shadow.reset();
  }
  if (stmt.local && !s.block.active()) {
    // As in PostgreSQL: checked, and then without effect.
    out.warning(sqlstate::kNoActiveSqlTransaction, "SET LOCAL can only be used in transaction blocks");
    out.complete("SET");
    return;
  }
  s.settings.set(setting->first, stmt.value);
  if (s.block.active() && !stmt.local) s.sessionSettings.set(setting->first, stmt.value);
  out.complete("SET");
}

void Engine::select(EngineSession& s, const ast::SelectStatement& stmt, ResultWriter& out) {
  const ast::Query& q = *stmt.query;
  // A SELECT without FROM is evaluated at once, as PostgreSQL does (drivers and
  // tools send `SELECT 1` to check a connection).
  if (isConstantQuery(q)) {
    const ast::Select& sel = q.terms[0];
    Schema empty;
    std::vector<ResultColumn> cols;
    std::vector<std::optional<std::string>> row;
    for (const auto& item : sel.items) {
      checkSelectListLength(cols.size() + 1, item.expr->pos);
      ExprPtr e = bindExpression(*item.expr, empty, &catalogOf(s));  // SELECT f(1)
      // Typed as a live query's columns are, so drivers get ints, floats and
      // booleans rather than text.
      cols.push_back({constantColumnName(item), pgTypeOf(*e->type())});
      row.push_back(pgTextOf(e->eval(Row{})));
    }
    if (sel.where) {
      Value w = bindExpression(*sel.where, empty, &catalogOf(s))->eval(Row{});
      if (w.isNull() || !w.asBool()) {
        sendRows(out, cols, {}, "SELECT 0");
        return;
      }
    }
    sendRows(out, cols, {row}, "SELECT 1");
    return;
  }
  // A materialized view's lookups by key and scans in key order are answered
  // from its snapshot directly (server/views/view_reads.h); any other query
  // over it is a bounded query reading the same snapshot.
  if (Catalog::FlowPtr view = ViewReads::viewOf(q, catalogOf(s)); view && views_->serves(q, *view)) {
    if (s.shadow && !s.blockShadow) {
      out.columns(views_->columns(q, *view));
      out.complete("SELECT 0");
      return;
    }
    s.viewEpoch = views_->select(q, *view, out, viewReadOf(s.settings));
    return;
  }
  // A query over finite relations only runs to their end (server/bounded_query.h).
  std::optional<uint64_t> viewEpoch;
  const BoundedLookup lookup = boundedLookup(s, &out, &viewEpoch);
  if (isBoundedQuery(q, lookup)) {
    PhysicalPlan plan = planBoundedQuery(
        q, catalogQueryContext(q, lookup, boundedPlanContext(planContext(s), lookup)));
    if (s.shadow && !s.blockShadow) {
      out.columns(boundedQueryColumns(plan));
      out.complete("SELECT 0");
      return;
    }
    std::optional<LiveQueryQuota::Hold> hold;
    if (!privileges_->isSuperuser(s.user)) hold.emplace(liveQuota_->acquire(s.user, plan.slots()));
    runBoundedQuery(std::move(plan), q, boundedRun(s, catalogOf(s), lookup), out);
    if (viewEpoch) s.viewEpoch = viewEpoch;
    return;
  }
  // A query on a stream runs as a temporary flow whose rows stream to the client.
  PhysicalPlan plan = planQuery(q, planContext(s));
  if (s.shadow && !s.blockShadow) {
    // Dry run: planned, its columns sent, nothing read.
    out.columns(liveQueryColumns(plan));
    out.complete("SELECT 0");
    return;
  }
  // Superusers are not bound by the per-user quota (server/live_query_quota.h).
  std::optional<LiveQueryQuota::Hold> hold;
  if (!privileges_->isSuperuser(s.user)) hold.emplace(liveQuota_->acquire(s.user, plan.slots()));
  runLiveQuery(std::move(plan), q.limit, connectors_, *liveTaps_, slots_,
               (std::filesystem::path(options_.dataDir) / "live").string(), out);
}

bool Engine::isConstantQuery(const ast::Query& q) {
  return q.terms.size() == 1 && !q.terms[0].from && q.terms[0].groupBy.empty();
}

std::string Engine::constantColumnName(const ast::SelectItem& item) {
  if (!item.alias.empty()) return item.alias;
  return item.expr->kind == ast::ExprKind::Call ? item.expr->name : std::string("?column?");
}

std::optional<std::vector<ResultColumn>> Engine::describe(Session& session, const std::string& sql) {
  auto& s = static_cast<EngineSession&>(session);
  std::vector<ast::StatementPtr> stmts = parseStatements(sql);
  if (stmts.size() != 1) return std::nullopt;
  const ast::Statement& stmt = *stmts.front();
  std::unique_ptr<SystemCatalog> pg = systemCatalog(s);
  PgSessionScope pgScope(pg.get());
  switch (stmt.kind) {
    case ast::StatementKind::Show: return showColumns(static_cast<const ast::Show&>(stmt));
    case ast::StatementKind::Describe: return kDescribeColumns;
    case ast::StatementKind::Explain: return kExplainColumns;
    case ast::StatementKind::ShowCreate: return kShowCreateColumns;
    case ast::StatementKind::User: return userColumns(static_cast<const ast::UserStatement&>(stmt));
    case ast::StatementKind::Savepoint:
      if (static_cast<const ast::SavepointStatement&>(stmt).action == ast::SavepointAction::Show)
        return kSavepointColumns;
      return std::vector<ResultColumn>{};
    case ast::StatementKind::Block:
      return blockColumns(s, static_cast<const ast::BlockStatement&>(stmt));
    case ast::StatementKind::Select: {
      const ast::Query& q = *static_cast<const ast::SelectStatement&>(stmt).query;
      if (isConstantQuery(q)) {
        std::vector<ResultColumn> cols;
        Schema empty;
        for (const auto& item : q.terms[0].items) {
          checkSelectListLength(cols.size() + 1, item.expr->pos);
          ExprPtr e = bindExpression(*item.expr, empty, &catalogOf(s));
          cols.push_back({constantColumnName(item), pgTypeOf(*e->type())});
        }
        return cols;
      }
      if (Catalog::FlowPtr view = ViewReads::viewOf(q, catalogOf(s)); view && views_->serves(q, *view))
        return views_->columns(q, *view);
      const BoundedLookup lookup = boundedLookup(s, nullptr, nullptr);
      if (isBoundedQuery(q, lookup)) {
        return boundedQueryColumns(planBoundedQuery(
            q, catalogQueryContext(q, lookup, boundedPlanContext(planContext(s), lookup))));
      }
      return liveQueryColumns(planQuery(q, planContext(s)));
    }
    default: return std::vector<ResultColumn>{};  // DDL and commands return no rows
  }
}

BoundedLookup Engine::boundedLookup(const EngineSession& s, ResultWriter* out,
                                    std::optional<uint64_t>* viewEpoch) const {
  const Catalog* catalog = &catalogOf(s);
  ViewReads* views = views_.get();
  auto viewOf = [catalog, views, out, viewEpoch, mode = viewReadOf(s.settings)](
                    const std::string& name) -> std::shared_ptr<const BoundedRelation> {
    Catalog::FlowPtr f = catalog->findFlow(name);
    if (!f || !f->materializedView) return nullptr;
    return views->relation(f->name, out, viewEpoch, mode);
  };
  // The statement's PgSession (installed by execute and describe) is kept by
  // the lookup: the run opens its relations on other threads.
  return boundedLookupOf(*catalog, currentPgSession(), viewOf);
}

BoundedRun Engine::boundedRun(const EngineSession& s, const Catalog& catalog,
                              BoundedLookup lookup) {
  BoundedRun run;
  run.connectors = &connectors_;
  run.slots = &slots_;
  run.lookup = std::move(lookup);
  run.catalog = &catalog;
  run.stateDir = (std::filesystem::path(options_.dataDir) / "bounded").string();
  run.embeddedBootstrap = options_.embeddedBootstrap;
  run.maxRows = s.settings.getInt("rtsql.bounded_max_rows", 1000000, 1, int64_t{1} << 40);
  return run;
}

PlanContext Engine::planContext(const EngineSession& s) const {
  PlanContext ctx;
  ctx.catalog = &catalogOf(s);
  ctx.session = s.settings;
  ctx.checkSinkColumns = [](const SinkSpec& sink,
                            const std::vector<std::pair<std::string, size_t>>& columns) {
    checkSinkColumns(sink, columns);
  };
  ctx.sourcePartitions = [this](const SourceDef& def) {
    ScanSpec scan;
    scan.name = def.name;
    scan.connector = def.connector;
    scan.format = def.format;
    scan.options = def.options;
    scan.schema = def.schema;
    return connectors_.sourcePartitions(scan);
  };
  return ctx;
}

std::vector<FlowInfo> Engine::flowInfos(bool withProgress) const {
  return flows_.flowInfos(withProgress);
}

std::optional<std::string> Engine::progress(const std::string& flow) const {
  return flows_.progress(flow);
}

bool Engine::readPlan(const std::string& flow,
                      const std::function<void(const PhysicalPlan&)>& read) const {
  return flows_.readPlan(flow, read);
}

void Engine::sendRows(ResultWriter& out, const std::vector<ResultColumn>& cols, const Rows& rows,
                      const std::string& tag) {
  out.columns(cols);
  for (const auto& r : rows) out.row(r);
  out.complete(tag);
}

}  // namespace rtsql
