// The physical plan of a flow: what the executor runs. It is plain data with
// bound expressions; the executor needs nothing from SQL text to run it.
//
// A plan is a small DAG of stages. A source stage reads one scan with one task
// per source partition group (`maxPartitions`); a later stage reads the
// streaming shuffle from its input stages with `shuffle.partitions` tasks. Every
// operator of a stage runs fused in the same task, one record at a time. A stage
// ends at a shuffle (hash-partitioned by its keys, into one input of a later
// stage) or at the sink. Stateless flows have a single stage:
// scan -> filter -> project -> sink. `SELECT ... GROUP BY k` has two:
// [scan -> filter -> project-for-shuffle] =shuffle(k)=> [aggregate -> project -> sink].
// A UNION ALL of two sources is two source stages that both end at the sink; a
// stream-stream join is two source stages shuffling into the join stage's inputs
// 0 (left) and 1 (right).
//
// Each operator of a stage is an OperatorSpec (operator_spec.h): one spec type
// per kind, which says how EXPLAIN prints it and whether it keeps state.
#pragma once

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "common/expr.h"
#include "common/options.h"
#include "common/schema.h"
#include "planner/connector_traits.h"
#include "planner/operator_spec.h"
#include "planner/row_error_policy.h"
#include "planner/sink_options.h"
#include "planner/source_options.h"

