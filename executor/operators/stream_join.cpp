#include "executor/operators/stream_join.h"

#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/row_codec.h"
#include "common/row_kind.h"
#include "executor/operators/stateful_operator.h"
#include "executor/state/stored_sequence.h"

namespace rtsql {
namespace {

// State (TimeIndexedTable families). `jk` is the join key, encodeKey() of
// each key value in turn; `seq` is encodeKeyInt() of a sequence number.
//
//   'L' key-then-time: key jk, time, rest seq -> matched flag ('0' | '1') + encodeRow(left row)
//   'l' time-ordered:  time, rest seq + jk    -> empty   (expiry index of the left rows)
//   'R' key-then-time: key jk, time, rest seq -> encodeRow(right row)
//   'r' time-ordered:  time, rest seq + jk    -> empty   (expiry index of the right rows)
//   'S' keyed:         empty key              -> encodeKeyInt(next sequence number)
//
// Probes use the key-then-time entries: the rows of one join key within a time
// range are one contiguous scan. Expiry uses the time-ordered index:
// everything the watermark passed is one scan from the start. The index entry
// holds the same parts as the row entry, so the row is found from it without a
// read. The sequence number makes rows with equal key and time distinct; it is
// saved at every epoch end so that, after restoring a snapshot, new rows never
// reuse a number of a restored row. Checkpoints hold these bytes; the layout
// case of stream_join_test.cpp pins them.
constexpr char kLeftTag = 'L';
constexpr char kLeftIndexTag = 'l';
constexpr char kRightTag = 'R';
constexpr char kRightIndexTag = 'r';
constexpr char kSeqTag = 'S';
constexpr size_t kIntBytes = 8;

int64_t saturatingAdd(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r))
    return b > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
  return r;
}

int64_t saturatingSub(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r))
    return b < 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
  return r;
}

bool isTrue(const Value& v) { return !v.isNull() && v.asBool(); }

// Encodes the row's join key into `out`, the part of a kept row's state key
// that both joins look rows up by; false when a key value is NULL (SQL
// equality never holds for NULL).
bool encodeJoinKey(const std::vector<ExprPtr>& keys, const Row& row, std::string& out) {
  out.clear();
  for (const auto& k : keys) {
    Value v = k->eval(row);
    if (v.isNull()) return false;
    encodeKey(out, v);
  }
  return true;
}

class StreamJoinOperator final : public StatefulOperator {
 public:
  StreamJoinOperator(const StreamJoinSpec& spec, std::unique_ptr<StateTable> state)
      : StatefulOperator(std::move(state)),
        leftKeys_(spec.leftKeys),
        rightKeys_(spec.rightKeys),
        leftTime_(spec.leftTime),
        rightTime_(spec.rightTime),
        lower_(spec.lowerBoundMicros),
        upper_(spec.upperBoundMicros),
        residual_(spec.residual),
        leftOuter_(spec.leftOuter),
        leftWidth_(static_cast<size_t>(spec.leftWidth)),
        rightWidth_(static_cast<size_t>(spec.rightWidth)) {
    if (!leftTime_ || !rightTime_) throw InternalError("StreamJoin needs both event times");
    if (leftKeys_.size() != rightKeys_.size())
      throw InternalError("StreamJoin: left and right key counts differ");
    if (spec.leftWidth < 0 || spec.rightWidth < 0 ||
        spec.output.size() < leftWidth_ + rightWidth_)
      throw InternalError("StreamJoin: output schema narrower than leftWidth + rightWidth");
    for (size_t i = 0; i < leftWidth_; ++i) leftTypes_.push_back(spec.output.columns[i].type);
    for (size_t i = 0; i < rightWidth_; ++i)
      rightTypes_.push_back(spec.output.columns[leftWidth_ + i].type);
    out_.resize(leftWidth_ + rightWidth_);
    refreshStats();
  }

  // A left row: join it with the right rows in state, then keep it for the
  // right rows still to come.
  void push(Row& row, const RecordContext& ctx) override {
    countIn();
    Value t = leftTime_->eval(row);
    if (!t.isNull() && t.asInt() < watermark_) {
      late(row, t.asInt());
      return;
    }
    if (t.isNull() || !encodeJoinKey(leftKeys_, row, jk_)) {
      if (leftOuter_) emitJoined(row, nullptr, ctx);
      return;
    }
    int64_t time = t.asInt();

    bool matched = false;
    state_.scanKey(kRightTag, jk_, saturatingAdd(time, lower_), saturatingAdd(time, upper_),
                   [&](int64_t, std::string_view, std::string_view value) {
                     Row right = decodeRow(value, rightTypes_);
                     if (emitJoined(row, &right, ctx)) matched = true;
                   });

    value_.clear();
    value_ += matched ? '1' : '0';
    encodeRow(value_, row);
    keep(kLeftTag, kLeftIndexTag, time);
  }

