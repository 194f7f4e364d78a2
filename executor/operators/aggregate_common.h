// What the three aggregation operators (aggregate.cpp, window_aggregate.cpp,
// session_window_aggregate.cpp) share: the accumulators of the aggregate calls
// with their compact state encoding, and a base operator that encodes group
// keys and builds output rows (StatefulOperator owns the state table, the
// watermark and epoch-end steps and the state statistics).
//
// Every accumulator is mergeable (count and sum add, min/max compare, avg keeps
// sum and count), which is what lets session windows merge when a row bridges
// two sessions.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "executor/operators/stateful_operator.h"
#include "executor/state/state_store.h"
#include "executor/state/time_indexed_table.h"
#include "planner/physical_plan.h"

namespace rtsql {

// The running state of one aggregate call for one group. Which fields are used
// depends on the function: count(*)/count(x) use `count`; sum uses `has` and
// `isum`, `dsum` or (over DECIMAL) `xsum`; avg uses `count` and `dsum` or
// `xsum`; min/max use `has` and `value`.
//
// The families of aggregates/ (aggregates/family.h) use `count` and `has` as
// well, and the fields below: stddev/variance keep Welford's running `mean`
// and `m2`; bool_and/bool_or count their TRUE values in `hits`; max_by/min_by
// and first/last keep their row in `value`; collect_list, collect_set and
// string_agg keep their values in `items` (collect_set with a row count per
// value in `counts`) and their size in `bytes`; approx_count_distinct keeps
// its HyperLogLog++ registers in `sketch`.
struct Accumulator {
  int64_t count = 0;
  int64_t isum = 0;
  double dsum = 0;
  Int128 xsum = 0;  // unscaled, at the argument's scale
  bool has = false;
  Value value;
  double mean = 0;
  double m2 = 0;
  int64_t hits = 0;
  std::vector<Value> items;
  std::vector<int64_t> counts;
  size_t bytes = 0;
  std::string sketch;
};

class AggregateFamily;

// The aggregate calls of one operator: evaluates their arguments, updates,
// merges, encodes and finalizes accumulators.
//
// Most accumulators live in the group's state value. Two kinds of call need
// state per distinct value as well, in keyed families of the operator's table
// (key-then-time entries whose `time` is the call's index, see
// time_indexed_table.h):
//   'D'  g, call index, encodeKey(value) -> fixed64 count
//        count/sum/avg(DISTINCT x): how many rows of the group hold the value;
//        the accumulator changes only when a count goes 0 -> 1 or 1 -> 0.
//   'M'  g, call index, encodeKey(value) -> fixed64 count, encodeValue(value)
//        min/max over a retracting input: the multiset of the group's values,
//        whose first or last entry is the new extreme once the current one is
//        taken out. Kept only when the input retracts.
class AggregateCalls {
 public:
  // `retracting`: the input retracts rows (apply() with retract = true), so a
  // sum also keeps its count of non-NULL values in its state value (a sum of
  // no values is NULL) and min/max keep their multiset.
  explicit AggregateCalls(const std::vector<AggregateCall>& calls, bool retracting = false);

  size_t size() const { return calls_.size(); }
  // Some call keeps state per value ('D' or 'M'): apply() must be used.
  bool keyed() const { return keyed_; }
  // Evaluates every call's argument on `row` once, so that a row that updates
  // several windows evaluates its arguments only once. A call whose FILTER is
  // not TRUE for the row gets NULL, which every call but count(*) ignores;
  // count(*) with a FILTER gets TRUE or NULL.
  void evalArgs(const Row& row, Row& args) const;
  void reset(std::vector<Accumulator>& accs) const;
  void update(std::vector<Accumulator>& accs, const Row& args) const;
  // Adds the row whose arguments are `args` to the accumulators of the group
  // whose key encoding is `group`, or takes it out when `retract`; keeps the
  // per-value families in `state`.
  void apply(std::vector<Accumulator>& accs, const Row& args, bool retract, TimeIndexedTable& state,
             std::string_view group) const;
  void merge(std::vector<Accumulator>& into, const std::vector<Accumulator>& from) const;
  void encode(std::string& out, const std::vector<Accumulator>& accs) const;
  // Consumes the accumulators' bytes from `in`.
  void decode(std::string_view& in, std::vector<Accumulator>& accs) const;
  // Appends one result value per call to `out`.
  void appendResults(Row& out, const std::vector<Accumulator>& accs) const;

