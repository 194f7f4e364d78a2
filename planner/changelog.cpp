// Derives each operator's changelog (changelog.h) from its input's: one rule
// per operator kind, applied stage by stage.
#include "planner/changelog.h"

#include <fmt/format.h>

#include <algorithm>
#include <type_traits>

#include "common/expr.h"
#include "common/functions/internal.h"
#include "planner/logical_plan.h"
#include "planner/physical_plan.h"
#include "planner/sink_changelog.h"
#include "planner/view_input.h"

namespace rtsql {

namespace {

// The input column `e` reads a struct field of, and the field's name, when
// `e` is `column.field` of a plain column reference (`window.start`); else
// -1 and "".
std::pair<int, std::string> columnFieldRef(const Expr& e) {
  const auto* access = dynamic_cast<const expr_internal::FieldAccessExpr*>(&e);
  if (!access) return {-1, {}};
  int column = -1;
  access->forEachChild([&](const Expr& base) { column = columnRefIndex(base); });
  if (column < 0) return {-1, {}};
  return {column, access->field()};
}

// Key columns of `in` followed through expressions that read the input row:
// position j of the output holds input column k when exprs[j] is a plain
// reference to k, or, for a window of a fixed size (Changelog::windowKey),
// its start or end field. Nullopt unless every key column is still there.
// `windowKey` receives the output positions that still hold whole windows.
std::optional<std::vector<int>> followKey(const Changelog& in, const std::vector<ExprPtr>& exprs,
                                          std::vector<int>* windowKey = nullptr) {
  if (!in.uniqueKey) return std::nullopt;
  std::vector<int> out;
  for (int k : *in.uniqueKey) {
    int found = -1;
    for (size_t j = 0; j < exprs.size() && found < 0; ++j) {
      if (exprs[j] && columnRefIndex(*exprs[j]) == k) found = static_cast<int>(j);
    }
    const bool window =
        std::find(in.windowKey.begin(), in.windowKey.end(), k) != in.windowKey.end();
    if (found >= 0) {
      if (window && windowKey) windowKey->push_back(found);
    } else if (window) {
      for (size_t j = 0; j < exprs.size() && found < 0; ++j) {
        if (!exprs[j]) continue;
        auto [column, field] = columnFieldRef(*exprs[j]);
        if (column == k && (iequals(field, "start") || iequals(field, "end")))
          found = static_cast<int>(j);
      }
    }
    if (found < 0) return std::nullopt;
    out.push_back(found);
  }
  return out;
}

// Output columns 0..n-1: the group keys an aggregation lays out first.
std::vector<int> leading(size_t n) {
  std::vector<int> out;
  for (size_t i = 0; i < n; ++i) out.push_back(static_cast<int>(i));
  return out;
}

Changelog ofAggregate(const AggregateSpec& spec) {
  Changelog out;
  const size_t keys = spec.groupKeys.size();
  switch (spec.window.kind) {
    case WindowKind::None:
      out.mode = ChangelogMode::Updates;
      out.uniqueKey = leading(keys);
      if (keys == 0) {
        out.state = "one row for the whole stream";
      } else {
        out.state = "a row per key, kept without bound";
        out.stateUnbounded = true;
      }
      break;
    case WindowKind::Tumbling:
    case WindowKind::Sliding:
      // The window column follows the group keys.
      out.mode = spec.emitOnWindowClose ? ChangelogMode::Append : ChangelogMode::Updates;
      out.uniqueKey = leading(keys + 1);
      out.windowKey = {static_cast<int>(keys)};
      out.state = "a row per key and window, dropped when the watermark passes the window's end";
      break;
    case WindowKind::Session:
      if (spec.emitOnWindowClose) {
        out.mode = ChangelogMode::Append;
        out.uniqueKey = leading(keys + 1);
      } else {
        // A session's window grows with its rows and sessions merge: an
        // update does not name the row it replaces.
        out.mode = ChangelogMode::Updates;
      }
      out.state = "the open sessions per key, dropped when the watermark passes a session's end";
      break;
  }
  return out;
}

Changelog ofDedup(const DedupSpec& spec) {
  Changelog out;  // append: the first row of each key passes unchanged
  std::vector<int> key;
  bool plain = true;
  for (const ExprPtr& e : spec.dedupKeys) {
    int k = e ? columnRefIndex(*e) : -1;
    if (k < 0) plain = false;
    key.push_back(k);
  }
  // Unique only while a key is remembered: WITHIN WATERMARK lets it pass again.
  if (plain && !spec.withinWatermark) out.uniqueKey = key;
  if (spec.withinWatermark) {
    out.state = "a key per first row, forgotten when the watermark passes its event time";
  } else {
    out.state = "every key seen, kept without bound";
    out.stateUnbounded = true;
  }
  return out;
}

// Top-N: a row entering or leaving the top, or changing rank, is a change
// to rows already emitted, so the output always retracts.
Changelog ofTopN(const TopNSpec& spec, ChangelogMode input) {
  Changelog out;
  out.mode = ChangelogMode::Retract;
  std::vector<int> key;
  bool plain = true;
  for (const ExprPtr& e : spec.partitionKeys) {
    int k = e ? columnRefIndex(*e) : -1;
    if (k < 0) plain = false;
    key.push_back(k);
  }
  // (partition, rank) names one row; without the rank only a top-1 does.
  // RANK() and DENSE_RANK() give tied rows one rank: no key names a row.
  if (spec.function != TopNSpec::Function::RowNumber) {
    // no unique key
  } else if (plain && spec.rankColumn) {
    key.push_back(static_cast<int>(spec.output.columns.size()) - 1);
    out.uniqueKey = key;
  } else if (plain && spec.limit == 1) {
    out.uniqueKey = key;
  }
  if (input != ChangelogMode::Append) {
    out.state = "every row per key (to refill the top when a row is retracted), kept without bound";
    out.stateUnbounded = true;
  } else if (spec.function != TopNSpec::Function::RowNumber) {
    out.state = fmt::format("the rows ranked 1 to {} (ties included) {}", spec.limit,
                            spec.partitionKeys.empty() ? "for the whole stream"
                                                       : "per key, kept without bound");
    out.stateUnbounded = !spec.partitionKeys.empty();
  } else if (spec.partitionKeys.empty()) {
    out.state = fmt::format("the top {} {} for the whole stream", spec.limit,
                            spec.limit == 1 ? "row" : "rows");
  } else {
    out.state = fmt::format("the top {} {} per key, kept without bound", spec.limit,
                            spec.limit == 1 ? "row" : "rows");
    out.stateUnbounded = true;
  }
  return out;
}

// `retract`: aggregations spell out their changes (see deriveChangelog()).
Changelog next(const Changelog& in, const OperatorSpec& op, bool retract) {
  return std::visit(
      [&](const auto& spec) -> Changelog {
        using Spec = std::decay_t<decltype(spec)>;
        Changelog out;
        if constexpr (std::is_same_v<Spec, FilterSpec>) {
          out.mode = in.mode;
          out.uniqueKey = in.uniqueKey;
          out.windowKey = in.windowKey;
        } else if constexpr (std::is_same_v<Spec, VectorizedBatchSpec>) {
          out.mode = in.mode;  // the same rows, in the same order
          out.uniqueKey = in.uniqueKey;
          out.windowKey = in.windowKey;
        } else if constexpr (std::is_same_v<Spec, ExpandSpec>) {
          out.mode = in.mode;  // one row becomes several: no key survives
        } else if constexpr (std::is_same_v<Spec, ProjectSpec>) {
          out.mode = in.mode;
          out.uniqueKey = followKey(in, spec.exprs, &out.windowKey);
        } else if constexpr (std::is_same_v<Spec, BroadcastJoinSpec>) {
          // A stream row may match several table rows: no key survives.
          out.mode = in.mode;
        } else if constexpr (std::is_same_v<Spec, AggregateSpec>) {
          out = ofAggregate(spec);
          // Rows retracted from a group may empty it, which only a delete can say.
          if (out.mode == ChangelogMode::Updates && (retract || in.mode != ChangelogMode::Append))
            out.mode = ChangelogMode::Retract;
        } else if constexpr (std::is_same_v<Spec, DedupSpec>) {
          out = ofDedup(spec);
        } else if constexpr (std::is_same_v<Spec, StreamJoinSpec>) {
          out.mode = in.mode;
          if (!spec.unbounded) {
            out.state =
                "the rows of both sides, dropped when the watermark passes their time bound";
          } else {
            // A row of an outer side is first emitted with NULLs and replaced
            // when it finds a match; a retracted input row retracts its pairs.
            if (spec.leftOuter || spec.rightOuter || in.mode != ChangelogMode::Append)
              out.mode = ChangelogMode::Retract;
            if (spec.stateTtlMicros > 0) {
              out.state =
                  "the rows of both sides per key, dropped when the watermark passes "
                  "their event time + " +
                  planner_detail::formatDuration(spec.stateTtlMicros);
            } else {
              out.state = "the rows of both sides per key, kept without bound";
              out.stateUnbounded = true;
            }
          }
        } else if constexpr (std::is_same_v<Spec, TopNSpec>) {
          out = ofTopN(spec, in.mode);
        } else if constexpr (std::is_same_v<Spec, TransformSpec>) {
          // The processor yields new rows; it never takes back a row it gave.
          out.mode = ChangelogMode::Append;
          out.state = "the processor's states per key, kept until it clears them or their TTL";
        } else if constexpr (std::is_same_v<Spec, OverAggregateSpec>) {
          // A row that lands before others (out of order, or retracted) changes
          // the aggregates of the rows after it: the output always retracts.
          out.mode = ChangelogMode::Retract;
          out.state = spec.partitionKeys.empty() ? "every row of the stream, kept without bound"
                                                 : "every row per key, kept without bound";
          out.stateUnbounded = true;
        }
        return out;
      },
      op.kind());
}

// Several streams into one input (the branches of a UNION ALL): rows of
// different branches may share a key, so only a single stream keeps one.
Changelog merge(const std::vector<Changelog>& inputs) {
  if (inputs.size() == 1)
    return Changelog{inputs[0].mode, inputs[0].uniqueKey, {}, false, inputs[0].windowKey};
  Changelog out;
  for (const Changelog& c : inputs) {
    if (c.mode > out.mode) out.mode = c.mode;
  }
  return out;
}

// One forward pass over the stages; false when a stateful operator or the sink
// would read updates it cannot use (they lack the old row), so that the pass
// must run again with aggregations emitting retractions.
bool derive(PhysicalPlan& plan, bool retract) {
  bool enough = true;
  const bool upsert = modeOf(plan.sink) == SinkMode::Upsert;
  std::vector<Changelog> stageOut(plan.stages.size());
  std::vector<Changelog> toSink;
  for (size_t s = 0; s < plan.stages.size(); ++s) {
    StageSpec& stage = plan.stages[s];
    Changelog in;  // a source stage reads an append stream, or a changelog source's retractions
    if (stage.scan >= 0 && changelogFormat(plan.scans[static_cast<size_t>(stage.scan)].format)) {
      in.mode = ChangelogMode::Retract;
      // A view's changelog is keyed by the view's key (planner/view_input.h).
      in.uniqueKey = viewInputKey(plan.scans[static_cast<size_t>(stage.scan)]);
    }
    if (stage.scan < 0) {
      std::vector<Changelog> inputs;
      for (size_t p = 0; p < s; ++p) {
        const StageSpec& producer = plan.stages[p];
        if (producer.output.feeds(stage.id)) inputs.push_back(stageOut[p]);
      }
      if (!inputs.empty()) in = merge(inputs);
      // The merged mode is the strongest input's: a join of a changelog
      // source's retractions with an aggregation's updates must still have
      // the updates spelled out, or it keeps each update as a new row.
      const bool stateful = !stage.operators.empty() && stage.operators.front().stateful();
      for (const Changelog& c : inputs) {
        if (c.mode == ChangelogMode::Updates && stateful) enough = false;
      }
    }
    for (OperatorSpec& op : stage.operators) {
      if (in.mode == ChangelogMode::Updates && op.stateful()) enough = false;
      // A filter may drop a key's new row: only a delete can then take the
      // key's earlier row out of an upsert sink, and a filter can tell that
      // only from the old row (filter.cpp).
      if (in.mode == ChangelogMode::Updates && std::holds_alternative<FilterSpec>(op.kind()) &&
          upsert)
        enough = false;
      op.base().input = in.mode;
      in = next(in, op, retract);
      op.base().changelog = in;
    }
    stageOut[s] = in;
    if (stage.output.kind == StageOutput::Kind::Sink) toSink.push_back(in);
  }
  plan.output = toSink.empty() ? Changelog{} : merge(toSink);
  if (plan.output.mode == ChangelogMode::Updates && sinkTakesRetractions(plan)) enough = false;
  return enough;
}

}  // namespace

const char* changelogModeName(ChangelogMode mode) {
  switch (mode) {
    case ChangelogMode::Append:
      return "append";
    case ChangelogMode::Updates:
      return "updates";
    case ChangelogMode::Retract:
      return "retract";
  }
  return "?";
}

bool changelogFormat(const std::string& format) {
  return iequals(format, "debezium-json") || format == kViewChangelogFormat;
}

bool sinkTakesRetractions(const PhysicalPlan& plan) {
  return plan.sink.format == "debezium-json";
}

std::string Changelog::describe(const Schema& schema) const {
  std::string out = changelogModeName(mode);
  if (!uniqueKey) return out + (mode != ChangelogMode::Append ? ", no key" : "");
  std::string names;
  for (int k : *uniqueKey) {
    if (!names.empty()) names += ", ";
    names += k >= 0 && static_cast<size_t>(k) < schema.columns.size()
                 ? schema.columns[static_cast<size_t>(k)].name
                 : "#" + std::to_string(k);
  }
  return out + (mode == ChangelogMode::Append ? ", unique (" : " by (") + names + ")";
}

void deriveChangelog(PhysicalPlan& plan) {
  if (!derive(plan, false)) derive(plan, true);
}

}  // namespace rtsql