  // A right row: join it with the left rows in state (marking them matched),
  // then keep it for the left rows still to come.
  void pushRight(Row& row, const RecordContext& ctx) override {
    countIn();
    Value t = rightTime_->eval(row);
    if (!t.isNull() && t.asInt() < watermark_) {
      late(row, t.asInt(), 1);
      return;
    }
    if (t.isNull() || !encodeJoinKey(rightKeys_, row, jk_)) return;
    int64_t time = t.asInt();

    state_.scanKey(kLeftTag, jk_, saturatingSub(time, upper_), saturatingSub(time, lower_),
                   [&](int64_t leftTime, std::string_view seq, std::string_view value) {
                     Row left = decodeRow(value.substr(1), leftTypes_);
                     if (emitJoined(left, &row, ctx) && leftOuter_ && value[0] == '0') {
                       // Only a left outer join needs to know that a left row
                       // matched; an inner join skips the write.
                       value_.assign(value);
                       value_[0] = '1';
                       state_.putKeyAt(kLeftTag, jk_, leftTime, seq, value_);
                       countUpdate();
                     }
                   });

    value_.clear();
    encodeRow(value_, row);
    keep(kRightTag, kRightIndexTag, time);
  }

  std::string name() const override { return "StreamJoin"; }

 private:
  // Keeps the row encoded in value_ (key jk_, `time`, the next sequence
  // number) with its expiry index entry.
  void keep(char rowTag, char indexTag, int64_t time) {
    seqBytes_.clear();
    encodeKeyInt(seqBytes_, seq_.current());
    state_.putKeyAt(rowTag, jk_, time, seqBytes_, value_);
    seqBytes_.append(jk_);
    state_.putAt(indexTag, time, seqBytes_, {});
    seq_.advance();
    countUpdate();
    refreshStats();
  }

  void expire(int64_t watermark) override {
    // Left rows that no right row at or above the watermark can reach.
    expireSide(kLeftIndexTag, kLeftTag, saturatingSub(watermark, upper_));
    // Right rows that no left row at or above the watermark can reach.
    expireSide(kRightIndexTag, kRightTag, saturatingAdd(watermark, lower_));
  }

  // Drops the rows of one side whose time is < bound. For the left side of a
  // left outer join, rows that never matched are emitted with NULLs first, in
  // time order.
  void expireSide(char indexTag, char rowTag, int64_t bound) {
    const bool emitNulls = leftOuter_ && rowTag == kLeftTag;
    auto drop = [&](int64_t time, std::string_view rest, std::string_view) {
      if (rest.size() < kIntBytes) throw InternalError("stream join index key is truncated");
      std::string_view seq = rest.substr(0, kIntBytes);
      std::string_view jk = rest.substr(kIntBytes);
      if (emitNulls && state_.getKeyAt(rowTag, jk, time, seq, value_) && !value_.empty() &&
          value_[0] == '0') {
        Row left = decodeRow(std::string_view(value_).substr(1), leftTypes_);
        // The row is produced now, by the watermark, not by an input record,
        // so its latency is measured from this moment.
        int64_t now = nowMicros();
        emitJoined(left, nullptr, RecordContext{now, now});
      }
      state_.eraseKeyAt(rowTag, jk, time, seq);
    };
    state_.expireBefore(indexTag, bound, drop);
  }

  // Saves the next sequence number with the epoch's state.
  void beforeFlush() override { seq_.save(); }

  // A row takes two entries (row and index); the saved sequence number is no row.
  uint64_t stateRows() const override {
    uint64_t entries = seq_.rowEntries(state_.size());
    return entries / 2;
  }

