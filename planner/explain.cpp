// The text EXPLAIN prints for a physical plan: the flow, each stage with its
// task count, where its rows come from and its operators in the order a record
// meets them, where the stage's rows go (a shuffle or the sink), and the
// number of task slots the flow holds while it runs.
#include <fmt/format.h>

#include "planner/logical_plan.h"
#include "planner/physical_plan.h"

namespace rtsql {

namespace {

std::string plural(int64_t n, const char* unit) {
  return fmt::format("{} {}{}", n, unit, n == 1 ? "" : "s");
}

}  // namespace

namespace planner_detail {

std::string formatDuration(int64_t micros) {
  constexpr int64_t kSecond = 1000 * 1000;
  if (micros == 0) return "0 seconds";
  if (micros > 0 && micros % (3600 * kSecond) == 0) return plural(micros / (3600 * kSecond), "hour");
  if (micros > 0 && micros % (60 * kSecond) == 0) return plural(micros / (60 * kSecond), "minute");
  if (micros > 0 && micros % kSecond == 0) return plural(micros / kSecond, "second");
  if (micros % 1000 == 0) return plural(micros / 1000, "millisecond");
  return plural(micros, "microsecond");
}

}  // namespace planner_detail

namespace {

using planner_detail::formatDuration;

std::string exprList(const std::vector<ExprPtr>& exprs) {
  std::string out;
  for (size_t i = 0; i < exprs.size(); ++i) {
    if (i) out += ", ";
    out += exprs[i]->toString();
  }
  return out;
}

std::string aggregateText(const AggregateCall& call) {
  const char* name = "count";
  switch (call.function) {
    case AggregateFunction::CountStar: return "count(*)";
    case AggregateFunction::Count: name = "count"; break;
    case AggregateFunction::Sum: name = "sum"; break;
    case AggregateFunction::Min: name = "min"; break;
    case AggregateFunction::Max: name = "max"; break;
    case AggregateFunction::Avg: name = "avg"; break;
  }
  return fmt::format("{}({})", name, call.arg ? call.arg->toString() : std::string("?"));
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

// "kafka json" or "datagen", then the options that say what is read or written.
std::string connectorDetails(const std::string& connector, const std::string& format,
                             const Options& options, const std::vector<const char*>& keys) {
  std::string out = connector;
  if (!format.empty()) out += " " + format;
  for (const char* key : keys) {
    if (const OptionEntry* e = options.find(key)) out += fmt::format(", {}={}", key, e->value);
  }
  return out;
}

}  // namespace

std::string OperatorSpec::describe() const {
  switch (kind) {
    case OperatorKind::Filter:
      return "Filter " + (predicate ? predicate->toString() : std::string("?"));
    case OperatorKind::Project: {
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
    case OperatorKind::Aggregate: {
      std::vector<std::string> aggs;
      for (const auto& a : aggregates) aggs.push_back(aggregateText(a));
      std::string aggText;
      for (size_t i = 0; i < aggs.size(); ++i) aggText += (i ? ", " : "") + aggs[i];
      if (window.kind == WindowKind::None) {
        return fmt::format("Aggregate keys=[{}] aggs=[{}]", exprList(groupKeys), aggText);
      }
      return fmt::format("WindowAggregate window={} keys=[{}] aggs=[{}]{}", windowText(window),
                         exprList(groupKeys), aggText,
                         emitOnWindowClose ? " emit on window close" : "");
    }
    case OperatorKind::Dedup:
      return fmt::format("Dedup keys=[{}]{}", exprList(dedupKeys),
                         withinWatermark ? " within watermark" : "");
    case OperatorKind::BroadcastJoin: {
      std::string out = fmt::format("BroadcastJoin {} table={}", leftOuter ? "left" : "inner",
                                    tableName.empty() ? std::string("?") : tableName);
      if (tableRows) out += fmt::format(" ({})", plural(static_cast<int64_t>(tableRows->size()), "row"));
      if (!label.empty()) return out + " " + label;
      out += " " + joinKeys(probeKeys, buildKeys);
      if (residual) out += " and " + residual->toString();
      return out;
    }
    case OperatorKind::StreamJoin: {
      std::string out = fmt::format("StreamJoin {}", leftOuter ? "left" : "inner");
      if (!label.empty()) return out + " " + label;
      out += " " + joinKeys(leftKeys, rightKeys);
      out += fmt::format(" {} in [{} + {}, {} + {}]", rightTime ? rightTime->toString() : "?",
                         leftTime ? leftTime->toString() : "?", lowerBoundMicros,
                         leftTime ? leftTime->toString() : "?", upperBoundMicros);
      if (residual) out += " and " + residual->toString();
      return out;
    }
  }
  return "?";
}

int PhysicalPlan::slots() const {
  int total = 0;
  for (const auto& s : stages) total += s.tasks;
  return total;
}

std::string PhysicalPlan::explain() const {
  std::string out;
  if (sink.connector == "client") {
    out += "Query (rows stream to the client)";
  } else {
    out += fmt::format("Flow {} INTO {} ({}, {})  checkpoint every {}", flowName, sink.name,
                       sink.connector, sink.format, formatDuration(checkpointIntervalMicros));
    if (!flowOptions.entries().empty()) out += "  with " + flowOptions.toString();
  }
  out += '\n';
  for (const StageSpec& stage : stages) {
    // Where a shuffle stage's rows come from: every stage that shuffles into
    // it, grouped when they shuffle by the same keys (the branches of a union).
    std::vector<std::pair<std::string, std::vector<int>>> groups;
    for (const auto& other : stages) {
      if (other.output.kind != StageOutput::Kind::Shuffle || other.output.targetStage != stage.id) {
        continue;
      }
      std::string how = other.output.keys.empty()
                            ? std::string("all rows")
                            : "shuffle by " + exprList(other.output.keys);
      if (stage.inputs > 1) how = (other.output.targetInput == 0 ? "left: " : "right: ") + how;
      if (!groups.empty() && groups.back().first == how) {
        groups.back().second.push_back(other.id);
      } else {
        groups.push_back({how, {other.id}});
      }
    }
    std::string from;
    for (const auto& [how, ids] : groups) {
      std::string list;
      for (int id : ids) list += (list.empty() ? "" : ", ") + std::to_string(id);
      from += fmt::format("{}{} from stage{} {}", from.empty() ? "" : "; ", how,
                          ids.size() == 1 ? "" : "s", list);
    }
    out += fmt::format("Stage {}: {}{}\n", stage.id, plural(stage.tasks, "task"),
                       from.empty() ? std::string() : " (" + from + ")");
    if (stage.scan >= 0 && static_cast<size_t>(stage.scan) < scans.size()) {
      const ScanSpec* s = &scans[static_cast<size_t>(stage.scan)];
      std::string details =
          connectorDetails(s->connector, s->format, s->options, {"subscribe", "rowsPerSecond"});
      if (s->partitions == 1) details += ", partition 0";
      if (s->partitions > 1) details += fmt::format(", partitions 0..{}", s->partitions - 1);
      if (s->eventTimeColumn >= 0 &&
          static_cast<size_t>(s->eventTimeColumn) < s->schema.columns.size()) {
        details += fmt::format(", watermark {} - {}",
                               s->schema.columns[static_cast<size_t>(s->eventTimeColumn)].name,
                               formatDuration(s->watermarkDelayMicros));
      }
      out += fmt::format("  Scan {} ({})\n", s->name, details);
    }
    for (const auto& op : stage.operators) out += "  " + op.describe() + "\n";
    if (stage.output.kind == StageOutput::Kind::Shuffle) {
      out += fmt::format("  Shuffle by [{}] to stage {}{}\n", exprList(stage.output.keys),
                         stage.output.targetStage,
                         stage.output.targetInput == 0 ? "" : " input 1");
      continue;
    }
    if (sink.connector == "client") {
      out += "  Sink client\n";
      continue;
    }
    std::string details = connectorDetails(sink.connector, sink.format, sink.options, {"topic", "path"});
    if (sink.keyColumn >= 0 && static_cast<size_t>(sink.keyColumn) < sink.input.columns.size()) {
      details += ", key=" + sink.input.columns[static_cast<size_t>(sink.keyColumn)].name;
    } else if (!sink.keyColumns.empty()) {
      std::string names;
      for (int k : sink.keyColumns) {
        if (k < 0 || static_cast<size_t>(k) >= sink.input.columns.size()) continue;
        names += (names.empty() ? "" : ",") + sink.input.columns[static_cast<size_t>(k)].name;
      }
      details += ", key=(" + names + ")";
    }
    out += fmt::format("  Sink {} ({})\n", sink.name, details);
  }
  out += fmt::format("Task slots: {}\n", slots());
  return out;
}

}  // namespace rtsql
