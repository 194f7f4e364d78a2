// stddev_samp (stddev, std), stddev_pop, var_samp (variance) and var_pop:
// Spark's CentralMomentAgg, which keeps the count n, the running mean and m2,
// the sum of squared deviations from the mean, updated by Welford's method
// with Spark's exact operations, so that the same rows in the same order give
// the same double. Retraction runs the update backwards, which is exact in
// real arithmetic and keeps the error small in floating point (unlike sums of
// x and x^2, which cancel catastrophically); a group that empties starts
// from zero again, so no residue outlives it, and m2 never goes below 0. A
// NaN or infinite value leaves NaN until its group empties.
//
// State (family.h): fixed64 n, double mean, double m2.
//
// Results (DOUBLE), as Spark 4 without its legacy statistical mode: NULL for
// no rows; the sample forms are NULL for one row; pop = m2 / n, samp =
// m2 / (n - 1), stddev = sqrt(variance).
#include <cmath>

#include "common/error.h"
#include "executor/operators/aggregates/family.h"

namespace rtsql::aggregates {
namespace {

class Moments final : public AggregateFamily {
 public:
  Moments(bool sample, bool root) : sample_(sample), root_(root) {}

  void add(Accumulator& a, const Value& v) const override {
    const double x = v.toDouble();
    const double n = static_cast<double>(a.count + 1);
    const double delta = x - a.mean;
    const double deltaN = delta / n;
    a.mean += deltaN;
    a.m2 += delta * (delta - deltaN);
    ++a.count;
  }
  void retract(Accumulator& a, const Value& v) const override {
    if (a.count <= 1) {
      a.count = 0;
      a.mean = 0;
      a.m2 = 0;
      return;
    }
    const double x = v.toDouble();
    const double n = static_cast<double>(a.count - 1);
    // The inverse of add(): mean' = mean - (x - mean) / n' and
    // m2' = m2 - (x - mean') (x - mean).
    const double delta = x - a.mean;
    const double before = a.mean - delta / n;
    a.m2 -= (x - before) * delta;
    if (a.m2 < 0) a.m2 = 0;  // rounding only: a sum of squares is never negative
    a.mean = before;
    --a.count;
  }
  void merge(Accumulator& into, const Accumulator& from) const override {
    if (from.count == 0) return;
    if (into.count == 0) {
      into.count = from.count;
      into.mean = from.mean;
      into.m2 = from.m2;
      return;
    }
    const double n1 = static_cast<double>(into.count), n2 = static_cast<double>(from.count);
    const double n = n1 + n2;
    const double delta = from.mean - into.mean;
    const double deltaN = delta / n;
    into.mean += deltaN * n2;
    into.m2 = into.m2 + from.m2 + delta * deltaN * n1 * n2;  // Spark's order of operations
    into.count += from.count;
  }
  void encode(std::string& out, const Accumulator& a) const override {
    putFixed64(out, static_cast<uint64_t>(a.count));
    putDouble(out, a.mean);
    putDouble(out, a.m2);
  }
  void decode(std::string_view& in, Accumulator& a) const override {
    a.count = static_cast<int64_t>(getFixed64(in));
    a.mean = getDouble(in);
    a.m2 = getDouble(in);
  }
  Value result(const Accumulator& a) const override {
    if (a.count == 0 || (sample_ && a.count == 1)) return Value();
    const double variance = a.m2 / static_cast<double>(sample_ ? a.count - 1 : a.count);
    return Value::float64(root_ ? std::sqrt(variance) : variance);
  }

 private:
  bool sample_, root_;
};

}  // namespace

std::shared_ptr<const AggregateFamily> makeMoments(const AggregateCall& call) {
  switch (call.function) {
    case AggregateFunction::StddevSamp: return std::make_shared<Moments>(true, true);
    case AggregateFunction::StddevPop: return std::make_shared<Moments>(false, true);
    case AggregateFunction::VarSamp: return std::make_shared<Moments>(true, false);
    case AggregateFunction::VarPop: return std::make_shared<Moments>(false, false);
    default: throw InternalError("not a moment aggregate");
  }
}

}  // namespace rtsql::aggregates
