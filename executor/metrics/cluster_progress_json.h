// The progress of a flow over a cluster's nodes (SHOW PROGRESS's "cluster"
// object, docs/operations.md "Progress JSON").
//
// Each node of a cluster publishes, a second after each interval of
// recent_latency.h ends, one NodeProgress per flow it runs (the whole flow,
// or its share of a spread flow's partitions); any node merges the newest of
// each node into one figure for the flow, beside a per-node breakdown. What a
// node publishes is its own progress JSON, unchanged, plus its last complete
// interval's latency histograms in LatencyHistogram's text form, so that the
// merged percentiles are those of all the nodes' rows together (not an
// average of percentiles).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rtsql {

struct NodeProgress {
  std::string node;
  std::string flow;            // the flow's name, lower-cased
  int64_t reportedMicros = 0;  // wall clock, when it was taken
  std::string progressJson;    // FlowRuntime::progressJson() on that node
  int64_t recentIndex = -1;    // the interval of the two histograms below
  std::string recentE2e;       // LatencyHistogram::toText()
  std::string recentProcessing;
};

// The record a node publishes, and back (nullopt: not one, or a field is
// missing or of the wrong type).
std::string encodeNodeProgress(const NodeProgress& p);
std::optional<NodeProgress> decodeNodeProgress(std::string_view record);

// The "cluster" object of flow progress: `nodes` (this node first when it
// runs a part; `here` names it) as a per-node breakdown, their input and
// output summed, and their recent latencies merged over the interval most of
// them reported (the newest on a tie). `nowMicros` gives each node's age.
std::string clusterProgressJson(const std::vector<NodeProgress>& nodes, const std::string& here,
                                int64_t nowMicros);

}  // namespace rtsql
