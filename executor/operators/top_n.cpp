#include "executor/operators/top_n.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "common/row_codec.h"
#include "executor/operators/stateful_operator.h"
#include "executor/state/ordered_partition.h"

namespace rtsql {
namespace {

// The layout is documented at the top of top_n.h.
constexpr char kTopNRowTag = 'R';
constexpr char kTopNSeqTag = 'S';

class TopNOperator final : public StatefulOperator {
 public:
  TopNOperator(const TopNSpec& spec, std::unique_ptr<StateTable> state)
      : StatefulOperator(std::move(state)),
        rows_(state_, kTopNRowTag, kTopNSeqTag, spec.partitionKeys, spec.orderKeys, spec.descending),
        function_(spec.function),
        rank_(spec.rankColumn),
        keepAll_(spec.input != ChangelogMode::Append) {
    if (spec.limit < 1) throw InternalError("TopN: a limit below 1");
    limit_ = static_cast<size_t>(spec.limit);
    const size_t width = spec.output.columns.size();
    if (rank_ && width == 0) throw InternalError("TopN: a rank column in an empty schema");
    for (size_t i = 0; i < width - (rank_ ? 1 : 0); ++i)
      types_.push_back(spec.output.columns[i].type);
    refreshStats();
  }

  void push(Row& row, const RecordContext& ctx) override {
    countIn();
    rows_.load(row);
    if (function_ != TopNSpec::Function::RowNumber) {
      changeRanked(row, ctx, retractsRow(ctx.kind));
    } else if (retractsRow(ctx.kind)) {
      retract(row, ctx);
    } else {
      insert(row, ctx);
    }
    refreshStats();
  }

  std::string name() const override { return "TopN"; }

 private:
  using Entry = OrderedPartition::Entry;

  void insert(Row& row, const RecordContext& ctx) {
    // The new row ranks after every row with equal order keys.
    const size_t pos = rows_.insertPosition();
    if (!keepAll_ && pos >= limit_) return;  // outside the top, and never needed again
    rows_.put(row);
    countUpdate();
    if (pos >= limit_) return;  // kept to refill the top after a retraction

    // The row at rank N falls out of the top.
    const size_t count = rows_.size();
    if (count >= limit_) {
      emitStored(rows_[limit_ - 1], limit_, RowKind::Delete, ctx);
      if (!keepAll_) rows_.erase(limit_ - 1);
    }
    // The rows below the new one move down a rank, the lowest first so that
    // the rank it moves to is free.
    if (rank_) {
      for (size_t i = std::min(count, limit_ - 1); i-- > pos;) {
        emitStored(rows_[i], i + 1, RowKind::UpdateBefore, ctx);
        emitStored(rows_[i], i + 2, RowKind::UpdateAfter, ctx);
      }
    }
    emitRanked(row, pos + 1, RowKind::Insert, ctx);
  }

  void retract(const Row& row, const RecordContext& ctx) {
    const size_t count = rows_.size();
    const size_t pos = rows_.find(row);
    if (pos == count) return;  // never kept: nothing was emitted for it
    rows_.erase(pos);
    countUpdate();
    if (pos >= limit_) return;
    emitStored(rows_[pos], pos + 1, RowKind::Delete, ctx);
    const size_t inTop = std::min(count, limit_);
    if (rank_) {
      for (size_t i = pos + 1; i < inTop; ++i) {
        emitStored(rows_[i], i + 1, RowKind::UpdateBefore, ctx);
        emitStored(rows_[i], i, RowKind::UpdateAfter, ctx);
      }
    }
    // The first row below the top takes rank N.
    if (count > limit_) emitStored(rows_[limit_], limit_, RowKind::Insert, ctx);
  }

