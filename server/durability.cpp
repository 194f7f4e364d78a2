// What makes the catalog outlive the process: every statement that changes
// it writes the whole catalog to the catalog store (server/catalog_store.h)
// before it changes anything in memory. Its replay at start is
// catalog_replay.cpp's; the flows' supervisor is the flow registry's.
#include <fmt/format.h>

#include <algorithm>

#include "common/schema.h"
#include "planner/flow_dialect.h"
#include "planner/processor.h"
#include "planner/user_function.h"
#include "server/engine_context.h"

namespace rtsql {

std::vector<std::string> EngineContext::flowInputs(const PhysicalPlan& plan,
                                                  const std::string& sink) {
  std::vector<std::string> inputs;
  for (const auto& scan : plan.scans) inputs.push_back(scan.name);
  // A joined static table is read again when the flow is planned at restart.
  for (const auto& stage : plan.stages) {
    for (const auto& op : stage.operators) {
      if (op.is<BroadcastJoinSpec>()) inputs.push_back(op.as<BroadcastJoinSpec>().tableName);
    }
  }
  inputs.push_back(sink);
  return inputs;
}

std::vector<std::pair<std::string, std::string>> EngineContext::settingsOf(const EngineSession& s) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& e : s.settings.entries()) out.emplace_back(e.key, e.value);
  // A flow records its dialect markers (ANSI mode, ...) even when the session
  // never SET them: a flow recorded without one predates it and keeps reading
  // as it did (CatalogStoreReplay::restoreFlow, planner/flow_dialect.h).
  for (const char* marker : kFlowDialectMarkers)
    if (!s.settings.find(marker)) out.emplace_back(marker, kDialectNow);
  return out;
}

bool EngineContext::changeCatalog(const EngineSession& s, Catalog& target,
                                  const std::function<bool(Catalog&)>& change,
                                  CatalogChange extra) {
  // A dry run's own catalog, and the statements a replay runs, are not
  // written to the store.
  if (&target != &catalog || s.replay || !store) return change(target);
  Catalog next(target);
  if (!change(next)) return false;
  extra.catalog = &next;
  persistCatalog(extra);
  return change(target);
}

bool EngineContext::changeCatalog(const EngineSession& s, Catalog& target,
                                  const std::function<bool(Catalog&)>& change) {
  return changeCatalog(s, target, change, CatalogChange());
}

void EngineContext::persistWantRunning(const std::string& flow, bool run) {
  CatalogChange change;
  change.flow = toLower(flow);
  FlowControl control = flows.control(flow);
  control.wantRunning = run;
  change.control = &control;
  persistCatalog(change);
}

void EngineContext::persistCatalog(const CatalogChange& change) {
  if (!store) return;
  const Catalog& current = change.catalog ? *change.catalog : catalog;
  const auto& inserts = change.inserts ? *change.inserts : tableInserts;
  std::vector<CatalogRecord> records;
  // Functions first: any flow may call them, and each comes after those it calls.
  for (const auto& f : current.functions())
    records.push_back({"function", f->name, f->sql, true, {}, f->owner});
  for (const auto& p : current.processors())
    records.push_back({"processor", p->name, p->sql, true, {}, p->owner});
  for (const auto& src : current.sources())
    records.push_back({"source", src->name, src->sql, true, {}, {}});
  for (const auto& sink : current.sinks())
    records.push_back({"sink", sink->name, sink->sql, true, {}, {}});
  for (const auto& t : current.tables()) {
    records.push_back({"table", t->name, t->sql, true, {}, {}});
    auto it = inserts.find(toLower(t->name));
    if (it == inserts.end()) continue;
    for (const auto& sql : it->second) records.push_back({"insert", t->name, sql, true, {}, {}});
  }
  for (const auto& f : current.flows()) {
    CatalogRecord r{"flow", f->name, f->sql, true, {}, f->owner};
    const std::string key = toLower(f->name);
    // A flow of the catalog has its entry (restored or created), but for the
    // one this statement creates, whose control is the change's.
    FlowControl control =
        change.control && key == change.flow ? *change.control : flows.control(key);
    // A flow a transaction block creates has its control from the block.
    if (change.controls && change.controls->count(key)) control = change.controls->at(key);
    r.running = control.wantRunning;
    r.settings = control.settings;
    records.push_back(std::move(r));
  }
  // What a restart could not bring back stays in the store as it was, and so
  // does what it put off, unless it came back meanwhile. An object made since
  // under the name of one not brought back replaces it (a flow created again
  // after the function it called was lost).
  const size_t made = records.size();
  for (const CatalogRecord& r : unrestored) {
    const bool replaced =
        r.kind != "insert" &&
        std::any_of(records.begin(), records.begin() + static_cast<ptrdiff_t>(made),
                    [&](const CatalogRecord& o) { return o.kind == r.kind && iequals(o.name, r.name); });
    if (!replaced) records.push_back(r);
  }
  for (const CatalogRecord& r : deferred) {
    const bool back = std::any_of(records.begin(), records.end(), [&](const CatalogRecord& o) {
      return o.kind == r.kind && iequals(o.name, r.name) && o.sql == r.sql;
    });
    if (!back) records.push_back(r);
  }
  store->save(records);
}

}  // namespace rtsql
