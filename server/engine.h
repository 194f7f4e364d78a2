// The engine: what rtsqld does with a statement. It owns the catalog, the slot
// pool and the running flows, and implements the QueryHandler seam that the
// PostgreSQL wire protocol calls. Statement handlers are split by family:
// engine.cpp (dispatch, sessions, SET/SHOW settings, constant SELECT),
// ddl.cpp (CREATE/DROP/INSERT, flows' lifecycle), show.cpp (SHOW, DESCRIBE,
// EXPLAIN).
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "executor/connector.h"
#include "executor/flow_runtime.h"
#include "executor/slot_pool.h"
#include "parser/ast.h"
#include "planner/catalog.h"
#include "planner/planner.h"
#include "server/catalog_file.h"
#include "server/cluster/catalog.h"
#include "server/cluster/membership.h"
#include "server/cluster/progress.h"
#include "server/cluster/standbys.h"
#include "server/query_handler.h"

namespace rtsql {

class KafkaTaps;
class LiveQueryQuota;
class Privileges;
class UserStore;

struct EngineOptions {
  std::string dataDir;
  int slots = 64;
  std::string embeddedBootstrap;  // empty: no embedded broker
  // The --users-file users, shared with the protocol server; CREATE / ALTER /
  // DROP USER change them. Null without a users file.
  std::shared_ptr<UserStore> users;
  // Who may do what (server/privileges.h): the superusers besides the users
  // file's first user (--superuser), the directories statements may name files
  // in (--files-dir), and the task slots one user's live queries may hold
  // (--max-live-query-slots-per-user; 0: half of `slots`, at least 1).
  std::vector<std::string> superusers;
  std::vector<std::string> filesDirs;
  int maxLiveQuerySlotsPerUser = 0;
  // rtsqld --cluster: the cluster's catalog topic (server/cluster/catalog.h),
  // which then holds the catalog instead of the data directory's file. Null
  // for a server of its own.
  std::shared_ptr<ClusterCatalog> cluster;
};

class Engine : public QueryHandler {
 public:
  Engine(EngineOptions options, ConnectorProvider& connectors);
  ~Engine() override;

  std::unique_ptr<Session> openSession(const std::string& user, const std::string& database) override;
  void execute(Session& session, const std::string& sql, ResultWriter& out) override;
  // Columns of one statement without running it (the extended protocol's Describe).
  std::optional<std::vector<ResultColumn>> describe(Session& session, const std::string& sql) override;

  // Brings back what the data directory's catalog file holds (sources, sinks,
  // tables with their rows, flows) and starts the flow supervisor, which
  // starts the flows that were running, from their last checkpoints, and
  // restarts failed flows with backoff. Call once, before serving. Throws
  // SqlError when the catalog file is damaged.
  void restore();

  // Stops every flow (each ends its epoch: sinks flushed, offsets committed,
  // a final checkpoint written). What the catalog file says is unchanged, so
  // a restart brings the same flows back.
  void shutdown();

  // Read-only views for the HTTP endpoint (server/http). They take the catalog
  // lock, the flows lock and each flow's own lock only briefly, never the DDL
  // lock, so a scrape neither waits for a statement nor holds up a flow.
  struct FlowInfo {
    std::string name;  // as declared
    std::string sink;
    FlowState state = FlowState::Stopped;
    std::string failure;        // why it failed (Failed) or is not running yet (Recovering)
    std::optional<int> slots;   // the slots it holds; none unless it runs
    std::string progressJson;   // SHOW PROGRESS's JSON, filled only when asked for
  };
  // Every flow of the catalog, in SHOW FLOWS order.
  std::vector<FlowInfo> flowInfos(bool withProgress) const;
  // SHOW PROGRESS's JSON of a flow (name matched as SQL matches identifiers);
  // nullopt when there is no such flow.
  std::optional<std::string> progress(const std::string& flow) const;
  // Calls `read` with the plan the flow runs, under the flows lock (keep it
  // short); false when there is no such flow or it has no runtime.
  bool readPlan(const std::string& flow,
                const std::function<void(const PhysicalPlan&)>& read) const;
  int slotsUsed() const { return slots_.used(); }
  int slotsTotal() const { return slots_.total(); }

