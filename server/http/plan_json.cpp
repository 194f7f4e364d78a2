// Writes a physical plan's JSON (plan_json.h).
#include "server/http/plan_json.h"

#include "executor/metrics/json_writer.h"
#include "planner/changelog.h"
#include "planner/logical_plan.h"

namespace rtsql::http {

namespace {

void optionOrNull(JsonWriter& w, const char* key, const Options& options, const char* option) {
  w.key(key);
  if (const OptionEntry* e = options.find(option)) {
    w.value(e->value);
  } else {
    w.null();
  }
}

}  // namespace

std::string planJson(const PhysicalPlan& plan) {
  JsonWriter w;
  w.beginObject();
  w.key("flow").value(plan.flowName);
  w.key("sink").beginObject();
  w.key("name").value(plan.sink.name);
  w.key("connector").value(plan.sink.connector);
  w.key("format").value(plan.sink.format);
  optionOrNull(w, "topic", plan.sink.options, "topic");
  w.endObject();
  w.key("checkpointIntervalMs").value(plan.checkpointIntervalMicros / 1000);
  w.key("slots").value(plan.slots());
  w.key("changelog").beginObject();
  w.key("mode").value(changelogModeName(plan.output.mode));
  w.key("text").value(plan.output.describe(plan.sink.input));
  w.endObject();
  w.key("stages").beginArray();
  for (const StageSpec& stage : plan.stages) {
    w.beginObject();
    w.key("id").value(stage.id);
    w.key("tasks").value(stage.tasks);
    w.key("inputs").value(stage.inputs);
    w.key("scan");
    if (stage.scan >= 0 && static_cast<size_t>(stage.scan) < plan.scans.size()) {
      const ScanSpec& s = plan.scans[static_cast<size_t>(stage.scan)];
      w.beginObject();
      w.key("name").value(s.name);
      w.key("connector").value(s.connector);
      w.key("format").value(s.format);
      optionOrNull(w, "topic", s.options, "subscribe");
      w.key("partitions").value(s.partitions);
      w.key("watermark");
      if (s.eventTimeColumn >= 0 &&
          static_cast<size_t>(s.eventTimeColumn) < s.schema.columns.size()) {
        w.value(s.schema.columns[static_cast<size_t>(s.eventTimeColumn)].name + " - " +
                planner_detail::formatDuration(s.watermarkDelayMicros));
      } else {
        w.null();
      }
      w.endObject();
    } else {
      w.null();
    }
    w.key("operators").beginArray();
    for (const OperatorSpec& op : stage.operators) {
      const Changelog& c = op.base().changelog;
      w.beginObject();
      w.key("id").value(op.id());
      w.key("text").value(op.describe());
      w.key("changelog").value(changelogModeName(c.mode));
      w.key("changelogText").value(c.describe(op.output()));
      w.key("state");
      if (c.state.empty()) {
        w.null();
      } else {
        w.value(c.state);
      }
      w.endObject();
    }
    w.endArray();
    w.key("output").beginObject();
    if (stage.output.kind == StageOutput::Kind::Shuffle) {
      w.key("kind").value("shuffle");
      w.key("targetStage").value(stage.output.targetStage);
      w.key("targetInput").value(stage.output.targetInput);
      w.key("keys").beginArray();
      for (const ExprPtr& k : stage.output.keys) w.value(k->toString());
      w.endArray();
    } else if (stage.output.kind == StageOutput::Kind::Exchange) {
      w.key("kind").value("exchange");
      w.key("topic").value(stage.output.exchange.topic);
      w.key("partitions").value(stage.output.exchange.partitions);
      if (stage.output.exchange.local) {
        // The copy's own rows, shuffled in process.
        w.key("targetStage").value(stage.output.targetStage);
        w.key("targetInput").value(stage.output.targetInput);
      }
      w.key("keys").beginArray();
      for (const ExprPtr& k : stage.output.keys) w.value(k->toString());
      w.endArray();
    } else {
      w.key("kind").value("sink");
    }
    w.endObject();
    w.endObject();
  }
  w.endArray();
  w.endObject();
  return w.take();
}

}  // namespace rtsql::http
