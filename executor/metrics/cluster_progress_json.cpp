// Merges the nodes' progress of a flow (executor/metrics/cluster_progress_json.h).
#include "executor/metrics/cluster_progress_json.h"

#include <simdjson.h>

#include <algorithm>
#include <cstdlib>
#include <map>

#include "common/json.h"
#include "executor/metrics/histogram.h"
#include "executor/metrics/json_writer.h"
#include "executor/metrics/progress_json.h"
#include "executor/metrics/recent_latency.h"

namespace rtsql {

namespace {

std::optional<double> number(simdjson::dom::element parent, const char* key) {
  double v;
  if (parent[key].get_double().get(v) != simdjson::SUCCESS) return std::nullopt;
  return v;
}

// What the breakdown shows of one node, read from its progress JSON.
struct NodeFigures {
  double numInputRows = 0;
  double inputRowsPerSecond = 0;
  double processedRowsPerSecond = 0;
  double numOutputRows = 0;
  std::optional<double> batchId;
  bool live = false;
  std::string watermark;
  std::map<std::string, std::vector<int64_t>> partitions;  // by topic
};

NodeFigures figuresOf(simdjson::dom::parser& parser, const std::string& json) {
  NodeFigures f;
  simdjson::dom::element p;
  if (parser.parse(json).get(p) != simdjson::SUCCESS) return f;
  f.numInputRows = number(p, "numInputRows").value_or(0);
  f.inputRowsPerSecond = number(p, "inputRowsPerSecond").value_or(0);
  f.processedRowsPerSecond = number(p, "processedRowsPerSecond").value_or(0);
  f.batchId = number(p, "batchId");
  bool live = false;
  if (p["live"].get_bool().get(live) == simdjson::SUCCESS) f.live = live;
  simdjson::dom::element sink;
  if (p["sink"].get(sink) == simdjson::SUCCESS)
    f.numOutputRows = number(sink, "numOutputRows").value_or(0);
  std::string_view wm;
  if (p["eventTime"]["watermark"].get_string().get(wm) == simdjson::SUCCESS) f.watermark = wm;
  simdjson::dom::array sources;
  if (p["sources"].get_array().get(sources) == simdjson::SUCCESS) {
    for (simdjson::dom::element src : sources) {
      simdjson::dom::object ends;
      if (src["endOffset"].get_object().get(ends) != simdjson::SUCCESS) continue;
      for (auto [topic, parts] : ends) {
        simdjson::dom::object byPartition;
        if (parts.get_object().get(byPartition) != simdjson::SUCCESS) continue;
        auto& list = f.partitions[std::string(topic)];
        for (auto [partition, offset] : byPartition) {
          (void)offset;
          list.push_back(std::atoll(std::string(partition).c_str()));
        }
        std::sort(list.begin(), list.end());
      }
    }
  }
  return f;
}

}  // namespace

std::string encodeNodeProgress(const NodeProgress& p) {
  JsonWriter w;
  w.beginObject();
  w.key("node").value(p.node);
  w.key("flow").value(p.flow);
  w.key("reportedMicros").value(p.reportedMicros);
  w.key("recentIndex").value(p.recentIndex);
  w.key("recentE2e").value(p.recentE2e);
  w.key("recentProcessing").value(p.recentProcessing);
  w.key("progress").raw(p.progressJson.empty() ? std::string_view("null") : p.progressJson);
  w.endObject();
  return w.take();
}

std::optional<NodeProgress> decodeNodeProgress(std::string_view record) {
  simdjson::dom::parser parser;
  simdjson::dom::element r;
  if (parser.parse(record.data(), record.size()).get(r) != simdjson::SUCCESS) return std::nullopt;
  NodeProgress p;
  std::string_view s;
  int64_t n = 0;
  if (r["node"].get_string().get(s) != simdjson::SUCCESS || s.empty()) return std::nullopt;
  p.node = s;
  if (r["flow"].get_string().get(s) != simdjson::SUCCESS || s.empty()) return std::nullopt;
  p.flow = s;
  if (r["reportedMicros"].get_int64().get(n) != simdjson::SUCCESS) return std::nullopt;
  p.reportedMicros = n;
  if (r["recentIndex"].get_int64().get(n) != simdjson::SUCCESS) return std::nullopt;
  p.recentIndex = n;
  if (r["recentE2e"].get_string().get(s) != simdjson::SUCCESS) return std::nullopt;
  p.recentE2e = s;
  if (r["recentProcessing"].get_string().get(s) != simdjson::SUCCESS) return std::nullopt;
  p.recentProcessing = s;
  // A flow's progress always names it: an object without a name is none.
  simdjson::dom::object progress;
  if (r["progress"].get_object().get(progress) != simdjson::SUCCESS ||
      progress["name"].get_string().get(s) != simdjson::SUCCESS)
    return std::nullopt;
  p.progressJson = simdjson::minify(progress);
  return p;
}

std::string clusterProgressJson(const std::vector<NodeProgress>& nodes, const std::string& here,
                                int64_t nowMicros) {
  simdjson::dom::parser parser;
  // The interval most nodes reported (the newest on a tie): nodes publish a
  // second after each interval ends, so all but a node asked just then
  // report the same one.
  std::map<int64_t, int> reported;
  for (const auto& n : nodes) {
    if (n.recentIndex >= 0) ++reported[n.recentIndex];
  }
  int64_t interval = -1;
  int most = 0;
  for (const auto& [index, count] : reported) {
    if (count >= most) {
      most = count;
      interval = index;
    }
  }
  IntervalLatency merged;
  merged.index = interval;
  int mergedNodes = 0;

  JsonWriter w;
  w.beginObject();
  double in = 0, inRate = 0, processedRate = 0, out = 0;
  w.key("nodes").beginArray();
  for (const auto& n : nodes) {
    NodeFigures f = figuresOf(parser, n.progressJson);
    in += f.numInputRows;
    inRate += f.inputRowsPerSecond;
    processedRate += f.processedRowsPerSecond;
    out += f.numOutputRows;
    w.beginObject();
    w.key("node").value(n.node);
    w.key("flow").value(n.flow);
    w.key("here").value(n.node == here);
    w.key("ageMs").value(std::max<int64_t>(0, nowMicros - n.reportedMicros) / 1000);
    w.key("batchId");
    if (f.batchId) {
      w.value(static_cast<int64_t>(*f.batchId));
    } else {
      w.null();
    }
    w.key("live").value(f.live);
    w.key("numInputRows").value(static_cast<int64_t>(f.numInputRows));
    w.key("inputRowsPerSecond").value(f.inputRowsPerSecond);
    w.key("processedRowsPerSecond").value(f.processedRowsPerSecond);
    w.key("numOutputRows").value(static_cast<int64_t>(f.numOutputRows));
    w.key("watermark");
    if (f.watermark.empty()) {
      w.null();
    } else {
      w.value(f.watermark);
    }
    w.key("partitions").beginObject();
    for (const auto& [topic, list] : f.partitions) {
      w.key(topic).beginArray();
      for (int64_t p : list) w.value(p);
      w.endArray();
    }
    w.endObject();
    // The node's own recent figures, and its share of the merged ones.
    IntervalLatency own;
    own.index = n.recentIndex;
    const bool readable =
        own.e2e.addText(n.recentE2e) && own.processing.addText(n.recentProcessing);
    w.key("recentMetrics");
    if (readable && n.recentIndex >= 0) {
      w.beginObject();
      w.key("intervalStart")
          .value(formatTimestamp(n.recentIndex * RecentLatency::kIntervalMicros, true));
      w.key("numOutputRows").value(own.e2e.count());
      writeLatencyPercentiles(w, "e2eLatencyMs", own.e2e);
      w.endObject();
      if (n.recentIndex == interval) {
        merged.mergeFrom(own);
        ++mergedNodes;
      }
    } else {
      w.null();
    }
    w.endObject();
  }
  w.endArray();
  w.key("numInputRows").value(static_cast<int64_t>(in));
  w.key("inputRowsPerSecond").value(inRate);
  w.key("processedRowsPerSecond").value(processedRate);
  w.key("numOutputRows").value(static_cast<int64_t>(out));
  w.key("recentMetrics");
  if (interval >= 0) {
    w.beginObject();
    w.key("intervalStart").value(formatTimestamp(interval * RecentLatency::kIntervalMicros, true));
    w.key("intervalMs").value(RecentLatency::kIntervalMicros / 1000);
    w.key("nodes").value(mergedNodes);
    w.key("numOutputRows").value(merged.e2e.count());
    writeLatencyPercentiles(w, "processingLatencyMs", merged.processing);
    writeLatencyPercentiles(w, "e2eLatencyMs", merged.e2e);
    w.endObject();
  } else {
    w.null();
  }
  w.endObject();
  return w.take();
}

}  // namespace rtsql
