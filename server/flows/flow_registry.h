// The flows of a server as they run: one entry per flow of the catalog (and
// per copy of a sharded flow), each with its runtime and its control
// (whether it should run, and how the supervisor is doing at bringing it
// back). The registry makes runtimes, starts and stops them, runs the
// supervisor that restarts failed flows with backoff, keeps a sharded flow's
// copies, and answers the read views (SHOW FLOWS, SHOW PROGRESS, EXPLAIN
// FLOW, the HTTP endpoint). Where a flow runs it asks its Placement
// (server/flows/placement.h). The catalog, and what statements do to it,
// stay the engine's (server/engine.h).
//
// Files: flow_registry.cpp (entries, runtimes, start and stop),
// supervisor.cpp (the supervisor and the release of flows placed
// elsewhere), shard_copies.cpp (a sharded flow's copies), flow_status.cpp
// (the read views).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "executor/connector_provider.h"
#include "executor/flow_runtime.h"
#include "executor/slot_pool.h"
#include "planner/catalog.h"
#include "server/flows/flow_reads.h"
#include "server/flows/placement.h"
#include "server/statement_lock.h"

namespace rtsql {

// What the registry keeps about a flow beyond its definition.
struct FlowControl {
  bool wantRunning = true;
  std::vector<std::pair<std::string, std::string>> settings;  // session SETs at CREATE
  std::string lastError;          // why the last start failed
  int attempts = 0;               // failed starts since the flow last ran steadily
  int64_t nextAttemptMicros = 0;  // monotonic; 0: at once
  int64_t runningSinceMicros = 0;
  bool failureSeen = false;  // the runtime's current failure is accounted for
};

// A flow's id, stable across restarts and re-creations with the same name.
std::string flowIdFor(const std::string& name);

class FlowRegistry : public FlowReads {
 public:
  // `catalog` and `statements` are the engine's; `dataDir` "" : no files.
  FlowRegistry(std::string dataDir, ConnectorProvider& connectors, SlotPool& slots,
               const Catalog& catalog, StatementLock& statements,
               std::unique_ptr<Placement> placement);
  ~FlowRegistry() override;

  Placement& placement() { return *placement_; }
  const Placement& placement() const { return *placement_; }

  // Starts the placement and the supervisor, which plans a flow restored
  // without a plan with `plan` (with the statement lock held). After restore.
  void start(std::function<FlowRuntime*(const std::string&)> plan);
  // The server stops (SIGTERM): the supervisor starts no flow any more, and
  // a start it has in progress ends at its next wait (restore, connector
  // setup, topic creation, registry fetches...), which throws Interrupted on
  // the supervisor's thread; what the start had opened is released. Any
  // thread, any number of times; shutdown() does it first.
  void beginShutdown();
  // Stops the placement, the supervisor and every flow (each ends its
  // epoch). The entries stay, so what is reported of each is what it was.
  void shutdown();

  // A flow's files (lower-cased, encoded name under the data directory).
  std::string flowDir(const std::string& flow) const;
  // Moves a flow's directory of the earlier layout to flowDir(). At restore.
  void adoptLegacyFlowDir(const std::string& flow);
  std::unique_ptr<FlowRuntime> makeRuntime(PhysicalPlan plan, const std::string& flow);
  // The copy of flow `flow`'s state for other nodes (null: none).
  std::shared_ptr<StateCopy> stateCopyFor(const std::string& flow) const;
  bool runsHere(const std::string& name, const FlowRuntime* rt) const {
    return placement_->runsHere(name, rt);
  }
  // Once dropped flow `name` (or a copy of a sharded one) is stopped here:
  // deletes its state copy when this node ran it (`ranHere`: nothing writes
  // the copy any more), else leaves that to the next node that holds its
  // slot (Placement::dropCopyLater), as when the deletion fails here. Returns
  // whether it was deleted here.
  bool dropStateCopy(const std::string& name, bool ranHere);
  // A flow named `name` is created: its state copy (and its copies') is its
  // own again.
  void keepStateCopy(const std::string& name) { placement_->keepCopy(name); }
  // Starts flow `name`'s runtime as its placement says. Throws as FlowRuntime::start.
  void startRuntime(const std::string& name, FlowRuntime& rt);

