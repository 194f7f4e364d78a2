// CREATE / DROP / INSERT of sources, sinks, tables, functions and processors,
// and DROP of any object (flow_ddl.cpp: CREATE, STOP and START FLOW).
#include <fmt/format.h>

#include <filesystem>
#include <functional>

#include "common/log.h"
#include "common/schema.h"
#include "connectors/provider.h"
#include "connectors/registry.h"
#include "planner/processor.h"
#include "planner/user_function.h"
#include "server/ddl.h"
#include "server/dialect_hints.h"
#include "server/insert_into.h"
#include "server/live_query_quota.h"
#include "server/privileges.h"
#include "server/views/view_reads.h"

namespace rtsql {

namespace {

// The owner of an object made by `user`'s statement: at a replay, the
// session's user is the recorded owner; CREATE OR REPLACE keeps the owner of
// what it replaces, as in PostgreSQL.
template <typename Def>
std::string ownerOf(const std::string& user, const std::shared_ptr<const Def>& replaced,
                    bool replaying) {
  return replaced && !replaying ? replaced->owner : user;
}

}  // namespace

SourceDef ObjectDdl::defineSource(const EngineSession& s, const ast::CreateSource& stmt) {
  Options options = bindOptions(stmt.options);
  std::string connector = toLower(options.require("connector", stmt.pos).value);
  // A restored definition was checked when it was created; what it names
  // outside (a directory, a broker) may be away now, and the flows using it
  // then report that while they are retried.
  if (!s.replay) {
    ctx_.privileges->checkOptions(s.user, connector, options);
    validateSourceOptions(connector, options, stmt.pos);
    ctx_.connectors.checkCreate(connector, options);
  }
  const Connector& source =
      ConnectorRegistry::builtin().require(connector, ConnectorRole::Source, options, stmt.pos);
  SourceDef def;
  def.name = stmt.name;
  def.connector = connector;
  def.format = source.sourceFormat(options);
  def.schema = source.bindSourceSchema(stmt, options);
  if (auto wm = bindWatermark(stmt, def.schema)) def.watermark = *wm;
  // Options may name columns (datagen's generators): check them against the
  // declared ones now.
  source.validateSourceColumns(options, def.schema, stmt.pos);
  def.parsed = std::make_shared<const SourceOptions>(source.parseSource(options));
  def.traits = source.sourceTraits();
  def.options = std::move(options);
  def.sql = stmt.text;
  return def;
}

void ObjectDdl::createSource(EngineSession& s, const ast::CreateSource& stmt, ResultWriter& out) {
  // A dry-run session works on its own copy of the catalog and records nothing.
  Catalog& catalog = ctx_.catalogOf(s);
  SourceDef def = defineSource(s, stmt);
  StatementLock::Guard lock = ctx_.guardFor(s);
  lock.lock();
  if (!ctx_.changeCatalog(s, catalog, [&](Catalog& c) { return c.addSource(def, stmt.ifNotExists, stmt.namePos); })) {
    out.notice(fmt::format("source \"{}\" already exists, skipping", stmt.name));
  }
  out.complete("CREATE SOURCE");
}

SinkDef ObjectDdl::defineSink(const EngineSession& s, const ast::CreateSink& stmt) {
  Options options = bindOptions(stmt.options);
  std::string connector = toLower(options.require("connector", stmt.pos).value);
  if (!s.replay) {
    ctx_.privileges->checkOptions(s.user, connector, options);
    validateSinkOptions(connector, options, stmt.pos);
    ctx_.connectors.checkCreate(connector, options);
  }
  SinkDef def;
  def.name = stmt.name;
  def.connector = connector;
  def.format = toLower(options.getString("format", "json"));
  const Connector* sink = ConnectorRegistry::builtin().find(connector);
  def.exactlyOnce = sink && sink->exactlyOnce();
  if (sink) def.traits = sink->sinkTraits();
  if (sink) def.parsed = std::make_shared<const SinkOptions>(sink->parseSink(options));
  def.options = std::move(options);
  def.sql = stmt.text;
  return def;
}

void ObjectDdl::createSink(EngineSession& s, const ast::CreateSink& stmt, ResultWriter& out) {
  // A dry-run session works on its own copy of the catalog and records nothing.
  Catalog& catalog = ctx_.catalogOf(s);
  SinkDef def = defineSink(s, stmt);
  StatementLock::Guard lock = ctx_.guardFor(s);
  lock.lock();
  if (!ctx_.changeCatalog(s, catalog, [&](Catalog& c) { return c.addSink(def, stmt.ifNotExists, stmt.namePos); })) {
    out.notice(fmt::format("sink \"{}\" already exists, skipping", stmt.name));
  }
  out.complete("CREATE SINK");
}

void ObjectDdl::createTable(EngineSession& s, const ast::CreateTable& stmt, ResultWriter& out) {
  // A dry-run session works on its own copy of the catalog and records nothing.
  Catalog& catalog = ctx_.catalogOf(s);
  const bool dry = s.shadow != nullptr;
  Options options = bindOptions(stmt.options);
  TableDef def;
  def.name = stmt.name;
  def.schema = bindTableSchema(stmt);
  auto rows = std::make_shared<std::vector<Row>>();
  if (options.has("connector")) {
    refuseStreamTable(stmt, options);  // Flink's spelling of a source or a sink
    std::string connector = toLower(options.getString("connector"));
    const Connector& table =
        ConnectorRegistry::builtin().require(connector, ConnectorRole::Table, options, stmt.pos);
    if (!s.replay) ctx_.privileges->checkOptions(s.user, connector, options);
    table.validateTable(options, stmt.pos);
    *rows = table.loadTable(def.schema, options, stmt.pos);
  }
  def.rows = std::move(rows);
  def.options = std::move(options);
  def.sql = stmt.text;
  size_t n = def.rows->size();
  StatementLock::Guard lock = ctx_.guardFor(s);
  lock.lock();
  // A new table has no INSERTs yet: none of a dropped table of its name count.
  auto inserts = ctx_.tableInserts;
  inserts.erase(toLower(stmt.name));
  CatalogChange change;
  change.inserts = &inserts;
  if (!ctx_.changeCatalog(s, catalog, [&](Catalog& c) { return c.addTable(def, stmt.ifNotExists, stmt.namePos); },
                          change)) {
    out.notice(fmt::format("table \"{}\" already exists, skipping", stmt.name));
  } else {
    if (!dry) ctx_.tableInserts = std::move(inserts);
    if (n > 0) out.notice(fmt::format("loaded {} rows into table \"{}\"", n, stmt.name));
  }
  out.complete("CREATE TABLE");
}

void ObjectDdl::insert(EngineSession& s, const ast::Insert& stmt, ResultWriter& out) {
  // A dry-run session works on its own copy of the catalog and records nothing.
  Catalog& catalog = ctx_.catalogOf(s);
  const bool dry = s.shadow != nullptr;
  Catalog::SourcePtr source;
  std::optional<Catalog> snapshot;
  {
    StatementLock::Guard lock = ctx_.guardFor(s);
    lock.lock();
    if ((source = catalog.findSource(stmt.table))) snapshot.emplace(catalog);
  }
  if (source) {
    // Writes to the source's topic (server/insert_into.h) from a copy of the
    // catalog, holding no lock while the broker acknowledges; the same
    // rights as reading the source.
    ctx_.privileges->checkOptions(s.user, source->connector, source->options);
    InsertIntoSource target{*snapshot, *source, ctx_.options.embeddedBootstrap, dry, {}};
    // A bounded SELECT runs on the bounded-query engine (server/bounded_query.h).
    target.boundedRows = [&](const ast::Query& q) -> std::optional<std::vector<Row>> {
      const Catalog& tables = *snapshot;
      BoundedLookup lookup = [&tables](const std::string& name) {
        return boundedRelationOf(tables, name);
      };
      if (!isBoundedQuery(q, lookup)) return std::nullopt;
      PlanContext ctx = ctx_.planContext(s);
      ctx.catalog = &tables;
      PhysicalPlan plan = ctx_.planBounded(s, q, boundedPlanContext(std::move(ctx), lookup));
      std::optional<LiveQueryQuota::Hold> hold;
      if (!ctx_.privileges->isSuperuser(s.user)) {
        hold.emplace(ctx_.liveQuota->acquire(s.user, plan.slots()));
      }
      return collectBoundedRows(std::move(plan), q, ctx_.boundedRun(s, tables, lookup), out);
    };
    return insertIntoSource(target, stmt, out);
  }
  if (Catalog::SinkPtr sink = catalog.findSink(stmt.table)) throw insertIntoSinkError(stmt, *sink);
  if (stmt.query) {
    throw SqlError(sqlstate::kFeatureNotSupported, "INSERT INTO a table takes VALUES",
                   stmt.query->pos, "INSERT ... SELECT writes to a Kafka source's topic");
  }
  StatementLock::Guard lock = ctx_.guardFor(s);
  lock.lock();
  Catalog::TablePtr table = catalog.findTable(stmt.table);
  if (!table) {
    throw SqlError(sqlstate::kUndefinedTable,
                   fmt::format("relation \"{}\" does not exist", stmt.table), stmt.tablePos);
  }
  const Schema& schema = table->schema;
  // Map the listed columns (or all, in order) to schema positions.
  std::vector<int> targets;
  if (stmt.columns.empty()) {
    for (size_t i = 0; i < schema.size(); ++i) targets.push_back(static_cast<int>(i));
  } else {
    for (const auto& c : stmt.columns) {
      int idx = schema.find(c);
      if (idx < 0) {
        throw SqlError(sqlstate::kUndefinedColumn,
                       fmt::format("column \"{}\" of relation \"{}\" does not exist", c, stmt.table),
                       stmt.tablePos);
      }
      targets.push_back(idx);
    }
  }
  auto rows = std::make_shared<std::vector<Row>>(*table->rows);
  for (const auto& values : stmt.rows) {
    if (values.size() != targets.size()) {
      size_t pos = values.empty() ? stmt.pos : values.front()->pos;
      throw SqlError(sqlstate::kSyntaxError,
                     fmt::format("INSERT has {} values but {} target columns", values.size(),
                                 targets.size()),
                     pos);
    }
    Row row(schema.size());
    for (size_t i = 0; i < values.size(); ++i) {
      row[targets[i]] = evalConstant(*values[i], schema.columns[targets[i]].type);
    }
    rows->push_back(std::move(row));
  }
  auto inserts = ctx_.tableInserts;
  inserts[toLower(table->name)].push_back(stmt.text);
  CatalogChange change;
  change.inserts = &inserts;
  ctx_.changeCatalog(s, catalog, [&](Catalog& c) {
    c.setTableRows(table->name, rows);
    return true;
  }, change);
  if (!dry) ctx_.tableInserts = std::move(inserts);
  out.complete(fmt::format("INSERT 0 {}", stmt.rows.size()));
}

void ObjectDdl::createFunction(EngineSession& s, const ast::CreateFunction& stmt,
                               ResultWriter& out) {
  // Python code runs inside rtsqld with its rights on the machine (files,
  // network, processes): only a superuser may give the server such code, as
  // only a superuser may make it load a library.
  if (stmt.language == "python" && !s.replay && !ctx_.privileges->isSuperuser(s.user)) {
    throw SqlError(sqlstate::kInsufficientPrivilege,
                   fmt::format("permission denied to create Python functions: user \"{}\" is not a "
                               "superuser",
                               s.user),
                   stmt.languagePos,
                   "a Python function runs with rtsqld's own rights on the server's machine; a "
                   "superuser (the users file's first user or --superuser) may create one");
  }
  // A dry-run session works on its own copy of the catalog and records nothing.
  Catalog& catalog = ctx_.catalogOf(s);
  StatementLock::Guard lock = ctx_.guardFor(s);
  lock.lock();
  Catalog::FunctionPtr existing = catalog.findFunction(stmt.name);
  if (stmt.ifNotExists && existing) {
    out.notice(fmt::format("function {} already exists, skipping", stmt.name));
    out.complete("CREATE FUNCTION");
    return;
  }
  if (existing && stmt.orReplace && !s.replay) {
    ctx_.privileges->requireOwner(s.user, existing->owner,
                                  fmt::format("replace function {}", existing->name), stmt.namePos);
  }
  UserFunctionDef def = defineUserFunction(stmt, catalog);
  def.owner = ownerOf(s.user, existing, s.replay);
  ctx_.changeCatalog(s, catalog, [&](Catalog& c) {
    return c.addFunction(def, stmt.orReplace, stmt.ifNotExists, stmt.namePos);
  });
  out.complete("CREATE FUNCTION");
}

void ObjectDdl::createProcessor(EngineSession& s, const ast::CreateProcessor& stmt,
                                ResultWriter& out) {
  // A processor is Python code run inside rtsqld, as a Python function is:
  // only a superuser may create one.
  if (!s.replay && !ctx_.privileges->isSuperuser(s.user)) {
    throw SqlError(sqlstate::kInsufficientPrivilege,
                   fmt::format("permission denied to create processors: user \"{}\" is not a "
                               "superuser",
                               s.user),
                   stmt.languagePos,
                   "a processor runs with rtsqld's own rights on the server's machine; a "
                   "superuser (the users file's first user or --superuser) may create one");
  }
  Catalog& catalog = ctx_.catalogOf(s);
  StatementLock::Guard lock = ctx_.guardFor(s);
  lock.lock();
  Catalog::ProcessorPtr existing = catalog.findProcessor(stmt.name);
  if (stmt.ifNotExists && existing) {
    out.notice(fmt::format("processor {} already exists, skipping", stmt.name));
    out.complete("CREATE PROCESSOR");
    return;
  }
  if (existing && stmt.orReplace && !s.replay) {
    ctx_.privileges->requireOwner(s.user, existing->owner,
                                  fmt::format("replace processor {}", existing->name), stmt.namePos);
  }
  ProcessorDef def = defineProcessor(stmt);
  def.owner = ownerOf(s.user, existing, s.replay);
  ctx_.changeCatalog(s, catalog, [&](Catalog& c) {
    return c.addProcessor(def, stmt.orReplace, stmt.ifNotExists, stmt.namePos);
  });
  out.complete("CREATE PROCESSOR");
}

void ObjectDdl::drop(EngineSession& s, const ast::Drop& stmt, ResultWriter& out) {
  StatementLock::Guard lock = ctx_.guardFor(s);
  lock.lock();
  if (stmt.object == ast::ObjectKind::Flow) {
    // DROP MATERIALIZED VIEW drops a view, DROP FLOW any other flow.
    Catalog::FlowPtr f = ctx_.catalogOf(s).findFlow(stmt.name);
    if (stmt.materializedView && !f) {
      if (stmt.ifExists) {
        out.notice(fmt::format("materialized view \"{}\" does not exist, skipping", stmt.name));
        return out.complete("DROP MATERIALIZED VIEW");
      }
      throw SqlError(sqlstate::kUndefinedTable,
                     fmt::format("materialized view \"{}\" does not exist", stmt.name),
                     stmt.namePos, "SHOW MATERIALIZED VIEWS lists them");
    }
    if (f && f->materializedView != stmt.materializedView) {
      throw SqlError(sqlstate::kWrongObjectType,
                     fmt::format("\"{}\" is {}", stmt.name,
                                 f->materializedView ? "a materialized view"
                                                     : "a flow, not a materialized view"),
                     stmt.namePos,
                     (f->materializedView ? "DROP MATERIALIZED VIEW " : "DROP FLOW ") + stmt.name);
    }
  }
  ctx_.requireOwnerOf(s, stmt.object, stmt.name, "drop", stmt.namePos);
  if (!s.shadow && stmt.object == ast::ObjectKind::Flow) {
    ctx_.flows.requireNotStopping(stmt.name, stmt.namePos, "DROP FLOW");
  }
  // The catalog file is written as the drop leaves it before anything is
  // dropped: a drop the file cannot record changes nothing and answers only
  // the error. A dry-run session drops from its own copy of the catalog.
  bool dropped = ctx_.changeCatalog(s, ctx_.catalogOf(s), [&](Catalog& c) {
    switch (stmt.object) {
      case ast::ObjectKind::Flow:
        c.requireNoReaders(stmt.name, stmt.namePos);
        return c.dropFlow(stmt.name, stmt.ifExists, stmt.namePos);
      case ast::ObjectKind::Source: return c.dropSource(stmt.name, stmt.ifExists, stmt.namePos);
      case ast::ObjectKind::Sink: return c.dropSink(stmt.name, stmt.ifExists, stmt.namePos);
      case ast::ObjectKind::Table: return c.dropTable(stmt.name, stmt.ifExists, stmt.namePos);
      case ast::ObjectKind::Function:
        return c.dropFunction(stmt.name, stmt.ifExists, stmt.namePos);
      case ast::ObjectKind::Processor:
        return c.dropProcessor(stmt.name, stmt.ifExists, stmt.namePos);
    }
    return false;
  });
  // What the server keeps beside the catalog goes with the object.
  if (dropped && !s.shadow && stmt.object == ast::ObjectKind::Flow) {
    std::unique_ptr<FlowRuntime> rt = ctx_.flows.remove(stmt.name);
    // In a cluster, the node that ran the flow (or would run it) deletes its
    // state copy, once the flow is stopped: nothing writes it after that.
    // When no node runs it now, the next node that holds its slot does.
    const bool hasCopy =
        rt && !ctx_.flows.placement().spreads(rt.get()) && rt->plan().keepsState();
    const bool ranHere = hasCopy && ctx_.flows.runsHere(stmt.name, rt.get());
    std::vector<ExchangeSpec> exchange;
    if (rt) {
      for (const StageSpec& stage : rt->plan().stages) {
        if (stage.output.kind == StageOutput::Kind::Exchange)
          exchange.push_back(stage.output.exchange);
      }
    }
    // Stopped, and its state store closed, before its files go; waited for
    // without the DDL lock (a task may take long to stop: docs/udf.md), while
    // the name stays taken.
    {
      FlowRegistry::Stopping stopping(ctx_.flows, stmt.name);
      lock.unlock();
      rt.reset();
      lock.lock();
    }
    ctx_.flows.dropShards(stmt.name);
    std::error_code ec;
    std::filesystem::remove_all(ctx_.flows.flowDir(stmt.name), ec);
    if (hasCopy) ctx_.flows.dropStateCopy(stmt.name, ranHere);
    // And a sharded flow's exchange topics, once (by the node of copy 0).
    if (ranHere && ctx_.flows.stateCopyFor(stmt.name)) {
      ctx_.flows.dropExchangeTopics(stmt.name, exchange);
    }
  } else if (dropped && !s.shadow && stmt.object == ast::ObjectKind::Table) {
    ctx_.tableInserts.erase(toLower(stmt.name));
  }
  switch (stmt.object) {
    case ast::ObjectKind::Flow:
      if (stmt.materializedView) {
        if (!s.shadow) ctx_.views->forget(stmt.name);
        return out.complete("DROP MATERIALIZED VIEW");
      }
      return out.complete("DROP FLOW");
    case ast::ObjectKind::Source: return out.complete("DROP SOURCE");
    case ast::ObjectKind::Sink: return out.complete("DROP SINK");
    case ast::ObjectKind::Table: return out.complete("DROP TABLE");
    case ast::ObjectKind::Function:
      return out.complete("DROP FUNCTION");
    case ast::ObjectKind::Processor:
      return out.complete("DROP PROCESSOR");
  }
}

}  // namespace rtsql