namespace rtsql {

// A source's 'watermark.idle.timeout' option (executor/watermark_tracker.h):
// 10 seconds unless set, between 100 milliseconds and a day.
inline constexpr int64_t kDefaultIdleTimeoutMicros = 10LL * 1000 * 1000;
inline constexpr const char* kIdleTimeoutOption = "watermark.idle.timeout";
inline int64_t sourceIdleTimeoutMicros(const Options& sourceOptions) {
  return sourceOptions.getInterval(kIdleTimeoutOption, kDefaultIdleTimeoutMicros, 100'000,
                                   86'400LL * 1000 * 1000);
}

// The share of a source's partitions one node of a cluster reads, for a flow
// whose partitions are spread over the nodes: partition index i (numbered over
// the topics of `subscribe`, in order) is read on this node when `held` has
// its slot, slotOf(i). slotCount 0 (outside a cluster, or a flow that runs
// whole on one node): every partition.
struct PartitionShare {
  int firstSlot = 0;
  int slotCount = 0;
  std::set<int> held;
  // The slots CREATE FLOW chose for the partitions (PhysicalPlan::
  // clusterSlots): partition i's is order[i % order.size()]. Empty: the
  // slot i after firstSlot.
  std::vector<int> order;

  int slotOf(int index) const {
    if (slotCount == 0) return 0;
    if (!order.empty()) return order[static_cast<size_t>(index) % order.size()] % slotCount;
    return (firstSlot + index) % slotCount;
  }
  bool reads(int index) const { return slotCount == 0 || held.count(slotOf(index)) > 0; }
  // How many of the partitions before `index` this share reads: which of
  // its own partitions `index` is, from 0, for spreading them over tasks.
  int rank(int index) const {
    if (slotCount == 0) return index;
    int n = 0;
    for (int i = 0; i < index; ++i) n += reads(i) ? 1 : 0;
    return n;
  }
  bool operator==(const PartitionShare&) const = default;
};

// A sharded flow's exchange topic (executor/exchange.h): where the rows of
// one input of its stateful stage cross from the copy that reads them to the
// copy that keeps their key. Partition s belongs to copy s.
struct ExchangeSpec {
  std::string topic;      // empty: no exchange
  std::string bootstrap;  // the cluster's Kafka
  int partitions = 0;     // the flow's copies
  // Front tasks over all copies, each a producer of the topic's markers:
  // copy c's task t is producer c * (producers / partitions) + t.
  int producers = 0;
  // The rows a copy's front keeps for the copy's own shard stay in process:
  // the front hands them, with its barriers and (at the markers' pace) its
  // watermark, to the stateful stage through the shuffle
  // (StageOutput::targetStage), and the topic
  // carries only the rows for other copies. The back leaves out the copy's
  // own fronts (their markers, and any row from the partitions they read).
  // False for a flow made before this was recorded (kExchangeLocalSetting):
  // its own rows go through the topic too.
  bool local = false;
};

struct ScanSpec {
  std::string name;       // source name in the catalog
  std::string connector;  // kafka | datagen
  std::string format;     // json | csv | raw
  Options options;
  // What the connector read from `options` at CREATE SOURCE, which the code
  // that runs the source reads instead of them; null in a spec built by hand
  // (tests), which the connector parses when it opens it.
  std::shared_ptr<const SourceOptions> parsed;
  SourceTraits traits;  // the connector's answers (planner/connector_traits.h)
  Schema schema;  // the rows the connector produces (declared + hidden columns)
  int eventTimeColumn = -1;  // watermark column, -1 when none
  int64_t watermarkDelayMicros = 0;
  // 'watermark.idle.timeout': how long a caught-up partition must stay without
  // records while the flow's others deliver before the watermark goes on
  // without it (executor/watermark_tracker.h).
  int64_t idleTimeoutMicros = kDefaultIdleTimeoutMicros;
  int partitions = 0;  // source partitions known at plan time, 0 when unknown
  PartitionShare share;  // the partitions this node reads (a cluster sets it per run)
  // A copy's back (executor/exchange.h): the scan reads partition share of
  // this exchange topic instead of a source; `schema` is the rows it carries.
  ExchangeSpec exchange;
};

// Where a stage's rows go.
struct StageOutput {
  // Exchange: a copy's front, whose rows go to the copy that keeps their
  // key through `exchange` (executor/exchange.h), hashed by `keys`.
  enum class Kind { Sink, Shuffle, Exchange } kind = Kind::Sink;
  // Shuffle, and Exchange with exchange.local (the copy's own rows): the
  // stage that reads it, and which of its inputs (join: 0 left, 1 right).
  int targetStage = -1;
  int targetInput = 0;
  std::vector<ExprPtr> keys;   // Shuffle, Exchange: partitioning keys on this stage's output rows
  ExchangeSpec exchange;       // Exchange

  // Whether stage `stage` takes rows of this output through the in-process
  // shuffle: a shuffle into it, or a front's own rows.
  bool feeds(int stage) const {
    return targetStage == stage &&
           (kind == Kind::Shuffle || (kind == Kind::Exchange && exchange.local));
  }
};

struct StageSpec {
  int id = 0;
  int tasks = 1;
  int scan = -1;  // source stages: index into PhysicalPlan::scans; -1 for shuffle stages
  int inputs = 0;  // shuffle stages: number of inputs (1, or 2 for a stream-stream join)
  std::vector<OperatorSpec> operators;
  StageOutput output;
  Schema outputSchema;  // the rows this stage emits
};

// The connector name of a materialized view's sink: the view's keyed table
// in the flow's state store (executor/state/view_table.h), not a connector
// of the registry.
inline constexpr const char* kViewSinkConnector = "view";
// A materialized view's checkpoint interval unless it names one: what a
// read of the view may lag behind the flow.
inline constexpr int64_t kViewCheckpointMicros = 1000 * 1000;

struct SinkSpec {
  std::string name;
  std::string connector;  // a registered sink connector: kafka, file, http, blackhole
  std::string format;     // json, raw, csv or debezium-json
  Options options;
  // What the connector read from `options` at CREATE SINK (SinkDef::parsed);
  // null in a spec built by hand, whose options sinkOptionsOf() reads.
  std::shared_ptr<const SinkOptions> parsed;
  SinkTraits traits;    // the connector's answers (planner/connector_traits.h)
  Schema input;         // the rows the flow writes
  int keyColumn = -1;   // json: the column used as the Kafka key, -1 for none
  // json: the columns that form the Kafka key of an aggregation's rows (its
  // group keys, window included, in GROUP BY order) when every one of them is
  // selected. With one column keyColumn is that column; with several keyColumn
  // is -1 and the key is the JSON object of these columns, so that each update
  // of a group replaces the last under log compaction.
  std::vector<int> keyColumns;
  // raw: indexes of the value / key / headers / topic columns in `input`, -1 when absent
  int valueColumn = -1;
  int headersColumn = -1;
  int topicColumn = -1;
};

// One of a flow's dead-letter topics, as CREATE FLOW read its options.
struct FlowDeadLetterTopic {
  std::string topic;
  std::string bootstrap;  // empty: the cluster of the flow's Kafka sink
};

struct PhysicalPlan {
  std::string flowName;
  std::vector<ScanSpec> scans;  // every source the flow reads; StageSpec::scan indexes it
  std::vector<StageSpec> stages;
  SinkSpec sink;
  // The changelog the flow writes into its sink (deriveChangelog()).
  Changelog output;
  int64_t checkpointIntervalMicros = 5LL * 60 * 1000 * 1000;
  Options flowOptions;
  // The flow's options the runtime acts on, read once at planning: 'on.error'
  // (planner/row_errors.h) and whether 'late.rows' is 'dead-letter'
  // (planner/late_rows.h).
  RowErrorPolicy onError = RowErrorPolicy::Fail;
  bool lateRowsDeadLettered = false;
  // Where those rows go when dead-lettered (planner/flow_dead_letters.h),
  // read once at planning: 'late.rows.topic' and 'dead-letter.topic', each
  // with its '<prefix>.kafka.bootstrap.servers' (empty: the Kafka sink's
  // cluster). Empty when the flow dead-letters no such rows.
  FlowDeadLetterTopic lateRowsTopic;
  FlowDeadLetterTopic rowErrorsTopic;

  int shufflePartitions = 8;   // tasks of each shuffle stage
  // Whether source offsets are committed at epoch ends. Live queries read
  // without leaving consumer-group offsets behind.
  bool commitOffsets = true;
  // 'delivery' = 'exactly-once': the sink writes each epoch in a Kafka
  // transaction committed with the epoch's checkpoint.
  bool exactlyOnce = false;
  // 'standby.replicas': in a cluster, how many nodes besides the one running
  // the flow keep a warm copy of its state.
  int standbyReplicas = 0;
  // 'shards' (planner/shard_plan.h): how many copies of the flow divide its
  // keys, and which of them this plan is (0 .. shards - 1).
  int shards = 1;
  int shard = 0;
  // A sharded flow's exchange topics are named after this id, which CREATE
  // FLOW draws anew (a flow made again never reads its predecessor's).
  std::string exchangeId;
  // Whether a copy's own rows stay in process (ExchangeSpec::local), as
  // CREATE FLOW records for the flows it makes (kExchangeLocalSetting).
  bool exchangeLocal = false;
  // In a cluster, the slots of the flow's copies (copy i's is clusterSlots[i])
  // or, for a flow spread by its partitions, of its source partitions
  // (PartitionShare::order), as CREATE FLOW chose them from the nodes that
  // held the slots then, so that the copies or partitions go to as many
  // nodes as there were (server/cluster/membership.h). Empty: consecutive
  // slots from the flow's own.
  std::vector<int> clusterSlots;

  int slots() const;           // total tasks over all stages
  bool keepsState() const;     // some operator is stateful
  // Whether the flow's source partitions can be spread over the nodes of a
  // cluster, each node reading a share of them: a flow of one stage (no
  // shuffle) over one Kafka source of several partitions, keeping no state,
  // with at-least-once output.
  bool spreadsPartitions() const;
  std::string explain() const;  // the text EXPLAIN prints
};

}  // namespace rtsql