 private:
  // Per-connection state: the user and the session's SET values.
  class EngineSession : public Session {
   public:
    std::string user;
    Options settings;
    // SET rtsql.dry_run = on: this session's own copy of the catalog, which
    // its statements change instead of the server's; flows are only planned.
    std::unique_ptr<Catalog> shadow;
  };
  Catalog& catalogOf(EngineSession& s) { return s.shadow ? *s.shadow : catalog_; }
  const Catalog& catalogOf(const EngineSession& s) const { return s.shadow ? *s.shadow : catalog_; }
  using Rows = std::vector<std::vector<std::optional<std::string>>>;

  void executeStatement(EngineSession& s, const ast::Statement& stmt, ResultWriter& out);

  // ddl.cpp
  void createSource(EngineSession& s, const ast::CreateSource& stmt, ResultWriter& out);
  void createSink(EngineSession& s, const ast::CreateSink& stmt, ResultWriter& out);
  void createTable(EngineSession& s, const ast::CreateTable& stmt, ResultWriter& out);
  void insert(EngineSession& s, const ast::Insert& stmt, ResultWriter& out);
  void createFlow(EngineSession& s, const ast::CreateFlow& stmt, ResultWriter& out);
  void createFunction(EngineSession& s, const ast::CreateFunction& stmt, ResultWriter& out);
  void createProcessor(EngineSession& s, const ast::CreateProcessor& stmt, ResultWriter& out);
  void drop(EngineSession& s, const ast::Drop& stmt, ResultWriter& out);
  void stopFlow(EngineSession& s, const ast::FlowCommand& stmt, ResultWriter& out);
  void startFlow(EngineSession& s, const ast::FlowCommand& stmt, ResultWriter& out);
  // Throws SqlError 42501 unless the session's user may `verb` ("drop",
  // "stop") the flow, function or processor `name` of the session's catalog:
  // its owner or a superuser (server/privileges.h). Nothing for other kinds,
  // for an object that does not exist, and at a replay.
  void requireOwnerOf(const EngineSession& s, ast::ObjectKind kind, const std::string& name,
                      std::string_view verb, size_t pos) const;

  // user_ddl.cpp: CREATE / ALTER / DROP USER, SHOW USERS
  void userStatement(EngineSession& s, const ast::UserStatement& stmt, ResultWriter& out);
  static std::vector<ResultColumn> userColumns(const ast::UserStatement& stmt);

  // show.cpp
  static std::vector<ResultColumn> showColumns(const ast::Show& stmt);
  static const std::vector<ResultColumn> kDescribeColumns;
  static const std::vector<ResultColumn> kExplainColumns;
  void show(EngineSession& s, const ast::Show& stmt, ResultWriter& out);
  void describe(const EngineSession& s, const ast::Describe& stmt, ResultWriter& out);
  // A function's body is shown to its owner and the superusers only.
  void describeFunction(const EngineSession& s, const ast::Describe& stmt, ResultWriter& out);
  void explain(EngineSession& s, const ast::Explain& stmt, ResultWriter& out);
  // EXPLAIN FLOW name: the plan the flow runs (42704 unknown, 55000 not running).
  std::string flowPlan(const std::string& flow, size_t namePos) const;

  // engine.cpp
  void set(EngineSession& s, const ast::Set& stmt, ResultWriter& out);
  void select(EngineSession& s, const ast::SelectStatement& stmt, ResultWriter& out);
  // A SELECT without FROM: evaluated at once. Returns false for other queries.
  static bool isConstantQuery(const ast::Query& q);
  static std::string constantColumnName(const ast::SelectItem& item);