  // Builds left + right (NULLs when right is null) in out_ and emits it when
  // the residual holds; an outer row (right null) skips the residual. Returns
  // whether the row was emitted.
  bool emitJoined(const Row& left, const Row* right, const RecordContext& ctx) {
    // out_ is rebuilt for every output: downstream operators may modify it.
    out_.resize(leftWidth_ + rightWidth_);
    for (size_t i = 0; i < leftWidth_; ++i) out_[i] = i < left.size() ? left[i] : Value();
    for (size_t i = 0; i < rightWidth_; ++i)
      out_[leftWidth_ + i] = right && i < right->size() ? (*right)[i] : Value();
    if (right && residual_ && !isTrue(residual_->eval(out_))) return false;
    emit(out_, ctx);
    return true;
  }

  std::vector<ExprPtr> leftKeys_, rightKeys_;
  ExprPtr leftTime_, rightTime_;
  int64_t lower_, upper_;
  ExprPtr residual_;
  bool leftOuter_;
  size_t leftWidth_, rightWidth_;
  std::vector<DataTypePtr> leftTypes_, rightTypes_;
  StoredSequence seq_{state_, kSeqTag};
  // Buffers reused for every row.
  std::string jk_, seqBytes_, value_;
  Row out_;
};

// State of a regular join (`unbounded`), in families of its own; the same
// 'S' entry holds the next sequence number.
//
//   'J' key-then-time: key jk, time, rest seq -> [encodeKeyInt(matches)] + encodeRow(left row)
//   'K' key-then-time: key jk, time, rest seq -> [encodeKeyInt(matches)] + encodeRow(right row)
//   'j' time-ordered:  time, rest seq + jk    -> empty   (left expiry index, with a TTL only)
//   'k' time-ordered:  time, rest seq + jk    -> empty   (right expiry index, with a TTL only)
//
// `time` is the row's event time (the side's watermark column), INT64_MIN when
// the side has none or it is NULL. The match count leads the value only on an
// outer side: it is the number of the other side's rows the row pairs with,
// and a row's NULL-padded output is live exactly while it is 0. An inner
// join's sides, and every side without a TTL, pay for neither.
//
// A retraction (UpdateBefore or Delete) finds its kept row in the 'J' / 'K'
// entries of its key and time, by the row's bytes. On a side whose rows carry
// the hidden Kafka metadata columns (StreamJoinSpec::leftRecordColumns), those
// columns are compared as NULL: a changelog source's delete arrives in a
// record of its own, whose offset and timestamp are not those of the insert
// it takes back. The pairs are then retracted with the kept row, exactly as
// they were emitted.
constexpr char kRegularLeftTag = 'J';
constexpr char kRegularRightTag = 'K';
constexpr char kRegularLeftIndexTag = 'j';
constexpr char kRegularRightIndexTag = 'k';

class RegularJoinOperator final : public StatefulOperator {
 public:
  RegularJoinOperator(const StreamJoinSpec& spec, std::unique_ptr<StateTable> state)
      : StatefulOperator(std::move(state)),
        residual_(spec.residual),
        ttl_(spec.stateTtlMicros),
        leftWidth_(static_cast<size_t>(spec.leftWidth)),
        rightWidth_(static_cast<size_t>(spec.rightWidth)) {
    if (spec.leftKeys.size() != spec.rightKeys.size())
      throw InternalError("StreamJoin: left and right key counts differ");
    if (spec.leftWidth < 0 || spec.rightWidth < 0 || spec.output.size() < leftWidth_ + rightWidth_)
      throw InternalError("StreamJoin: output schema narrower than leftWidth + rightWidth");
    if (ttl_ > 0 && (!spec.leftTime || !spec.rightTime))
      throw InternalError("StreamJoin: a state TTL needs both sides' event times");
    left_ = Side{kRegularLeftTag,
                 kRegularLeftIndexTag,
                 spec.leftKeys,
                 spec.leftTime,
                 spec.leftOuter,
                 true,
                 {},
                 spec.leftRecordColumns};
    right_ = Side{kRegularRightTag,
                  kRegularRightIndexTag,
                  spec.rightKeys,
                  spec.rightTime,
                  spec.rightOuter,
                  false,
                  {},
                  spec.rightRecordColumns};
    for (const Side* side : {&left_, &right_}) {
      const size_t width = side->isLeft ? leftWidth_ : rightWidth_;
      for (int c : side->recordColumns) {
        if (c < 0 || static_cast<size_t>(c) >= width)
          throw InternalError("StreamJoin: a record column outside its side's row");
      }
    }
    for (size_t i = 0; i < leftWidth_; ++i) left_.types.push_back(spec.output.columns[i].type);
    for (size_t i = 0; i < rightWidth_; ++i)
      right_.types.push_back(spec.output.columns[leftWidth_ + i].type);
    out_.resize(leftWidth_ + rightWidth_);
    refreshStats();
  }

