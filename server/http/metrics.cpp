// Rendering of /metrics: each flow's progress JSON is parsed (simdjson) and
// its numbers are grouped by metric family, as the exposition format wants
// every sample of a family together, after its HELP and TYPE lines.
#include "server/http/metrics.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <utility>
#include <vector>

#include "common/json.h"

namespace rtsql::http {

namespace {

using Labels = std::vector<std::pair<std::string_view, std::string_view>>;

std::string formatValue(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  return fmt::format("{}", v);
}

class Family {
 public:
  Family(const char* name, const char* help, const char* type = "gauge")
      : name_(name), help_(help), type_(type) {}

  void add(const Labels& labels, double value) {
    samples_ += name_;
    if (!labels.empty()) {
      samples_ += '{';
      bool first = true;
      for (const auto& [k, v] : labels) {
        if (!first) samples_ += ',';
        first = false;
        samples_ += k;
        samples_ += "=\"";
        samples_ += escapeLabelValue(v);
        samples_ += '"';
      }
      samples_ += '}';
    }
    samples_ += ' ';
    samples_ += formatValue(value);
    samples_ += '\n';
  }

  // HELP and TYPE are written even for a family without samples (no flows),
  // so a scraper sees every family the server can report.
  void appendTo(std::string& out) const {
    out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name_, help_, name_, type_);
    out += samples_;
  }

 private:
  const char* name_;
  const char* help_;
  const char* type_;
  std::string samples_;
};

std::optional<double> number(simdjson::dom::element parent, const char* key) {
  simdjson::dom::element e;
  if (parent[key].get(e) != simdjson::SUCCESS) return std::nullopt;
  double v;
  if (e.get_double().get(v) != simdjson::SUCCESS) return std::nullopt;
  return v;
}

std::optional<std::string_view> string(simdjson::dom::element parent, const char* key) {
  std::string_view v;
  if (parent[key].get_string().get(v) != simdjson::SUCCESS) return std::nullopt;
  return v;
}

// Sum over a source's partitions of (latest offset - read offset), counting
// only partitions where both are known.
double sourceLag(simdjson::dom::element src) {
  simdjson::dom::object latest, end;
  if (src["latestOffset"].get_object().get(latest) != simdjson::SUCCESS) return 0;
  if (src["endOffset"].get_object().get(end) != simdjson::SUCCESS) return 0;
  double lag = 0;
  for (auto [topic, partsEl] : latest) {
    simdjson::dom::object parts;
    if (partsEl.get_object().get(parts) != simdjson::SUCCESS) continue;
    for (auto [partition, offsetEl] : parts) {
      int64_t hi, lo;
      if (offsetEl.get_int64().get(hi) != simdjson::SUCCESS) continue;
      if (end.at_key(topic).at_key(partition).get_int64().get(lo) != simdjson::SUCCESS) continue;
      if (hi >= 0 && lo >= 0 && hi > lo) lag += static_cast<double>(hi - lo);
    }
  }
  return lag;
}

}  // namespace

std::string escapeLabelValue(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '"': out += "\\\""; break;
      case '\n': out += "\\n"; break;
      default: out += c;
    }
  }
  return out;
}