 private:
  struct Call {
    AggregateFunction function;
    ExprPtr arg;
    DataTypePtr argType;
    bool doubleSum = false;  // sum accumulates in DOUBLE (else BIGINT)
    bool decimalSum = false;  // sum or avg of a DECIMAL: accumulates in xsum
    decimal::Type result;     // then the result's precision and scale
    bool distinct = false;
    ExprPtr filter;
    // Spark's aggregates beyond the first six (aggregates/family.h); null
    // for those.
    std::shared_ptr<const AggregateFamily> family;
    bool yearMonthInterval = false;  // sum or avg of a YEAR-MONTH INTERVAL: in isum or dsum
  };
  // Moves the per-value count of `v` for call `i` in family `tag` by `delta`;
  // returns the count before.
  int64_t bumpValue(TimeIndexedTable& state, char tag, std::string_view group, size_t i,
                    const Value& v, int64_t delta) const;
  std::vector<Call> calls_;
  bool retracting_ = false;
  bool keyed_ = false;
  // Scratch for the per-value families.
  mutable std::string rest_, value_;
};

// Fixed-width little-endian integers inside state values (values need no order).
void putFixed64(std::string& out, uint64_t v);
uint64_t getFixed64(std::string_view& in);  // consumes 8 bytes; InternalError when short

// Decodes an order-preserving encodeKeyInt() time from the first 8 bytes of `in`.
int64_t keyTimeAt(std::string_view in);

class AggregateOperatorBase : public StatefulOperator {
 protected:
  AggregateOperatorBase(const AggregateSpec& spec, std::unique_ptr<StateTable> state);

  // Evaluates the group key values of `row` into groupValues_ and their key
  // encoding into groupKey_; with emitOnWindowClose also their value encoding
  // into groupValueBytes_ (kept in state so the final row can be rebuilt).
  void evalGroupKey(const Row& row);
  // Decodes group key values written from groupValueBytes_.
  void decodeGroupValues(std::string_view& in, Row& out) const;
  // The output row: group key values, the window struct (when `windowed`), the
  // aggregate results.
  void buildOutput(Row& out, const Row& groupValues, bool windowed, int64_t start, int64_t end,
                   const std::vector<Accumulator>& accs) const;

  std::vector<ExprPtr> groupKeys_;
  // Pushes `row` downstream as a change of kind `kind` (the rest of the
  // context is the input row's).
  void emitAs(Row& row, const RecordContext& ctx, RowKind kind) {
    RecordContext c = ctx;
    c.kind = kind;
    emit(row, c);
  }
  // Pushes a group's change downstream once out_ holds its new row: that
  // row, or with retractOut_ an insert for a group that did not exist, and
  // for one that did the old row (old_) taken back before the new one, when
  // the row changed at all.
  void emitChange(const RecordContext& ctx, bool existed) {
    if (!retractOut_) {
      emit(out_, ctx);
    } else if (!existed) {
      emitAs(out_, ctx, RowKind::Insert);
    } else if (!(old_ == out_)) {
      emitAs(old_, ctx, RowKind::UpdateBefore);
      emitAs(out_, ctx, RowKind::UpdateAfter);
    }
  }

  AggregateCalls calls_;
  bool emitOnClose_ = false;
  // The window's start and end are TIMESTAMP_NTZ when its time column is.
  bool wallClockWindow_ = false;
  // Changes are spelled out: insert, update-before + update-after, delete
  // (planner/changelog.h); else each change is the group's new row.
  bool retractOut_ = false;

  // Per-row scratch, reused so that the hot path does not allocate.
  std::string groupKey_;
  std::string groupValueBytes_;
  Row groupValues_;
  Row args_;
  std::vector<Accumulator> accs_;
  std::string value_;
  Row out_;
  Row old_;  // the group's row before the change, when retracting
};

}  // namespace rtsql