  // Entries. Written with the statement lock held; a holder of it may keep a
  // runtime pointer across calls (only statements drop runtimes).
  void add(const std::string& name, std::unique_ptr<FlowRuntime> runtime, FlowControl control);
  void setRuntime(const std::string& name, std::unique_ptr<FlowRuntime> runtime);
  // Takes the entry out whole, and returns its runtime.
  std::unique_ptr<FlowRuntime> remove(const std::string& name);
  FlowRuntime* findRuntime(const std::string& name);
  FlowControl control(const std::string& name) const;
  void updateControl(const std::string& name, const std::function<void(FlowControl&)>& change);
  // Whether flow `name` (and its copies) should run; the backoff starts over.
  void setWantRunning(const std::string& flow, bool run);

  // Flows a STOP FLOW or DROP FLOW waits for without the statement lock:
  // until it has, the flow is not started, dropped or created again.
  void requireNotStopping(const std::string& name, size_t pos, const std::string& what) const;
  class Stopping {
   public:
    Stopping(FlowRegistry& registry, std::string name);
    ~Stopping();
    Stopping(const Stopping&) = delete;
    Stopping& operator=(const Stopping&) = delete;

   private:
    FlowRegistry& registry_;
    std::string name_;
  };

  // Sharded flows (shard_copies.cpp): makes the copies a flow's plan asks
  // for, forgets them (files and state copies too), stops them, or starts
  // those that run here.
  void syncShards(const std::string& flow);
  void dropShards(const std::string& flow);
  void stopShards(const std::string& flow);
  void startShardsHere(const std::string& flow);
  // Deletes a dropped sharded flow's exchange topics; logs what stays.
  void dropExchangeTopics(const std::string& flow, const std::vector<ExchangeSpec>& exchange);

  // Stops the runtimes of the flows this node no longer runs. Takes the
  // statement lock, unless `held`.
  void releaseFlows(bool held = false);

  // Read views (flow_status.cpp).
  std::vector<FlowInfo> flowInfos(bool withProgress) const override;
  std::optional<std::string> progress(const std::string& flow) const override;
  bool readPlan(const std::string& flow,
                const std::function<void(const PhysicalPlan&)>& read) const override;
  int slotsUsed() const override { return slots_.used(); }
  int slotsTotal() const override { return slots_.total(); }
  // Calls `read` with flow `name`'s runtime (null: none), its control and
  // whether it runs here, under the registry's lock: no statement removes
  // the runtime meanwhile, so a reader needs no statement lock (reads of
  // materialized views). `read` only reads, quickly, and never waits.
  void inspect(const std::string& flow,
               const std::function<void(const FlowRuntime*, const FlowControl&, bool runsHere)>&
                   read) const;
  // EXPLAIN FLOW name: the plan the flow runs (42704 unknown, 55000 not running).
  std::string flowPlan(const std::string& flow, size_t namePos) const;

  static bool retryable(const std::string& sqlstate);

  // Tells the supervisor to look at the flows now: a flow was added, failed,
  // was asked to start or stop, or the placement moved. Any thread; it only
  // sets a flag, so it may be called with any lock held.
  void wakeSupervisor();

 private:
  struct Entry {
    std::unique_ptr<FlowRuntime> runtime;  // null: not planned, or shut down
    FlowControl control;
  };
  const Entry* findEntry(const std::string& name) const;  // with mu_ held
  std::vector<std::string> shardEntries(const std::string& flow) const;  // with mu_ held
  std::pair<FlowState, std::string> flowStatus(const std::string& name, const Entry* entry) const;
  Catalog::FlowPtr findFlowOrCopy(const std::string& name) const;
  void supervise();
  // One round; returns the monotonic time by which it wants the next round
  // without a wake (a flow's backoff ending, or a round it could not finish),
  // or kNoRoundDue.
  int64_t superviseOnce();
  static constexpr int64_t kNoRoundDue = INT64_MAX;

  std::string dataDir_;
  ConnectorProvider& connectors_;
  SlotPool& slots_;
  const Catalog& catalog_;
  StatementLock& statements_;
  std::unique_ptr<Placement> placement_;

  // Guards flows_ and stopping_; never held while waiting for a runtime.
  mutable std::mutex mu_;
  std::map<std::string, Entry> flows_;  // lower-cased names
  std::set<std::string> stopping_;

  std::function<FlowRuntime*(const std::string&)> plan_;
  std::mutex supervisorMu_;
  std::condition_variable supervisorCv_;
  bool supervisorStop_ = false;
  // beginShutdown() was called: the check the supervisor's thread polls at
  // its waits (common/interrupt.h), read without a lock.
  std::atomic<bool> shuttingDown_{false};
  bool supervisorWake_ = true;  // the first round comes at once: restored flows start
  // The cluster's group waits for releaseFlows(), which waits for the lock.
  std::atomic<bool> releasePending_{false};
  std::thread supervisor_;
};

}  // namespace rtsql
