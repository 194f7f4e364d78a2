// percentile and percentile_approx (approx_percentile): the group's values as
// a sorted multiset, so that both take retractions (a retracted value leaves
// the multiset once) and a session window's groups merge exactly.
//
// State (family.h): fixed64 n, then n times a value (encodeValue) and fixed64
// its row count, in value order.
//
// percentile(x, p) is Spark's exact percentile: the value at position
// p * (count - 1) of the sorted values, interpolated linearly between the two
// around it, as a DOUBLE.
//
// percentile_approx(x, p, accuracy) answers what Spark's quantile summary
// (relative error e = 1 / accuracy) answers for a group that one task reads,
// in the argument's own type. Spark buffers up to 50,000 rows and summarizes
// them in one batch when it answers, which depends only on the sorted values:
// row j (from 0) of the sorted rows becomes a sample of g 1 and delta
// floor(2 e (j + 1)), 0 for the first and the last row; walking back from the
// last, a sample merges into the one after it while their g and that one's
// delta stay under 2 e n; a query for p then answers the first sample whose
// ranks lie within half the largest g + delta of ceil(p * n) (the smallest
// value when p <= e, the largest when p >= 1 - e). rtsql computes the same
// summary from the group's values when it answers, so a group of fewer than
// 50,000 rows gets Spark's value; a larger one, whose summary in Spark depends
// on the order its rows came in, gets the exact value of rank ceil(p * n),
// which lies within Spark's error bound (docs/sql.md). Up to about
// accuracy / 2 rows the summary keeps every row and the answer is that rank's
// value. A group's values are capped like collect_list's (54000 past 64 MiB).
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
    if (retractCounted(a, v)) --a.count;
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
    if (approx_ && usesSummary(a)) return summaryAnswers(a);
    if (!array_) return answer(a, percentages_.at(0));
    ValueList out;
    out.reserve(percentages_.size());
    for (double p : percentages_) out.push_back(answer(a, p));
    return Value::array(std::move(out));
  }

 private:
  // Spark summarizes this many buffered rows at once; past them its summary
  // depends on the rows' order.
  static constexpr int64_t kSparkHeadSize = 50000;

  // One sample of Spark's summary: the value (an index into items), the rows
  // it stands for (g) and the uncertainty of its rank (delta).
  struct Sample {
    size_t item;
    int64_t g;
    int64_t delta;
  };

  // Whether the summary can answer other than the exact rank: some row has a
  // delta above 0 or two samples may merge (2 e n >= 2); and Spark would have
  // summarized the group in one batch.
  bool usesSummary(const Accumulator& a) const {
    const double twoE = 2 * relativeError_;
    return a.count < kSparkHeadSize &&
           (twoE * static_cast<double>(a.count) >= 2 ||
            std::floor(twoE * static_cast<double>(a.count - 1)) >= 1);
  }

  // The samples of the group's summary, in value order (see the top).
  std::vector<Sample> summary(const Accumulator& a) const {
    const int64_t n = a.count;
    const double twoE = 2 * relativeError_;
    const double mergeBelow = twoE * static_cast<double>(n);
    auto deltaOf = [&](int64_t j) -> int64_t {
      if (j == 0 || j == n - 1) return 0;
      return static_cast<int64_t>(std::floor(twoE * static_cast<double>(j + 1)));
    };
    std::vector<Sample> reversed;
    size_t item = a.items.size() - 1;
    int64_t left = a.counts[item];  // rows of `item` at or before row j
    Sample head{item, 1, deltaOf(n - 1)};
    for (int64_t j = n - 2; j >= 1; --j) {
      if (--left == 0) left = a.counts[--item];
      if (static_cast<double>(1 + head.g + head.delta) < mergeBelow) {
        ++head.g;
      } else {
        reversed.push_back(head);
        head = Sample{item, 1, deltaOf(j)};
      }
    }
    reversed.push_back(head);
    if (n > 1) reversed.push_back(Sample{0, 1, 0});
    std::reverse(reversed.begin(), reversed.end());
    return reversed;
  }

  // Spark's answers from the summary: the percentages in ascending order,
  // each search going on from where the one before found its sample.
  Value summaryAnswers(const Accumulator& a) const {
    const std::vector<Sample> s = summary(a);
    int64_t widest = 0;
    for (const Sample& x : s) widest = std::max(widest, x.g + x.delta);
    const int64_t targetError = widest / 2;
    std::vector<size_t> order(percentages_.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t x, size_t y) { return percentages_[x] < percentages_[y]; });
    ValueList out(percentages_.size());
    size_t index = 0;
    int64_t minRank = s[0].g;
    for (size_t k : order) {
      const double p = percentages_[k];
      if (p <= relativeError_) {
        out[k] = a.items[s.front().item];
        continue;
      }
      if (p >= 1 - relativeError_) {
        out[k] = a.items[s.back().item];
        continue;
      }
      const auto rank = static_cast<int64_t>(std::ceil(p * static_cast<double>(a.count)));
      size_t i = index;
      bool found = false;
      while (i + 1 < s.size()) {
        const int64_t maxRank = minRank + s[i].delta;
        if (maxRank - targetError <= rank && rank <= minRank + targetError) {
          found = true;
          break;
        }
        ++i;
        minRank += s[i].g;
      }
      if (!found) minRank = 0;  // as Spark leaves it after the last sample
      index = i;
      out[k] = a.items[s[i].item];
    }
    if (!array_) return std::move(out[0]);
    return Value::array(std::move(out));
  }

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
  void addCount(Accumulator& a, const Value& v, int64_t n) const {
    a.count += n;
    addCounted(a, v, n, approx_ ? "percentile_approx()" : "percentile()");
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