  // RANK() / DENSE_RANK(): adds (or, `retracting`, takes out) the loaded
  // row, then emits the difference between the ranks before and after.
  void changeRanked(Row& row, const RecordContext& ctx, bool retracting) {
    const size_t count = rows_.size();
    const size_t pos = retracting ? rows_.find(row) : rows_.insertPosition();
    if (retracting && pos == count) return;  // never kept: nothing was emitted for it
    // The kept rows after the change, by their index among the loaded ones
    // (kNewRow: the input row).
    after_.clear();
    for (size_t i = 0; i < count; ++i) {
      if (i == pos && !retracting) after_.push_back(kNewRow);
      if (i != pos || !retracting) after_.push_back(i);
    }
    if (pos == count) after_.push_back(kNewRow);
    const size_t inBefore = rankPrefix(before_, count, [&](size_t i) {
      return OrderedPartition::orderOf(rows_[i]);
    });
    const size_t inAfter = rankPrefix(afterRanks_, after_.size(), [&](size_t j) {
      return after_[j] == kNewRow ? rows_.loadedOrder() : OrderedPartition::orderOf(rows_[after_[j]]);
    });
    // rankAfter_[i]: the loaded row i's rank after the change, 0 outside the top.
    rankAfter_.assign(count, 0);
    size_t newRank = 0;
    for (size_t j = 0; j < inAfter; ++j) {
      if (after_[j] == kNewRow) {
        newRank = afterRanks_[j];
      } else {
        rankAfter_[after_[j]] = afterRanks_[j];
      }
    }

    // State first: the row kept or taken out, and over append-only input the
    // rows ranked past N forgotten (they can never rank within N again).
    if (retracting) {
      rows_.erase(pos);
      countUpdate();
    } else if (keepAll_ || newRank != 0) {
      rows_.put(row);
      countUpdate();
    }
    if (!keepAll_) {
      for (size_t i = 0; i < inBefore; ++i) {
        if (rankAfter_[i] == 0) rows_.erase(i);
      }
    }

    // Rows leaving the top, then rank changes, then rows entering it.
    for (size_t i = 0; i < inBefore; ++i) {
      if (rankAfter_[i] == 0 || (retracting && i == pos))
        emitStored(rows_[i], before_[i], RowKind::Delete, ctx);
    }
    if (rank_) {
      for (size_t i = 0; i < inBefore; ++i) {
        if (rankAfter_[i] != 0 && rankAfter_[i] != before_[i] && !(retracting && i == pos)) {
          emitStored(rows_[i], before_[i], RowKind::UpdateBefore, ctx);
          emitStored(rows_[i], rankAfter_[i], RowKind::UpdateAfter, ctx);
        }
      }
    }
    for (size_t i = inBefore; i < count; ++i) {
      if (rankAfter_[i] != 0) emitStored(rows_[i], rankAfter_[i], RowKind::Insert, ctx);
    }
    if (newRank != 0) emitRanked(row, newRank, RowKind::Insert, ctx);
  }

  // Ranks the first rows of a sequence of `n` rows in order (`orderAt(i)`: the
  // order bytes of row i) into `ranks`, as far as the last row ranked <= the
  // limit, and returns how many that is.
  template <typename OrderAt>
  size_t rankPrefix(std::vector<size_t>& ranks, size_t n, OrderAt orderAt) const {
    ranks.clear();
    std::string_view previous;
    for (size_t i = 0; i < n; ++i) {
      const std::string_view order = orderAt(i);
      size_t rank = 1;
      if (i > 0) {
        if (order == previous) {
          rank = ranks.back();
        } else {
          rank = function_ == TopNSpec::Function::Rank ? i + 1 : ranks.back() + 1;
        }
      }
      if (rank > limit_) break;
      ranks.push_back(rank);
      previous = order;
    }
    return ranks.size();
  }

  void emitStored(const Entry& e, size_t rank, RowKind kind, const RecordContext& ctx) {
    Row row = decodeRow(e.value, types_);
    emitRanked(row, rank, kind, ctx);
  }

  void emitRanked(Row& row, size_t rank, RowKind kind, const RecordContext& ctx) {
    if (rank_) row.push_back(Value::bigint(static_cast<int64_t>(rank)));
    RecordContext out = ctx;
    out.kind = kind;
    emit(row, out);
  }

  void expire(int64_t) override {}  // ranks never expire

  void beforeFlush() override { rows_.save(); }

  // The saved sequence number is no row.
  uint64_t stateRows() const override { return rows_.rowEntries(state_.size()); }

  static constexpr size_t kNewRow = static_cast<size_t>(-1);

  OrderedPartition rows_;
  size_t limit_ = 1;
  TopNSpec::Function function_;
  bool rank_;
  bool keepAll_;
  std::vector<DataTypePtr> types_;
  // Buffers of changeRanked(), reused for every row.
  std::vector<size_t> after_, before_, afterRanks_, rankAfter_;
};

}  // namespace

OperatorPtr makeTopN(const TopNSpec& spec, std::unique_ptr<StateTable> state) {
  return std::make_unique<TopNOperator>(spec, std::move(state));
}

}  // namespace rtsql
