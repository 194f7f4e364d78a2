// The changelog of a stream: what an operator's output rows mean to the
// operators and the sink after it, derived by the planner for every operator of
// a physical plan and printed by EXPLAIN.
//
// A stream is one of:
//   append   every row is a new fact; nothing before it changes (a scan, a
//            filter or projection of one, a join with a static table, dedup,
//            an interval join, a window emitted when it closes);
//   updates  a row is the new value of an earlier row: the one with the same
//            unique key, which it replaces (Spark's update mode: an aggregation
//            emits its group's new row on every change). Without a unique key
//            the reader cannot tell which row a row replaces. Nothing is ever
//            deleted, and the old value is not sent;
//   retract  every change is spelled out (common/row_kind.h): an insert, a
//            delete, or an update as the old row (UpdateBefore) then the new
//            one (UpdateAfter). This is what a stateful operator needs from
//            its input when that input is not append-only, so that it can take
//            the old row out of what it keeps before it puts the new one in.
// The planner picks the cheapest mode that serves every reader: an
// aggregation emits updates unless a stateful operator or a sink that writes
// retractions reads its rows, or a filter stands between it and an upsert
// sink (a filter can drop a key's new row, and only a delete then takes the
// old one out); an append-only flow pays for nothing.
// The unique key is a set of output columns no two rows of an append stream
// share, and under which an update replaces its predecessor. A projection
// keeps it when it keeps those columns as they are; anything that may repeat
// or merge rows loses it.
//
// Beside the mode, each stateful operator says what state it keeps and what
// bounds it: the watermark (windows, interval joins, dedup WITHIN WATERMARK)
// or nothing, in which case the state grows with the number of keys. EXPLAIN
// calls the unbounded ones out.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace rtsql {

struct PhysicalPlan;
struct Schema;

enum class ChangelogMode {
  Append,
  Updates,
  Retract,
};

// "append", "updates", "retract".
const char* changelogModeName(ChangelogMode mode);

struct Changelog {
  ChangelogMode mode = ChangelogMode::Append;
  // Output columns that identify a row; std::nullopt when none is known.
  // An empty key (a global aggregate's single row) is a key too.
  std::optional<std::vector<int>> uniqueKey;
  // Stateful operators only: what the state holds and what drops it, e.g.
  // "a row per key, kept without bound". Empty for stateless operators.
  std::string state;
  bool stateUnbounded = false;
  // Columns of uniqueKey that hold a window of a fixed size (tumbling or
  // sliding): its start, or its end, alone stands for it, so a projection
  // that keeps only `window.start AS minute` keeps the key.
  std::vector<int> windowKey;

  // "append", "append, unique (event_id)", "updates by (user_id)",
  // "updates, no key", "retract by (user_id)", over the columns of `schema`.
  std::string describe(const Schema& schema) const;
};

// Fills OperatorSpecBase::changelog and ::input of every operator of `plan`,
// and PhysicalPlan::output, in stage order (a stage's input is the output of
// the stages that shuffle into it). Aggregations emit retractions when a
// stateful operator reads their rows or the sink takes retractions
// (sinkTakesRetractions()), updates otherwise.
void deriveChangelog(PhysicalPlan& plan);

// Whether a source of this format reads a changelog (its rows insert, update
// and delete: 'debezium-json') rather than an append stream.
bool changelogFormat(const std::string& format);

// Whether the flow's sink writes every change (UpdateBefore and Delete
// included) rather than only each key's latest row.
bool sinkTakesRetractions(const PhysicalPlan& plan);

}  // namespace rtsql
