#include "executor/operators/over_aggregate.h"

#include <algorithm>
#include <string>
#include <vector>

#include "common/row_codec.h"
#include "executor/operators/aggregate_common.h"
#include "executor/operators/stateful_operator.h"
#include "executor/state/ordered_partition.h"

namespace rtsql {
namespace {

// The layout is documented at the top of over_aggregate.h.
constexpr char kOverRowTag = 'R';
constexpr char kOverSeqTag = 'S';

class OverAggregateOperator final : public StatefulOperator {
 public:
  OverAggregateOperator(const OverAggregateSpec& spec, std::unique_ptr<StateTable> state)
      : StatefulOperator(std::move(state)),
        rows_(state_, kOverRowTag, kOverSeqTag, spec.partitionKeys, spec.orderKeys, spec.descending),
        unbounded_(spec.precedingRows < 0),
        preceding_(spec.precedingRows < 0 ? 0 : static_cast<size_t>(spec.precedingRows)),
        calls_(spec.aggregates) {
    if (spec.aggregates.empty()) throw InternalError("OverAggregate: no aggregate");
    const size_t width = spec.output.columns.size();
    if (width < spec.aggregates.size())
      throw InternalError("OverAggregate: fewer output columns than aggregates");
    for (size_t i = 0; i < width - spec.aggregates.size(); ++i)
      types_.push_back(spec.output.columns[i].type);
    refreshStats();
  }

  void push(Row& row, const RecordContext& ctx) override {
    countIn();
    rows_.load(row);
    count_ = rows_.size();
    // Slot count_ is the row being added.
    args_.resize(count_ + 1);
    argsValid_.assign(count_ + 1, 0);
    if (retractsRow(ctx.kind)) {
      retract(row, ctx);
    } else {
      insert(row, ctx);
    }
    refreshStats();
  }

  std::string name() const override { return "OverAggregate"; }

 private:
  // The input row in slot `slot`: a kept row, or (slot count_) the new one.
  Row rowAt(size_t slot) const {
    return slot == count_ ? newRow_ : decodeRow(rows_[slot].value, types_);
  }

  const Row& argsAt(size_t slot) {
    if (!argsValid_[slot]) {
      calls_.evalArgs(rowAt(slot), args_[slot]);
      argsValid_[slot] = 1;
    }
    return args_[slot];
  }

  // The aggregates of the rows at positions from..to of `list` (slots in
  // frame order), each over its own frame, into out_.
  void frames(const std::vector<size_t>& list, size_t from, size_t to, std::vector<Row>& out) {
    out.clear();
    if (from > to || to >= list.size()) return;
    if (unbounded_) {
      // One pass from the partition's first row: the frames are prefixes.
      calls_.reset(accs_);
      for (size_t k = 0; k <= to; ++k) {
        calls_.update(accs_, argsAt(list[k]));
        if (k >= from) {
          out.emplace_back();
          calls_.appendResults(out.back(), accs_);
        }
      }
      return;
    }
    for (size_t i = from; i <= to; ++i) {
      calls_.reset(accs_);
      for (size_t k = i >= preceding_ ? i - preceding_ : 0; k <= i; ++k)
        calls_.update(accs_, argsAt(list[k]));
      out.emplace_back();
      calls_.appendResults(out.back(), accs_);
    }
  }

  void insert(const Row& row, const RecordContext& ctx) {
    // The new row's arguments first: a data error in them leaves the state
    // as it was, for the flow's 'on.error' (executor/row_errors.h).
    newRow_ = row;
    argsAt(count_);
    // The new row comes after every row with equal order keys.
    const size_t pos = rows_.insertPosition();
    rows_.put(row);
    countUpdate();

    // The rows now after the new one whose frames reach it: old positions
    // pos..last-1, new positions pos+1..last.
    const size_t last = unbounded_ ? count_ : std::min(count_, pos + preceding_);
    oldList_.clear();
    newList_.clear();
    for (size_t i = 0; i < count_; ++i) {
      if (i == pos) newList_.push_back(count_);
      oldList_.push_back(i);
      newList_.push_back(i);
    }
    if (pos == count_) newList_.push_back(count_);
    if (last > pos) frames(oldList_, pos, last - 1, before_);
    frames(newList_, pos, last, after_);
    for (size_t j = pos; j < last; ++j) update(j, before_[j - pos], after_[j - pos + 1], ctx);
    emitWith(count_, after_[0], RowKind::Insert, ctx);
  }

  void retract(const Row& row, const RecordContext& ctx) {
    const size_t pos = rows_.find(row);
    if (pos == count_) return;  // never kept: nothing was emitted for it
    rows_.erase(pos);
    countUpdate();

    // The rows after it whose frames reached it: old positions pos+1..last,
    // new positions pos..last-1.
    const size_t last = unbounded_ ? count_ - 1 : std::min(count_ - 1, pos + preceding_);
    oldList_.clear();
    newList_.clear();
    for (size_t i = 0; i < count_; ++i) {
      oldList_.push_back(i);
      if (i != pos) newList_.push_back(i);
    }
    frames(oldList_, pos, last, before_);
    if (last > pos) frames(newList_, pos, last - 1, after_);
    emitWith(pos, before_[0], RowKind::Delete, ctx);
    for (size_t j = pos + 1; j <= last; ++j) update(j, before_[j - pos], after_[j - pos - 1], ctx);
  }

  // The row in `slot` changed aggregates from `before` to `after`.
  void update(size_t slot, const Row& before, const Row& after, const RecordContext& ctx) {
    a_.clear();
    b_.clear();
    encodeRow(a_, before);
    encodeRow(b_, after);
    if (a_ == b_) return;  // no change to the row's output
    emitWith(slot, before, RowKind::UpdateBefore, ctx);
    emitWith(slot, after, RowKind::UpdateAfter, ctx);
  }

  void emitWith(size_t slot, const Row& results, RowKind kind, const RecordContext& ctx) {
    Row out = rowAt(slot);
    out.insert(out.end(), results.begin(), results.end());
    RecordContext c = ctx;
    c.kind = kind;
    emit(out, c);
  }

  void expire(int64_t) override {}  // frames never expire

  void beforeFlush() override { rows_.save(); }

  // The saved sequence number is no row.
  uint64_t stateRows() const override { return rows_.rowEntries(state_.size()); }

  OrderedPartition rows_;
  bool unbounded_;
  size_t preceding_;
  AggregateCalls calls_;
  std::vector<DataTypePtr> types_;
  // Buffers reused for every row.
  std::string a_, b_;
  size_t count_ = 0;  // the loaded partition's rows
  Row newRow_;
  std::vector<Row> args_;
  std::vector<char> argsValid_;
  std::vector<Accumulator> accs_;
  std::vector<size_t> oldList_, newList_;
  std::vector<Row> before_, after_;
};

}  // namespace

OperatorPtr makeOverAggregate(const OverAggregateSpec& spec, std::unique_ptr<StateTable> state) {
  return std::make_unique<OverAggregateOperator>(spec, std::move(state));
}

}  // namespace rtsql
