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
#include "planner/physical_plan.h"

namespace rtsql {

// The running state of one aggregate call for one group. Which fields are used
// depends on the function: count(*)/count(x) use `count`; sum uses `has` and
// `isum` or `dsum`; avg uses `count` and `dsum`; min/max use `has` and `value`.
struct Accumulator {
  int64_t count = 0;
  int64_t isum = 0;
  double dsum = 0;
  bool has = false;
  Value value;
};

// The aggregate calls of one operator: evaluates their arguments, updates,
// merges, encodes and finalizes accumulators.
class AggregateCalls {
 public:
  explicit AggregateCalls(const std::vector<AggregateCall>& calls);

  size_t size() const { return calls_.size(); }
  // Evaluates every call's argument on `row` once, so that a row that updates
  // several windows evaluates its arguments only once.
  void evalArgs(const Row& row, Row& args) const;
  void reset(std::vector<Accumulator>& accs) const;
  void update(std::vector<Accumulator>& accs, const Row& args) const;
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
  };
  std::vector<Call> calls_;
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
  AggregateCalls calls_;
  bool emitOnClose_ = false;

  // Per-row scratch, reused so that the hot path does not allocate.
  std::string groupKey_;
  std::string groupValueBytes_;
  Row groupValues_;
  Row args_;
  std::vector<Accumulator> accs_;
  std::string value_;
  Row out_;
};

}  // namespace rtsql