  void push(Row& row, const RecordContext& ctx) override {
    countIn();
    arrive(left_, right_, row, ctx);
  }

  void pushRight(Row& row, const RecordContext& ctx) override {
    countIn();
    arrive(right_, left_, row, ctx);
  }

  std::string name() const override { return "StreamJoin"; }

 private:
  struct Side {
    char tag, indexTag;
    std::vector<ExprPtr> keys;
    ExprPtr time;
    bool outer;
    bool isLeft;
    std::vector<DataTypePtr> types;
    // Columns a retraction does not compare (the hidden Kafka metadata).
    std::vector<int> recordColumns;
  };

  // An input row of side `me`: an added row pairs with the other side's rows
  // of its key and is kept; a retracted one takes the first equal kept row
  // out and retracts the pairs it has, as the kept row made them.
  void arrive(Side& me, Side& other, Row& row, const RecordContext& ctx) {
    const bool retract = retractsRow(ctx.kind);
    const RowKind kind = retract ? RowKind::Delete : RowKind::Insert;
    if (!encodeJoinKey(me.keys, row, jk_)) {
      // A NULL key never matches: an outer side's row stands alone.
      if (me.outer) emitRow(me, &row, nullptr, kind, ctx);
      return;
    }
    const int64_t time = rowTime(me, row);
    rowBytes_.clear();
    encodeRow(rowBytes_, row);
    int64_t myMatches = 0;
    if (retract) {
      bool found = false;
      const size_t skip = me.outer ? kIntBytes : 0;
      const bool masked = !me.recordColumns.empty();
      if (masked) identityBytes(me, row, wanted_);
      state_.scanKey(me.tag, jk_, time, time,
                     [&](int64_t, std::string_view seq, std::string_view value) {
                       if (found || value.size() < skip) return;
                       const std::string_view stored = value.substr(skip);
                       if (masked) {
                         identityBytes(me, decodeRow(stored, me.types), candidate_);
                         if (candidate_ != wanted_) return;
                         keptBytes_.assign(stored);
                       } else if (stored != rowBytes_) {
                         return;
                       }
                       found = true;
                       seqBytes_.assign(seq);
                       if (me.outer) myMatches = decodeKeyInt(value);
                     });
      // A row never kept (or dropped by the TTL) has no pairs to retract.
      if (!found) return;
      // The pairs go out as they came in: with the kept row's record columns.
      if (masked) row = decodeRow(keptBytes_, me.types);
      state_.eraseKeyAt(me.tag, jk_, time, seqBytes_);
      if (ttl_ > 0) {
        seqBytes_.append(jk_);
        state_.eraseAt(me.indexTag, time, seqBytes_);
      }
      countUpdate();
    }

    int64_t matches = 0;
    const size_t otherSkip = other.outer ? kIntBytes : 0;
    state_.scanKey(other.tag, jk_, std::numeric_limits<int64_t>::min(),
                   std::numeric_limits<int64_t>::max(),
                   [&](int64_t otherTime, std::string_view seq, std::string_view value) {
                     if (value.size() < otherSkip)
                       throw InternalError("stream join row is truncated");
                     Row o = decodeRow(value.substr(otherSkip), other.types);
                     const Row* l = me.isLeft ? &row : &o;
                     const Row* r = me.isLeft ? &o : &row;
                     if (!pairs(*l, *r)) return;
                     ++matches;
                     if (!other.outer) {
                       emit(out_, withKind(ctx, kind));
                       return;
                     }
                     std::string_view in = value;
                     int64_t count = decodeKeyInt(in);
                     // The other row's NULL-padded output is live while it has no pair.
                     if (!retract && count == 0) emitRow(other, &o, nullptr, RowKind::Delete, ctx);
                     emitRow(me, &row, &o, kind, ctx);
                     if (retract && count == 1) emitRow(other, &o, nullptr, RowKind::Insert, ctx);
                     value_.clear();
                     encodeKeyInt(value_, retract ? count - 1 : count + 1);
                     value_.append(value.substr(kIntBytes));
                     state_.putKeyAt(other.tag, jk_, otherTime, seq, value_);
                     countUpdate();
                   });

    if (retract) {
      if (me.outer && myMatches == 0) emitRow(me, &row, nullptr, RowKind::Delete, ctx);
      refreshStats();
      return;
    }
    if (me.outer && matches == 0) emitRow(me, &row, nullptr, RowKind::Insert, ctx);
    // A row the TTL would drop at once is not kept.
    if (ttl_ > 0 && saturatingAdd(time, ttl_) < watermark_) return;
    value_.clear();
    if (me.outer) encodeKeyInt(value_, matches);
    value_.append(rowBytes_);
    seqBytes_.clear();
    encodeKeyInt(seqBytes_, seq_.current());
    state_.putKeyAt(me.tag, jk_, time, seqBytes_, value_);
    if (ttl_ > 0) {
      seqBytes_.append(jk_);
      state_.putAt(me.indexTag, time, seqBytes_, {});
    }
    seq_.advance();
    countUpdate();
    refreshStats();
  }

