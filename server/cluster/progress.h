// The progress of a cluster's flows, as every node sees it: each node
// publishes its flows' progress to the topic `_rtsql-<NAME>-progress` and
// follows what the others publish, so that SHOW PROGRESS on any node covers
// every node that runs the flow (executor/metrics/cluster_progress_json.h
// merges them).
//
// A node publishes a second after each interval of recent_latency.h ends
// (every 5 s), one record per flow it runs, keyed by node and flow; it
// follows the topic from its last records at start. A record older than
// kFreshMicros counts for nothing (its node stopped the flow or died), and
// the caller passes only the nodes that hold the flow's slots now. Progress
// is for reading now, not for keeping: the topic keeps a minute of records
// (on Apache Kafka; an embedded broker keeps them all, in memory).
//
// Nothing here holds up the node: the topic is made on the thread, and a
// broker that cannot be reached leaves SHOW PROGRESS to the node's own part
// (logged once).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "executor/metrics/cluster_progress_json.h"
#include "server/cluster/options.h"

namespace rtsql {

std::string clusterProgressTopic(const std::string& cluster);

class ClusterProgress {
 public:
  static constexpr int64_t kFreshMicros = 15'000'000;

  explicit ClusterProgress(ClusterOptions options);
  ~ClusterProgress();
  ClusterProgress(const ClusterProgress&) = delete;
  ClusterProgress& operator=(const ClusterProgress&) = delete;

  // Starts publishing what `gather` returns (this node's flows, called on the
  // class's thread) and following the others.
  void start(std::function<std::vector<NodeProgress>()> gather);
  void stop();

  // The newest fresh progress of flow `flow` (any case) published by each of
  // `nodes` other than this one.
  std::vector<NodeProgress> of(const std::string& flow, const std::set<std::string>& nodes) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace rtsql
