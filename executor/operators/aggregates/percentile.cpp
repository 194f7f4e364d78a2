// percentile and percentile_approx (approx_percentile): the group's values as
// a sorted multiset, so that both take retractions (a retracted value leaves
// the multiset once) and a session window's groups merge exactly.
//
// State (family.h): fixed64 n, then n times a value (encodeValue) and fixed64
// its row count, in value order.
//
// percentile(x, p) is Spark's exact percentile: the value at position
// p * (count - 1) of the sorted values, interpolated linearly between the two
// around it, as a DOUBLE. percentile_approx(x, p, accuracy) answers as Spark's
// quantile summary does while it holds every value (relative error 1 /
// accuracy): the smallest value when p <= 1 / accuracy, the largest when p >=
// 1 - 1 / accuracy, else the value of rank ceil(p * count); in the argument's
// own type. rtsql keeps every value, so where Spark's summary has merged some
// (groups of more than about accuracy / 2 rows) Spark's answer is one within
// its error bound and rtsql's the exact one (docs/sql.md). A group's values
// are capped like collect_list's (54000 past 64 MiB).
//
// A p that is an array answers an array, one value per p.
#include <algorithm>
#include <cmath>

#include "common/error.h"
#include "common/row_codec.h"
#include "executor/operators/aggregates/family.h"

namespace rtsql::aggregates {
namespace {

class Percentile final : public AggregateFamily {
 public:
  explicit Percentile(const AggregateCall& call)
      : type_(call.arg->type()),
        approx_(call.function == AggregateFunction::PercentileApprox),
        percentages_(call.percentages),
        array_(call.percentagesArray),
        relativeError_(1.0 / static_cast<double>(call.accuracy)) {}

  void add(Accumulator& a, const Value& v) const override { addCount(a, v, 1); }
  void retract(Accumulator& a, const Value& v) const override {
    const size_t i = find(a, v);
    if (i == a.items.size() || a.items[i].compare(v) != 0) return;
    --a.count;
    if (--a.counts[i] > 0) return;
    a.bytes -= std::min(a.bytes, valueBytes(a.items[i]));
    a.items.erase(a.items.begin() + static_cast<long>(i));
    a.counts.erase(a.counts.begin() + static_cast<long>(i));
  }
  void merge(Accumulator& into, const Accumulator& from) const override {
    for (size_t i = 0; i < from.items.size(); ++i) addCount(into, from.items[i], from.counts[i]);
  }
  void encode(std::string& out, const Accumulator& a) const override {
    putFixed64(out, a.items.size());
    for (size_t i = 0; i < a.items.size(); ++i) {
      encodeValue(out, a.items[i]);
      putFixed64(out, static_cast<uint64_t>(a.counts[i]));
    }
  }
  void decode(std::string_view& in, Accumulator& a) const override {
    const uint64_t n = getFixed64(in);
    if (n > in.size()) throw InternalError("aggregate state value is truncated");
    a.items.clear();
    a.counts.clear();
    a.bytes = 0;
    a.count = 0;
    for (uint64_t i = 0; i < n; ++i) {
      a.items.push_back(decodeValue(in, *type_));
      a.bytes += valueBytes(a.items.back());
      a.counts.push_back(static_cast<int64_t>(getFixed64(in)));
      a.count += a.counts.back();
    }
  }
  Value result(const Accumulator& a) const override {
    if (a.items.empty()) return {};
    if (!array_) return answer(a, percentages_.at(0));
    ValueList out;
    out.reserve(percentages_.size());
    for (double p : percentages_) out.push_back(answer(a, p));
    return Value::array(std::move(out));
  }

 private:
  // The value of 0-based rank `r` in the multiset.
  static const Value& atRank(const Accumulator& a, int64_t r) {
    int64_t seen = 0;
    for (size_t i = 0; i < a.items.size(); ++i) {
      seen += a.counts[i];
      if (r < seen) return a.items[i];
    }
    return a.items.back();
  }
  Value answer(const Accumulator& a, double p) const {
    if (approx_) {
      if (p <= relativeError_) return a.items.front();
      if (p >= 1 - relativeError_) return a.items.back();
      auto rank = static_cast<int64_t>(std::ceil(p * static_cast<double>(a.count)));
      return atRank(a, std::min(rank, a.count) - 1);
    }
    const double position = static_cast<double>(a.count - 1) * p;
    const auto lower = static_cast<int64_t>(std::floor(position));
    const auto higher = static_cast<int64_t>(std::ceil(position));
    const Value& lo = atRank(a, lower);
    if (higher == lower) return Value::float64(lo.toDouble());
    const Value& hi = atRank(a, higher);
    if (&lo == &hi) return Value::float64(lo.toDouble());
    return Value::float64((static_cast<double>(higher) - position) * lo.toDouble() +
                          (position - static_cast<double>(lower)) * hi.toDouble());
  }
  static size_t find(const Accumulator& a, const Value& v) {
    auto it = std::lower_bound(a.items.begin(), a.items.end(), v,
                               [](const Value& x, const Value& y) { return x.compare(y) < 0; });
    return static_cast<size_t>(it - a.items.begin());
  }
  void addCount(Accumulator& a, const Value& v, int64_t n) const {
    const size_t i = find(a, v);
    a.count += n;
    if (i < a.items.size() && a.items[i].compare(v) == 0) {
      a.counts[i] += n;
      return;
    }
    const size_t grown = a.bytes + valueBytes(v);
    checkListSize(approx_ ? "percentile_approx()" : "percentile()", grown);
    a.items.insert(a.items.begin() + static_cast<long>(i), v);
    a.counts.insert(a.counts.begin() + static_cast<long>(i), n);
    a.bytes = grown;
  }

  DataTypePtr type_;
  bool approx_;
  std::vector<double> percentages_;
  bool array_;
  double relativeError_;
};

}  // namespace

std::shared_ptr<const AggregateFamily> makePercentile(const AggregateCall& call) {
  return std::make_shared<Percentile>(call);
}

}  // namespace rtsql::aggregates