  // encodeRow() of `row` with the side's record columns as NULL: what a
  // retraction compares.
  void identityBytes(const Side& side, Row row, std::string& out) {
    for (int c : side.recordColumns) {
      if (static_cast<size_t>(c) < row.size()) row[static_cast<size_t>(c)] = Value();
    }
    out.clear();
    encodeRow(out, row);
  }

  static int64_t rowTime(const Side& side, const Row& row) {
    if (!side.time) return std::numeric_limits<int64_t>::min();
    Value t = side.time->eval(row);
    return t.isNull() ? std::numeric_limits<int64_t>::min() : t.asInt();
  }

  static RecordContext withKind(const RecordContext& ctx, RowKind kind) {
    RecordContext out = ctx;
    out.kind = kind;
    return out;
  }

  // Builds left + right in out_; whether the residual holds on it.
  bool pairs(const Row& left, const Row& right) {
    fill(&left, &right);
    return !residual_ || isTrue(residual_->eval(out_));
  }

  void fill(const Row* left, const Row* right) {
    // out_ is rebuilt for every output: downstream operators may modify it.
    out_.resize(leftWidth_ + rightWidth_);
    for (size_t i = 0; i < leftWidth_; ++i)
      out_[i] = left && i < left->size() ? (*left)[i] : Value();
    for (size_t i = 0; i < rightWidth_; ++i)
      out_[leftWidth_ + i] = right && i < right->size() ? (*right)[i] : Value();
  }

  // Emits `mine` of side `me` joined with `others` (NULLs when null), in
  // left-then-right order.
  void emitRow(const Side& me, const Row* mine, const Row* others, RowKind kind,
               const RecordContext& ctx) {
    if (me.isLeft) {
      fill(mine, others);
    } else {
      fill(others, mine);
    }
    emit(out_, withKind(ctx, kind));
  }

  void expire(int64_t watermark) override {
    if (ttl_ <= 0) return;
    const int64_t bound = saturatingSub(watermark, ttl_);
    for (const Side* side : {&left_, &right_}) {
      const char tag = side->tag;
      state_.expireBefore(
          side->indexTag, bound, [&](int64_t time, std::string_view rest, std::string_view) {
            if (rest.size() < kIntBytes) throw InternalError("stream join index key is truncated");
            state_.eraseKeyAt(tag, rest.substr(kIntBytes), time, rest.substr(0, kIntBytes));
          });
    }
  }

  void beforeFlush() override { seq_.save(); }

  // A row takes one entry, two with a TTL (row and index); the saved sequence
  // number is no row.
  uint64_t stateRows() const override {
    uint64_t entries = seq_.rowEntries(state_.size());
    return ttl_ > 0 ? entries / 2 : entries;
  }

  ExprPtr residual_;
  int64_t ttl_;
  size_t leftWidth_, rightWidth_;
  Side left_, right_;
  StoredSequence seq_{state_, kSeqTag};
  // Buffers reused for every row.
  std::string jk_, seqBytes_, value_, rowBytes_, wanted_, candidate_, keptBytes_;
  Row out_;
};

}  // namespace

OperatorPtr makeStreamJoin(const StreamJoinSpec& spec, std::unique_ptr<StateTable> state) {
  if (spec.unbounded) return std::make_unique<RegularJoinOperator>(spec, std::move(state));
  return std::make_unique<StreamJoinOperator>(spec, std::move(state));
}

}  // namespace rtsql