  PlanContext planContext(const EngineSession& s) const;
  std::string flowDir(const std::string& flow) const;
  // Moves a flow's directory of the earlier layout (its plain lower-cased
  // name) to flowDir(). At restore, before the flow is planned.
  void adoptLegacyFlowDir(const std::string& flow);
  std::string flowStateDir(const std::string& flow) const;
  std::unique_ptr<FlowRuntime> makeRuntime(PhysicalPlan plan, const std::string& flow);
  // In a cluster, the copy of flow `flow`'s state in the cluster's Kafka
  // (executor/state_copy.h); null on a server of its own or without a data
  // directory (no checkpoints to copy).
  std::shared_ptr<StateCopy> stateCopyFor(const std::string& flow) const;

  // Durability (durability.cpp). What the engine keeps about a flow beyond
  // its definition: whether it should run, how it was planned, and how the
  // supervisor is doing at bringing it back.
  struct FlowControl {
    bool wantRunning = true;
    std::vector<std::pair<std::string, std::string>> settings;  // session SETs at CREATE
    std::string lastError;         // why the last start failed
    int attempts = 0;              // failed starts since the flow last ran steadily
    int64_t nextAttemptMicros = 0; // monotonic; 0: at once
    int64_t runningSinceMicros = 0;
    bool failureSeen = false;      // the runtime's current failure is accounted for
  };
  // Whether this server runs flow `name`, whose runtime is `rt` (null: not
  // planned yet): always outside a cluster; in one, while this node holds the
  // flow's slot (server/cluster/membership.h), or for a flow spread over the
  // nodes (PhysicalPlan::spreadsPartitions), the slot of one of its partitions.
  bool flowRunsHere(const std::string& name, const FlowRuntime* rt) const;
  // Whether flow `name` is spread over the nodes of this server's cluster.
  bool spreadHere(const FlowRuntime* rt) const {
    return options_.cluster && rt && rt->plan().spreadsPartitions();
  }
  // Starts flow `name`'s runtime; a spread flow reads this node's share of
  // its partitions. Throws as FlowRuntime::start.
  void startRuntime(const std::string& name, FlowRuntime& rt);
  // Stops the runtimes of the flows this node no longer runs (its slots
  // moved to another node). Takes ddlMu_.
  void releaseFlows();
  // In a cluster: this node's progress of flow `name` (its runtime `rt`,
  // running here), as it publishes it to the other nodes.
  NodeProgress nodeProgress(const std::string& name, const FlowRuntime& rt) const;
  // In a cluster: EXPLAIN FLOW's last lines, which node runs flow `name`
  // (for a spread flow, which partitions each node reads); "" outside one.
  std::string placementExplained(const std::string& name, const FlowRuntime& rt) const;
  // The nodes other than this one that run flow `name` (or a part of it).
  std::set<std::string> otherRunners(const std::string& name, const FlowRuntime* rt) const;
  // One flow of the server's catalog as it runs: flows_ holds one entry per
  // flow of catalog_, under its lower-cased name, from CREATE FLOW (or its
  // restore) until DROP FLOW, which takes the entry out whole. The control is
  // always there; the runtime is null only while the flow has no plan (its
  // planning failed at restore, and the supervisor or START FLOW plans it
  // later) and after shutdown() has taken the runtimes away to stop them.
  // Guarded by flowsMu_, and written with ddlMu_ held too (but by restore(),
  // before anything else runs, and by shutdown()): a holder of ddlMu_ may
  // keep a reference to an entry across releases of flowsMu_.
  struct FlowEntry {
    std::unique_ptr<FlowRuntime> runtime;
    FlowControl control;
  };
  // The entry of a flow (name matched as SQL matches identifiers), or null.
  // With flowsMu_ held.
  const FlowEntry* findEntry(const std::string& name) const;
  // The status SHOW FLOWS and /flows report of a flow with entry `entry`
  // (null: none), and its reason. With flowsMu_ held.
  std::pair<FlowState, std::string> flowStatus(const std::string& name, const FlowEntry* entry) const;
  // What a statement is about to make of the catalog, for persistCatalog to
  // write before the statement changes anything in memory. Unset members
  // stand for the server's own: catalog_, tableInserts_, the controls in
  // flows_.
  struct CatalogChange {
    const Catalog* catalog = nullptr;
    const std::map<std::string, std::vector<std::string>>* inserts = nullptr;
    std::string flow;                    // lower-cased name of a flow whose control changes
    const FlowControl* control = nullptr;  // its control as it will be
  };
  // Writes the catalog file as `change` describes it. With ddlMu_ held;
  // throws SqlError 58030, and then the caller changes nothing.
  void persistCatalog(const CatalogChange& change);
  // Makes `change` to `catalog` durably: when it is the server's catalog, the
  // change is first made to a copy, the catalog file is written as the copy
  // then is (with `extra`), and only then is `catalog` changed, so a change
  // the file cannot record changes nothing. Returns what `change` returned;
  // false (nothing to do, as for IF [NOT] EXISTS) writes nothing.
  bool changeCatalog(Catalog& catalog, const std::function<bool(Catalog&)>& change,
                     CatalogChange extra);
  bool changeCatalog(Catalog& catalog, const std::function<bool(Catalog&)>& change);
  // Writes the catalog file with `flow` wanted running or stopped, before
  // setWantRunning() says so in memory. With ddlMu_ held; throws as
  // persistCatalog does.
  void persistWantRunning(const std::string& flow, bool run);
  void setWantRunning(const std::string& flow, bool run);
  void restoreFlow(const struct CatalogRecord& record);
  // Applies what another node of the cluster wrote to the catalog topic
  // (server/cluster/follow.cpp). On the follower's thread.
  void applyClusterEntry(const ClusterEntry& entry);
  // Plans a catalog flow that has no runtime yet (its planning failed at
  // restore) and registers its runtime. With ddlMu_ held.
  FlowRuntime* planRestoredFlow(const std::string& name);
  // Sharded flows (server/flows/shard_copies.cpp, planner/shard_plan.h). The
  // entries of flow `flow`'s copies after the first, `<flow>#i`, as flows_
  // holds them (lower-cased), in copy order; with flowsMu_ held.
  std::vector<std::string> shardEntries(const std::string& flow) const;
  // Makes flows_ hold the copies flow `flow`'s plan asks for, each planned
  // from it with the flow's control (none while the flow has no plan). With
  // ddlMu_ held.
  void syncShards(const std::string& flow);
  // Forgets flow `flow`'s copies: stopped, their files removed, and the
  // state copies of those that ran here deleted. With ddlMu_ held.
  void dropShards(const std::string& flow);
  // Stops every copy of flow `flow` but the first; starts those that run
  // here and are not running. With ddlMu_ held.
  void stopShards(const std::string& flow);
  void startShardsHere(const std::string& flow);
  // Deletes a dropped sharded flow's exchange topics (`exchange`, from its
  // plan); logs what it cannot delete.
  void dropExchangeTopics(const std::string& flow, const std::vector<ExchangeSpec>& exchange);
  // The definition of flow `name`, or of the flow whose copy `name` is.
  Catalog::FlowPtr findFlowOrCopy(const std::string& name) const;
  void supervise();
  void superviseOnce();
  static bool retryable(const std::string& sqlstate);
  // The relations a flow's plan reads and writes: every source it scans, every
  // static table it joins, and its sink. The catalog refuses to drop them while the flow exists (55006).
  static std::vector<std::string> flowInputs(const PhysicalPlan& plan, const std::string& sink);
  static std::vector<std::pair<std::string, std::string>> settingsOf(const EngineSession& s);
  FlowRuntime* findRuntime(const std::string& name);
  static void sendRows(ResultWriter& out, const std::vector<ResultColumn>& cols, const Rows& rows,
                       const std::string& tag);

