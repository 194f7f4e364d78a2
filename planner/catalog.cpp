// The catalog's bookkeeping: one map per kind of object, all keyed by the
// lower-cased name, plus which relations each flow reads so that a DROP cannot
// pull a source or table out from under a running flow.
#include "planner/catalog.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/error.h"
#include "planner/processor.h"
#include "planner/user_function.h"

namespace rtsql {

Catalog::Catalog(const Catalog& other) {
  std::lock_guard lock(other.mu_);
  sources_ = other.sources_;
  sinks_ = other.sinks_;
  tables_ = other.tables_;
  flows_ = other.flows_;
  flowInputs_ = other.flowInputs_;
  functions_ = other.functions_;
  nextFunctionSequence_ = other.nextFunctionSequence_;
  processors_ = other.processors_;
}

namespace {

// Relations (sources and tables) answer 42P01 when missing, as PostgreSQL does
// for tables; sinks and flows are "objects" (42704).
[[noreturn]] void throwMissing(const char* kind, const std::string& name, size_t pos,
                               const std::string& otherKind) {
  bool relation = std::string(kind) == "source" || std::string(kind) == "table";
  SqlError err = relation
                     ? SqlError(sqlstate::kUndefinedTable,
                                fmt::format("relation \"{}\" does not exist", name), pos)
                     : SqlError(sqlstate::kUndefinedObject,
                                fmt::format("{} \"{}\" does not exist", kind, name), pos);
  if (!otherKind.empty()) {
    err.withHint(fmt::format("\"{}\" is a {}; use DROP {} {}", name, otherKind,
                             toUpper(otherKind), name));
  }
  throw err;
}

}  // namespace

void Catalog::checkFree(const std::string& key, size_t pos) const {
  const char* kind = nullptr;
  std::string name;
  if (auto it = sources_.find(key); it != sources_.end()) {
    kind = "source";
    name = it->second->name;
  } else if (auto it2 = sinks_.find(key); it2 != sinks_.end()) {
    kind = "sink";
    name = it2->second->name;
  } else if (auto it3 = tables_.find(key); it3 != tables_.end()) {
    kind = "table";
    name = it3->second->name;
  } else if (auto it4 = flows_.find(key); it4 != flows_.end()) {
    kind = "flow";
    name = it4->second->name;
  }
  if (kind) {
    throw SqlError(sqlstate::kDuplicateObject, fmt::format("{} \"{}\" already exists", kind, name),
                   pos)
        .withHint("names are shared by sources, sinks, tables and flows; choose another name");
  }
}

namespace {
// IF NOT EXISTS only skips when an object of the same kind has the name: a
// source named like an existing sink would silently not be created, and a later
// FROM would find the wrong thing, so that stays an error. The caller holds the
// catalog's lock.
template <typename Def, typename CheckFree>
bool addTo(std::map<std::string, std::shared_ptr<const Def>>& map, Def def, bool ifNotExists,
           const CheckFree& checkFree) {
  std::string key = toLower(def.name);
  if (ifNotExists && map.count(key)) return false;
  checkFree(key);
  map.emplace(key, std::make_shared<const Def>(std::move(def)));
  return true;
}
}  // namespace

bool Catalog::addSource(SourceDef def, bool ifNotExists, size_t pos) {
  std::lock_guard lock(mu_);
  return addTo(sources_, std::move(def), ifNotExists, [&](const auto& k) { checkFree(k, pos); });
}
bool Catalog::addSink(SinkDef def, bool ifNotExists, size_t pos) {
  std::lock_guard lock(mu_);
  return addTo(sinks_, std::move(def), ifNotExists, [&](const auto& k) { checkFree(k, pos); });
}
bool Catalog::addTable(TableDef def, bool ifNotExists, size_t pos) {
  std::lock_guard lock(mu_);
  return addTo(tables_, std::move(def), ifNotExists, [&](const auto& k) { checkFree(k, pos); });
}
bool Catalog::addFlow(FlowDef def, bool ifNotExists, size_t pos) {
  std::lock_guard lock(mu_);
  return addTo(flows_, std::move(def), ifNotExists, [&](const auto& k) { checkFree(k, pos); });
}

namespace {
template <typename Map>
typename Map::mapped_type findIn(const Map& map, const std::string& name) {
  auto it = map.find(toLower(name));
  return it == map.end() ? nullptr : it->second;
}
}  // namespace

Catalog::SourcePtr Catalog::findSource(const std::string& name) const {
  std::lock_guard lock(mu_);
  return findIn(sources_, name);
}
Catalog::SinkPtr Catalog::findSink(const std::string& name) const {
  std::lock_guard lock(mu_);
  return findIn(sinks_, name);
}
Catalog::TablePtr Catalog::findTable(const std::string& name) const {
  std::lock_guard lock(mu_);
  return findIn(tables_, name);
}
Catalog::FlowPtr Catalog::findFlow(const std::string& name) const {
  std::lock_guard lock(mu_);
  return findIn(flows_, name);
}

void Catalog::setTableRows(const std::string& name, std::shared_ptr<const std::vector<Row>> rows) {
  std::lock_guard lock(mu_);
  auto it = tables_.find(toLower(name));
  if (it == tables_.end()) throwMissing("table", name, SqlError::npos, {});
  auto copy = std::make_shared<TableDef>(*it->second);
  copy->rows = std::move(rows);
  it->second = std::move(copy);
}

namespace {
// The kind of whatever else carries `key`, for the "use DROP SINK" hint.
template <typename A, typename B, typename C>
std::string otherKindOf(const std::string& key, const A& a, const char* an, const B& b,
                        const char* bn, const C& c, const char* cn) {
  if (a.count(key)) return an;
  if (b.count(key)) return bn;
  if (c.count(key)) return cn;
  return {};
}
}  // namespace

bool Catalog::dropSource(const std::string& name, bool ifExists, size_t pos) {
  std::lock_guard lock(mu_);
  std::string key = toLower(name);
  auto it = sources_.find(key);
  if (it == sources_.end()) {
    if (ifExists) return false;
    throwMissing("source", name, pos,
                 otherKindOf(key, sinks_, "sink", tables_, "table", flows_, "flow"));
  }
  for (const auto& [flow, inputs] : flowInputs_) {
    for (const auto& in : inputs) {
      if (in == key) {
        std::string flowName = flows_.count(flow) ? flows_.at(flow)->name : flow;
        throw SqlError(sqlstate::kObjectInUse,
                       fmt::format("cannot drop source \"{}\": flow \"{}\" reads it",
                                   it->second->name, flowName),
                       pos, fmt::format("DROP FLOW {} first", flowName));
      }
    }
  }
  sources_.erase(it);
  return true;
}

bool Catalog::dropTable(const std::string& name, bool ifExists, size_t pos) {
  std::lock_guard lock(mu_);
  std::string key = toLower(name);
  auto it = tables_.find(key);
  if (it == tables_.end()) {
    if (ifExists) return false;
    throwMissing("table", name, pos,
                 otherKindOf(key, sources_, "source", sinks_, "sink", flows_, "flow"));
  }
  for (const auto& [flow, inputs] : flowInputs_) {
    for (const auto& in : inputs) {
      if (in == key) {
        std::string flowName = flows_.count(flow) ? flows_.at(flow)->name : flow;
        throw SqlError(sqlstate::kObjectInUse,
                       fmt::format("cannot drop table \"{}\": flow \"{}\" reads it",
                                   it->second->name, flowName),
                       pos, fmt::format("DROP FLOW {} first", flowName));
      }
    }
  }
  tables_.erase(it);
  return true;
}

bool Catalog::dropSink(const std::string& name, bool ifExists, size_t pos) {
  std::lock_guard lock(mu_);
  std::string key = toLower(name);
  auto it = sinks_.find(key);
  if (it == sinks_.end()) {
    if (ifExists) return false;
    throwMissing("sink", name, pos,
                 otherKindOf(key, sources_, "source", tables_, "table", flows_, "flow"));
  }
  for (const auto& [flowKey, flow] : flows_) {
    if (toLower(flow->sink) == key) {
      throw SqlError(sqlstate::kObjectInUse,
                     fmt::format("cannot drop sink \"{}\": flow \"{}\" writes to it",
                                 it->second->name, flow->name),
                     pos, fmt::format("DROP FLOW {} first", flow->name));
    }
  }
  sinks_.erase(it);
  return true;
}

bool Catalog::dropFlow(const std::string& name, bool ifExists, size_t pos) {
  std::lock_guard lock(mu_);
  std::string key = toLower(name);
  auto it = flows_.find(key);
  if (it == flows_.end()) {
    if (ifExists) return false;
    throwMissing("flow", name, pos,
                 otherKindOf(key, sources_, "source", sinks_, "sink", tables_, "table"));
  }
  flows_.erase(it);
  flowInputs_.erase(key);
  return true;
}

void Catalog::requireNoReaders(const std::string& name, size_t pos, const char* action) const {
  std::lock_guard lock(mu_);
  const std::string key = toLower(name);
  auto it = flows_.find(key);
  if (it == flows_.end()) return;
  for (const auto& [flow, inputs] : flowInputs_) {
    if (flow == key || std::find(inputs.begin(), inputs.end(), key) == inputs.end()) continue;
    const std::string flowName = flows_.count(flow) ? flows_.at(flow)->name : flow;
    const bool view = flows_.count(flow) && flows_.at(flow)->materializedView;
    throw SqlError(sqlstate::kDependentObjectsStillExist,
                   fmt::format("cannot {} materialized view \"{}\": {} \"{}\" reads it", action,
                               it->second->name, view ? "materialized view" : "flow", flowName),
                   pos,
                   fmt::format("{} {} first", view ? "DROP MATERIALIZED VIEW" : "DROP FLOW",
                               flowName));
  }
}

void Catalog::setFlowInputs(const std::string& flow, std::vector<std::string> relations) {
  std::lock_guard lock(mu_);
  for (auto& r : relations) r = toLower(r);
  flowInputs_[toLower(flow)] = std::move(relations);
}

void Catalog::replaceSource(SourceDef def) {
  std::lock_guard lock(mu_);
  // The key first: the right-hand side is evaluated before it, and moves the name.
  const std::string key = toLower(def.name);
  sources_[key] = std::make_shared<const SourceDef>(std::move(def));
}

void Catalog::replaceSink(SinkDef def) {
  std::lock_guard lock(mu_);
  // The key first: the right-hand side is evaluated before it, and moves the name.
  const std::string key = toLower(def.name);
  sinks_[key] = std::make_shared<const SinkDef>(std::move(def));
}

void Catalog::replaceFlow(FlowDef def) {
  std::lock_guard lock(mu_);
  // The key first: the right-hand side is evaluated before it, and moves the name.
  const std::string key = toLower(def.name);
  flows_[key] = std::make_shared<const FlowDef>(std::move(def));
}

std::vector<std::string> Catalog::flowsUsing(const std::string& relation) const {
  std::lock_guard lock(mu_);
  const std::string key = toLower(relation);
  std::vector<std::string> out;
  for (const auto& [flowKey, flow] : flows_) {
    bool uses = toLower(flow->sink) == key;
    if (auto it = flowInputs_.find(flowKey); it != flowInputs_.end()) {
      for (const auto& in : it->second) uses = uses || in == key;
    }
    if (uses) out.push_back(flow->name);
  }
  return out;
}

namespace {
template <typename Map>
std::vector<typename Map::mapped_type> valuesOf(const Map& map) {
  std::vector<typename Map::mapped_type> out;
  out.reserve(map.size());
  for (const auto& [key, value] : map) out.push_back(value);
  return out;
}
}  // namespace

std::vector<Catalog::SourcePtr> Catalog::sources() const {
  std::lock_guard lock(mu_);
  return valuesOf(sources_);
}
std::vector<Catalog::SinkPtr> Catalog::sinks() const {
  std::lock_guard lock(mu_);
  return valuesOf(sinks_);
}
std::vector<Catalog::TablePtr> Catalog::tables() const {
  std::lock_guard lock(mu_);
  return valuesOf(tables_);
}
std::vector<Catalog::FlowPtr> Catalog::flows() const {
  std::lock_guard lock(mu_);
  return valuesOf(flows_);
}

void Catalog::checkNoDependents(const std::string& key, const std::string& what, size_t pos) const {
  const std::string& name = functions_.at(key)->name;
  for (const auto& [flowKey, flow] : flows_) {
    for (const auto& f : flow->functions) {
      if (f != key) continue;
      throw SqlError(
          sqlstate::kDependentObjectsStillExist,
          fmt::format("cannot {} function {}: flow \"{}\" calls it", what, name, flow->name), pos,
          fmt::format("DROP FLOW {} first", flow->name));
    }
  }
  for (const auto& [otherKey, other] : functions_) {
    if (otherKey == key) continue;
    for (const auto& f : other->calls) {
      if (f != key) continue;
      throw SqlError(
          sqlstate::kDependentObjectsStillExist,
          fmt::format("cannot {} function {}: function {} calls it", what, name, other->name), pos,
          fmt::format("DROP FUNCTION {} first", other->name));
    }
  }
}

bool Catalog::addFunction(UserFunctionDef def, bool orReplace, bool ifNotExists, size_t pos) {
  std::lock_guard lock(mu_);
  std::string key = toLower(def.name);
  if (auto it = functions_.find(key); it != functions_.end()) {
    if (ifNotExists) return false;
    if (!orReplace) {
      throw SqlError(sqlstate::kDuplicateFunction,
                     fmt::format("function {} already exists", it->second->signature()), pos,
                     fmt::format("CREATE OR REPLACE FUNCTION {} replaces it", def.name));
    }
    // Callers were bound to the old body: they would silently change meaning
    // at their next planning (a restart), so they go first.
    checkNoDependents(key, "replace", pos);
  }
  def.sequence = nextFunctionSequence_++;
  functions_[key] = std::make_shared<const UserFunctionDef>(std::move(def));
  return true;
}

Catalog::FunctionPtr Catalog::findFunction(const std::string& name) const {
  std::lock_guard lock(mu_);
  return findIn(functions_, name);
}

bool Catalog::dropFunction(const std::string& name, bool ifExists, size_t pos) {
  std::lock_guard lock(mu_);
  std::string key = toLower(name);
  if (!functions_.count(key)) {
    if (ifExists) return false;
    throw SqlError(sqlstate::kUndefinedFunction, fmt::format("function {} does not exist", name),
                   pos, "SHOW USER FUNCTIONS lists the functions made by CREATE FUNCTION");
  }
  checkNoDependents(key, "drop", pos);
  functions_.erase(key);
  return true;
}

std::vector<Catalog::FunctionPtr> Catalog::functions() const {
  std::lock_guard lock(mu_);
  std::vector<FunctionPtr> out = valuesOf(functions_);
  std::sort(out.begin(), out.end(),
            [](const FunctionPtr& a, const FunctionPtr& b) { return a->sequence < b->sequence; });
  return out;
}

void Catalog::checkProcessorUnused(const std::string& key, const std::string& what,
                                   size_t pos) const {
  const std::string& name = processors_.at(key)->name;
  for (const auto& [flowKey, flow] : flows_) {
    for (const auto& p : flow->processors) {
      if (p != key) continue;
      throw SqlError(
          sqlstate::kDependentObjectsStillExist,
          fmt::format("cannot {} processor {}: flow \"{}\" uses it", what, name, flow->name), pos,
          fmt::format("DROP FLOW {} first", flow->name));
    }
  }
}

bool Catalog::addProcessor(ProcessorDef def, bool orReplace, bool ifNotExists, size_t pos) {
  std::lock_guard lock(mu_);
  std::string key = toLower(def.name);
  if (processors_.count(key)) {
    if (ifNotExists) return false;
    if (!orReplace) {
      throw SqlError(sqlstate::kDuplicateObject,
                     fmt::format("processor {} already exists", processors_.at(key)->name), pos,
                     fmt::format("CREATE OR REPLACE PROCESSOR {} replaces it", def.name));
    }
    // A flow's state was written by the old class: it goes first.
    checkProcessorUnused(key, "replace", pos);
  }
  processors_[key] = std::make_shared<const ProcessorDef>(std::move(def));
  return true;
}

Catalog::ProcessorPtr Catalog::findProcessor(const std::string& name) const {
  std::lock_guard lock(mu_);
  return findIn(processors_, name);
}

bool Catalog::dropProcessor(const std::string& name, bool ifExists, size_t pos) {
  std::lock_guard lock(mu_);
  std::string key = toLower(name);
  if (!processors_.count(key)) {
    if (ifExists) return false;
    throw SqlError(sqlstate::kUndefinedObject, fmt::format("processor {} does not exist", name),
                   pos, "SHOW PROCESSORS lists the processors made by CREATE PROCESSOR");
  }
  checkProcessorUnused(key, "drop", pos);
  processors_.erase(key);
  return true;
}

std::vector<Catalog::ProcessorPtr> Catalog::processors() const {
  std::lock_guard lock(mu_);
  return valuesOf(processors_);
}

}  // namespace rtsql
