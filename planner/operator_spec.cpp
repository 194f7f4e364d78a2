// What each operator spec prints as its line of EXPLAIN (describe()), next to
// the other kinds' so that the operator lines read alike; the plan around them
// (stages, scans, shuffles, the sink) is printed by explain.cpp.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>

#include "common/python/function.h"
#include "common/python/vectorized_call.h"
#include "planner/logical_plan.h"
#include "planner/operator_spec.h"

namespace rtsql {

const char* aggregateFunctionName(AggregateFunction f) {
  switch (f) {
    case AggregateFunction::CountStar:
    case AggregateFunction::Count: return "count";
    case AggregateFunction::Sum: return "sum";
    case AggregateFunction::Min: return "min";
    case AggregateFunction::Max: return "max";
    case AggregateFunction::Avg: return "avg";
    case AggregateFunction::CountIf: return "count_if";
    case AggregateFunction::StddevSamp: return "stddev_samp";
    case AggregateFunction::StddevPop: return "stddev_pop";
    case AggregateFunction::VarSamp: return "var_samp";
    case AggregateFunction::VarPop: return "var_pop";
    case AggregateFunction::BoolAnd: return "bool_and";
    case AggregateFunction::BoolOr: return "bool_or";
    case AggregateFunction::MaxBy: return "max_by";
    case AggregateFunction::MinBy: return "min_by";
    case AggregateFunction::First: return "first";
    case AggregateFunction::Last: return "last";
    case AggregateFunction::CollectList: return "collect_list";
    case AggregateFunction::CollectSet: return "collect_set";
    case AggregateFunction::StringAgg: return "string_agg";
    case AggregateFunction::ApproxCountDistinct: return "approx_count_distinct";
    case AggregateFunction::Percentile: return "percentile";
    case AggregateFunction::PercentileApprox: return "percentile_approx";
  }
  return "?";
}

int hyperLogLogPrecision(double relativeSD) {
  return static_cast<int>(std::ceil(2.0 * std::log(1.106 / relativeSD) / std::log(2.0)));
}

bool aggregateTakesRetractions(AggregateFunction f) {
  switch (f) {
    case AggregateFunction::MaxBy:
    case AggregateFunction::MinBy:
    case AggregateFunction::First:
    case AggregateFunction::Last:
    case AggregateFunction::ApproxCountDistinct:
      return false;
    default:
      return true;
  }
}

std::string filterConditionText(const std::string& condition) {
  const std::string& t = condition;
  if (t.size() < 2 || t.front() != '(' || t.back() != ')') return t;
  int depth = 0;
  for (size_t i = 0; i + 1 < t.size(); ++i) {
    depth += t[i] == '(' ? 1 : t[i] == ')' ? -1 : 0;
    if (depth == 0) return t;  // the first '(' closes before the end
  }
  return t.substr(1, t.size() - 2);
}

namespace {

using planner_detail::exprList;
using planner_detail::formatDuration;
using planner_detail::plural;

std::string aggregateText(const AggregateCall& call) {
  const char* name = aggregateFunctionName(call.function);
  std::string args = call.arg ? call.arg->toString() : std::string("?");
  switch (call.function) {
    case AggregateFunction::First:
    case AggregateFunction::Last:
      if (call.ignoreNulls) args += ", true";
      break;
    case AggregateFunction::StringAgg:
      args += ", '" + call.separator + "'";
      break;
    case AggregateFunction::ApproxCountDistinct:
      args += fmt::format(", {}", call.relativeSD);
      break;
    case AggregateFunction::Percentile:
    case AggregateFunction::PercentileApprox:
      args += call.percentagesArray ? fmt::format(", array({})", fmt::join(call.percentages, ", "))
                                    : fmt::format(", {}", call.percentages.at(0));
      if (call.function == AggregateFunction::PercentileApprox)
        args += fmt::format(", {}", call.accuracy);
      break;
    default:
      break;
  }
  std::string out = call.function == AggregateFunction::CountStar
                        ? std::string("count(*)")
                        : fmt::format("{}({}{})", name, call.distinct ? "DISTINCT " : "", args);
  if (call.filter) {
    out += fmt::format(" FILTER (WHERE {})", filterConditionText(call.filter->toString()));
  }
  return out;
}

std::string windowText(const WindowSpec& w) {
  std::string time = w.time ? " on " + w.time->toString() : std::string();
  switch (w.kind) {
    case WindowKind::Tumbling: return "tumbling " + formatDuration(w.sizeMicros) + time;
    case WindowKind::Sliding:
      return fmt::format("sliding {} every {}{}", formatDuration(w.sizeMicros),
                         formatDuration(w.slideMicros), time);
    case WindowKind::Session: return "session gap " + formatDuration(w.gapMicros) + time;
    case WindowKind::None: break;
  }
  return "none";
}

std::string joinKeys(const std::vector<ExprPtr>& a, const std::vector<ExprPtr>& b) {
  std::string out = "on [";
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    if (i) out += ", ";
    out += a[i]->toString() + " = " + b[i]->toString();
  }
  return out + "]";
}

}  // namespace

std::string FilterSpec::describe() const {
  return "Filter " + (predicate ? predicate->toString() : std::string("?"));
}

