// CREATE OR REPLACE FLOW and its EXPLAIN: a running flow's query changed
// with its state carried over, as the state plan (planner/state_plan.h)
// says. The running plan ends its epoch and checkpoints; the catalog then
// records the new statement together with the state migration, so that
// every start of the new plan (this one, or one after a crash or restart)
// restores that checkpoint through it (executor/flow_state_migration.cpp).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "planner/state_plan.h"
#include "server/engine_context.h"

namespace rtsql {

// The flow control setting that holds a replaced flow's pending migration.
inline constexpr const char* kStateMigrationSetting = "rtsql.state_migration";

// The migration a flow's settings hold, if any.
std::optional<StateMigration> storedStateMigration(
    const std::vector<std::pair<std::string, std::string>>& settings);

class FlowReplace {
 public:
  explicit FlowReplace(EngineContext& ctx) : ctx_(ctx) {}

  // A plan to replace a running flow's: the running plan's runtime, the new
  // plan, and what becomes of the state.
  struct ReplacePlan {
    FlowRuntime* rt = nullptr;  // the running plan's runtime
    PhysicalPlan plan;          // the new plan
    StatePlan state;
    bool remote = false;  // another node of the cluster runs the flow
  };
  // CREATE OR REPLACE FLOW of a flow that exists (with the statement lock
  // held, by `lock` when given), and EXPLAIN of it.
  ReplacePlan planReplace(EngineSession& s, const ast::CreateFlow& stmt);
  void replaceFlow(EngineSession& s, const ast::CreateFlow& stmt, ResultWriter& out,
                   StatementLock::Guard* lock = nullptr);
  // A checked replace of a flow another node of the cluster runs: that node
  // is asked to do it, and the statement waits for its answer, without the
  // statement lock meanwhile (remote_replace.cpp).
  void requestRemoteReplace(EngineSession& s, const ast::CreateFlow& stmt, ResultWriter& out,
                            StatementLock::Guard& lock);
  std::vector<std::string> explainReplace(EngineSession& s, const ast::CreateFlow& stmt);
  // The pieces of a replace that a transaction block's COMMIT shares: with
  // the running plan stopped, the migration its newest checkpoint goes
  // through (put into `control` as the replace leaves it); the new plan into
  // the catalog and the registry, started when `start`.
  std::optional<StateMigration> replaceMigration(const std::string& flow, const ReplacePlan& r,
                                                 bool resetAll, const EngineSession& s,
                                                 FlowControl& control);
  void installReplaced(const std::string& flow, FlowDef def, ReplacePlan r,
                       const std::optional<StateMigration>& migration, bool resetAll,
                       const FlowControl& control, bool start, ResultWriter& out);
  // CREATE OR REPLACE FLOW ... FROM SAVEPOINT (replace_from_savepoint.cpp):
  // the new plan goes on from a savepoint of it.
  void replaceFromSavepoint(EngineSession& s, const ast::CreateFlow& stmt, ResultWriter& out);
  // Its EXPLAIN: the new plan set against the plan the savepoint was taken of.
  std::vector<std::string> explainFromSavepoint(EngineSession& s, const ast::CreateFlow& stmt);
  // Throws 55000 with the reasons when the state plan refuses the replace,
  // and 2BP01 when a view other flows read would be rebuilt from empty.
  void requireCompatible(const ast::CreateFlow& stmt, const StatePlan& state);

 private:
  EngineContext& ctx_;
};

}  // namespace rtsql