  EngineOptions options_;
  ConnectorProvider& connectors_;
  Catalog catalog_;
  SlotPool slots_;
  // The Kafka consumers live queries share (SHOW live_taps).
  std::unique_ptr<KafkaTaps> liveTaps_;
  std::unique_ptr<Privileges> privileges_;
  std::unique_ptr<LiveQueryQuota> liveQuota_;

  // Serializes statements that change the catalog or the set of running flows,
  // so a CREATE FLOW and a DROP SOURCE can never interleave. Reads (SHOW
  // PROGRESS) do not take it.
  // Recursive: a change another node of the cluster made is applied, under
  // it, through the statement handlers, which take it again.
  std::recursive_mutex ddlMu_;
  mutable std::mutex flowsMu_;
  // Flows (lower-cased) a STOP FLOW or DROP FLOW is waiting for without
  // ddlMu_ (a task may take long to stop): until it has, the flow is not
  // started, dropped or created again. Under flowsMu_.
  std::set<std::string> stoppingFlows_;
  // Throws 55006 when flow `name` is in stoppingFlows_; `what` is the statement.
  void requireNotStopping(const std::string& name, size_t pos, const std::string& what) const;
  // Puts flow `name` in stoppingFlows_ for its scope.
  class StoppingFlow {
   public:
    StoppingFlow(Engine& engine, std::string name);
    ~StoppingFlow();
    StoppingFlow(const StoppingFlow&) = delete;
    StoppingFlow& operator=(const StoppingFlow&) = delete;

