// EngineSource: Engine::FlowInfo to http::FlowStatus.
#include "server/http/engine_source.h"

#include "server/http/plan_json.h"

namespace rtsql::http {

std::vector<FlowStatus> EngineSource::flows(bool withProgress) const {
  std::vector<FlowStatus> out;
  for (auto& info : engine_.flowInfos(withProgress)) {
    FlowStatus f;
    f.name = std::move(info.name);
    f.sink = std::move(info.sink);
    f.state = flowStateName(info.state);
    f.error = std::move(info.failure);
    f.slots = info.slots;
    f.progressJson = std::move(info.progressJson);
    out.push_back(std::move(f));
  }
  return out;
}

std::optional<std::string> EngineSource::progress(const std::string& flow) const {
  return engine_.progress(flow);
}

SlotUsage EngineSource::slots() const { return {engine_.slotsUsed(), engine_.slotsTotal()}; }

}  // namespace rtsql::http

namespace rtsql::http {

std::optional<std::string> EngineSource::planJson(const std::string& flow) const {
  std::optional<std::string> out;
  engine_.readPlan(flow, [&out](const PhysicalPlan& plan) { out = http::planJson(plan); });
  return out;
}

}  // namespace rtsql::http