std::string renderMetrics(const Source& source) {
  Family slotsTotal("rtsql_slots_total", "Task slots of the server (--slots).");
  Family slotsUsed("rtsql_slots_used", "Task slots held by running flows.");
  Family running("rtsql_flow_running", "1 when the flow is running, else 0.");
  Family failed("rtsql_flow_failed", "1 when the flow has failed, else 0.");
  Family remote("rtsql_flow_remote",
                "1 when another node of the cluster runs the flow (or is to run it), else 0.");
  Family flowSlots("rtsql_flow_slots", "Task slots the flow's plan takes.");
  Family epoch("rtsql_flow_epoch", "Id of the flow's current epoch (progress batchId).");
  Family inputRows("rtsql_flow_epoch_input_rows",
                   "Rows read by the flow in its current epoch (starts from 0 at each epoch).");
  Family outputRows("rtsql_flow_epoch_output_rows",
                    "Rows written to the flow's sink in its current epoch (starts from 0 at each epoch).");
  Family decodeErrors("rtsql_flow_epoch_decode_errors",
                      "Source records the flow could not decode in its current epoch.");
  Family deadLetters("rtsql_flow_dead_letters",
                     "Source records the flow wrote to a dead-letter topic ('on.error' = "
                     "'dead-letter') since its tasks started; only flows with such a source.");
  Family rowErrors("rtsql_flow_row_errors",
                   "Rows whose evaluation failed with a data error since the flow's tasks "
                   "started; action is skipped or dead_lettered ('on.error' of the flow); only "
                   "flows that skip or dead-letter them have a sample.");
  Family inputRate("rtsql_flow_input_rows_per_second", "Input rows per second over the current epoch.");
  Family latency("rtsql_flow_latency_ms",
                 "Latency percentiles of the current epoch in milliseconds; kind is processing, "
                 "source_queuing or e2e.");
  Family recentLatency("rtsql_flow_recent_latency_ms",
                       "Latency percentiles in milliseconds of the last complete interval of a few "
                       "seconds (progress recentMetrics); kind is processing, source_queuing "
                       "or e2e.");
  Family recentOutput(
      "rtsql_flow_recent_output_rows",
      "Rows written to the flow's sink in the last complete interval of a few seconds.");
  Family checkpointDuration(
      "rtsql_flow_checkpoint_duration_ms",
      "How long the flow's newest complete checkpoint took to write, in milliseconds.");
  Family checkpointBytes("rtsql_flow_checkpoint_state_bytes",
                         "State bytes in the flow's newest complete checkpoint.");
  Family stateRows("rtsql_flow_state_rows", "Rows kept in state by a stateful operator of the flow.");
  Family stateMemory("rtsql_flow_state_memory_bytes",
                     "Memory held by a stateful operator's state cache, in bytes.");
  Family lateRows("rtsql_flow_late_rows",
                  "Rows that reached a stateful operator below the watermark since the flow's "
                  "tasks started; action is dropped or dead_lettered ('late.rows').");
  Family lag("rtsql_flow_source_lag_records",
             "Records in the flow's source partitions not read yet (latest minus read offsets).");
  Family watermark("rtsql_flow_watermark_seconds",
                   "The flow's event-time watermark, as Unix time in seconds.");

  SlotUsage slots = source.slots();
  slotsTotal.add({}, slots.total);
  slotsUsed.add({}, slots.used);

  simdjson::dom::parser parser;
  for (const auto& f : source.flows(true)) {
    const std::string_view name = f.name;
    const Labels flowLabel{{"flow", name}};
    running.add(flowLabel, f.state == "running" ? 1 : 0);
    failed.add(flowLabel, f.state == "failed" ? 1 : 0);
    remote.add(flowLabel, f.state == "remote" ? 1 : 0);
    if (f.slots) flowSlots.add(flowLabel, *f.slots);

    simdjson::dom::element p;
    if (f.progressJson.empty() || parser.parse(f.progressJson).get(p) != simdjson::SUCCESS) continue;
    if (auto v = number(p, "batchId")) epoch.add(flowLabel, *v);
    if (auto v = number(p, "numInputRows")) inputRows.add(flowLabel, *v);
    if (auto v = number(p, "inputRowsPerSecond")) inputRate.add(flowLabel, *v);
    simdjson::dom::element sink;
    if (p["sink"].get(sink) == simdjson::SUCCESS) {
      if (auto v = number(sink, "numOutputRows")) outputRows.add(flowLabel, *v);
    }

    // Decode errors sit on the source with one source, at the top with several.
    double errors = number(p, "numDecodeErrors").value_or(0);
    double sourceLagTotal = 0;
    std::optional<double> lettered;  // only sources with a dead-letter topic count them
    simdjson::dom::array sources;
    if (p["sources"].get_array().get(sources) == simdjson::SUCCESS) {
      for (simdjson::dom::element src : sources) {
        errors += number(src, "numDecodeErrors").value_or(0);
        sourceLagTotal += sourceLag(src);
        if (auto v = number(src, "numDeadLetters")) lettered = lettered.value_or(0) + *v;
      }
    }
    decodeErrors.add(flowLabel, errors);
    if (lettered) deadLetters.add(flowLabel, *lettered);
    for (const auto& [key, action] : {std::pair{"numRowErrorsSkipped", "skipped"},
                                      std::pair{"numRowErrorsDeadLettered", "dead_lettered"}}) {
      if (auto v = number(p, key)) rowErrors.add({{"flow", name}, {"action", action}}, *v);
    }
    lag.add(flowLabel, sourceLagTotal);

    // The percentiles of the latency objects in `parent` (key -> kind label),
    // one sample per kind and quantile.
    using Names = std::initializer_list<std::pair<const char*, const char*>>;
    auto addLatencies = [&](Family& fam, simdjson::dom::element parent, Names kinds,
                            Names quantiles) {
      for (const auto& [key, kind] : kinds) {
        simdjson::dom::element h;
        if (parent[key].get(h) != simdjson::SUCCESS) continue;
        for (const auto& [pk, quantile] : quantiles) {
          if (auto v = number(h, pk))
            fam.add({{"flow", name}, {"kind", kind}, {"quantile", quantile}}, *v);
        }
      }
    };
    simdjson::dom::element rtm;
    if (p["rtmMetrics"].get(rtm) == simdjson::SUCCESS) {
      addLatencies(latency, rtm,
                   {{"processingLatencyMs", "processing"},
                    {"sourceQueuingLatencyMs", "source_queuing"},
                    {"e2eLatencyMs", "e2e"}},
                   {{"P0", "0"}, {"P50", "0.5"}, {"P90", "0.9"}, {"P95", "0.95"}, {"P99", "0.99"}});
    }
    simdjson::dom::element recent;
    if (p["recentMetrics"].get(recent) == simdjson::SUCCESS) {
      if (auto v = number(recent, "numOutputRows")) recentOutput.add(flowLabel, *v);
      addLatencies(recentLatency, recent,
                   {{"processingLatencyMs", "processing"},
                    {"sourceQueuingLatencyMs", "source_queuing"},
                    {"e2eLatencyMs", "e2e"}},
                   {{"P50", "0.5"}, {"P90", "0.9"}, {"P99", "0.99"}});
    }
    simdjson::dom::element checkpoint;
    if (p["checkpoint"].get(checkpoint) == simdjson::SUCCESS && checkpoint.is_object()) {
      if (auto v = number(checkpoint, "durationMs")) checkpointDuration.add(flowLabel, *v);
      if (auto v = number(checkpoint, "stateBytes")) checkpointBytes.add(flowLabel, *v);
    }

    simdjson::dom::array ops;
    if (p["stateOperators"].get_array().get(ops) == simdjson::SUCCESS) {
      for (simdjson::dom::element op : ops) {
        std::string_view opName = string(op, "operatorName").value_or("");
        // Two operators of one flow may share a name; the id tells them apart.
        std::string opId = fmt::format("{}", number(op, "operatorId").value_or(0));
        const Labels opLabels{{"flow", name}, {"operator", opName}, {"operator_id", opId}};
        if (auto v = number(op, "numRowsTotal")) stateRows.add(opLabels, *v);
        if (auto v = number(op, "memoryUsedBytes")) stateMemory.add(opLabels, *v);
        for (const auto& [key, action] : {std::pair{"numRowsDroppedByWatermark", "dropped"},
                                          std::pair{"numLateRowsDeadLettered", "dead_lettered"}}) {
          if (auto v = number(op, key))
            lateRows.add(
                {{"flow", name}, {"operator", opName}, {"operator_id", opId}, {"action", action}},
                *v);
        }
      }
    }

    simdjson::dom::element eventTime;
    if (p["eventTime"].get(eventTime) == simdjson::SUCCESS) {
      int64_t micros = 0;
      if (auto wm = string(eventTime, "watermark"); wm && parseTimestamp(*wm, &micros)) {
        watermark.add(flowLabel, static_cast<double>(micros) / 1e6);
      }
    }
  }

  std::string out;
  for (const Family* fam :
       {&slotsTotal,   &slotsUsed,       &running,        &failed,       &remote,       &flowSlots,
        &epoch,        &inputRows,       &outputRows,     &decodeErrors, &deadLetters,
        &rowErrors,    &inputRate,       &latency,        &recentLatency, &recentOutput,
        &checkpointDuration, &checkpointBytes, &stateRows, &stateMemory, &lateRows,
        &lag,          &watermark}) {
    fam->appendTo(out);
  }
  return out;
}

}  // namespace rtsql::http
