// What CREATE OR REPLACE FLOW does with a running flow's state: the state
// plan. The stateful operators of the running plan and of the new one are
// matched in plan order by kind, and each gets a fate: its state kept (the
// same kind over the same key, with values the new operator reads as its
// own), new (starts empty), dropped, or incompatible, with the reasons in
// words. Sources are matched by name: a source read before goes on from its
// checkpointed offsets, a new or changed one from its startingOffsets.
//
// The plan also says how the state moves (StateMigration): operator ids and
// stage ids are numbered by the planner in plan order, so an operator added
// before a kept one moves the kept one's id, and its state keys, which are
// prefixed with the id (executor/state/state_store.h), are moved with it.
// EXPLAIN CREATE OR REPLACE FLOW prints the plan (lines()); the server
// applies it (server/flow_replace.h).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "planner/physical_plan.h"

namespace rtsql {

enum class StateFate { Kept, New, Dropped, Incompatible, Reset };

const char* stateFateName(StateFate fate);

struct OperatorStateChange {
  StateFate fate = StateFate::New;
  int oldId = -1;  // -1: new
  int newId = -1;  // -1: dropped
  std::string kind;  // "Aggregate", "Dedup", ...
  std::string text;  // the operator's EXPLAIN line (the new one's, or the old one's when dropped)
  // Incompatible: why, in words. Kept: what changes nonetheless (an
  // aggregate added, which starts empty).
  std::vector<std::string> reasons;
};

struct SourceOffsetChange {
  std::string source;
  bool kept = false;  // goes on from its checkpointed offsets
  int oldScan = -1;   // -1: the running flow does not read it
  int newScan = -1;   // -1: the new flow no longer reads it
  std::string reason;  // why not kept
};

// How a checkpoint of the running plan becomes one the new plan restores:
// the state keys of operator `old` move to `operators[old]` (absent: the
// state is dropped), the positions of scan `old` to scans[old], the task
// watermarks of stage `old` to stages[old]. It applies to the checkpoints of
// epochs up to `lastOldEpoch`, those the running plan wrote.
struct StateMigration {
  uint64_t lastOldEpoch = 0;
  std::map<int, int> operators;
  std::map<int, int> scans;
  std::map<int, int> stages;

  // Whether it changes nothing (every id maps to itself and nothing is dropped
  // that the old plan kept).
  bool identity(const std::vector<int>& oldStatefulIds, int oldScans, int oldStages) const;
  // One line of text, kept with the flow in the catalog, and back; nullopt for
  // text that is not one.
  std::string format() const;
  static std::optional<StateMigration> parse(const std::string& text);
};

// A materialized view's own table (its flow's sink: each key's row, and the
// changelog its readers follow) is state too. It is kept when the new plan
// writes rows of the same columns under the same key from as many tasks;
// otherwise it is incompatible, and only a RESET STATE of everything, which
// rebuilds it from the sources' startingOffsets, replaces the view.
struct ViewTableChange {
  StateFate fate = StateFate::Kept;
  std::string text;  // "view table v key=(...) columns (...)"
  std::vector<std::string> reasons;  // Incompatible: why
};

// The view table's fate when both plans write a materialized view; nullopt
// otherwise (planner/view_state_plan.cpp).
std::optional<ViewTableChange> planViewTableChange(const PhysicalPlan& running,
                                                   const PhysicalPlan& next);

struct StatePlan {
  std::vector<OperatorStateChange> operators;
  std::optional<ViewTableChange> viewTable;  // a materialized view's
  std::vector<SourceOffsetChange> sources;
  // Whole-flow changes that make the state unusable (shards).
  std::vector<std::string> flowReasons;
  // The new plan is the running plan: nothing to do.
  bool unchanged = false;
  // Stages whose task watermarks carry over: a kept operator's, and a kept
  // source's, when they run as many tasks as before (old id -> new id).
  std::map<int, int> stages;

  bool compatible() const;
  // Whether a materialized view's table, and its changelog, carry over.
  bool keepsViewTable() const { return viewTable && viewTable->fate == StateFate::Kept; }
  // RESET STATE: every operator (ids empty) or those of `ids` (new ids) start
  // empty. Throws SqlError 42704 at `pos` for an id that names no stateful
  // operator of the new plan.
  void reset(const std::vector<int>& ids, size_t pos);
  // The state moves the plan makes; lastOldEpoch is left to the caller.
  StateMigration migration() const;
  // What EXPLAIN CREATE OR REPLACE FLOW prints, one line each.
  std::vector<std::string> lines() const;
  // The incompatible operators' reasons, one sentence each.
  std::string reasonsText() const;
};

StatePlan planStateChange(const PhysicalPlan& running, const PhysicalPlan& next);

}  // namespace rtsql
