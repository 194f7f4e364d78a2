// The EngineContext (engine_context.h): what the statement families share,
// built once, and the steps every family takes alike.
#include "server/engine_context.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "common/pg_session.h"
#include "connectors/format/codec.h"
#include "connectors/kafka/tap.h"
#include "planner/processor.h"
#include "planner/user_function.h"
#include "server/cluster/node.h"
#include "server/live_query.h"
#include "server/live_query_quota.h"
#include "server/privileges.h"
#include "server/query_slots.h"
#include "server/session_settings.h"
#include "server/users.h"
#include "server/views/view_inputs.h"
#include "server/views/view_reads.h"
#include "server/views/view_remote.h"

namespace rtsql {

EngineContext::EngineContext(EngineOptions engineOptions, ConnectorProvider& serverConnectors)
    : options(std::move(engineOptions)),
      viewInputs(std::make_unique<ViewInputProvider>(
          serverConnectors,
          [this](const std::string& view) {
            return (std::filesystem::path(flows.flowDir(view)) / "checkpoints").string();
          })),
      connectors(*viewInputs),
      slots(options.slots),
      liveTaps(std::make_unique<KafkaTaps>(options.embeddedBootstrap)),
      privileges(std::make_unique<Privileges>(
          options.users, options.superusers, options.filesDirs,
          std::vector<std::string>{options.dataDir,
                                   options.users ? options.users->path() : std::string()})),
      liveQuota(std::make_unique<LiveQueryQuota>(options.maxLiveQuerySlotsPerUser > 0
                                                     ? options.maxLiveQuerySlotsPerUser
                                                     : options.slots / 2)),
      store(makeCatalogStore(options.cluster, options.dataDir)),
      flows(options.dataDir, connectors, slots, catalog, statements,
            makePlacement(options.cluster, options.dataDir)),
      views(std::make_unique<ViewReads>(flows)) {}

EngineContext::~EngineContext() = default;

PlanContext EngineContext::planContext(const EngineSession& s) const {
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
    return connectors.sourcePartitions(scan);
  };
  return ctx;
}

BoundedLookup EngineContext::boundedLookup(const EngineSession& s, ResultWriter* out,
                                           ViewEpochs* epochs,
                                           const ast::SelectStatement* select,
                                           bool holderFailed) const {
  const Catalog* current = &catalogOf(s);
  ViewReads* reads = views.get();
  // A session forwarded here by another node never sends a read on again.
  const bool sends = select && out && !s.shadow && s.forwardedBy.empty();
  // Why a view is read from its standby copy is told once: for a query of
  // one view only, the SELECT told it already (server/select_statement.cpp).
  ResultWriter* tells = sends && !ViewReads::soleViewOf(*select->query, *current) ? out : nullptr;
  auto viewOf = [current, reads, out, tells, epochs, select, sends, holderFailed, user = s.user,
                 database = s.database,
                 settings = s.settings](const std::string& name)
      -> std::shared_ptr<const BoundedRelation> {
    Catalog::FlowPtr f = current->findFlow(name);
    if (!f || !f->materializedView) return nullptr;
    std::optional<uint64_t> epoch;
    std::shared_ptr<const BoundedRelation> rel;
    // The standby copy kept here, where the session chose it or the holder
    // cannot answer (server/views/view_reads.h).
    ViewRead mode = holderFailed ? ViewRead::Standby
                    : out        ? reads->readOf(f->name, settings, SqlError::npos, tells)
                                 : viewReadOf(settings);
    std::optional<ViewReads::Forward> to =
        sends && mode != ViewRead::Standby ? reads->forwardTo(f->name) : std::nullopt;
    std::optional<ViewLayout> layout = to ? reads->layout(f->name) : std::nullopt;
    if (to && layout) {
      const RemoteViewScan scan =
          remoteViewScan(*select->query, select->text, select->pos, f->name, layout->schema);
      const ForwardedRead read{to->route, to->holder, f->name, user, database, settings,
                               scan.text, scan.pos,  false};
      try {
        rel = readRemoteView(read, scan, layout->schema, *out, epoch);
      } catch (const SqlError& e) {
        // Nothing of a remote part reaches the client but its notices.
        if (!reads->standbyAfter(e, f->name, settings)) throw;
        out->notice(e.what());
        mode = ViewRead::Standby;
      }
    }
    if (!rel) rel = reads->relation(f->name, out, &epoch, mode);
    if (epochs && out) epochs->emplace_back(f->name, epoch);
    return rel;
  };
  // The statement's PgSession (installed by execute and describe) is kept by
  // the lookup: the run opens its relations on other threads.
  return boundedLookupOf(*current, currentPgSession(), viewOf);
}

