// The text EXPLAIN prints for a physical plan: the flow, each stage with its
// task count and its operators in the order a record meets them, and the
// number of task slots the flow holds while it runs.
#include <fmt/format.h>

#include "planner/physical_plan.h"

namespace rtsql {

namespace {

std::string plural(int64_t n, const char* unit) {
  return fmt::format("{} {}{}", n, unit, n == 1 ? "" : "s");
}

std::string formatDuration(int64_t micros) {
  constexpr int64_t kSecond = 1000 * 1000;
  if (micros > 0 && micros % (3600 * kSecond) == 0) return plural(micros / (3600 * kSecond), "hour");
  if (micros > 0 && micros % (60 * kSecond) == 0) return plural(micros / (60 * kSecond), "minute");
  if (micros > 0 && micros % kSecond == 0) return plural(micros / kSecond, "second");
  if (micros % 1000 == 0) return plural(micros / 1000, "millisecond");
  return plural(micros, "microsecond");
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
  for (size_t i = 0; i < stages.size(); ++i) {
    const StageSpec& stage = stages[i];
    out += fmt::format("Stage {}: {}\n", stage.id, plural(stage.tasks, "task"));
    if (i == 0) {
      std::string details =
          connectorDetails(scan.connector, scan.format, scan.options, {"subscribe", "rowsPerSecond"});
      if (scan.partitions == 1) details += ", partition 0";
      if (scan.partitions > 1) details += fmt::format(", partitions 0..{}", scan.partitions - 1);
      if (scan.eventTimeColumn >= 0 &&
          static_cast<size_t>(scan.eventTimeColumn) < scan.schema.columns.size()) {
        details += fmt::format(", watermark {} - {}",
                               scan.schema.columns[static_cast<size_t>(scan.eventTimeColumn)].name,
                               formatDuration(scan.watermarkDelayMicros));
      }
      out += fmt::format("  Scan {} ({})\n", scan.name, details);
    }
    for (const auto& op : stage.operators) out += "  " + op.describe() + "\n";
    if (i + 1 == stages.size()) {
      if (sink.connector == "client") {
        out += "  Sink client\n";
      } else {
        std::string details =
            connectorDetails(sink.connector, sink.format, sink.options, {"topic", "path"});
        if (sink.keyColumn >= 0 && static_cast<size_t>(sink.keyColumn) < sink.input.columns.size()) {
          details += ", key=" + sink.input.columns[static_cast<size_t>(sink.keyColumn)].name;
        }
        out += fmt::format("  Sink {} ({})\n", sink.name, details);
      }
    }
  }
  out += fmt::format("Task slots: {}\n", slots());
  return out;
}

}  // namespace rtsql
