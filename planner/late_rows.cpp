// 'late.rows' (see late_rows.h).
#include "planner/late_rows.h"

#include <fmt/format.h>

#include <vector>

#include "common/error.h"
#include "planner/catalog.h"

namespace rtsql {

namespace {

bool blank(const std::string& s) {
  return s.find_first_not_of(" \t") == std::string::npos;
}

}  // namespace

bool deadLettersLateRows(const Options& flowOptions) {
  return iequals(flowOptions.getString(kLateRowsOption, "drop"), "dead-letter");
}

bool seesLateRows(const OperatorSpec& op) {
  if (op.is<AggregateSpec>()) return op.as<AggregateSpec>().window.kind != WindowKind::None;
  if (op.is<DedupSpec>()) return op.as<DedupSpec>().withinWatermark;
  if (op.is<StreamJoinSpec>()) return !op.as<StreamJoinSpec>().unbounded;
  return false;
}

void checkLateRows(const PhysicalPlan& plan, const SinkDef& sink, const Options& flowOptions) {
  flowOptions.getEnum(kLateRowsOption, "drop", {"drop", "dead-letter"});
  const OptionEntry* mode = flowOptions.find(kLateRowsOption);
  const OptionEntry* topic = flowOptions.find(kLateRowsTopicOption);
  const OptionEntry* bootstrap = flowOptions.find(kLateRowsBootstrapOption);
  if (!deadLettersLateRows(flowOptions)) {
    for (const OptionEntry* e : {topic, bootstrap}) {
      if (!e) continue;
      throw SqlError(sqlstate::kInvalidParameterValue,
                     fmt::format("'{}' applies only with 'late.rows' = 'dead-letter'", e->key),
                     e->keyPos,
                     fmt::format("add 'late.rows' = 'dead-letter', or drop '{}'", e->key));
    }
    return;
  }
  if (!topic) {
    throw SqlError(sqlstate::kInvalidParameterValue,
                   "'late.rows' = 'dead-letter' needs the option 'late.rows.topic'", mode->valuePos,
                   "add 'late.rows.topic' = '<topic>': the Kafka topic that receives the rows "
                   "that arrive below the watermark");
  }
  if (blank(topic->value)) {
    throw SqlError(sqlstate::kInvalidParameterValue, "option 'late.rows.topic' is empty",
                   topic->valuePos,
                   "name the Kafka topic that receives the rows that arrive below the watermark");
  }
  const bool kafkaSink = iequals(sink.connector, "kafka");
  if (kafkaSink && bootstrap) {
    throw SqlError(sqlstate::kInvalidParameterValue,
                   fmt::format("late rows go to the cluster of the Kafka sink \"{}\"; '{}' applies "
                               "only to a flow whose sink is not Kafka",
                               sink.name, kLateRowsBootstrapOption),
                   bootstrap->keyPos,
                   fmt::format("drop '{}': 'late.rows.topic' is written on the sink's cluster, "
                               "with the sink's kafka.* settings",
                               kLateRowsBootstrapOption));
  }
  if (!kafkaSink && (!bootstrap || blank(bootstrap->value))) {
    throw SqlError(sqlstate::kInvalidParameterValue,
                   fmt::format("the flow's sink \"{}\" is '{}', not Kafka: 'late.rows' = "
                               "'dead-letter' needs '{}'",
                               sink.name, sink.connector, kLateRowsBootstrapOption),
                   bootstrap ? bootstrap->valuePos : mode->valuePos,
                   fmt::format("add '{}' = 'host:port': the Kafka cluster of 'late.rows.topic'",
                               kLateRowsBootstrapOption));
  }
  for (const StageSpec& stage : plan.stages) {
    for (const OperatorSpec& op : stage.operators) {
      if (seesLateRows(op)) return;
    }
  }
  throw SqlError(sqlstate::kInvalidParameterValue,
                 "'late.rows' = 'dead-letter' applies to a flow that drops rows below the "
                 "watermark, and this flow drops none",
                 mode->valuePos,
                 "only a window, DISTINCT ON ... WITHIN WATERMARK or a stream-stream join with a "
                 "time bound drops late rows; remove 'late.rows' and 'late.rows.topic'");
}

Options lateRowsKafkaOptions(const PhysicalPlan& plan) {
  std::vector<OptionEntry> entries;
  if (iequals(plan.sink.connector, "kafka")) {
    for (const OptionEntry& e : plan.sink.options.entries()) {
      if (e.key.size() > 6 && iequals(std::string_view(e.key).substr(0, 6), "kafka.")) {
        entries.push_back(e);
      }
    }
  } else {
    entries.push_back(
        {"kafka.bootstrap.servers", plan.flowOptions.getString(kLateRowsBootstrapOption)});
  }
  return Options(std::move(entries));
}

}  // namespace rtsql
