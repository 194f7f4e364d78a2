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
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/expr.h"
#include "common/options.h"
#include "common/schema.h"

namespace rtsql {

// A source's 'watermark.idle.timeout' option (executor/watermark_tracker.h):
// 10 seconds unless set, between 100 milliseconds and a day.
inline constexpr int64_t kDefaultIdleTimeoutMicros = 10LL * 1000 * 1000;
inline constexpr const char* kIdleTimeoutOption = "watermark.idle.timeout";
inline int64_t sourceIdleTimeoutMicros(const Options& sourceOptions) {
  return sourceOptions.getInterval(kIdleTimeoutOption, kDefaultIdleTimeoutMicros, 100'000,
                                   86'400LL * 1000 * 1000);
}

struct ScanSpec {
  std::string name;       // source name in the catalog
  std::string connector;  // kafka | datagen
  std::string format;     // json | csv | raw
  Options options;
  Schema schema;  // the rows the connector produces (declared + hidden columns)
  int eventTimeColumn = -1;  // watermark column, -1 when none
  int64_t watermarkDelayMicros = 0;
  // 'watermark.idle.timeout': how long a caught-up partition must stay without
  // records while the flow's others deliver before the watermark goes on
  // without it (executor/watermark_tracker.h).
  int64_t idleTimeoutMicros = kDefaultIdleTimeoutMicros;
  int partitions = 0;  // source partitions known at plan time, 0 when unknown
};

enum class OperatorKind {
  Filter,
  Project,
  BroadcastJoin,    // stream row x static table rows, hash on equality keys
  Aggregate,        // GROUP BY (optionally windowed), update or emit-on-close output
  Dedup,            // DISTINCT ON (keys) [WITHIN WATERMARK]
  StreamJoin,       // two inputs, equality keys + event-time bound
};

enum class AggregateFunction { CountStar, Count, Sum, Min, Max, Avg };

struct AggregateCall {
  AggregateFunction function = AggregateFunction::CountStar;
  ExprPtr arg;  // on the operator's input row; null for count(*)
  DataTypePtr resultType;  // count: BIGINT; sum: BIGINT or DOUBLE; avg: DOUBLE; min/max: arg's
};

enum class WindowKind { None, Tumbling, Sliding, Session };

struct WindowSpec {
  WindowKind kind = WindowKind::None;
  ExprPtr time;  // TIMESTAMP expression on the input row
  int64_t sizeMicros = 0;   // tumbling/sliding size
  int64_t slideMicros = 0;  // sliding slide (== size for tumbling)
  int64_t gapMicros = 0;    // session gap
};

struct OperatorSpec {
  OperatorKind kind = OperatorKind::Filter;
  int id = 0;  // unique within the flow: prefixes this operator's state keys
  ExprPtr predicate;           // Filter
  std::vector<ExprPtr> exprs;  // Project
  Schema output;               // the schema after this operator
  std::string describe() const;  // one line for EXPLAIN

  // Aggregate. Output row layout: group keys, then the window struct
  // STRUCT<start: TIMESTAMP, end: TIMESTAMP> when windowed, then one column
  // per aggregate. Update mode emits the key's new row on every change;
  // emitOnWindowClose emits each window once, when the watermark passes its end.
  std::vector<ExprPtr> groupKeys;
  std::vector<AggregateCall> aggregates;
  WindowSpec window;
  bool emitOnWindowClose = false;

  // Dedup: the first row per key passes, later ones are dropped. With
  // withinWatermark, a key is forgotten once the watermark passes its event
  // time (eventTime evaluated on the row).
  std::vector<ExprPtr> dedupKeys;
  bool withinWatermark = false;
  ExprPtr eventTime;

  // BroadcastJoin: output = stream row columns then table columns. Table rows
  // whose buildKeys equal the row's probeKeys (NULL never matches) and pass
  // `residual` (on the joined row, may be null) are emitted; with leftOuter a
  // row without a match is emitted once with NULL table columns.
  std::shared_ptr<const std::vector<Row>> tableRows;
  Schema tableSchema;
  std::string tableName;  // for EXPLAIN and progress
  std::vector<ExprPtr> probeKeys;  // on the stream row
  std::vector<ExprPtr> buildKeys;  // on a table row
  bool leftOuter = false;
  ExprPtr residual;

  // StreamJoin: input 0 is the left stream, input 1 the right; output = left
  // columns then right columns. A pair joins when the keys are equal and
  // leftTime + lowerBound <= rightTime <= leftTime + upperBound (and `residual`
  // holds). State of either side is dropped once the watermark makes a match
  // impossible; with leftOuter, a left row that never matched is emitted with
  // NULL right columns at that moment.
  std::vector<ExprPtr> leftKeys;   // on a left row
  std::vector<ExprPtr> rightKeys;  // on a right row
  ExprPtr leftTime;                // TIMESTAMP on a left row
  ExprPtr rightTime;               // TIMESTAMP on a right row
  int64_t lowerBoundMicros = 0;
  int64_t upperBoundMicros = 0;
  int leftWidth = 0;
  int rightWidth = 0;

  // Joins: the join condition as the query names it (`on [c.id = m.id]`,
  // qualified by the relations' aliases), which describe() prints; the bound
  // keys print without qualifiers.
  std::string label;
};

// Where a stage's rows go.
struct StageOutput {
  enum class Kind { Sink, Shuffle } kind = Kind::Sink;
  int targetStage = -1;        // Shuffle: the stage that reads it
  int targetInput = 0;         // Shuffle: which input of that stage (join: 0 left, 1 right)
  std::vector<ExprPtr> keys;   // Shuffle: partitioning keys on this stage's output rows
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

struct SinkSpec {
  std::string name;
  std::string connector;  // kafka | file
  std::string format;     // json | raw
  Options options;
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

struct PhysicalPlan {
  std::string flowName;
  std::vector<ScanSpec> scans;  // every source the flow reads; StageSpec::scan indexes it
  std::vector<StageSpec> stages;
  SinkSpec sink;
  int64_t checkpointIntervalMicros = 5LL * 60 * 1000 * 1000;
  Options flowOptions;

  int shufflePartitions = 8;   // tasks of each shuffle stage
  // Whether source offsets are committed at epoch ends. Live queries read
  // without leaving consumer-group offsets behind.
  bool commitOffsets = true;
  // 'delivery' = 'exactly-once': the sink writes each epoch in a Kafka
  // transaction committed with the epoch's checkpoint.
  bool exactlyOnce = false;

  int slots() const;           // total tasks over all stages
  std::string explain() const;  // the text EXPLAIN prints
};

}  // namespace rtsql
