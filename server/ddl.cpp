// CREATE / DROP / INSERT and the lifecycle of flows.
#include <fmt/format.h>

#include <filesystem>
#include <functional>
#include <random>

#include "common/clock.h"
#include "common/log.h"
#include "common/schema.h"
#include "connectors/provider.h"
#include "connectors/registry.h"
#include "planner/processor.h"
#include "planner/shard_plan.h"
#include "planner/user_function.h"
#include "server/engine.h"
#include "server/privileges.h"

namespace rtsql {

namespace {

void requireFlow(const Catalog& catalog, const ast::FlowCommand& stmt) {
  if (!catalog.findFlow(stmt.name)) {
    throw SqlError(sqlstate::kUndefinedObject, fmt::format("flow \"{}\" does not exist", stmt.name),
                   stmt.namePos);
  }
}

// The owner of an object made by `user`'s statement: at a replay, the
// session's user is the recorded owner; CREATE OR REPLACE keeps the owner of
// what it replaces, as in PostgreSQL.
template <typename Def>
std::string ownerOf(const std::string& user, const std::shared_ptr<const Def>& replaced,
                    bool replaying) {
  return replaced && !replaying ? replaced->owner : user;
}

}  // namespace

void Engine::requireOwnerOf(const EngineSession& s, ast::ObjectKind kind, const std::string& name,
                            std::string_view verb, size_t pos) const {
  // A replay applies what was checked where the statement first ran.
  if (s.replay) return;
  const Catalog& catalog = catalogOf(s);
  std::string owner, declared;
  auto have = [&](const auto& def) {
    if (!def) return false;
    owner = def->owner;
    declared = def->name;
    return true;
  };
  bool found = false;
  const char* what = "";
  switch (kind) {
    case ast::ObjectKind::Flow:
      found = have(catalog.findFlow(name));
      what = "flow";
      break;
    case ast::ObjectKind::Function:
      found = have(catalog.findFunction(name));
      what = "function";
      break;
    case ast::ObjectKind::Processor:
      found = have(catalog.findProcessor(name));
      what = "processor";
      break;
    default: return;  // sources, sinks and tables have no owner
  }
  // A missing object is the statement's own error (or IF EXISTS).
  if (!found) return;
  privileges_->requireOwner(s.user, owner, fmt::format("{} {} {}", verb, what, declared), pos);
}

void Engine::createSource(EngineSession& s, const ast::CreateSource& stmt, ResultWriter& out) {
  // A dry-run session works on its own copy of the catalog and records nothing.
  Catalog& catalog = catalogOf(s);
  Options options = bindOptions(stmt.options);
  std::string connector = toLower(options.require("connector", stmt.pos).value);
  // A restored definition was checked when it was created; what it names
  // outside (a directory, a broker) may be away now, and the flows using it
  // then report that while they are retried.
  if (!s.replay) {
    privileges_->checkOptions(s.user, connector, options);
    validateSourceOptions(connector, options, stmt.pos);
    connectors_.checkCreate(connector, options);
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
  def.options = std::move(options);
  def.sql = stmt.text;
  StatementLock::Guard lock = guardFor(s);
  lock.lock();
  if (!changeCatalog(s, catalog, [&](Catalog& c) { return c.addSource(def, stmt.ifNotExists, stmt.namePos); })) {
    out.notice(fmt::format("source \"{}\" already exists, skipping", stmt.name));
  }
  out.complete("CREATE SOURCE");
}

void Engine::createSink(EngineSession& s, const ast::CreateSink& stmt, ResultWriter& out) {
  // A dry-run session works on its own copy of the catalog and records nothing.
  Catalog& catalog = catalogOf(s);
  Options options = bindOptions(stmt.options);
  std::string connector = toLower(options.require("connector", stmt.pos).value);
  if (!s.replay) {
    privileges_->checkOptions(s.user, connector, options);
    validateSinkOptions(connector, options, stmt.pos);
    connectors_.checkCreate(connector, options);
  }
  SinkDef def;
  def.name = stmt.name;
  def.connector = connector;
  def.format = toLower(options.getString("format", "json"));
  const Connector* sink = ConnectorRegistry::builtin().find(connector);
  def.exactlyOnce = sink && sink->exactlyOnce();
  def.options = std::move(options);
  def.sql = stmt.text;
  StatementLock::Guard lock = guardFor(s);
  lock.lock();
  if (!changeCatalog(s, catalog, [&](Catalog& c) { return c.addSink(def, stmt.ifNotExists, stmt.namePos); })) {
    out.notice(fmt::format("sink \"{}\" already exists, skipping", stmt.name));
  }
  out.complete("CREATE SINK");
}

void Engine::createTable(EngineSession& s, const ast::CreateTable& stmt, ResultWriter& out) {
  // A dry-run session works on its own copy of the catalog and records nothing.
  Catalog& catalog = catalogOf(s);
  const bool dry = s.shadow != nullptr;
  Options options = bindOptions(stmt.options);
  TableDef def;
  def.name = stmt.name;
  def.schema = bindTableSchema(stmt);
  auto rows = std::make_shared<std::vector<Row>>();
  if (options.has("connector")) {
    std::string connector = toLower(options.getString("connector"));
    const Connector& table =
        ConnectorRegistry::builtin().require(connector, ConnectorRole::Table, options, stmt.pos);
    if (!s.replay) privileges_->checkOptions(s.user, connector, options);
    table.validateTable(options, stmt.pos);
    *rows = table.loadTable(def.schema, options, stmt.pos);
  }
  def.rows = std::move(rows);
  def.options = std::move(options);
  def.sql = stmt.text;
  size_t n = def.rows->size();
  StatementLock::Guard lock = guardFor(s);
  lock.lock();
  // A new table has no INSERTs yet: none of a dropped table of its name count.
  auto inserts = tableInserts_;
  inserts.erase(toLower(stmt.name));
  CatalogChange change;
  change.inserts = &inserts;
  if (!changeCatalog(s, catalog, [&](Catalog& c) { return c.addTable(def, stmt.ifNotExists, stmt.namePos); },
                     change)) {
    out.notice(fmt::format("table \"{}\" already exists, skipping", stmt.name));
  } else {
    if (!dry) tableInserts_ = std::move(inserts);
    if (n > 0) out.notice(fmt::format("loaded {} rows into table \"{}\"", n, stmt.name));
  }
  out.complete("CREATE TABLE");
}

void Engine::insert(EngineSession& s, const ast::Insert& stmt, ResultWriter& out) {
  // A dry-run session works on its own copy of the catalog and records nothing.
  Catalog& catalog = catalogOf(s);
  const bool dry = s.shadow != nullptr;
  StatementLock::Guard lock = guardFor(s);
  lock.lock();
  Catalog::TablePtr table = catalog.findTable(stmt.table);
  if (!table) {
    if (catalog.findSource(stmt.table)) {
      throw SqlError(sqlstate::kFeatureNotSupported,
                     fmt::format("cannot INSERT into source \"{}\"", stmt.table), stmt.tablePos,
                     "sources are read from Kafka; produce records to the topic instead");
    }
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
  auto inserts = tableInserts_;
  inserts[toLower(table->name)].push_back(stmt.text);
  CatalogChange change;
  change.inserts = &inserts;
  changeCatalog(s, catalog, [&](Catalog& c) {
    c.setTableRows(table->name, rows);
    return true;
  }, change);
  if (!dry) tableInserts_ = std::move(inserts);
  out.complete(fmt::format("INSERT 0 {}", stmt.rows.size()));
}

void Engine::createFlow(EngineSession& s, const ast::CreateFlow& stmt, ResultWriter& out) {
  StatementLock::Guard lock = guardFor(s);
  lock.lock();
  if (!s.shadow) flows_.requireNotStopping(stmt.name, stmt.namePos, "CREATE FLOW");
  if (catalogOf(s).findFlow(stmt.name) && stmt.ifNotExists) {
    out.notice(fmt::format("flow \"{}\" already exists, skipping", stmt.name));
    out.complete("CREATE FLOW");
    return;
  }
  if (splitShardFlowName(stmt.name)) {
    throw SqlError(sqlstate::kReservedName,
                   fmt::format("flow name \"{}\" ends in '#' and a number, which names a copy of "
                               "a sharded flow",
                               stmt.name),
                   stmt.namePos)
        .withHint("choose another name");
  }
  PhysicalPlan plan = planFlow(stmt, planContext(s));
  for (int shard = 1; shard < plan.shards; ++shard) {
    // A flow of an earlier version may bear a copy's name.
    const std::string copy = shardFlowName(stmt.name, shard);
    if (catalogOf(s).findFlow(copy)) {
      throw SqlError(sqlstate::kDuplicateObject,
                     fmt::format("flow \"{}\" exists, and would be copy {} of this flow", copy,
                                 shard),
                     stmt.namePos)
          .withHint("drop it, or give this flow another name");
    }
  }
  flows_.placement().checkShards(plan, stmt.namePos);
  if (s.shadow) {
    // Planned and checked against the free slots; nothing starts.
    if (plan.slots() > slots_.total() - slots_.used()) {
      throw SqlError(sqlstate::kInsufficientResources,
                     fmt::format("flow \"{}\" needs {} task slots but only {} of {} are free",
                                 stmt.name, plan.slots(), slots_.total() - slots_.used(),
                                 slots_.total()),
                     stmt.namePos);
    }
    FlowDef def;
    def.name = stmt.name;
    def.sink = stmt.sink;
    def.sql = stmt.text;
    def.queryText = stmt.queryText;
    def.functions = userFunctionsCalled(*stmt.query, *s.shadow);
    def.processors = processorsUsed(*stmt.query);
    def.owner = s.user;
    s.shadow->addFlow(std::move(def), false, stmt.namePos);
    out.complete("CREATE FLOW");
    return;
  }
  FlowDef def;
  def.name = stmt.name;
  def.sink = stmt.sink;
  def.checkpointIntervalMicros = plan.checkpointIntervalMicros;
  def.options = plan.flowOptions;
  def.sql = stmt.text;
  def.queryText = stmt.queryText;
  def.functions = userFunctionsCalled(*stmt.query, catalog_);
  def.processors = processorsUsed(*stmt.query);
  def.owner = s.user;
  std::vector<std::string> inputs = flowInputs(plan, stmt.sink);
  // The name must be free before anything starts.
  Catalog next(catalog_);
  next.addFlow(def, false, stmt.namePos);
  FlowControl control;
  control.settings = settingsOf(s);
  if (plan.shards > 1) {
    // A sharded flow's exchange topics are this flow's own (planner/shard_plan.h).
    std::random_device rd;
    plan.exchangeId = fmt::format(
        "{:08x}", (static_cast<uint64_t>(rd()) << 16) ^ rd() ^ static_cast<uint64_t>(nowMicros()));
    // Each copy's own rows stay in process (a flow made before this was
    // recorded keeps sending them through the topic).
    plan.exchangeLocal = true;
    std::erase_if(control.settings, [](const auto& kv) {
      return kv.first == kExchangeIdSetting || kv.first == kExchangeLocalSetting;
    });
    control.settings.emplace_back(kExchangeIdSetting, plan.exchangeId);
    control.settings.emplace_back(kExchangeLocalSetting, "1");
  }
  // In a cluster, the slots of a sharded flow's copies, or of a spread
  // flow's partitions, chosen now and recorded with the flow.
  std::erase_if(control.settings, [](const auto& kv) { return kv.first == kClusterSlotsSetting; });
  plan.clusterSlots = flows_.placement().chooseSlots(stmt.name, plan);
  if (!plan.clusterSlots.empty())
    control.settings.emplace_back(kClusterSlotsSetting, formatClusterSlots(plan.clusterSlots));

  // A new flow starts with empty state and no checkpoints: whatever a dropped
  // flow of the same name left behind is removed (in a cluster, its state
  // copy is marked empty too, before any node may start the new flow).
  // A sharded flow's copies too (planner/shard_plan.h).
  std::error_code ec;
  for (int shard = 0; shard < plan.shards; ++shard) {
    const std::string name = shardFlowName(stmt.name, shard);
    if (auto copy = flows_.stateCopyFor(name); copy && plan.keepsState()) copy->clear();
    std::filesystem::remove_all(flows_.flowDir(name), ec);
  }
  auto runtime = flows_.makeRuntime(std::move(plan), stmt.name);
  try {
    // In a cluster, the node that holds the flow's slot starts it when it
    // reads the new flow (this one, when it holds it).
    if (flows_.runsHere(stmt.name, runtime.get())) flows_.startRuntime(stmt.name, *runtime);
  } catch (SqlError& e) {
    // Nothing half-starts: the flow is forgotten when it cannot run. A broker
    // without real transactions refuses exactly-once: point at that option.
    if (e.position() == SqlError::npos && e.sqlstate() == sqlstate::kFeatureNotSupported) {
      for (const auto& o : stmt.options) {
        if (iequals(o.key, "delivery")) e.setPosition(o.valuePos);
      }
    }
    throw;
  }
  // The catalog file records the flow before the server shows it; a flow the
  // file cannot record is stopped and forgotten.
  try {
    CatalogChange change;
    change.catalog = &next;
    change.flow = toLower(stmt.name);
    change.control = &control;
    persistCatalog(change);
  } catch (...) {
    runtime.reset();  // stops it and closes its state store before its files go
    std::filesystem::remove_all(flows_.flowDir(stmt.name), ec);
    throw;
  }
  catalog_.addFlow(std::move(def), false, stmt.namePos);
  catalog_.setFlowInputs(stmt.name, std::move(inputs));
  control.runningSinceMicros = monotonicMicros();
  flows_.add(stmt.name, std::move(runtime), std::move(control));
  // A sharded flow's other copies: each started by the node that holds its
  // slot (the supervisor, within its round).
  flows_.syncShards(stmt.name);
  out.complete("CREATE FLOW");
}

void Engine::createFunction(EngineSession& s, const ast::CreateFunction& stmt, ResultWriter& out) {
  // Python code runs inside rtsqld with its rights on the machine (files,
  // network, processes): only a superuser may give the server such code, as
  // only a superuser may make it load a library.
  if (stmt.language == "python" && !s.replay && !privileges_->isSuperuser(s.user)) {
    throw SqlError(sqlstate::kInsufficientPrivilege,
                   fmt::format("permission denied to create Python functions: user \"{}\" is not a "
                               "superuser",
                               s.user),
                   stmt.languagePos,
                   "a Python function runs with rtsqld's own rights on the server's machine; a "
                   "superuser (the users file's first user or --superuser) may create one");
  }
  // A dry-run session works on its own copy of the catalog and records nothing.
  Catalog& catalog = catalogOf(s);
  StatementLock::Guard lock = guardFor(s);
  lock.lock();
  Catalog::FunctionPtr existing = catalog.findFunction(stmt.name);
  if (stmt.ifNotExists && existing) {
    out.notice(fmt::format("function {} already exists, skipping", stmt.name));
    out.complete("CREATE FUNCTION");
    return;
  }
  if (existing && stmt.orReplace && !s.replay) {
    privileges_->requireOwner(s.user, existing->owner,
                              fmt::format("replace function {}", existing->name), stmt.namePos);
  }
  UserFunctionDef def = defineUserFunction(stmt, catalog);
  def.owner = ownerOf(s.user, existing, s.replay);
  changeCatalog(s, catalog, [&](Catalog& c) {
    return c.addFunction(def, stmt.orReplace, stmt.ifNotExists, stmt.namePos);
  });
  out.complete("CREATE FUNCTION");
}

void Engine::createProcessor(EngineSession& s, const ast::CreateProcessor& stmt,
                             ResultWriter& out) {
  // A processor is Python code run inside rtsqld, as a Python function is:
  // only a superuser may create one.
  if (!s.replay && !privileges_->isSuperuser(s.user)) {
    throw SqlError(sqlstate::kInsufficientPrivilege,
                   fmt::format("permission denied to create processors: user \"{}\" is not a "
                               "superuser",
                               s.user),
                   stmt.languagePos,
                   "a processor runs with rtsqld's own rights on the server's machine; a "
                   "superuser (the users file's first user or --superuser) may create one");
  }
  Catalog& catalog = catalogOf(s);
  StatementLock::Guard lock = guardFor(s);
  lock.lock();
  Catalog::ProcessorPtr existing = catalog.findProcessor(stmt.name);
  if (stmt.ifNotExists && existing) {
    out.notice(fmt::format("processor {} already exists, skipping", stmt.name));
    out.complete("CREATE PROCESSOR");
    return;
  }
  if (existing && stmt.orReplace && !s.replay) {
    privileges_->requireOwner(s.user, existing->owner,
                              fmt::format("replace processor {}", existing->name), stmt.namePos);
  }
  ProcessorDef def = defineProcessor(stmt);
  def.owner = ownerOf(s.user, existing, s.replay);
  changeCatalog(s, catalog, [&](Catalog& c) {
    return c.addProcessor(def, stmt.orReplace, stmt.ifNotExists, stmt.namePos);
  });
  out.complete("CREATE PROCESSOR");
}

void Engine::drop(EngineSession& s, const ast::Drop& stmt, ResultWriter& out) {
  StatementLock::Guard lock = guardFor(s);
  lock.lock();
  requireOwnerOf(s, stmt.object, stmt.name, "drop", stmt.namePos);
  if (!s.shadow && stmt.object == ast::ObjectKind::Flow) {
    flows_.requireNotStopping(stmt.name, stmt.namePos, "DROP FLOW");
  }
  // The catalog file is written as the drop leaves it before anything is
  // dropped: a drop the file cannot record changes nothing and answers only
  // the error. A dry-run session drops from its own copy of the catalog.
  bool dropped = changeCatalog(s, catalogOf(s), [&](Catalog& c) {
    switch (stmt.object) {
      case ast::ObjectKind::Flow: return c.dropFlow(stmt.name, stmt.ifExists, stmt.namePos);
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
    std::unique_ptr<FlowRuntime> rt = flows_.remove(stmt.name);
    // In a cluster, the node that ran the flow (or would run it) deletes its
    // state copy, once the flow is stopped: nothing writes it after that.
    const bool dropCopy = rt && !flows_.placement().spreads(rt.get()) &&
                          rt->plan().keepsState() &&
                          flows_.runsHere(stmt.name, rt.get());
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
      FlowRegistry::Stopping stopping(flows_, stmt.name);
      lock.unlock();
      rt.reset();
      lock.lock();
    }
    flows_.dropShards(stmt.name);
    std::error_code ec;
    std::filesystem::remove_all(flows_.flowDir(stmt.name), ec);
    if (auto copy = dropCopy ? flows_.stateCopyFor(stmt.name) : nullptr) {
      try {
        copy->destroy();
      } catch (const SqlError& e) {
        logLine(fmt::format("flow \"{}\" dropped; its state copy stays: {}", stmt.name,
                            e.message()));
      }
      // And a sharded flow's exchange topics, once (by the node of copy 0).
      flows_.dropExchangeTopics(stmt.name, exchange);
    }
  } else if (dropped && !s.shadow && stmt.object == ast::ObjectKind::Table) {
    tableInserts_.erase(toLower(stmt.name));
  }
  switch (stmt.object) {
    case ast::ObjectKind::Flow: return out.complete("DROP FLOW");
    case ast::ObjectKind::Source: return out.complete("DROP SOURCE");
    case ast::ObjectKind::Sink: return out.complete("DROP SINK");
    case ast::ObjectKind::Table: return out.complete("DROP TABLE");
    case ast::ObjectKind::Function:
      return out.complete("DROP FUNCTION");
    case ast::ObjectKind::Processor:
      return out.complete("DROP PROCESSOR");
  }
}

void Engine::stopFlow(EngineSession& s, const ast::FlowCommand& stmt, ResultWriter& out) {
  if (s.shadow) {
    // A dry run checks the flow is there and whose it is, in its own catalog.
    requireOwnerOf(s, ast::ObjectKind::Flow, stmt.name, "stop", stmt.namePos);
    requireFlow(*s.shadow, stmt);
    out.complete("STOP FLOW");
    return;
  }
  StatementLock::Guard lock = guardFor(s);
  lock.lock();
  // Under the lock: the catalog's flows change with other statements.
  requireOwnerOf(s, ast::ObjectKind::Flow, stmt.name, "stop", stmt.namePos);
  FlowRuntime* rt = flows_.findRuntime(stmt.name);
  requireFlow(catalog_, stmt);
  flows_.requireNotStopping(stmt.name, stmt.namePos, "STOP FLOW");
  // A flow another node of the cluster runs is stopped there, when that node
  // reads the change.
  if (flows_.runsHere(stmt.name, rt) && (!rt || rt->state() == FlowState::Stopped)) {
    out.notice(fmt::format("flow \"{}\" is already stopped", stmt.name));
  }
  // Recorded first: a flow the file still says runs would start again at the
  // next restart.
  persistWantRunning(stmt.name, false);
  flows_.setWantRunning(stmt.name, false);
  flows_.stopShards(stmt.name);
  if (rt) {
    // Waited for without the DDL lock: a task may take long to stop (a
    // Python call is interrupted only after a grace, one in C code that never
    // returns not at all), and other statements go on meanwhile. The flow
    // stays in stoppingFlows_, so no statement drops its runtime or starts
    // it again until the stop is over.
    FlowRegistry::Stopping stopping(flows_, stmt.name);
    lock.unlock();
    rt->stop();
  }
  out.complete("STOP FLOW");
}

void Engine::startFlow(EngineSession& s, const ast::FlowCommand& stmt, ResultWriter& out) {
  if (s.shadow) {
    // A dry run checks the flow is there and whose it is, in its own catalog.
    requireOwnerOf(s, ast::ObjectKind::Flow, stmt.name, "start", stmt.namePos);
    requireFlow(*s.shadow, stmt);
    out.complete("START FLOW");
    return;
  }
  StatementLock::Guard lock = guardFor(s);
  lock.lock();
  // Under the lock: the catalog's flows change with other statements.
  requireOwnerOf(s, ast::ObjectKind::Flow, stmt.name, "start", stmt.namePos);
  FlowRuntime* rt = flows_.findRuntime(stmt.name);
  requireFlow(catalog_, stmt);
  flows_.requireNotStopping(stmt.name, stmt.namePos, "START FLOW");
  if (!flows_.runsHere(stmt.name, rt)) {
    // Another node of the cluster runs it: the catalog says so, and that node
    // starts it when it reads the change.
    if (stmt.resetState) {
      throw SqlError(sqlstate::kFeatureNotSupported,
                     fmt::format("flow \"{}\" runs on another node of the cluster", stmt.name),
                     stmt.namePos, "run START FLOW ... RESET STATE on the node that runs it (SHOW FLOWS names it)");
    }
    persistWantRunning(stmt.name, true);
    flows_.setWantRunning(stmt.name, true);
    flows_.startShardsHere(stmt.name);  // a sharded flow's copies that run here
    out.complete("START FLOW");
    return;
  }
  // A START that fails changes nothing: a stopped flow stays stopped, and one
  // the supervisor is bringing back stays in its hands.
  if (!rt) rt = planRestoredFlow(stmt.name);
  // RESET STATE: the flow starts again as a new one would, with empty state
  // and every source at its startingOffsets.
  if (stmt.resetState && rt->plan().shards > 1) {
    throw SqlError(sqlstate::kFeatureNotSupported,
                   fmt::format("flow \"{}\" is sharded, and its copies' exchange topics hold the "
                               "rows they exchanged before: a reset would take them in again",
                               stmt.name),
                   stmt.namePos, "drop the flow and create it again to start it from empty state");
  }
  if (stmt.resetState) rt->resetState();
  const bool wasRunning = rt->state() == FlowState::Running;
  if (!wasRunning) {
    rt->stop();  // a failed run leaves threads and slots to collect
    flows_.startRuntime(stmt.name, *rt);
  }
  try {
    persistWantRunning(stmt.name, true);
  } catch (...) {
    // The file still says what it said: the flow runs only if it ran before.
    if (!wasRunning) rt->stop();
    throw;
  }
  if (wasRunning) out.notice(fmt::format("flow \"{}\" is already running", stmt.name));
  flows_.setWantRunning(stmt.name, true);
  flows_.startShardsHere(stmt.name);
  flows_.updateControl(stmt.name, [](FlowControl& c) { c.runningSinceMicros = monotonicMicros(); });
  out.complete("START FLOW");
}

}  // namespace rtsql
