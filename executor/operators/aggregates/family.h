// Spark's aggregates beyond count, sum, min, max and avg: one family of
// aggregates per file of this folder (booleans.cpp: count_if, bool_and,
// bool_or; moments.cpp: stddev and variance; by_row.cpp: max_by, min_by,
// first, last; collect.cpp: collect_list, collect_set, string_agg;
// hyperloglog.cpp: approx_count_distinct; percentile.cpp: percentile,
// percentile_approx).
// AggregateCalls (aggregate_common.cpp) calls a family
// for each call of one; the operators know nothing of them.
//
// A family updates the Accumulator of one call of one group. Its state
// encoding is the bytes encode() appends to the group's state value, after
// those of the calls before it, and decode() reads back; each file documents
// its own. A family never sees a NULL: a row whose argument is NULL (or that
// the call's FILTER drops) does not reach it, so a family for which a NULL
// is a value (first, last, max_by) reads struct(x) instead (planner).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "common/value.h"
#include "executor/operators/aggregate_common.h"
#include "planner/operator_spec.h"

namespace rtsql {

class AggregateFamily {
 public:
  virtual ~AggregateFamily() = default;
  // Adds one non-NULL argument to the group.
  virtual void add(Accumulator& a, const Value& v) const = 0;
  // Takes one argument added before back out; only the families that take
  // retractions (aggregateTakesRetractions()) implement it.
  virtual void retract(Accumulator& a, const Value& v) const;
  // Adds the group `from` to `into` (session windows that merge).
  virtual void merge(Accumulator& into, const Accumulator& from) const = 0;
  virtual void encode(std::string& out, const Accumulator& a) const = 0;
  // Consumes the bytes encode() wrote; InternalError when they are short.
  virtual void decode(std::string_view& in, Accumulator& a) const = 0;
  // The aggregate's answer (NULL, or a value of the call's result type).
  virtual Value result(const Accumulator& a) const = 0;
};

// The family of `call`, or null when `call` is one of the first six.
std::shared_ptr<const AggregateFamily> makeAggregateFamily(const AggregateCall& call);

namespace aggregates {

// One family per file (see above).
std::shared_ptr<const AggregateFamily> makeBooleans(const AggregateCall& call);
std::shared_ptr<const AggregateFamily> makeMoments(const AggregateCall& call);
std::shared_ptr<const AggregateFamily> makeByRow(const AggregateCall& call);
std::shared_ptr<const AggregateFamily> makeCollect(const AggregateCall& call);
std::shared_ptr<const AggregateFamily> makeHyperLogLog(const AggregateCall& call);
std::shared_ptr<const AggregateFamily> makePercentile(const AggregateCall& call);

// State encoding helpers shared by the families.
void putDouble(std::string& out, double d);
double getDouble(std::string_view& in);
bool getFlag(std::string_view& in);  // one byte, 0 or 1
// An estimate of the bytes a value holds, for the cap on a group's list.
size_t valueBytes(const Value& v);
// Throws 54000 naming `fn` when a list of `bytes` would pass the cap on a
// value (kMaxValueBytes), so that one group cannot grow without bound.
void checkListSize(const char* fn, size_t bytes);

// A group's values kept as a sorted multiset in its accumulator's `items`,
// each with its count in `counts` (collect_set, percentile): retractions and
// merges are then exact. addCounted() adds `n` of `v` (checkListSize naming
// `fn` when `v` is new); retractCounted() takes one away and says whether
// `v` was there.
void addCounted(Accumulator& a, const Value& v, int64_t n, const char* fn);
bool retractCounted(Accumulator& a, const Value& v);

}  // namespace aggregates
}  // namespace rtsql
