#include "executor/operators/top_n.h"

#include <algorithm>
#include <string>
#include <vector>

#include "common/row_codec.h"
#include "executor/operators/stateful_operator.h"
#include "executor/state/stored_sequence.h"

namespace rtsql {
namespace {

// The layout is documented at the top of top_n.h.
constexpr char kRowTag = 'R';
constexpr char kSeqTag = 'S';
constexpr int64_t kNoTime = 0;

class TopNOperator final : public StatefulOperator {
 public:
  TopNOperator(const TopNSpec& spec, std::unique_ptr<StateTable> state)
      : StatefulOperator(std::move(state)),
        partition_(spec.partitionKeys),
        order_(spec.orderKeys),
        descending_(spec.descending),
        rank_(spec.rankColumn),
        keepAll_(spec.input != ChangelogMode::Append) {
    if (spec.limit < 1) throw InternalError("TopN: a limit below 1");
    limit_ = static_cast<size_t>(spec.limit);
    if (descending_.size() != order_.size())
      throw InternalError("TopN: one DESC flag per order key expected");
    const size_t width = spec.output.columns.size();
    if (rank_ && width == 0) throw InternalError("TopN: a rank column in an empty schema");
    for (size_t i = 0; i < width - (rank_ ? 1 : 0); ++i)
      types_.push_back(spec.output.columns[i].type);
    refreshStats();
  }

  void push(Row& row, const RecordContext& ctx) override {
    countIn();
    key_.clear();
    for (const auto& k : partition_) encodeKey(key_, k->eval(row));
    order_bytes_.clear();
    for (size_t i = 0; i < order_.size(); ++i) {
      const size_t from = order_bytes_.size();
      encodeKey(order_bytes_, order_[i]->eval(row));
      if (descending_[i]) {
        for (size_t b = from; b < order_bytes_.size(); ++b)
          order_bytes_[b] = static_cast<char>(~static_cast<unsigned char>(order_bytes_[b]));
      }
    }
    load();
    if (retractsRow(ctx.kind)) {
      retract(row, ctx);
    } else {
      insert(row, ctx);
    }
    refreshStats();
  }

  std::string name() const override { return "TopN"; }

 private:
  struct Entry {
    std::string rest;
    std::string value;
  };

  // Reads the rows of key_ in rank order into entries_[0, count_).
  void load() {
    count_ = 0;
    state_.scanKey(kRowTag, key_, kNoTime, kNoTime,
                   [this](int64_t, std::string_view rest, std::string_view value) {
                     if (count_ == entries_.size()) entries_.emplace_back();
                     entries_[count_].rest.assign(rest);
                     entries_[count_].value.assign(value);
                     ++count_;
                   });
  }

  void insert(Row& row, const RecordContext& ctx) {
    rest_ = order_bytes_;
    encodeKeyInt(rest_, seq_.current());
    // The new row has the highest sequence number, so it ranks after every
    // row with equal order keys.
    size_t pos = 0;
    while (pos < count_ && entries_[pos].rest < rest_) ++pos;
    if (!keepAll_ && pos >= limit_) return;  // outside the top, and never needed again
    value_.clear();
    encodeRow(value_, row);
    state_.putKeyAt(kRowTag, key_, kNoTime, rest_, value_);
    seq_.advance();
    countUpdate();
    if (pos >= limit_) return;  // kept to refill the top after a retraction

    // The row at rank N falls out of the top.
    if (count_ >= limit_) {
      const Entry& out = entries_[limit_ - 1];
      emitStored(out, limit_, RowKind::Delete, ctx);
      if (!keepAll_) state_.eraseKeyAt(kRowTag, key_, kNoTime, out.rest);
    }
    // The rows below the new one move down a rank, the lowest first so that
    // the rank it moves to is free.
    if (rank_) {
      for (size_t i = std::min(count_, limit_ - 1); i-- > pos;) {
        emitStored(entries_[i], i + 1, RowKind::UpdateBefore, ctx);
        emitStored(entries_[i], i + 2, RowKind::UpdateAfter, ctx);
      }
    }
    emitRanked(row, pos + 1, RowKind::Insert, ctx);
  }

  void retract(const Row& row, const RecordContext& ctx) {
    value_.clear();
    encodeRow(value_, row);
    const size_t restSize = order_bytes_.size() + 8;
    size_t pos = 0;
    while (pos < count_ &&
           !(entries_[pos].rest.size() == restSize &&
             entries_[pos].rest.compare(0, order_bytes_.size(), order_bytes_) == 0 &&
             entries_[pos].value == value_)) {
      ++pos;
    }
    if (pos == count_) return;  // never kept: nothing was emitted for it
    state_.eraseKeyAt(kRowTag, key_, kNoTime, entries_[pos].rest);
    countUpdate();
    if (pos >= limit_) return;
    emitStored(entries_[pos], pos + 1, RowKind::Delete, ctx);
    const size_t inTop = std::min(count_, limit_);
    if (rank_) {
      for (size_t i = pos + 1; i < inTop; ++i) {
        emitStored(entries_[i], i + 1, RowKind::UpdateBefore, ctx);
        emitStored(entries_[i], i, RowKind::UpdateAfter, ctx);
      }
    }
    // The first row below the top takes rank N.
    if (count_ > limit_) emitStored(entries_[limit_], limit_, RowKind::Insert, ctx);
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

  void beforeFlush() override { seq_.save(); }

  // The saved sequence number is no row.
  uint64_t stateRows() const override {
    uint64_t entries = seq_.rowEntries(state_.size());
    return entries;
  }

  std::vector<ExprPtr> partition_;
  std::vector<ExprPtr> order_;
  std::vector<bool> descending_;
  size_t limit_ = 1;
  bool rank_;
  bool keepAll_;
  std::vector<DataTypePtr> types_;
  StoredSequence seq_{state_, kSeqTag};
  // Buffers reused for every row.
  std::string key_, order_bytes_, rest_, value_;
  std::vector<Entry> entries_;
  size_t count_ = 0;
};

}  // namespace

OperatorPtr makeTopN(const TopNSpec& spec, std::unique_ptr<StateTable> state) {
  return std::make_unique<TopNOperator>(spec, std::move(state));
}

}  // namespace rtsql
