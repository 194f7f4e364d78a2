// The operators of a physical plan, one spec type per kind. Each spec holds
// only its own fields, says how EXPLAIN prints it (describe(), in
// operator_spec.cpp) and whether it keeps state across records (stateful()):
// the flow runtime gives a state table to, and aligns barriers for, exactly
// the operators whose spec says so. The executor builds each kind from its own
// spec (executor/operators/factory.cpp, one line per kind).
//
// OperatorSpec is a closed std::variant of the kinds rather than a class
// hierarchy: a plan is plain data that the planner copies (an operator above a
// UNION ALL runs in every branch), so value types copy without clone(); and
// std::visit over every kind without a catch-all makes a kind missing from the
// factory a compile error rather than a runtime one. A new operator is a
// struct here with its describe(), added to OperatorSpec::Kind, plus its
// operator file and its factory line.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "common/error.h"
#include "common/expr.h"
#include "common/python/processor.h"
#include "common/schema.h"
#include "planner/changelog.h"

namespace rtsql {

// What every operator has, whatever its kind.
struct OperatorSpecBase {
  int id = 0;     // unique within the flow: prefixes this operator's state keys
  Schema output;  // the schema after this operator
  // What the output rows mean to what follows (changelog.h); filled by
  // deriveChangelog() once the plan is built.
  Changelog changelog;
  // The mode of the rows this operator reads (of either input, for a join):
  // an operator whose input retracts must take retracted rows out of what
  // it keeps. Filled by deriveChangelog().
  ChangelogMode input = ChangelogMode::Append;
};

// Passes the rows for which `predicate` is TRUE.
struct FilterSpec : OperatorSpecBase {
  ExprPtr predicate;

  std::string describe() const;
  bool stateful() const { return false; }
};

// Computes one output column per expression.
struct ProjectSpec : OperatorSpecBase {
  std::vector<ExprPtr> exprs;

  std::string describe() const;
  bool stateful() const { return false; }
};

// A stream row joined with a static table's rows, hashed on equality keys.
// Output = stream row columns then table columns. Table rows whose buildKeys
// equal the row's probeKeys (NULL never matches) and pass `residual` (on the
// joined row, may be null) are emitted; with leftOuter a row without a match is
// emitted once with NULL table columns.
struct BroadcastJoinSpec : OperatorSpecBase {
  std::shared_ptr<const std::vector<Row>> tableRows;
  Schema tableSchema;
  std::string tableName;  // for EXPLAIN and progress
  std::vector<ExprPtr> probeKeys;  // on the stream row
  std::vector<ExprPtr> buildKeys;  // on a table row
  bool leftOuter = false;
  ExprPtr residual;
  // The join condition as the query names it (`on [c.id = m.id]`, qualified by
  // the relations' aliases), which describe() prints; the bound keys print
  // without qualifiers.
  std::string label;