PhysicalPlan EngineContext::planBounded(const EngineSession& s, const ast::Query& query,
                                        PlanContext ctx) const {
  return planFitted(s, std::move(ctx),
                    [&](const PlanContext& c) { return planBoundedQuery(query, c); });
}

PhysicalPlan EngineContext::planLive(const EngineSession& s, const ast::Query& query) const {
  return planFitted(s, planContext(s), [&](const PlanContext& c) { return planQuery(query, c); });
}

PhysicalPlan EngineContext::planFitted(
    const EngineSession& s, PlanContext ctx,
    const std::function<PhysicalPlan(const PlanContext&)>& plan) const {
  PhysicalPlan planned = plan(ctx);
  if (ctx.session.has("shuffle.partitions")) return planned;
  int free = std::max(0, slots.total() - slots.used());
  if (!privileges->isSuperuser(s.user))
    free = std::min(free, std::max(0, liveQuota->perUser() - liveQuota->held(s.user)));
  const std::optional<int> fits = partitionsThatFit(querySlotsOf(planned), free);
  if (!fits) return planned;
  ctx.session.set("shuffle.partitions", std::to_string(*fits));
  return plan(ctx);
}

BoundedRun EngineContext::boundedRun(const EngineSession& s, const Catalog& over,
                                     BoundedLookup lookup) {
  BoundedRun run;
  run.connectors = &connectors;
  run.slots = &slots;
  run.lookup = std::move(lookup);
  run.catalog = &over;
  run.stateDir = (std::filesystem::path(options.dataDir) / "bounded").string();
  run.embeddedBootstrap = options.embeddedBootstrap;
  run.maxRows = s.settings.getInt("rtsql.bounded_max_rows", 1000000, 1, kBoundedMaxRowsLimit);
  run.maxBytes = s.settings.getInt("rtsql.bounded_max_bytes", 1 << 30, 1024, kBoundedMaxBytesLimit);
  return run;
}

void EngineContext::requireOwnerOf(const EngineSession& s, ast::ObjectKind kind,
                                   const std::string& name, std::string_view verb,
                                   size_t pos) const {
  // A replay applies what was checked where the statement first ran.
  if (s.replay) return;
  const Catalog& current = catalogOf(s);
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
      found = have(current.findFlow(name));
      what = "flow";
      break;
    case ast::ObjectKind::Function:
      found = have(current.findFunction(name));
      what = "function";
      break;
    case ast::ObjectKind::Processor:
      found = have(current.findProcessor(name));
      what = "processor";
      break;
    default: return;  // sources, sinks and tables have no owner
  }
  // A missing object is the statement's own error (or IF EXISTS).
  if (!found) return;
  privileges->requireOwner(s.user, owner, fmt::format("{} {} {}", verb, what, declared), pos);
}

void EngineContext::sendRows(ResultWriter& out, const std::vector<ResultColumn>& cols,
                             const Rows& rows, const std::string& tag) {
  out.columns(cols);
  for (const auto& r : rows) out.row(r);
  out.complete(tag);
}

}  // namespace rtsql
