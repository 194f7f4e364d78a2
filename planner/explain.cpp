// The text EXPLAIN prints for a physical plan: the flow, each stage with its
// task count, where its rows come from and its operators in the order a record
// meets them, where the stage's rows go (a shuffle or the sink), and the
// number of task slots the flow holds while it runs.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "planner/logical_plan.h"
#include "planner/physical_plan.h"

namespace rtsql {

namespace planner_detail {

std::string plural(int64_t n, const char* unit) {
  return fmt::format("{} {}{}", n, unit, n == 1 ? "" : "s");
}

std::string formatDuration(int64_t micros) {
  constexpr int64_t kSecond = 1000 * 1000;
  if (micros == 0) return "0 seconds";
  if (micros > 0 && micros % (3600 * kSecond) == 0) return plural(micros / (3600 * kSecond), "hour");
  if (micros > 0 && micros % (60 * kSecond) == 0) return plural(micros / (60 * kSecond), "minute");
  if (micros > 0 && micros % kSecond == 0) return plural(micros / kSecond, "second");
  if (micros % 1000 == 0) return plural(micros / 1000, "millisecond");
  return plural(micros, "microsecond");
}

std::string exprList(const std::vector<ExprPtr>& exprs) {
  std::string out;
  for (size_t i = 0; i < exprs.size(); ++i) {
    if (i) out += ", ";
    out += exprs[i]->toString();
  }
  return out;
}

}  // namespace planner_detail

namespace {

using planner_detail::exprList;
using planner_detail::formatDuration;
using planner_detail::plural;

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

int PhysicalPlan::slots() const {
  int total = 0;
  for (const auto& s : stages) total += s.tasks;
  return total;
}

bool PhysicalPlan::keepsState() const {
  // A materialized view keeps its rows in the flow's state.
  if (sink.connector == kViewSinkConnector) return true;
  for (const auto& stage : stages) {
    for (const auto& op : stage.operators) {
      if (op.stateful()) return true;
    }
  }
  return false;
}

bool PhysicalPlan::spreadsPartitions() const {
  return stages.size() == 1 && scans.size() == 1 && scans.front().traits.partitionedLog &&
         scans.front().partitions > 1 && !exactlyOnce && !keepsState();
}

std::string PhysicalPlan::explain() const {
  std::string out;
  if (sink.traits.toClient) {
    out += "Query (rows stream to the client)";
  } else if (sink.connector == kViewSinkConnector) {
    out += fmt::format("Materialized view {}  checkpoint every {}", flowName,
                       formatDuration(checkpointIntervalMicros));
    if (!flowOptions.entries().empty()) out += "  with " + flowOptions.toString();
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
      if (!other.output.feeds(stage.id)) continue;
      std::string how = other.output.keys.empty()
                            ? std::string("all rows")
                            : "shuffle by " + exprList(other.output.keys);
      // A sharded flow's front: the rows of its own copy's shard.
      if (other.output.kind == StageOutput::Kind::Exchange) how = "this copy's own rows, " + how;
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
      // The partitions a share reads: a copy's of a sharded flow, or a
      // node's of a spread flow.
      std::vector<int> mine;
      for (int p = 0; p < s->partitions; ++p) {
        if (s->share.reads(p)) mine.push_back(p);
      }
      if (!s->exchange.topic.empty()) {
        // A copy's back: its partition of the exchange topic.
        // With the copy's own rows in process, the back hears the others'.
        const ExchangeSpec& ex = s->exchange;
        const int heard = ex.local && ex.partitions > 0
                              ? ex.producers - ex.producers / ex.partitions
                              : ex.producers;
        out += fmt::format(
            "  Exchange {} (partition {} of {}; watermark: the slowest of {} {}front tasks)\n",
            ex.topic, fmt::join(mine, ", "), s->partitions, heard,
            ex.local ? "other copies' " : "");
      } else {
        std::string details =
            connectorDetails(s->connector, s->format, s->options, {"subscribe", "rowsPerSecond"});
        if (s->share.slotCount > 0) {
          details += mine.empty() ? std::string(", no partition")
                                  : fmt::format(", partitions {} of 0..{}", fmt::join(mine, ", "),
                                                s->partitions - 1);
        } else if (s->partitions == 1) {
          details += ", partition 0";
        } else if (s->partitions > 1) {
          details += fmt::format(", partitions 0..{}", s->partitions - 1);
        }
        if (s->eventTimeColumn >= 0 &&
            static_cast<size_t>(s->eventTimeColumn) < s->schema.columns.size()) {
          details += fmt::format(", watermark {} - {}",
                                 s->schema.columns[static_cast<size_t>(s->eventTimeColumn)].name,
                                 formatDuration(s->watermarkDelayMicros));
        }
        out += fmt::format("  Scan {} ({})\n", s->name, details);
      }
    }
    for (const auto& op : stage.operators) {
      const Changelog& c = op.base().changelog;
      out += fmt::format("  {}  [{}{}]\n", op.describe(), c.describe(op.output()),
                         c.state.empty() ? std::string() : "; state: " + c.state);
    }
    if (stage.output.kind == StageOutput::Kind::Shuffle) {
      out += fmt::format("  Shuffle by [{}] to stage {}{}\n", exprList(stage.output.keys),
                         stage.output.targetStage,
                         stage.output.targetInput == 0 ? "" : " input 1");
      continue;
    }
    if (stage.output.kind == StageOutput::Kind::Exchange) {
      const ExchangeSpec& ex = stage.output.exchange;
      out += fmt::format("  Exchange by [{}] to {} (the partition of each row's copy, of {}{})\n",
                         exprList(stage.output.keys), ex.topic, ex.partitions,
                         ex.local ? fmt::format("; this copy's own rows in process to stage {}",
                                                stage.output.targetStage)
                                  : std::string());
      continue;
    }
    if (sink.traits.toClient) {
      out += "  Sink client\n";
      continue;
    }
    // A view's table: its rows under their key.
    std::string details =
        sink.connector == kViewSinkConnector
            ? std::string("keyed table")
            : connectorDetails(sink.connector, sink.format, sink.options,
                               {"topic", "path", "mode"});
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