  std::string describe() const;
  bool stateful() const { return false; }
};

// The first six are the original aggregates (aggregate_common.cpp); the rest
// are Spark's, each family in executor/operators/aggregates/. New functions
// go at the end: the order is not persisted, but tests and EXPLAIN read it.
enum class AggregateFunction {
  CountStar, Count, Sum, Min, Max, Avg,
  CountIf,
  StddevSamp, StddevPop, VarSamp, VarPop,
  BoolAnd, BoolOr,
  MaxBy, MinBy,
  First, Last,
  CollectList, CollectSet,
  StringAgg,
  ApproxCountDistinct,
  Percentile, PercentileApprox,
};

// The function's canonical (Spark) name: "count", "stddev_samp", "max_by".
const char* aggregateFunctionName(AggregateFunction f);
// Whether the aggregate can take a retracted row back out of its state (over
// a changelog input); the others are refused there at bind time (0A000).
bool aggregateTakesRetractions(AggregateFunction f);
// approx_count_distinct's HyperLogLog++ precision for a relativeSD, Spark's
// ceil(2 log2(1.106 / relativeSD)): 9 bits (512 registers) for 0.05.
int hyperLogLogPrecision(double relativeSD);

struct AggregateCall {
  AggregateFunction function = AggregateFunction::CountStar;
  // On the operator's input row; null for count(*). max_by/min_by read
  // struct(x, ord) and first/last read struct(x), so that a NULL x is still a
  // row (only a row the FILTER drops arrives as NULL).
  ExprPtr arg;
  DataTypePtr resultType;  // count: BIGINT; sum: BIGINT or DOUBLE; avg: DOUBLE; min/max: arg's
  // count/sum/avg(DISTINCT arg): each distinct non-NULL value counts once.
  bool distinct = false;
  // FILTER (WHERE filter): a BOOLEAN on the input row; only rows for which it
  // is TRUE reach this call. Null when the call has no FILTER.
  ExprPtr filter;
  // Constant arguments of Spark's aggregates, bound from literals.
  bool ignoreNulls = false;        // first/last/any_value(x, ignoreNulls)
  std::string separator;           // string_agg/listagg(x, separator)
  double relativeSD = 0.05;        // approx_count_distinct(x, relativeSD)
  // percentile(x, p) and percentile_approx(x, p, accuracy): p's values, and
  // whether p was an array (the answer is then one too).
  std::vector<double> percentages;
  bool percentagesArray = false;
  int64_t accuracy = 10000;
};

// How EXPLAIN and column names print a FILTER condition: its text without the
// parentheses around a whole comparison, as FILTER (WHERE ...) has its own.
std::string filterConditionText(const std::string& condition);

enum class WindowKind { None, Tumbling, Sliding, Session };

struct WindowSpec {
  WindowKind kind = WindowKind::None;
  ExprPtr time;  // TIMESTAMP expression on the input row
  int64_t sizeMicros = 0;   // tumbling/sliding size
  int64_t slideMicros = 0;  // sliding slide (== size for tumbling)
  int64_t gapMicros = 0;    // session gap
};

// GROUP BY, optionally windowed. Output row layout: group keys, then the
// window struct STRUCT<start: TIMESTAMP, end: TIMESTAMP> when windowed, then
// one column per aggregate. Update mode emits the key's new row on every
// change; emitOnWindowClose emits each window once, when the watermark passes
// its end.
struct AggregateSpec : OperatorSpecBase {
  std::vector<ExprPtr> groupKeys;
  std::vector<AggregateCall> aggregates;
  WindowSpec window;
  bool emitOnWindowClose = false;
  // A bounded query's aggregate without GROUP BY or window, alone in its
  // stage's one task (planBoundedQuery): its one group exists before any row,
  // so that an empty input answers one row (count 0, the others NULL) as in
  // PostgreSQL. A flow's global aggregate emits once it has input.
  bool seedGlobalGroup = false;

  std::string describe() const;
  bool stateful() const { return true; }
};

// DISTINCT ON (keys) [WITHIN WATERMARK]: the first row per key passes, later
// ones are dropped. With withinWatermark, a key is forgotten once the
// watermark passes its event time (eventTime evaluated on the row).
struct DedupSpec : OperatorSpecBase {
  std::vector<ExprPtr> dedupKeys;
  bool withinWatermark = false;
  ExprPtr eventTime;

  std::string describe() const;
  bool stateful() const { return true; }
};

// Stream-stream join. Input 0 is the left stream, input 1 the right; output =
// left columns then right columns. A pair joins when the keys are equal and
// leftTime + lowerBound <= rightTime <= leftTime + upperBound (and `residual`
// holds). State of either side is dropped once the watermark makes a match
// impossible; with leftOuter, a left row that never matched is emitted with
// NULL right columns at that moment.
//
// With `unbounded` there is no time bound: a pair joins on equal keys (and
// `residual`), each side's rows are kept per key until they are retracted,
// or, with stateTtlMicros, until the watermark passes their event time
// (leftTime / rightTime, the sides' watermark columns) plus the TTL. An outer
// side's row without a match is emitted at once with NULLs, and retracted
// when its first match arrives.
struct StreamJoinSpec : OperatorSpecBase {
  std::vector<ExprPtr> leftKeys;   // on a left row
  std::vector<ExprPtr> rightKeys;  // on a right row
  ExprPtr leftTime;                // TIMESTAMP on a left row
  ExprPtr rightTime;               // TIMESTAMP on a right row
  int64_t lowerBoundMicros = 0;
  int64_t upperBoundMicros = 0;
  int leftWidth = 0;
  int rightWidth = 0;
  bool leftOuter = false;
  ExprPtr residual;
  // The join condition as the query names it, as for BroadcastJoinSpec.
  std::string label;
  bool unbounded = false;
  bool rightOuter = false;     // unbounded only: RIGHT and FULL joins
  int64_t stateTtlMicros = 0;  // unbounded only: the 'state.ttl' flow option, 0 when unset
  // Unbounded only: positions, on a left (right) row, of the hidden Kafka
  // metadata columns (_key, _timestamp, _partition, _offset, _headers). They
  // describe the record that carried a row rather than the row: a changelog
  // source's delete or update arrives in a record of its own, with its own
  // offset and timestamp, so a retraction finds the kept row it takes out
  // without comparing them.
  std::vector<int> leftRecordColumns;
  std::vector<int> rightRecordColumns;