   private:
    Engine& engine_;
    std::string name_;
  };
  std::map<std::string, FlowEntry> flows_;  // lower-cased names; see FlowEntry
  std::map<std::string, std::vector<std::string>> tableInserts_;  // INSERTs per table, under ddlMu_
  std::vector<struct CatalogRecord> unrestored_;  // records a restart could not apply, kept as they were
  // Records a restart put off because they needed a remote service (a
  // schema registry), and those after one that failed; under ddlMu_. The
  // restorer thread tries them again until they all come back.
  std::vector<struct CatalogRecord> deferred_;
  std::thread restorer_;
  std::mutex restorerMu_;
  std::condition_variable restorerCv_;
  std::atomic<bool> restorerStop_{false};
  void restoreDeferred();
  // The thread replaying the catalog (restore() or a cluster change): its
  // statements were checked where they were first run, and are not written
  // back. Other threads' statements are checked and recorded as ever.
  std::atomic<std::thread::id> restoringThread_{};
  bool restoring() const { return restoringThread_.load() == std::this_thread::get_id(); }
  struct RestoringScope {
    explicit RestoringScope(Engine& e) : engine(e), previous(e.restoringThread_.exchange(std::this_thread::get_id())) {}
    ~RestoringScope() { engine.restoringThread_.store(previous); }
    Engine& engine;
    std::thread::id previous;
  };

  std::mutex supervisorMu_;
  std::condition_variable supervisorCv_;
  bool supervisorStop_ = false;
  // The cluster's group waits for releaseFlows(), which waits for ddlMu_.
  std::atomic<bool> releasePending_{false};
  std::thread supervisor_;
  // In a cluster: which flows this node runs. Made in restore(), before any
  // thread but restore's own reads it.
  std::unique_ptr<ClusterMembership> membership_;
  // In a cluster: every node's progress of the flows, for SHOW PROGRESS.
  // Made in restore(), as membership_.
  std::unique_ptr<ClusterProgress> clusterProgress_;
  // In a cluster with a data directory: the standby copies this node keeps.
  // Made in restore(), as membership_.
  std::unique_ptr<ClusterStandbys> standbys_;
};

}  // namespace rtsql
