// What makes the catalog and the flows outlive the process: the catalog file
// (server/catalog_file.h), its replay at start, and the flow supervisor that
// starts restored flows and restarts failed ones with backoff.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <pthread.h>

#include <algorithm>
#include <filesystem>

#include "common/clock.h"
#include "common/file_name.h"
#include "common/interrupt.h"
#include "common/json.h"
#include "common/log.h"
#include "connectors/net/http_client.h"
#include "executor/metrics/recent_latency.h"
#include "parser/parser.h"
#include "planner/shard_plan.h"
#include "planner/processor.h"
#include "planner/user_function.h"
#include "server/engine.h"

namespace rtsql {

namespace {

// How often the supervisor looks at the flows, and the bounds of its backoff.
constexpr int kSuperviseEveryMs = 200;
constexpr int64_t kFirstRetryMicros = 500'000;
constexpr int64_t kMaxRetryMicros = 60'000'000;
// A flow that has run this long without failing has recovered: its backoff
// starts over.
constexpr int64_t kSteadyMicros = 60'000'000;

int64_t backoffMicros(int attempts) {
  int64_t d = kFirstRetryMicros;
  for (int i = 1; i < attempts && d < kMaxRetryMicros; ++i) d *= 2;
  return std::min(d, kMaxRetryMicros);
}

}  // namespace

std::string Engine::flowDir(const std::string& flow) const {
  // Flow names match without regard to case, so the directory is that of the
  // lower-cased name; fileNameOf keeps any name inside "flows".
  return childPath((std::filesystem::path(options_.dataDir) / "flows").string(),
                   fileNameOf(toLower(flow)));
}

void Engine::adoptLegacyFlowDir(const std::string& flow) {
  // Data directories of earlier versions kept a flow's files under its
  // lower-cased name as it was. For names of [a-z0-9_-] that is the same
  // directory; any other name's directory is renamed to its encoded name,
  // provided the old name was one plain path component that stayed inside
  // "flows" (a name such as ".." or "a/b" never had a directory of its own
  // to bring back).
  if (options_.dataDir.empty()) return;
  const std::string legacy = toLower(flow);
  const std::string encoded = fileNameOf(legacy);
  if (legacy == encoded || legacy == "." || legacy == ".." || legacy.size() > 255 ||
      legacy.find('/') != std::string::npos || legacy.find('\0') != std::string::npos) {
    return;
  }
  namespace fs = std::filesystem;
  const fs::path flows = fs::path(options_.dataDir) / "flows";
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

std::vector<std::string> Engine::flowInputs(const PhysicalPlan& plan, const std::string& sink) {
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

bool Engine::retryable(const std::string& sqlstate) {
  // Bad data (class 22), a plan that no longer binds (42), a feature that
  // is not there (0A), checkpoints that cannot be read (XX001) or a Python
  // call past its time limit (57014: it meets the same record again) fail the
  // same way on every retry: the user must act. The rest (a broker away, a
  // full disk, no free slots, an internal error) may pass.
  return !(sqlstate.starts_with("22") || sqlstate.starts_with("42") || sqlstate.starts_with("0A") ||
           sqlstate == sqlstate::kDataCorrupted || sqlstate == sqlstate::kQueryCanceled);
}

std::vector<std::pair<std::string, std::string>> Engine::settingsOf(const EngineSession& s) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& e : s.settings.entries()) out.emplace_back(e.key, e.value);
  return out;
}

void Engine::persistCatalog(const CatalogChange& change) {
  if (restoring() || (options_.dataDir.empty() && !options_.cluster)) return;
  const Catalog& catalog = change.catalog ? *change.catalog : catalog_;
  const auto& inserts = change.inserts ? *change.inserts : tableInserts_;
  std::vector<CatalogRecord> records;
  // Functions first: any flow may call them, and each comes after those it calls.
  for (const auto& f : catalog.functions())
    records.push_back({"function", f->name, f->sql, true, {}, f->owner});
  for (const auto& p : catalog.processors())
    records.push_back({"processor", p->name, p->sql, true, {}, p->owner});
  for (const auto& src : catalog.sources())
    records.push_back({"source", src->name, src->sql, true, {}, {}});
  for (const auto& sink : catalog.sinks())
    records.push_back({"sink", sink->name, sink->sql, true, {}, {}});
  for (const auto& t : catalog.tables()) {
    records.push_back({"table", t->name, t->sql, true, {}, {}});
    auto it = inserts.find(toLower(t->name));
    if (it == inserts.end()) continue;
    for (const auto& sql : it->second) records.push_back({"insert", t->name, sql, true, {}, {}});
  }
  {
    std::lock_guard lock(flowsMu_);
    for (const auto& f : catalog.flows()) {
      CatalogRecord r{"flow", f->name, f->sql, true, {}, f->owner};
      const std::string key = toLower(f->name);
      const FlowControl* control = nullptr;
      if (change.control && key == change.flow) {
        control = change.control;
      } else if (auto it = flows_.find(key); it != flows_.end()) {
        control = &it->second.control;
      }
      if (control) {
        r.running = control->wantRunning;
        r.settings = control->settings;
      }
      records.push_back(std::move(r));
    }
  }
  // What a restart could not bring back stays in the file as it was, and so
  // does what it put off, unless it came back meanwhile.
  records.insert(records.end(), unrestored_.begin(), unrestored_.end());
  for (const CatalogRecord& r : deferred_) {
    const bool back = std::any_of(records.begin(), records.end(), [&](const CatalogRecord& o) {
      return o.kind == r.kind && iequals(o.name, r.name) && o.sql == r.sql;
    });
    if (!back) records.push_back(r);
  }
  if (options_.cluster) {
    options_.cluster->publish(clusterEntries(records));
    return;
  }
  writeCatalogFile((std::filesystem::path(options_.dataDir) / "catalog").string(), records);
}

void Engine::restore() {
  if (options_.cluster) {
    // Made before the flows are restored (it joins nothing yet): each
    // restored flow tells it the slots CREATE FLOW chose for its copies or
    // partitions (makeRuntime).
    const ClusterOptions& co = options_.cluster->options();
    membership_ = std::make_unique<ClusterMembership>(
        co);
  }
  if (!options_.dataDir.empty() || options_.cluster) {
    // A cluster's catalog is its topic's; a server of its own keeps it in its
    // data directory.
    std::vector<CatalogRecord> records =
        options_.cluster
            ? clusterRecords(options_.cluster->initial())
            : readCatalogFile((std::filesystem::path(options_.dataDir) / "catalog").string());
    // Nothing else runs yet (no sessions, no supervisor), and the statement
    // handlers take ddlMu_ themselves.
    RestoringScope replaying(*this);
    // A restart never waits on a remote service: what needs one (a source
    // whose columns a schema registry gives) fails at once, and is put off.
    net::NoWaitScope noWait;
    ReplayWriter discard;
    EngineSession session;
    int restored = 0;
    for (const CatalogRecord& r : records) {
      try {
        if (r.kind == "flow") {
          restoreFlow(r);
        } else {
          std::vector<ast::StatementPtr> stmts = parseStatements(r.sql);
          if (stmts.size() != 1) throw SqlError(sqlstate::kIoError, "not one statement");
          // A function or processor is created again as its owner's.
          session.user = r.owner;
          executeStatement(session, *stmts.front(), discard);
        }
        ++restored;
      } catch (const std::exception& e) {
        const auto* sqlError = dynamic_cast<const SqlError*>(&e);
        // Put off when it needed a remote service, or may need what was put
        // off (a flow reading a source that is not back yet).
        if ((sqlError && sqlError->sqlstate() == sqlstate::kConnectionFailure) ||
            !deferred_.empty()) {
          logLine(fmt::format("restoring {} \"{}\" later: {}", r.kind, r.name,
                              sqlError ? sqlError->message() : e.what()));
          deferred_.push_back(r);
          continue;
        }
        logLine(fmt::format("cannot restore {} \"{}\": {}; it is kept in the catalog file", r.kind,
                            r.name, sqlError ? sqlError->message() : e.what()));
        unrestored_.push_back(r);
      }
    }
    if (!records.empty()) {
      logLine(fmt::format("restored {} of {} catalog entries from {}", restored, records.size(),
                          options_.cluster ? clusterCatalogTopic(options_.cluster->options().name)
                                           : options_.dataDir));
    }
  }
  if (options_.cluster) {
    const ClusterOptions& co = options_.cluster->options();
    options_.cluster->follow([this](const ClusterEntry& e) { applyClusterEntry(e); });
    // Slots taken: the supervisor starts their flows within its round;
    // slots given up: their flows stop before another node may start them.
    // The supervisor lets go of ddlMu_ between two starts while a release
    // waits for it, so that the group's callback is not held up by every
    // start of a round.
    membership_->start([this] {
      releasePending_ = true;
      struct Done {
        std::atomic<bool>& pending;
        ~Done() { pending = false; }  // also if the release throws
      } done{releasePending_};
      releaseFlows();
    });
    if (!options_.dataDir.empty()) {
      // The stateful flows this node keeps a standby copy of: those whose
      // 'standby.replicas' names it, while another node runs them.
      standbys_ = std::make_unique<ClusterStandbys>(
          (std::filesystem::path(options_.dataDir) / "standby").string());
      standbys_->start([this] {
        std::vector<StandbyWanted> wanted;
        std::lock_guard lock(flowsMu_);
        for (const auto& [name, entry] : flows_) {
          const FlowRuntime* rt = entry.runtime.get();
          if (!rt || rt->plan().standbyReplicas <= 0 || !rt->plan().keepsState() ||
              spreadHere(rt))
            continue;
          if (membership_->holds(name)) {
            // Taken here and not started yet: a standby kept here is what
            // its start takes over.
            if (rt->state() != FlowState::Running)
              wanted.push_back({name, stateCopyFor(name), false});
            continue;
          }
          std::vector<std::string> nodes =
              membership_->standbysOf(name, rt->plan().standbyReplicas);
          if (std::find(nodes.begin(), nodes.end(), options_.cluster->options().node) ==
              nodes.end())
            continue;
          if (auto copy = stateCopyFor(name)) wanted.push_back({name, copy});
        }
        return wanted;
      });
    }
    clusterProgress_ =
        std::make_unique<ClusterProgress>(co);
    clusterProgress_->start([this] {
      std::vector<NodeProgress> mine;
      std::lock_guard lock(flowsMu_);
      for (const auto& [name, entry] : flows_) {
        const FlowRuntime* rt = entry.runtime.get();
        if (rt && rt->state() == FlowState::Running && flowRunsHere(name, rt))
          mine.push_back(nodeProgress(name, *rt));
      }
      return mine;
    });
  }
  supervisor_ = std::thread([this] { supervise(); });
  pthread_setname_np(supervisor_.native_handle(), "flow-supervisor");
  if (!deferred_.empty()) {
    restorer_ = std::thread([this] { restoreDeferred(); });
    pthread_setname_np(restorer_.native_handle(), "restore-later");
  }
}

void Engine::restoreDeferred() {
  // Its waits on a remote service end when the engine shuts down.
  InterruptScope interrupt(
      [](const void* e) { return static_cast<const Engine*>(e)->restorerStop_.load(); }, this);
  RestoringScope replaying(*this);
  ReplayWriter discard;
  EngineSession session;
  int64_t waitMs = 1000;
  for (;;) {
    {
      std::unique_lock lock(restorerMu_);
      restorerCv_.wait_for(lock, std::chrono::milliseconds(waitMs),
                           [&] { return restorerStop_.load(); });
      if (restorerStop_.load()) return;
    }
    std::vector<CatalogRecord> pending;
    {
      std::lock_guard ddl(ddlMu_);
      pending = deferred_;
    }
    for (const CatalogRecord& r : pending) {
      try {
        if (r.kind == "flow") {
          // Planned without waiting: a plan that needs a remote service is
          // the supervisor's to make later, as for a broker away.
          net::NoWaitScope noWait;
          std::lock_guard ddl(ddlMu_);
          restoreFlow(r);
        } else {
          // A source's remote service is asked outside the DDL lock: the
          // statement takes it to change the catalog.
          std::vector<ast::StatementPtr> stmts = parseStatements(r.sql);
          if (stmts.size() != 1) throw SqlError(sqlstate::kIoError, "not one statement");
          executeStatement(session, *stmts.front(), discard);
        }
        logLine(fmt::format("restored {} \"{}\"", r.kind, r.name));
        std::lock_guard ddl(ddlMu_);
        auto it = std::find_if(deferred_.begin(), deferred_.end(), [&](const CatalogRecord& o) {
          return o.kind == r.kind && o.name == r.name && o.sql == r.sql;
        });
        if (it != deferred_.end()) deferred_.erase(it);
      } catch (const Interrupted&) {
        return;
      } catch (const std::exception&) {
        // Still away, or needing what is: tried again next round.
      }
    }
    {
      std::lock_guard ddl(ddlMu_);
      if (deferred_.empty()) return;
    }
    waitMs = std::min<int64_t>(waitMs * 2, 30000);
  }
}

void Engine::restoreFlow(const CatalogRecord& record) {
  std::vector<ast::StatementPtr> stmts = parseStatements(record.sql);
  if (stmts.size() != 1 || stmts.front()->kind != ast::StatementKind::CreateFlow) {
    throw SqlError(sqlstate::kIoError, "not a CREATE FLOW statement");
  }
  const auto& stmt = static_cast<const ast::CreateFlow&>(*stmts.front());
  FlowControl control;
  control.wantRunning = record.running;
  control.settings = record.settings;
  EngineSession session;
  for (const auto& [k, v] : record.settings) session.settings.set(k, v);
  adoptLegacyFlowDir(stmt.name);
  if (membership_) {
    // Also when it cannot be planned yet: SHOW FLOWS names where it runs.
    membership_->setFlowSlots(stmt.name,
                              parseClusterSlots(session.settings.getString(kClusterSlotsSetting)));
  }

  FlowDef def;
  def.name = stmt.name;
  def.sink = stmt.sink;
  def.sql = stmt.text;
  def.queryText = stmt.queryText;
  def.functions = userFunctionsCalled(*stmt.query, catalog_);
  def.processors = processorsUsed(*stmt.query);
  def.owner = record.owner;
  std::unique_ptr<FlowRuntime> runtime;
  std::vector<std::string> inputs;
  try {
    PhysicalPlan plan = planFlow(stmt, planContext(session));
    def.checkpointIntervalMicros = plan.checkpointIntervalMicros;
    def.options = plan.flowOptions;
    inputs = flowInputs(plan, stmt.sink);
    runtime = makeRuntime(std::move(plan), stmt.name);
  } catch (const SqlError& e) {
    // The plan needs the sources' partition counts: with a broker away, the
    // flow is restored without a runtime and the supervisor plans it later.
    control.lastError = e.message();
    if (!retryable(e.sqlstate())) throw;
  }
  catalog_.addFlow(std::move(def), false, stmt.namePos);
  if (runtime) catalog_.setFlowInputs(stmt.name, inputs);
  {
    std::lock_guard lock(flowsMu_);
    flows_[toLower(stmt.name)] = FlowEntry{std::move(runtime), std::move(control)};
  }
  syncShards(stmt.name);
}

FlowRuntime* Engine::planRestoredFlow(const std::string& name) {
  Catalog::FlowPtr def = catalog_.findFlow(name);
  if (!def) return nullptr;
  std::vector<ast::StatementPtr> stmts = parseStatements(def->sql);
  const auto& stmt = static_cast<const ast::CreateFlow&>(*stmts.front());
  EngineSession session;
  {
    std::lock_guard lock(flowsMu_);
    for (const auto& [k, v] : flows_[toLower(name)].control.settings) session.settings.set(k, v);
  }
  PhysicalPlan plan = planFlow(stmt, planContext(session));
  {
    // Restored before it could be planned: the definition gets what only the
    // plan knows (its checkpoint interval and options).
    FlowDef planned = *def;
    planned.checkpointIntervalMicros = plan.checkpointIntervalMicros;
    planned.options = plan.flowOptions;
    catalog_.dropFlow(name, true, SqlError::npos);
    catalog_.addFlow(std::move(planned), false, SqlError::npos);
  }
  catalog_.setFlowInputs(stmt.name, flowInputs(plan, stmt.sink));
  auto runtime = makeRuntime(std::move(plan), stmt.name);
  FlowRuntime* rt = runtime.get();
  {
    std::lock_guard lock(flowsMu_);
    flows_[toLower(name)].runtime = std::move(runtime);
  }
  syncShards(name);
  return rt;
}

void Engine::supervise() {
  std::unique_lock lock(supervisorMu_);
  while (!supervisorStop_) {
    supervisorCv_.wait_for(lock, std::chrono::milliseconds(kSuperviseEveryMs),
                           [&] { return supervisorStop_; });
    if (supervisorStop_) break;
    lock.unlock();
    try {
      superviseOnce();
    } catch (const std::exception& e) {
      logLine(fmt::format("flow supervisor: {}", e.what()));
    }
    lock.lock();
  }
}

bool Engine::flowRunsHere(const std::string& name, const FlowRuntime* rt) const {
  if (!options_.cluster) return true;
  if (!membership_) return false;
  if (spreadHere(rt)) {
    return !membership_->share(name, rt->plan().scans.front().partitions).held.empty();
  }
  return membership_->holds(name);
}

NodeProgress Engine::nodeProgress(const std::string& name, const FlowRuntime& rt) const {
  NodeProgress p;
  p.node = options_.cluster->options().node;
  p.flow = toLower(name);
  p.reportedMicros = nowMicros();
  p.progressJson = rt.progressJson();
  IntervalLatency recent;
  rt.recentLatency(recent);
  p.recentIndex = recent.index;
  p.recentE2e = recent.e2e.toText();
  p.recentProcessing = recent.processing.toText();
  return p;
}

std::string Engine::placementExplained(const std::string& name, const FlowRuntime& rt) const {
  if (!membership_) return {};
  const std::string& here = options_.cluster->options().node;
  const int slots = membership_->slots();
  const int first = membership_->slotOf(name);
  auto holder = [&](int slot) -> std::string {
    std::optional<std::string> node = membership_->holderOfSlot(slot);
    if (!node) return "no node yet";
    return *node == here ? fmt::format("node {} (here)", *node) : "node " + *node;
  };
  std::string out = fmt::format("Placement: cluster {}, seen from node {}\n",
                                options_.cluster->options().name, here);
  if (!spreadHere(&rt)) {
    out += fmt::format("  slot {} of {}: runs on {}\n", first, slots, holder(first));
    if (const int shards = rt.plan().shards; shards > 1) {
      // Each copy on the slot CREATE FLOW chose for it (ClusterMembership::slotOf).
      const auto shard = splitShardFlowName(toLower(name));
      const std::string flow = shard ? shard->first : toLower(name);
      for (int i = 0; i < shards; ++i) {
        const std::string copy = shardFlowName(flow, i);
        const int slot = membership_->slotOf(copy);
        out += fmt::format("  copy {} of {} ({}): slot {}, on {}\n", i, shards, copy, slot,
                           holder(slot));
      }
    }
    if (const int replicas = rt.plan().standbyReplicas; replicas > 0 && rt.plan().keepsState()) {
      std::vector<std::string> standbys = membership_->standbysOf(name, replicas);
      for (std::string& node : standbys) {
        if (node == here) {
          std::optional<CheckpointInfo> kept =
              standbys_ ? standbys_->kept(toLower(name)) : std::nullopt;
          node = kept ? fmt::format("{} (here, at epoch {})", node, kept->epoch)
                      : fmt::format("{} (here, reading the copy)", node);
        }
      }
      out += fmt::format("  standby copies ({} asked): {}\n", replicas,
                         standbys.empty() ? std::string("none, no other node")
                                          : "nodes " + fmt::format("{}", fmt::join(standbys, ", ")));
    }
    return out;
  }
  const ScanSpec& scan = rt.plan().scans.front();
  // Each partition on the slot CREATE FLOW chose for it (ClusterMembership::share).
  const PartitionShare share = membership_->share(name, scan.partitions);
  std::map<std::string, std::vector<int>> byHolder;
  for (int i = 0; i < scan.partitions; ++i) byHolder[holder(share.slotOf(i))].push_back(i);
  if (share.order.empty()) {
    out += fmt::format("  spread: partition i of source {} ({} partitions) on slot ({} + i) % {}\n",
                       scan.name, scan.partitions, first, slots);
  } else {
    std::vector<int> order;
    for (int i = 0; i < std::min<int>(scan.partitions, static_cast<int>(share.order.size())); ++i)
      order.push_back(share.slotOf(i));
    out += fmt::format("  spread: the partitions of source {} ({}) on slots {}{}\n", scan.name,
                       scan.partitions, fmt::join(order, ", "),
                       scan.partitions > static_cast<int>(order.size()) ? ", coming round" : "");
  }
  for (const auto& [node, parts] : byHolder) {
    out += fmt::format("  {}: partitions {}\n", node, fmt::join(parts, ", "));
  }
  return out;
}

std::set<std::string> Engine::otherRunners(const std::string& name, const FlowRuntime* rt) const {
  if (!membership_) return {};
  if (spreadHere(rt)) return membership_->otherReaders(name, rt->plan().scans.front().partitions);
  std::optional<std::string> node = membership_->holderOf(name);
  if (!node) return {};
  return {*node};
}

void Engine::startRuntime(const std::string& name, FlowRuntime& rt) {
  if (spreadHere(&rt)) {
    rt.setPartitionShare(membership_->share(name, rt.plan().scans.front().partitions));
  }
  rt.start();
}

namespace {

// "1, 4" of the partitions `share` reads among the first `partitions`.
std::string partitionList(const PartitionShare& share, int partitions) {
  std::string out;
  for (int i = 0; i < partitions; ++i) {
    if (share.reads(i)) out += fmt::format("{}{}", out.empty() ? "" : ", ", i);
  }
  return out;
}

std::string nodeList(const std::set<std::string>& nodes) {
  std::string out = nodes.size() == 1 ? "node " : "nodes ";
  bool first = true;
  for (const std::string& n : nodes) {
    out += (first ? "" : ", ") + n;
    first = false;
  }
  return out;
}

}  // namespace

void Engine::releaseFlows() {
  std::lock_guard ddl(ddlMu_);
  std::vector<std::pair<FlowRuntime*, std::string>> leaving;
  {
    std::lock_guard lock(flowsMu_);
    for (const auto& [name, entry] : flows_) {
      FlowRuntime* rt = entry.runtime.get();
      if (!rt || rt->state() == FlowState::Stopped) continue;
      if (!flowRunsHere(name, rt)) {
        leaving.emplace_back(rt, "its slot went to another node of the cluster");
      } else if (spreadHere(rt) &&
                 rt->plan().scans.front().share !=
                     membership_->share(name, rt->plan().scans.front().partitions)) {
        // The supervisor starts it again at once, on the new share.
        leaving.emplace_back(rt, "its share of the source's partitions changed");
      }
    }
  }
  // Runtimes stay alive under ddlMu_ (only statements drop them).
  for (const auto& [rt, why] : leaving) {
    logLine(fmt::format("flow \"{}\" stops here: {}", rt->plan().flowName, why));
    rt->stop();
  }
}

void Engine::superviseOnce() {
  std::unique_lock ddl(ddlMu_, std::try_to_lock);
  if (!ddl.owns_lock()) return;  // a statement is changing flows: look again later
  if (membership_) releaseFlows();
  const int64_t now = monotonicMicros();
  std::vector<std::string> names;
  {
    std::lock_guard lock(flowsMu_);
    for (const auto& [name, entry] : flows_) {
      // In a cluster a flow is planned on every node (whether it runs here
      // may depend on its plan: a spread flow's partitions).
      if (entry.control.wantRunning &&
          (flowRunsHere(name, entry.runtime.get()) || (options_.cluster && !entry.runtime))) {
        names.push_back(name);
      }
    }
  }
  for (const std::string& name : names) {
    {
      std::lock_guard lock(supervisorMu_);
      if (supervisorStop_) return;
    }
    // The group waits for a release (the rest of the round comes next time).
    if (releasePending_.load()) return;
    FlowRuntime* rt = findRuntime(name);
    FlowState state = rt ? rt->state() : FlowState::Stopped;
    std::unique_lock lock(flowsMu_);
    FlowControl& c = flows_[name].control;
    if (state == FlowState::Running) {
      if (c.attempts > 0 && now - c.runningSinceMicros > kSteadyMicros) c.attempts = 0;
      continue;
    }
    if (state == FlowState::Failed) {
      if (!retryable(rt->failureCode())) continue;  // reported as failed until START FLOW
      if (!c.failureSeen) {
        c.failureSeen = true;
        c.lastError = rt->failureReason();
        ++c.attempts;
        c.nextAttemptMicros = now + backoffMicros(c.attempts);
        logLine(fmt::format("flow \"{}\" failed: {}; restarting it in {:.1f} s", name, c.lastError,
                            static_cast<double>(c.nextAttemptMicros - now) / 1e6));
        continue;
      }
    }
    if (now < c.nextAttemptMicros) continue;
    lock.unlock();
    try {
      if (!rt) rt = planRestoredFlow(name);
      if (!rt) continue;
      if (!flowRunsHere(name, rt)) continue;
      rt->stop();  // collects the threads and slots of a failed run
      startRuntime(name, *rt);
      lock.lock();
      c.failureSeen = false;
      c.lastError.clear();
      c.runningSinceMicros = now;
      lock.unlock();
      logLine(fmt::format("flow \"{}\" is running", name));
    } catch (const SqlError& e) {
      if (!retryable(e.sqlstate())) {
        // The runtime reports itself failed; it stays so until START FLOW.
        logLine(fmt::format("flow \"{}\" cannot start: {}", name, e.message()));
        continue;
      }
      lock.lock();
      c.lastError = e.message();
      c.failureSeen = true;
      ++c.attempts;
      c.nextAttemptMicros = monotonicMicros() + backoffMicros(c.attempts);
      lock.unlock();
      logLine(fmt::format("flow \"{}\" cannot start: {}; next attempt in {:.1f} s", name,
                          e.message(), static_cast<double>(backoffMicros(c.attempts)) / 1e6));
    }
  }
}

std::pair<FlowState, std::string> Engine::flowStatus(const std::string& name,
                                                     const FlowEntry* entry) const {
  const FlowRuntime* rt = entry ? entry->runtime.get() : nullptr;
  if (entry && !flowRunsHere(name, rt)) {
    const char* verb = entry->control.wantRunning ? "runs" : "stopped";
    if (spreadHere(rt)) {
      std::set<std::string> readers =
          membership_->otherReaders(name, rt->plan().scans.front().partitions);
      if (!readers.empty())
        return {FlowState::Remote, fmt::format("{} on {}", verb, nodeList(readers))};
    }
    const std::optional<std::string> node =
        membership_ ? membership_->holderOf(name) : std::nullopt;
    if (node) return {FlowState::Remote, fmt::format("{} on node {}", verb, *node)};
    return {FlowState::Remote,
            fmt::format("{} on the node that takes slot {} of the cluster (none has it yet)", verb,
                        membership_ ? membership_->slotOf(name) : 0)};
  }
  FlowState state = rt ? rt->state() : FlowState::Stopped;
  if (state == FlowState::Running) {
    if (!spreadHere(rt)) return {state, {}};
    // A spread flow runs here on its share of the partitions.
    const int partitions = rt->plan().scans.front().partitions;
    std::set<std::string> others = membership_->otherReaders(name, partitions);
    return {state,
            fmt::format("reads partitions {} of {} here{}",
                        partitionList(rt->plan().scans.front().share, partitions), partitions,
                        others.empty() ? "" : "; the others on " + nodeList(others))};
  }
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

}  // namespace rtsql