  std::string describe() const;
  bool stateful() const { return true; }
};

// ROW_NUMBER() OVER (PARTITION BY partitionKeys ORDER BY orderKeys) filtered
// to rank <= limit: per partition key, the rows ranked 1..limit. Rows with
// equal order keys rank by arrival (a later row ranks after). Output = the
// input row, then the rank (BIGINT) when rankColumn. Emits retractions: a row
// entering the top is inserted, one falling out is deleted, and with
// rankColumn every row whose rank changed is updated. With RANK() or
// DENSE_RANK() (`function`) rows with equal order keys share a rank and every
// row ranked <= limit is kept, ties included.
struct TopNSpec : OperatorSpecBase {
  enum class Function { RowNumber, Rank, DenseRank };
  Function function = Function::RowNumber;
  std::vector<ExprPtr> partitionKeys;  // on the input row
  std::vector<ExprPtr> orderKeys;      // on the input row
  std::vector<bool> descending;        // one per order key
  int64_t limit = 1;
  bool rankColumn = false;

  std::string describe() const;
  bool stateful() const { return true; }
};

// agg(x) OVER (PARTITION BY partitionKeys ORDER BY orderKeys ROWS BETWEEN
// precedingRows PRECEDING AND CURRENT ROW): per input row, the aggregates over
// the frame of its partition = the rows ordered by the order keys (equal keys
// by arrival), from precedingRows rows before the row to the row itself;
// precedingRows < 0 is UNBOUNDED PRECEDING. Output = the input row, then one
// column per aggregate. A row added or taken out changes the outputs of the
// rows after it whose frames hold it, which are updated: the output retracts.
// A bounded query's analytic function OVER a window
// (executor/operators/analytic_window.h): a ranking function, an offset
// function (lag, lead), a value of the frame (first_value, last_value,
// nth_value) or an aggregate over any frame Spark takes.
struct AnalyticCall {
  enum class Kind {
    RowNumber, Rank, DenseRank, PercentRank, CumeDist, Ntile,
    Lag, Lead, FirstValue, LastValue, NthValue, Aggregate
  };
  // One end of a frame: `offset` rows (ROWS) or order-key units (RANGE)
  // before or after the current row; CURRENT ROW is 0, and a RANGE frame's
  // CURRENT ROW takes the row's peers (equal order keys).
  struct Bound {
    bool unbounded = false;
    int64_t offset = 0;  // negative: PRECEDING
  };
  Kind kind = Kind::RowNumber;
  ExprPtr arg;           // on the input row; null for the ranking functions
  ExprPtr defaultValue;  // lag/lead: on the input row (the current row's), may be null
  int64_t n = 1;         // lag/lead's offset, nth_value's n, ntile's buckets
  bool ignoreNulls = false;
  bool range = false;  // the frame: RANGE rather than ROWS
  Bound lower{true, 0};
  Bound upper{false, 0};
  AggregateCall aggregate;  // Kind::Aggregate
  DataTypePtr type;
  std::string name;  // as EXPLAIN shows the call
};

struct OverAggregateSpec : OperatorSpecBase {
  std::vector<ExprPtr> partitionKeys;  // on the input row
  std::vector<ExprPtr> orderKeys;      // on the input row
  std::vector<bool> descending;        // one per order key
  int64_t precedingRows = -1;
  std::vector<AggregateCall> aggregates;  // args on the input row; no DISTINCT, no FILTER
  // Not empty: a bounded query's window, computed by AnalyticWindow
  // (analytic_window.h) once its input is complete, with these calls (one
  // output column each) instead of `aggregates` and `precedingRows`.
  std::vector<AnalyticCall> analytic;

