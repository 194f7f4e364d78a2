// The flow registry's entries and runtimes (server/flows/flow_registry.h).
#include "server/flows/flow_registry.h"

#include <fmt/format.h>

#include <filesystem>

#include "common/file_name.h"
#include "common/log.h"
#include "common/schema.h"
#include "planner/shard_plan.h"

namespace rtsql {

std::string flowIdFor(const std::string& name) {
  // As a Spark query's id is stable across runs of the same checkpoint.
  uint64_t h1 = 1469598103934665603ULL, h2 = 0x9e3779b97f4a7c15ULL;
  for (char c : toLower(name)) {
    h1 = (h1 ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
    h2 = (h2 ^ static_cast<unsigned char>(c)) * 0xff51afd7ed558ccdULL;
  }
  h1 = (h1 & 0xffffffffffff0fffULL) | 0x0000000000005000ULL;
  h2 = (h2 & 0x3fffffffffffffffULL) | 0x8000000000000000ULL;
  return fmt::format("{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", h1 >> 32, (h1 >> 16) & 0xffff,
                     h1 & 0xffff, h2 >> 48, h2 & 0xffffffffffffULL);
}

FlowRegistry::FlowRegistry(std::string dataDir, ConnectorProvider& connectors, SlotPool& slots,
                           const Catalog& catalog, StatementLock& statements,
                           std::unique_ptr<Placement> placement)
    : dataDir_(std::move(dataDir)),
      connectors_(connectors),
      slots_(slots),
      catalog_(catalog),
      statements_(statements),
      placement_(std::move(placement)) {}

FlowRegistry::~FlowRegistry() { shutdown(); }

void FlowRegistry::beginShutdown() {
  shuttingDown_ = true;
  {
    std::lock_guard lock(supervisorMu_);
    supervisorStop_ = true;
  }
  supervisorCv_.notify_all();
}

void FlowRegistry::shutdown() {
  // First, so that a start in progress is ending while the placement stops.
  beginShutdown();
  placement_->stop();
  // The supervisor's start in progress, if any, ends at its next wait.
  if (supervisor_.joinable()) supervisor_.join();
  // The runtimes are stopped outside the flows lock; the entries stay, so
  // what is reported of each flow afterwards is what it was.
  std::vector<std::unique_ptr<FlowRuntime>> runtimes;
  {
    std::lock_guard lock(mu_);
    for (auto& [name, entry] : flows_) {
      if (entry.runtime) runtimes.push_back(std::move(entry.runtime));
    }
  }
  for (auto& rt : runtimes) rt->stop();
}

std::string FlowRegistry::flowDir(const std::string& flow) const {
  // Flow names match without regard to case, so the directory is that of the
  // lower-cased name; fileNameOf keeps any name inside "flows".
  return childPath((std::filesystem::path(dataDir_) / "flows").string(), fileNameOf(toLower(flow)));
}

void FlowRegistry::adoptLegacyFlowDir(const std::string& flow) {
  // Data directories of earlier versions kept a flow's files under its
  // lower-cased name as it was. For names of [a-z0-9_-] that is the same
  // directory; any other name's directory is renamed to its encoded name,
  // provided the old name was one plain path component that stayed inside
  // "flows" (a name such as ".." or "a/b" never had a directory of its own
  // to bring back).
  if (dataDir_.empty()) return;
  const std::string legacy = toLower(flow);
  const std::string encoded = fileNameOf(legacy);
  if (legacy == encoded || legacy == "." || legacy == ".." || legacy.size() > 255 ||
      legacy.find('/') != std::string::npos || legacy.find('\0') != std::string::npos) {
    return;
  }
  namespace fs = std::filesystem;
  const fs::path flows = fs::path(dataDir_) / "flows";
  const fs::path from = flows / legacy;
  const fs::path to = flowDir(flow);
  std::error_code ec;
  if (!fs::is_directory(from, ec) || fs::exists(to, ec)) return;
  fs::rename(from, to, ec);
  if (ec) {
    logLine(fmt::format("cannot move the files of flow \"{}\" from {} to {}: {}", flow,
                        from.string(), to.string(), ec.message()));
  } else {
    logLine(fmt::format("moved the files of flow \"{}\" from {} to {}", flow, from.string(),
                        to.string()));
  }
}

std::unique_ptr<FlowRuntime> FlowRegistry::makeRuntime(PhysicalPlan plan, const std::string& flow) {
  // Checkpoints need a data directory to live in; a server without one (some
  // tests) runs flows without them.
  // A flow spread over the nodes of a cluster keeps none: it has no state,
  // and the positions of its partitions are the offsets its nodes commit to
  // the flow's group (a checkpoint here would hold stale ones for partitions
  // read on other nodes since).
  const bool spread = placement_->spreads(plan);
  const auto copy = splitShardFlowName(toLower(flow));
  placement_->setFlowSlots(copy ? copy->first : flow, plan.clusterSlots);
  if (plan.shards > 1) {
    if (auto exchange = placement_->exchange()) {
      // The copies exchange rows through topics named after the flow (copy
      // 0's name) and its exchange id.
      const std::string id = flowIdFor(copy ? copy->first : flow);
      addExchange(plan, fmt::format("{}{}-{}", exchange->topicPrefix, id, plan.exchangeId),
                  exchange->bootstrap);
      plan = planForShard(plan, plan.shard);
    }
  }
  const std::string dir = flowDir(flow);
  std::string checkpoints = dataDir_.empty() || spread
                                ? std::string()
                                : (std::filesystem::path(dir) / "checkpoints").string();
  auto runtime =
      std::make_unique<FlowRuntime>(std::move(plan), connectors_, slots_, flowIdFor(flow),
                                    (std::filesystem::path(dir) / "state").string(), checkpoints);
  runtime->setRebuildStateWithoutCheckpoint(placement_->rebuildsStateWithoutCheckpoint());
  runtime->setFailureListener([this] { wakeSupervisor(); });
  if (!spread) {
    runtime->setStateCopy(stateCopyFor(flow));
    // A flow without standbys is spared asking for one.
    if (runtime->plan().standbyReplicas > 0) runtime->setWarmCopy(placement_->warmCopy(flow));
  }
  return runtime;
}

std::shared_ptr<StateCopy> FlowRegistry::stateCopyFor(const std::string& flow) const {
  return placement_->stateCopy(flowIdFor(flow));
}

bool FlowRegistry::dropStateCopy(const std::string& name, bool ranHere) {
  std::shared_ptr<StateCopy> copy = stateCopyFor(name);
  if (!copy) return false;
  if (ranHere) {
    try {
      copy->destroy();
      return true;
    } catch (const SqlError& e) {
      logLine(fmt::format("flow \"{}\" dropped; its state copy stays for now: {}", name,
                          e.message()));
    }
  }
  placement_->dropCopyLater(name, std::move(copy));
  return false;
}

void FlowRegistry::startRuntime(const std::string& name, FlowRuntime& rt) {
  placement_->prepareStart(name, rt);
  rt.start();
}

void FlowRegistry::add(const std::string& name, std::unique_ptr<FlowRuntime> runtime,
                       FlowControl control) {
  {
    std::lock_guard lock(mu_);
    flows_[toLower(name)] = Entry{std::move(runtime), std::move(control)};
  }
  wakeSupervisor();
}

void FlowRegistry::setRuntime(const std::string& name, std::unique_ptr<FlowRuntime> runtime) {
  {
    std::lock_guard lock(mu_);
    flows_[toLower(name)].runtime = std::move(runtime);
  }
  wakeSupervisor();
}

std::unique_ptr<FlowRuntime> FlowRegistry::remove(const std::string& name) {
  std::lock_guard lock(mu_);
  auto it = flows_.find(toLower(name));
  if (it == flows_.end()) return nullptr;
  std::unique_ptr<FlowRuntime> rt = std::move(it->second.runtime);
  flows_.erase(it);
  return rt;
}

const FlowRegistry::Entry* FlowRegistry::findEntry(const std::string& name) const {
  auto it = flows_.find(toLower(name));
  return it == flows_.end() ? nullptr : &it->second;
}

FlowRuntime* FlowRegistry::findRuntime(const std::string& name) {
  std::lock_guard lock(mu_);
  const Entry* entry = findEntry(name);
  return entry ? entry->runtime.get() : nullptr;
}

FlowControl FlowRegistry::control(const std::string& name) const {
  std::lock_guard lock(mu_);
  const Entry* entry = findEntry(name);
  return entry ? entry->control : FlowControl();
}

void FlowRegistry::updateControl(const std::string& name,
                                 const std::function<void(FlowControl&)>& change) {
  {
    std::lock_guard lock(mu_);
    change(flows_[toLower(name)].control);
  }
  wakeSupervisor();
}

void FlowRegistry::setWantRunning(const std::string& flow, bool run) {
  std::unique_lock lock(mu_);
  std::vector<std::string> names = shardEntries(flow);
  names.push_back(toLower(flow));
  for (const std::string& name : names) {
    FlowControl& c = flows_[name].control;
    c.wantRunning = run;
    c.attempts = 0;
    c.nextAttemptMicros = 0;
    c.failureSeen = false;
    c.lastError.clear();
  }
  lock.unlock();
  wakeSupervisor();
}

void FlowRegistry::requireNotStopping(const std::string& name, size_t pos,
                                      const std::string& what) const {
  std::lock_guard lock(mu_);
  if (!stopping_.count(toLower(name))) return;
  throw SqlError(sqlstate::kObjectInUse,
                 fmt::format("flow \"{}\" is still stopping: another STOP FLOW or DROP FLOW "
                             "waits for its tasks",
                             name),
                 pos, fmt::format("run {} again once that statement has returned", what));
}

FlowRegistry::Stopping::Stopping(FlowRegistry& registry, std::string name)
    : registry_(registry), name_(toLower(name)) {
  std::lock_guard lock(registry_.mu_);
  registry_.stopping_.insert(name_);
}

FlowRegistry::Stopping::~Stopping() {
  std::lock_guard lock(registry_.mu_);
  registry_.stopping_.erase(name_);
}

}  // namespace rtsql
