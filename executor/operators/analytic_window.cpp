#include "executor/operators/analytic_window.h"

#include <algorithm>
#include <numeric>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/row_codec.h"
#include "executor/operators/aggregate_common.h"
#include "executor/operators/stateful_operator.h"

namespace rtsql {
namespace {

using Kind = AnalyticCall::Kind;

// Whether two rows are the same row (a retraction names its row by value).
bool sameRow(const Row& a, const Row& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].isNull() != b[i].isNull() || a[i].compare(b[i]) != 0) return false;
  }
  return true;
}

// `v` moved by `offset` order-key units (a RANGE frame's bound): integers and
// dates as integers (saturating), anything else numeric as a DOUBLE. A NULL
// stays NULL: the bound of a NULL order key is NULL, which only NULL keys
// reach, as in Spark.
Value shifted(const Value& v, int64_t offset) {
  switch (v.type()) {
    case TypeId::Int:
    case TypeId::BigInt:
    case TypeId::Date: {
      int64_t out = 0;
      if (__builtin_add_overflow(v.asInt(), offset, &out))
        out = offset < 0 ? INT64_MIN : INT64_MAX;
      return v.type() == TypeId::Date ? Value::date(out) : Value::bigint(out);
    }
    case TypeId::Null: return v;
    default: return Value::float64(v.toDouble() + static_cast<double>(offset));
  }
}

class AnalyticWindowOperator final : public StatefulOperator {
 public:
  AnalyticWindowOperator(const OverAggregateSpec& spec, std::unique_ptr<StateTable> state)
      : StatefulOperator(std::move(state)),
        partitionKeys_(spec.partitionKeys),
        orderKeys_(spec.orderKeys),
        descending_(spec.descending),
        calls_(spec.analytic) {
    if (calls_.empty()) throw InternalError("AnalyticWindow: no call");
    if (descending_.size() != orderKeys_.size())
      throw InternalError("AnalyticWindow: one direction per order key");
    for (const AnalyticCall& c : calls_) {
      aggregates_.emplace_back(c.kind == Kind::Aggregate
                                   ? std::vector<AggregateCall>{c.aggregate}
                                   : std::vector<AggregateCall>{});
    }
    refreshStats();
  }

  void push(Row& row, const RecordContext& ctx) override {
    countIn();
    key_.clear();
    for (const auto& k : partitionKeys_) encodeKey(key_, k->eval(row));
    auto [it, added] = partitions_.try_emplace(key_);
    Partition& p = it->second;
    if (retractsRow(ctx.kind)) {
      auto found = std::find_if(p.rows.begin(), p.rows.end(),
                                [&](const Row& r) { return sameRow(r, row); });
      if (found == p.rows.end()) return;  // never taken: nothing to take out
      p.rows.erase(found);
      --rows_;
    } else {
      p.rows.push_back(row);
      ++rows_;
    }
    if (!p.dirty) {
      p.dirty = true;
      dirty_.push_back(&it->first);
    }
  }

  std::string name() const override { return "AnalyticWindow"; }

 private:
  struct Partition {
    std::vector<Row> rows;     // in arrival order
    std::vector<Row> emitted;  // the output rows emitted for it, to delete if it changes
    bool dirty = false;
  };

  void expire(int64_t) override {}

  // The partitions changed since the last epoch are emitted (again).
  void beforeFlush() override {
    for (const std::string* key : dirty_) {
      Partition& p = partitions_.at(*key);
      p.dirty = false;
      RecordContext ctx;
      ctx.kind = RowKind::Delete;
      for (Row& old : p.emitted) emit(old, ctx);
      p.emitted.clear();
      compute(p.rows, p.emitted);
      ctx.kind = RowKind::Insert;
      for (const Row& out : p.emitted) {
        Row copy = out;
        emit(copy, ctx);
      }
    }
    dirty_.clear();
  }

  uint64_t stateRows() const override { return rows_; }

  // <0, 0, >0 as row a's order keys come before, with or after row b's.
  int compareKeys(const Row& a, const Row& b) const {
    for (size_t k = 0; k < a.size(); ++k) {
      int c = a[k].compare(b[k]);
      if (descending_[k]) c = -c;
      if (c != 0) return c;
    }
    return 0;
  }