  std::string describe() const;
  bool stateful() const { return true; }
};

// TRANSFORM(input PARTITION BY keys USING PROCESSOR p WITH (options)): per
// input row, the processor's handle_input_rows for the row's partition key,
// with the state the processor keeps for that key. The input row is the
// input's visible columns (`inputColumns` of them, which the processor sees
// by name), then the keys. Output = the key columns, then the RETURNS
// columns, one row per row the processor yields (appends only).
struct TransformSpec : OperatorSpecBase {
  std::vector<ExprPtr> partitionKeys;  // on the input row
  int inputColumns = 0;
  Schema inputSchema;  // the first inputColumns columns of the input row
  std::shared_ptr<const PythonProcessor> processor;
  std::vector<std::pair<std::string, std::string>> options;  // WITH (...), as written

  std::string describe() const;
  bool stateful() const { return true; }
};

// Gathers the rows a task takes together (a poll's records, a shuffle inbox),
// at most kMaxVectorizedBatchRows, makes each vectorized Python call of the
// next operator, a Filter or Project, once over them and appends its results
// to the rows as a column (executor/operators/vectorized_batch.h). The planner
// places one before each Filter or Project that calls a vectorized function,
// and nowhere else, and rewrites that operator's calls into references to the
// columns (placeVectorizedBatches in planner/user_function.h).
struct VectorizedBatchSpec : OperatorSpecBase {
  static constexpr size_t kMaxVectorizedBatchRows = 1024;
  // The calls, in order: call k is column inputColumns + k of `output`, and
  // reads the columns of the calls before it where its arguments hold them.
  std::vector<ExprPtr> calls;
  // The width of the rows it takes: the columns it appends come after.
  int inputColumns = 0;

  std::string describe() const;
  bool stateful() const { return false; }
};

// The set-returning functions of a bounded query's select list (unnest,
// generate_series, generate_subscripts, information_schema._pg_expandarray),
// as PostgreSQL runs them: per input row, as many rows as the longest of the
// functions gives, each the input row followed by one column per function
// (its element, or NULL once that function has run out); none when every
// function gives none. Output = the input's columns, then the functions'.
struct ExpandSpec : OperatorSpecBase {
  enum class Function { Unnest, Series, Subscripts, ExpandArray };
  struct Call {
    Function function = Function::Unnest;
    std::vector<ExprPtr> args;  // over the input row
  };
  // The most rows one input row may become: a generate_series beyond it is
  // refused with 54000 rather than run for ever.
  static constexpr int64_t kMaxRowsPerInput = 1'000'000;
  std::vector<Call> calls;
  int inputColumns = 0;

  std::string describe() const;
  bool stateful() const { return false; }
};

// One operator of a stage: any one of the kinds above.
class OperatorSpec {
 public:
  using Kind = std::variant<FilterSpec, ProjectSpec, BroadcastJoinSpec, AggregateSpec, DedupSpec,
                            StreamJoinSpec, TopNSpec, OverAggregateSpec, VectorizedBatchSpec,
                            TransformSpec, ExpandSpec>;

  OperatorSpec() = default;
  // Any kind's spec is an OperatorSpec.
  template <typename Spec>
    requires(!std::is_same_v<std::remove_cvref_t<Spec>, OperatorSpec>)
  OperatorSpec(Spec&& spec) : kind_(std::forward<Spec>(spec)) {}  // NOLINT: implicit on purpose

  const OperatorSpecBase& base() const {
    return std::visit([](const auto& s) -> const OperatorSpecBase& { return s; }, kind_);
  }
  OperatorSpecBase& base() {
    return std::visit([](auto& s) -> OperatorSpecBase& { return s; }, kind_);
  }
  int id() const { return base().id; }
  const Schema& output() const { return base().output; }

  // One line for EXPLAIN.
  std::string describe() const {
    return std::visit([](const auto& s) { return s.describe(); }, kind_);
  }
  // Whether the operator keeps state across records (and so gets a state
  // table and takes part in checkpoints).
  bool stateful() const {
    return std::visit([](const auto& s) { return s.stateful(); }, kind_);
  }

  template <typename Spec>
  bool is() const {
    return std::holds_alternative<Spec>(kind_);
  }
  // The spec as its kind; InternalError when it is another kind.
  template <typename Spec>
  const Spec& as() const {
    if (const Spec* s = std::get_if<Spec>(&kind_)) return *s;
    throw InternalError("operator spec of another kind: " + describe());
  }
  template <typename Spec>
  Spec& as() {
    if (Spec* s = std::get_if<Spec>(&kind_)) return *s;
    throw InternalError("operator spec of another kind: " + describe());
  }
  const Kind& kind() const { return kind_; }

 private:
  Kind kind_;
};

}  // namespace rtsql
