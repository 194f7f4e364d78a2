// The flow registry's read views: SHOW FLOWS, SHOW PROGRESS, EXPLAIN FLOW
// and what the HTTP endpoint reads (server/flows/flow_reads.h).
#include <fmt/format.h>

#include <algorithm>

#include "common/clock.h"
#include "common/json.h"
#include "common/schema.h"
#include "planner/shard_plan.h"
#include "server/flows/flow_registry.h"

namespace rtsql {

Catalog::FlowPtr FlowRegistry::findFlowOrCopy(const std::string& name) const {
  if (Catalog::FlowPtr def = catalog_.findFlow(name)) return def;
  auto shard = splitShardFlowName(toLower(name));
  if (!shard) return nullptr;
  Catalog::FlowPtr def = catalog_.findFlow(shard->first);
  std::lock_guard lock(mu_);
  return def && flows_.count(toLower(name)) ? def : nullptr;
}

std::pair<FlowState, std::string> FlowRegistry::flowStatus(const std::string& name,
                                                           const Entry* entry) const {
  const FlowRuntime* rt = entry ? entry->runtime.get() : nullptr;
  if (entry && !runsHere(name, rt)) {
    return placement_->remoteStatus(name, rt, entry->control.wantRunning);
  }
  FlowState state = rt ? rt->state() : FlowState::Stopped;
  if (state == FlowState::Running) return {state, placement_->runningReason(name, *rt)};
  if (!entry || !entry->control.wantRunning) {
    if (state == FlowState::Failed) return {state, rt->failureReason()};
    return {FlowState::Stopped, {}};
  }
  const FlowControl& c = entry->control;
  if (state == FlowState::Failed && !retryable(rt->failureCode()))
    return {state, rt->failureReason()};
  std::string why =
      state == FlowState::Failed && !c.failureSeen ? rt->failureReason() : c.lastError;
  if (why.empty()) return {FlowState::Recovering, "starting"};
  int64_t wait = std::max<int64_t>(0, c.nextAttemptMicros - monotonicMicros());
  return {FlowState::Recovering, fmt::format("{} (attempt {} in {:.1f} s)", why, c.attempts + 1,
                                             static_cast<double>(wait) / 1e6)};
}

std::vector<FlowInfo> FlowRegistry::flowInfos(bool withProgress) const {
  auto defs = catalog_.flows();
  std::vector<FlowInfo> infos;
  infos.reserve(defs.size());
  // The flows lock keeps every runtime alive while it is read (DROP FLOW takes
  // a runtime out of the map under it before destroying it).
  std::lock_guard lock(mu_);
  for (const auto& f : defs) {
    FlowInfo info;
    info.name = f->name;
    info.sink = f->sink;
    info.materializedView = f->materializedView;
    const Entry* entry = findEntry(f->name);
    const FlowRuntime* rt = entry ? entry->runtime.get() : nullptr;
    std::tie(info.state, info.failure) = flowStatus(f->name, entry);
    if (rt) {
      // What it holds: a stopped or failed flow gave its slots back.
      if (const int held = rt->heldSlots(); held > 0) info.slots = held;
      if (withProgress) info.progressJson = rt->progressJson();
    }
    infos.push_back(std::move(info));
    // A sharded flow's other copies, each a row of its own after it.
    for (const std::string& name : shardEntries(f->name)) {
      FlowInfo copy;
      const Entry& e = flows_.at(name);
      copy.name = shardFlowName(f->name, splitShardFlowName(name)->second);
      copy.sink = f->sink;
      std::tie(copy.state, copy.failure) = flowStatus(name, &e);
      if (e.runtime) {
        if (const int held = e.runtime->heldSlots(); held > 0) copy.slots = held;
        if (withProgress) copy.progressJson = e.runtime->progressJson();
      }
      infos.push_back(std::move(copy));
    }
  }
  return infos;
}

std::optional<std::string> FlowRegistry::progress(const std::string& flow) const {
  Catalog::FlowPtr def = findFlowOrCopy(flow);
  if (!def) return std::nullopt;
  std::lock_guard lock(mu_);
  const Entry* entry = findEntry(flow);
  const FlowRuntime* rt = entry ? entry->runtime.get() : nullptr;
  // What SHOW FLOWS says, first: a flow being retried reports why here too.
  auto [state, reason] = flowStatus(flow, entry);
  std::string json = "{\"status\":{\"state\":";
  appendJsonString(json, flowStateName(state));
  json += ",\"reason\":";
  if (reason.empty()) {
    json += "null";
  } else {
    appendJsonString(json, reason);
  }
  json += "}";
  // In a cluster: this node's part (when it runs one) and the other nodes';
  // for a sharded flow asked by its name, those of every copy (copy 0 first).
  const bool nodes = placement_->reportsNodes();
  std::vector<NodeProgress> parts;
  if (nodes) {
    std::vector<std::string> names{flow};
    if (rt && rt->plan().shards > 1 && !splitShardFlowName(flow)) {
      for (int i = 1; i < rt->plan().shards; ++i) names.push_back(shardFlowName(flow, i));
    }
    for (const std::string& part : names) {
      const Entry* e = part == flow ? entry : findEntry(part);
      const FlowRuntime* prt = e ? e->runtime.get() : nullptr;
      if (prt && prt->state() == FlowState::Running && runsHere(part, prt))
        parts.push_back(placement_->nodeProgress(part, *prt));
      std::vector<NodeProgress> others = placement_->othersProgress(part, prt);
      parts.insert(parts.end(), std::make_move_iterator(others.begin()),
                   std::make_move_iterator(others.end()));
    }
  }
  std::string body;
  if (!parts.empty() && toLower(parts.front().flow) == toLower(flow)) {
    // This node's part, or else the first node that runs the flow.
    body = parts.front().progressJson;
  } else if (rt) {
    body = rt->progressJson();
  } else {
    // Restored but never planned (its sources were unreachable): no epochs yet.
    body = "{\"name\":";
    appendJsonString(body, def->name);
    body += "}";
  }
  if (body.size() > 2) {  // the object's fields, without its braces
    json += ",";
    json.append(body, 1, body.size() - 2);
  }
  if (nodes) {
    json += ",\"cluster\":";
    json += placement_->nodesJson(parts);
  }
  json += "}";
  return json;
}

std::string FlowRegistry::flowPlan(const std::string& flow, size_t namePos) const {
  if (!findFlowOrCopy(flow)) {
    throw SqlError(sqlstate::kUndefinedObject, fmt::format("flow \"{}\" does not exist", flow),
                   namePos, "SHOW FLOWS lists the flows");
  }
  // Under the flows lock, as progress() reads the runtime: DROP FLOW cannot
  // destroy it meanwhile.
  std::lock_guard lock(mu_);
  const Entry* entry = findEntry(flow);
  const FlowRuntime* rt = entry ? entry->runtime.get() : nullptr;
  if (!rt) {
    throw SqlError(sqlstate::kObjectNotInPrerequisiteState,
                   fmt::format("flow \"{}\" has no plan: it is not running", flow), namePos,
                   "SHOW FLOWS says why; START FLOW plans it again");
  }
  return rt->plan().explain() + placement_->explain(flow, *rt);
}

bool FlowRegistry::readPlan(const std::string& flow,
                            const std::function<void(const PhysicalPlan&)>& read) const {
  if (!findFlowOrCopy(flow)) return false;
  std::lock_guard lock(mu_);
  const Entry* entry = findEntry(flow);
  const FlowRuntime* rt = entry ? entry->runtime.get() : nullptr;
  if (!rt) return false;
  read(rt->plan());
  return true;
}

}  // namespace rtsql