std::string ProjectSpec::describe() const {
  if (exprs.empty()) return "Project (no columns)";
  std::string out = "Project ";
  for (size_t i = 0; i < exprs.size(); ++i) {
    if (i) out += ", ";
    std::string text = exprs[i]->toString();
    out += text;
    if (i < output.columns.size() && output.columns[i].name != text) {
      out += " AS " + output.columns[i].name;
    }
  }
  return out;
}

std::string ExpandSpec::describe() const {
  static constexpr const char* kNames[] = {"unnest", "generate_series", "generate_subscripts",
                                           "_pg_expandarray"};
  std::string out = "Expand ";
  for (size_t i = 0; i < calls.size(); ++i) {
    out += i ? ", " : "";
    out += kNames[static_cast<int>(calls[i].function)];
    out += "(";
    for (size_t a = 0; a < calls[i].args.size(); ++a)
      out += (a ? ", " : "") + calls[i].args[a]->toString();
    out += ")";
  }
  return out;
}

std::string VectorizedBatchSpec::describe() const {
  std::string names;
  for (const VectorizedCall& c : vectorizedCallsIn(calls))
    names += (names.empty() ? "" : ", ") + c.function;
  return fmt::format("VectorizedBatch [{}] (up to {} rows)", names, kMaxVectorizedBatchRows);
}

std::string BroadcastJoinSpec::describe() const {
  std::string out = fmt::format("BroadcastJoin {} table={}", leftOuter ? "left" : "inner",
                                tableName.empty() ? std::string("?") : tableName);
  if (tableRows) out += fmt::format(" ({})", plural(static_cast<int64_t>(tableRows->size()), "row"));
  if (!label.empty()) return out + " " + label;
  out += " " + joinKeys(probeKeys, buildKeys);
  if (residual) out += " and " + residual->toString();
  return out;
}

std::string AggregateSpec::describe() const {
  std::vector<std::string> aggs;
  for (const auto& a : aggregates) aggs.push_back(aggregateText(a));
  std::string aggText;
  for (size_t i = 0; i < aggs.size(); ++i) aggText += (i ? ", " : "") + aggs[i];
  if (window.kind == WindowKind::None) {
    return fmt::format("Aggregate keys=[{}] aggs=[{}]", exprList(groupKeys), aggText);
  }
  return fmt::format("WindowAggregate window={} keys=[{}] aggs=[{}]{}", windowText(window),
                     exprList(groupKeys), aggText, emitOnWindowClose ? " emit on window close" : "");
}

std::string DedupSpec::describe() const {
  return fmt::format("Dedup keys=[{}]{}", exprList(dedupKeys),
                     withinWatermark ? " within watermark" : "");
}

std::string StreamJoinSpec::describe() const {
  const char* type = leftOuter && rightOuter ? "full"
                     : leftOuter             ? "left"
                     : rightOuter            ? "right"
                                             : "inner";
  std::string out = fmt::format("StreamJoin {}", type);
  if (!label.empty()) return out + " " + label;
  out += " " + joinKeys(leftKeys, rightKeys);
  if (unbounded) return residual ? out + " and " + residual->toString() : out;
  out += fmt::format(" {} in [{} + {}, {} + {}]", rightTime ? rightTime->toString() : "?",
                     leftTime ? leftTime->toString() : "?", lowerBoundMicros,
                     leftTime ? leftTime->toString() : "?", upperBoundMicros);
  if (residual) out += " and " + residual->toString();
  return out;
}

std::string TopNSpec::describe() const {
  std::string order;
  for (size_t i = 0; i < orderKeys.size(); ++i) {
    if (i) order += ", ";
    order += orderKeys[i] ? orderKeys[i]->toString() : std::string("?");
    if (i < descending.size() && descending[i]) order += " DESC";
  }
  const char* by = function == Function::Rank        ? " by rank()"
                   : function == Function::DenseRank ? " by dense_rank()"
                                                     : "";
  return fmt::format("TopN keys=[{}] order=[{}] limit={}{}{}", exprList(partitionKeys), order,
                     limit, by, rankColumn ? " with rank" : "");
}

std::string TransformSpec::describe() const {
  std::string opts;
  for (const auto& [k, v] : options) opts += fmt::format("{}{}={}", opts.empty() ? "" : ", ", k, v);
  return fmt::format("Transform processor={} keys=[{}]{}", processor ? processor->name() : "?",
                     exprList(partitionKeys), opts.empty() ? "" : " options=[" + opts + "]");
}

std::string OverAggregateSpec::describe() const {
  std::string order;
  for (size_t i = 0; i < orderKeys.size(); ++i) {
    if (i) order += ", ";
    order += orderKeys[i] ? orderKeys[i]->toString() : std::string("?");
    if (i < descending.size() && descending[i]) order += " DESC";
  }
  std::string aggText;
  for (size_t i = 0; i < aggregates.size(); ++i)
    aggText += (i ? ", " : "") + aggregateText(aggregates[i]);
  if (!analytic.empty()) {
    std::string calls;
    for (size_t i = 0; i < analytic.size(); ++i) calls += (i ? ", " : "") + analytic[i].name;
    return fmt::format("AnalyticWindow keys=[{}] order=[{}] calls=[{}]", exprList(partitionKeys),
                       order, calls);
  }
  std::string frame = precedingRows < 0 ? std::string("unbounded") : std::to_string(precedingRows);
  return fmt::format("OverAggregate keys=[{}] order=[{}] rows={} preceding aggs=[{}]",
                     exprList(partitionKeys), order, frame, aggText);
}

}  // namespace rtsql
