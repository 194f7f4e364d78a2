// What the planner and the server ask of a source's or a sink's connector,
// answered by the connector (Connector::sourceTraits, sinkTraits) and recorded
// at CREATE SOURCE and CREATE SINK, so that planning needs no connector
// registry and no code outside a connector's folder compares connector names.
#pragma once

namespace rtsql {

struct SourceTraits {
  // A partitioned log whose records are named by partition and offset
  // (Kafka): a flow over it can divide its partitions between the nodes of a
  // cluster or the copies of a sharded flow, and tell a row's origin.
  bool partitionedLog = false;
};

struct SinkTraits {
  // The sink writes to a Kafka cluster: a flow's dead-letter topics go to the
  // same cluster, with the sink's `kafka.<name>` options.
  bool kafkaCluster = false;
  // The sink takes every change as it comes, whatever its kind and whatever
  // 'mode' says (a blackhole counts rows; a query's client shows each change).
  bool writesEveryChange = false;
  // The rows stream to the session's client (EXPLAIN SELECT, live queries):
  // set by the planner for a query, never by a connector.
  bool toClient = false;
};

}  // namespace rtsql
