// Running a sharded flow's copies (planner/shard_plan.h plans them): copy 0
// of a flow is its own entry of the flow registry; copies 1 .. N-1 are
// entries of their own, `<flow>#i`, each with a runtime planned from the flow's plan, so that the
// supervisor, the cluster's slots, the state copies, the standbys and the
// published progress treat each copy as a flow of its own. Statements name
// the flow; what they do to it they do to every copy (here, and on the
// other nodes when they read the change).
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "common/clock.h"
#include "common/log.h"
#include "connectors/kafka/client.h"
#include "connectors/kafka/sink_topic.h"
#include "planner/shard_plan.h"
#include "server/flows/flow_registry.h"

namespace rtsql {

std::vector<std::string> FlowRegistry::shardEntries(const std::string& flow) const {
  // The copies' names sort right after `<flow>#`: a scan of that range, not
  // a lookup per possible copy.
  const std::string key = toLower(flow);
  const std::string prefix = key + "#";
  std::vector<std::pair<int, std::string>> found;
  for (auto it = flows_.lower_bound(prefix);
       it != flows_.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it) {
    if (auto shard = splitShardFlowName(it->first); shard && shard->first == key)
      found.emplace_back(shard->second, it->first);
  }
  std::sort(found.begin(), found.end());  // by copy number: #2 before #10
  std::vector<std::string> out;
  out.reserve(found.size());
  for (auto& [shard, name] : found) out.push_back(std::move(name));
  return out;
}

void FlowRegistry::syncShards(const std::string& flow) {
  const std::string key = toLower(flow);
  std::optional<PhysicalPlan> plan;
  FlowControl control;
  {
    std::lock_guard lock(mu_);
    auto it = flows_.find(key);
    if (it != flows_.end() && it->second.runtime) {
      plan = it->second.runtime->plan();
      control = it->second.control;
    }
  }
  // A flow's plan never changes its copies (a flow made again is dropped
  // first, copies and all: dropShards), so there are only copies to add.
  const int shards = plan ? plan->shards : 1;
  for (int s = 1; s < shards; ++s) {
    const std::string name = shardFlowName(key, s);
    {
      std::lock_guard lock(mu_);
      auto it = flows_.find(name);
      if (it != flows_.end() && it->second.runtime) continue;
    }
    auto runtime = makeRuntime(planForShard(*plan, s), name);
    std::lock_guard lock(mu_);
    FlowControl c = control;
    c.runningSinceMicros = monotonicMicros();
    flows_[name] = Entry{std::move(runtime), std::move(c)};
  }
}

void FlowRegistry::dropShards(const std::string& flow) {
  std::vector<std::pair<std::string, std::unique_ptr<FlowRuntime>>> gone;
  {
    std::lock_guard lock(mu_);
    for (const std::string& name : shardEntries(flow)) {
      gone.emplace_back(name, std::move(flows_[name].runtime));
      flows_.erase(name);
    }
  }
  for (auto& [name, rt] : gone) {
    // As DROP FLOW does with the flow: the node that runs a copy deletes its
    // state copy once it is stopped.
    const bool hasCopy = rt && rt->plan().keepsState();
    const bool ranHere = hasCopy && runsHere(name, rt.get());
    rt.reset();
    std::error_code ec;
    std::filesystem::remove_all(flowDir(name), ec);
    if (hasCopy) dropStateCopy(name, ranHere);
  }
}

void FlowRegistry::stopShards(const std::string& flow) {
  std::vector<FlowRuntime*> runtimes;
  {
    std::lock_guard lock(mu_);
    for (const std::string& name : shardEntries(flow)) {
      if (FlowRuntime* rt = flows_[name].runtime.get()) runtimes.push_back(rt);
    }
  }
  // Runtimes stay alive under the statement lock (only statements drop them).
  for (FlowRuntime* rt : runtimes) rt->stop();
}

void FlowRegistry::startShardsHere(const std::string& flow) {
  std::vector<std::pair<std::string, FlowRuntime*>> runtimes;
  {
    std::lock_guard lock(mu_);
    for (const std::string& name : shardEntries(flow)) {
      if (FlowRuntime* rt = flows_[name].runtime.get()) runtimes.emplace_back(name, rt);
    }
  }
  for (auto& [name, rt] : runtimes) {
    if (!runsHere(name, rt) || rt->state() == FlowState::Running) continue;
    try {
      rt->stop();  // a failed run leaves threads and slots to collect
      startRuntime(name, *rt);
      std::lock_guard lock(mu_);
      flows_[name].control.runningSinceMicros = monotonicMicros();
    } catch (const SqlError& e) {
      // The supervisor tries it again when it can be retried.
      std::lock_guard lock(mu_);
      flows_[name].control.lastError = e.message();
      logLine(fmt::format("flow \"{}\" cannot start: {}", name, e.message()));
    }
  }
}

void FlowRegistry::dropExchangeTopics(const std::string& flow,
                                const std::vector<ExchangeSpec>& exchange) {
  for (const ExchangeSpec& spec : exchange) {
    try {
      kafka::HandlePtr admin = kafka::newInternalClient(RD_KAFKA_PRODUCER, spec.bootstrap,
                                                        {{"client.id", "rtsqld-exchange"}}, {});
      kafka::deleteInternalTopic(admin.get(), spec.bootstrap, spec.topic);
    } catch (const SqlError& e) {
      logLine(fmt::format("flow \"{}\" dropped; its exchange topic {} stays: {}", flow, spec.topic,
                          e.message()));
    }
  }
}

}  // namespace rtsql