  // The output rows of one partition, in window order.
  void compute(const std::vector<Row>& rows, std::vector<Row>& out) {
    const size_t n = rows.size();
    keys_.assign(n, Row{});
    for (size_t i = 0; i < n; ++i) {
      for (const auto& k : orderKeys_) keys_[i].push_back(k->eval(rows[i]));
    }
    std::vector<size_t> order(n);
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return compareKeys(keys_[a], keys_[b]) < 0;
    });
    sorted_.assign(n, Row{});
    for (size_t i = 0; i < n; ++i) sorted_[i] = std::move(keys_[order[i]]);
    // Peer groups: the rows with equal order keys.
    groupStart_.assign(n, 0);
    groupEnd_.assign(n, 0);
    dense_.assign(n, 0);
    for (size_t i = 0; i < n; ++i) {
      const bool newGroup = i == 0 || compareKeys(sorted_[i - 1], sorted_[i]) != 0;
      groupStart_[i] = newGroup ? i : groupStart_[i - 1];
      dense_[i] = i == 0 ? 1 : dense_[i - 1] + (newGroup ? 1 : 0);
    }
    for (size_t i = n; i-- > 0;) {
      groupEnd_[i] = i + 1 == n || groupStart_[i + 1] != groupStart_[i] ? i : groupEnd_[i + 1];
    }

    out.clear();
    out.reserve(n);
    for (size_t i = 0; i < n; ++i) out.push_back(rows[order[i]]);
    for (size_t c = 0; c < calls_.size(); ++c) {
      const AnalyticCall& call = calls_[c];
      // The argument of every row, in window order.
      args_.assign(n, Value());
      if (call.arg && call.kind != Kind::Aggregate) {
        for (size_t i = 0; i < n; ++i) args_[i] = call.arg->eval(out[i]);
      }
      if (call.kind == Kind::Aggregate) {
        aggregate(c, out);
        continue;
      }
      for (size_t i = 0; i < n; ++i) out[i].push_back(value(call, i, n, out[i]));
    }
  }

  Value value(const AnalyticCall& call, size_t i, size_t n, const Row& row) const {
    switch (call.kind) {
      case Kind::RowNumber: return Value::integer(static_cast<int32_t>(i + 1));
      case Kind::Rank: return Value::integer(static_cast<int32_t>(groupStart_[i] + 1));
      case Kind::DenseRank: return Value::integer(static_cast<int32_t>(dense_[i]));
      case Kind::PercentRank:
        return Value::float64(n <= 1 ? 0.0
                                     : static_cast<double>(groupStart_[i]) /
                                           static_cast<double>(n - 1));
      case Kind::CumeDist:
        return Value::float64(static_cast<double>(groupEnd_[i] + 1) / static_cast<double>(n));
      case Kind::Ntile: return Value::integer(static_cast<int32_t>(ntile(i, n, call.n)));
      case Kind::Lag:
      case Kind::Lead: return offsetValue(call, i, n, row);
      case Kind::FirstValue:
      case Kind::LastValue:
      case Kind::NthValue: return frameValue(call, i, n);
      case Kind::Aggregate: break;
    }
    throw InternalError("AnalyticWindow: an aggregate computed as a value");
  }

  // Spark's NTile: n rows in `buckets` buckets, the first n % buckets of
  // them one row larger.
  static int64_t ntile(size_t i, size_t n, int64_t buckets) {
    const auto b = static_cast<size_t>(buckets);
    const size_t size = n / b, extra = n % b;
    if (size == 0) return static_cast<int64_t>(i + 1);
    const size_t large = extra * (size + 1);
    if (i < large) return static_cast<int64_t>(i / (size + 1) + 1);
    return static_cast<int64_t>(extra + (i - large) / size + 1);
  }

  Value offsetValue(const AnalyticCall& call, size_t i, size_t n, const Row& row) const {
    const int64_t delta = call.kind == Kind::Lag ? -call.n : call.n;
    auto fallback = [&] { return call.defaultValue ? call.defaultValue->eval(row) : Value(); };
    if (!call.ignoreNulls || delta == 0) {
      const int64_t target = static_cast<int64_t>(i) + delta;
      if (target < 0 || target >= static_cast<int64_t>(n)) return fallback();
      return args_[static_cast<size_t>(target)];
    }
    // IGNORE NULLS: the |delta|-th non-NULL value before (after) the row.
    int64_t left = delta < 0 ? -delta : delta;
    const int64_t step = delta < 0 ? -1 : 1;
    for (int64_t j = static_cast<int64_t>(i) + step; j >= 0 && j < static_cast<int64_t>(n);
         j += step) {
      if (!args_[static_cast<size_t>(j)].isNull() && --left == 0)
        return args_[static_cast<size_t>(j)];
    }
    return fallback();
  }

  // The frame of the row at position i as [lo, hi), empty when lo >= hi.
  std::pair<size_t, size_t> frame(const AnalyticCall& call, size_t i, size_t n) const {
    if (!call.range) {
      auto at = [&](const AnalyticCall::Bound& b, bool upper) -> int64_t {
        if (b.unbounded) return upper ? static_cast<int64_t>(n) : 0;
        return static_cast<int64_t>(i) + b.offset + (upper ? 1 : 0);
      };
      const int64_t lo = std::clamp<int64_t>(at(call.lower, false), 0, static_cast<int64_t>(n));
      const int64_t hi = std::clamp<int64_t>(at(call.upper, true), 0, static_cast<int64_t>(n));
      return {static_cast<size_t>(lo), static_cast<size_t>(std::max(lo, hi))};
    }
    size_t lo = 0, hi = n;
    if (!call.lower.unbounded) lo = call.lower.offset == 0 ? groupStart_[i] : rangeEdge(i, call.lower.offset, false);
    if (!call.upper.unbounded) hi = call.upper.offset == 0 ? groupEnd_[i] + 1 : rangeEdge(i, call.upper.offset, true);
    return {lo, std::max(lo, hi)};
  }

  // A RANGE bound `offset` units from the row at position i (the binder
  // allows one numeric order key, after the keys NULLS FIRST | LAST adds):
  // the first row at or after the bound (lower) or the first one after it
  // (upper). "After" follows the window's order, so a DESC key's PRECEDING
  // rows hold larger values.
  size_t rangeEdge(size_t i, int64_t offset, bool upper) const {
    Row bound = sorted_[i];
    Value& last = bound.back();
    last = shifted(last, descending_.back() ? -offset : offset);
    auto first = std::partition_point(sorted_.begin(), sorted_.end(), [&](const Row& k) {
      const int c = compareKeys(k, bound);
      return upper ? c <= 0 : c < 0;
    });
    return static_cast<size_t>(first - sorted_.begin());
  }

  Value frameValue(const AnalyticCall& call, size_t i, size_t n) const {
    const auto [lo, hi] = frame(call, i, n);
    if (lo >= hi) return Value();
    if (call.kind == Kind::LastValue) {
      if (!call.ignoreNulls) return args_[hi - 1];
      for (size_t j = hi; j-- > lo;)
        if (!args_[j].isNull()) return args_[j];
      return Value();
    }
    int64_t left = call.kind == Kind::NthValue ? call.n : 1;
    for (size_t j = lo; j < hi; ++j) {
      if (call.ignoreNulls && args_[j].isNull()) continue;
      if (--left == 0) return args_[j];
    }
    return Value();
  }

  // An aggregate over each row's frame: from the partition's first row the
  // frames grow, so one pass adds rows as they enter; otherwise each frame is
  // aggregated anew.
  void aggregate(size_t c, std::vector<Row>& out) {
    const AnalyticCall& call = calls_[c];
    const AggregateCalls& agg = aggregates_[c];
    const size_t n = out.size();
    callArgs_.assign(n, Row{});
    for (size_t i = 0; i < n; ++i) agg.evalArgs(out[i], callArgs_[i]);
    size_t added = 0;
    agg.reset(accs_);
    for (size_t i = 0; i < n; ++i) {
      const auto [lo, hi] = frame(call, i, n);
      if (call.lower.unbounded) {
        for (; added < hi; ++added) agg.update(accs_, callArgs_[added]);
      } else {
        agg.reset(accs_);
        for (size_t j = lo; j < hi; ++j) agg.update(accs_, callArgs_[j]);
      }
      Row result;
      agg.appendResults(result, accs_);
      out[i].push_back(std::move(result[0]));
    }
  }

  std::vector<ExprPtr> partitionKeys_;
  std::vector<ExprPtr> orderKeys_;
  std::vector<bool> descending_;
  std::vector<AnalyticCall> calls_;
  std::vector<AggregateCalls> aggregates_;  // one per call; empty for the non-aggregates
  std::unordered_map<std::string, Partition> partitions_;
  std::vector<const std::string*> dirty_;  // keys of partitions_ (stable: a node map)
  uint64_t rows_ = 0;
  // Scratch, reused for every partition.
  std::string key_;
  std::vector<Row> keys_, sorted_, callArgs_;
  std::vector<size_t> groupStart_, groupEnd_, dense_;
  std::vector<Value> args_;
  std::vector<Accumulator> accs_;
};

}  // namespace

OperatorPtr makeAnalyticWindow(const OverAggregateSpec& spec, std::unique_ptr<StateTable> state) {
  return std::make_unique<AnalyticWindowOperator>(spec, std::move(state));
}

}  // namespace rtsql
