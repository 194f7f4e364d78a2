#include "executor/operators/stream_join.h"

#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/row_codec.h"

namespace rtsql {
namespace {

// State layout (keys of this operator's StateTable). `jk` is the join key,
// encodeKey() of each key value in turn; times and sequence numbers are
// encodeKeyInt(), so byte order is numeric order.
//
//   'L' + jk + time + seq  -> matched flag ('0' | '1') + encodeRow(left row)
//   'l' + time + seq + jk  -> empty   (expiry index of the left rows)
//   'R' + jk + time + seq  -> encodeRow(right row)
//   'r' + time + seq + jk  -> empty   (expiry index of the right rows)
//   'S'                    -> encodeKeyInt(next sequence number)
//
// Probes use the key-first entries: the rows of one join key within a time
// range are one contiguous scan. Expiry uses the time-first index: everything
// the watermark passed is one scan from the start. The index key holds the
// same parts as the row key, so the row key is rebuilt from it without a read.
// The sequence number makes rows with equal key and time distinct; it is saved
// at every epoch end so that, after restoring a snapshot, new rows never reuse
// a number of a restored row.
constexpr char kLeftTag = 'L';
constexpr char kLeftIndexTag = 'l';
constexpr char kRightTag = 'R';
constexpr char kRightIndexTag = 'r';
constexpr char kSeqKey[] = "S";
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

class StreamJoinOperator final : public Operator {
 public:
  StreamJoinOperator(const StreamJoinSpec& spec, std::unique_ptr<StateTable> state)
      : leftKeys_(spec.leftKeys),
        rightKeys_(spec.rightKeys),
        leftTime_(spec.leftTime),
        rightTime_(spec.rightTime),
        lower_(spec.lowerBoundMicros),
        upper_(spec.upperBoundMicros),
        residual_(spec.residual),
        leftOuter_(spec.leftOuter),
        leftWidth_(static_cast<size_t>(spec.leftWidth)),
        rightWidth_(static_cast<size_t>(spec.rightWidth)),
        state_(std::move(state)) {
    if (!state_) throw InternalError("StreamJoin needs a state table");
    if (!leftTime_ || !rightTime_) throw InternalError("StreamJoin needs both event times");
    if (leftKeys_.size() != rightKeys_.size())
      throw InternalError("StreamJoin: left and right key counts differ");
    if (spec.leftWidth < 0 || spec.rightWidth < 0 ||
        spec.output.size() < leftWidth_ + rightWidth_)
      throw InternalError("StreamJoin: output schema narrower than leftWidth + rightWidth");
    for (size_t i = 0; i < leftWidth_; ++i) leftTypes_.push_back(spec.output.columns[i].type);
    for (size_t i = 0; i < rightWidth_; ++i)
      rightTypes_.push_back(spec.output.columns[leftWidth_ + i].type);
    std::string v;
    if (state_->get(kSeqKey, v)) {
      std::string_view in(v);
      seq_ = decodeKeyInt(in);
      seqStored_ = true;
    }
    out_.resize(leftWidth_ + rightWidth_);
    updateStateStats();
  }

  // A left row: join it with the right rows in state, then keep it for the
  // right rows still to come.
  void push(Row& row, const RecordContext& ctx) override {
    stats_.rowsIn.fetch_add(1, std::memory_order_relaxed);
    Value t = leftTime_->eval(row);
    if (!t.isNull() && t.asInt() < watermark_) {
      stats_.numRowsDroppedByWatermark.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    if (t.isNull() || !encodeJoinKey(leftKeys_, row)) {
      if (leftOuter_) emitJoined(row, nullptr, ctx);
      return;
    }
    int64_t time = t.asInt();

    rangeKeys(kRightTag, saturatingAdd(time, lower_), saturatingAdd(time, upper_));
    collect();
    bool matched = false;
    for (const auto& [key, value] : found_) {
      Row right = decodeRow(value, rightTypes_);
      if (emitJoined(row, &right, ctx)) matched = true;
    }

    key_.clear();
    key_ += kLeftTag;
    key_ += jk_;
    encodeKeyInt(key_, time);
    encodeKeyInt(key_, seq_);
    value_.clear();
    value_ += matched ? '1' : '0';
    encodeRow(value_, row);
    state_->put(key_, value_);
    putIndex(kLeftIndexTag, time);
    ++seq_;
    stats_.numRowsUpdated.fetch_add(1, std::memory_order_relaxed);
    updateStateStats();
  }

  // A right row: join it with the left rows in state (marking them matched),
  // then keep it for the left rows still to come.
  void pushRight(Row& row, const RecordContext& ctx) override {
    stats_.rowsIn.fetch_add(1, std::memory_order_relaxed);
    Value t = rightTime_->eval(row);
    if (!t.isNull() && t.asInt() < watermark_) {
      stats_.numRowsDroppedByWatermark.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    if (t.isNull() || !encodeJoinKey(rightKeys_, row)) return;
    int64_t time = t.asInt();

    rangeKeys(kLeftTag, saturatingSub(time, upper_), saturatingSub(time, lower_));
    collect();
    for (auto& [key, value] : found_) {
      Row left = decodeRow(std::string_view(value).substr(1), leftTypes_);
      if (emitJoined(left, &row, ctx) && leftOuter_ && value[0] == '0') {
        // Only a left outer join needs to know that a left row matched; an
        // inner join skips the write.
        value[0] = '1';
        state_->put(key, value);
        stats_.numRowsUpdated.fetch_add(1, std::memory_order_relaxed);
      }
    }

    key_.clear();
    key_ += kRightTag;
    key_ += jk_;
    encodeKeyInt(key_, time);
    encodeKeyInt(key_, seq_);
    value_.clear();
    encodeRow(value_, row);
    state_->put(key_, value_);
    putIndex(kRightIndexTag, time);
    ++seq_;
    stats_.numRowsUpdated.fetch_add(1, std::memory_order_relaxed);
    updateStateStats();
  }

  void onWatermark(int64_t watermarkMicros) override {
    if (watermarkMicros > watermark_) {
      watermark_ = watermarkMicros;
      // Left rows that no right row at or above the watermark can reach.
      expire(kLeftIndexTag, kLeftTag, saturatingSub(watermark_, upper_));
      // Right rows that no left row at or above the watermark can reach.
      expire(kRightIndexTag, kRightTag, saturatingAdd(watermark_, lower_));
      updateStateStats();
    }
    if (next_) next_->onWatermark(watermarkMicros);
  }

  void onEpochEnd() override {
    std::string v;
    encodeKeyInt(v, seq_);
    state_->put(kSeqKey, v);
    seqStored_ = true;
    state_->flush();
    stats_.numRowsUpdated.store(0, std::memory_order_relaxed);
    updateStateStats();
    if (next_) next_->onEpochEnd();
  }

  bool stateful() const override { return true; }
  std::string name() const override { return "StreamJoin"; }

 private:
  // Encodes the row's join key into jk_; false when a key value is NULL (SQL
  // equality never holds for NULL).
  bool encodeJoinKey(const std::vector<ExprPtr>& keys, const Row& row) {
    jk_.clear();
    for (const auto& k : keys) {
      Value v = k->eval(row);
      if (v.isNull()) return false;
      encodeKey(jk_, v);
    }
    return true;
  }

  // from_/to_ := the keys `tag + jk_ + time + seq` with lo <= time <= hi. The
  // upper end is hi followed by bytes above any sequence number, so that the
  // inclusive bound needs no hi + 1 (which could overflow).
  void rangeKeys(char tag, int64_t lo, int64_t hi) {
    from_.clear();
    from_ += tag;
    from_ += jk_;
    encodeKeyInt(from_, lo);
    to_.clear();
    to_ += tag;
    to_ += jk_;
    encodeKeyInt(to_, hi);
    to_.append(kIntBytes + 1, '\xff');
  }

  // Reads the entries in [from_, to_) into found_ first and works on them
  // afterwards, so that no state write happens while the scan is open.
  void collect() {
    found_.clear();
    if (from_ >= to_) return;
    state_->scan(from_, to_, [&](std::string_view key, std::string_view value) {
      found_.emplace_back(std::string(key), std::string(value));
      return true;
    });
  }

  void putIndex(char tag, int64_t time) {
    key_.clear();
    key_ += tag;
    encodeKeyInt(key_, time);
    encodeKeyInt(key_, seq_);
    key_ += jk_;
    state_->put(key_, {});
  }

  // Drops the rows of one side whose time is < bound. For the left side of a
  // left outer join, rows that never matched are emitted with NULLs first, in
  // time order.
  void expire(char indexTag, char rowTag, int64_t bound) {
    from_.assign(1, indexTag);
    to_.assign(1, indexTag);
    encodeKeyInt(to_, bound);
    found_.clear();
    state_->scan(from_, to_, [&](std::string_view key, std::string_view) {
      found_.emplace_back(std::string(key), std::string());
      return true;
    });
    bool emitNulls = leftOuter_ && rowTag == kLeftTag;
    std::string rowKey, value;
    for (const auto& entry : found_) {
      std::string_view index(entry.first);
      std::string_view timeSeq = index.substr(1, 2 * kIntBytes);
      std::string_view jk = index.substr(1 + 2 * kIntBytes);
      rowKey.assign(1, rowTag);
      rowKey.append(jk);
      rowKey.append(timeSeq);
      if (emitNulls && state_->get(rowKey, value) && !value.empty() && value[0] == '0') {
        Row left = decodeRow(std::string_view(value).substr(1), leftTypes_);
        // The row is produced now, by the watermark, not by an input record,
        // so its latency is measured from this moment.
        int64_t now = nowMicros();
        emitJoined(left, nullptr, RecordContext{now, now});
      }
      state_->erase(rowKey);
      state_->erase(index);
    }
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

  void updateStateStats() {
    uint64_t entries = state_->size();
    if (seqStored_ && entries > 0) --entries;
    stats_.numRowsTotal.store(entries / 2, std::memory_order_relaxed);
    stats_.memoryUsedBytes.store(state_->memoryBytes(), std::memory_order_relaxed);
  }

  std::vector<ExprPtr> leftKeys_, rightKeys_;
  ExprPtr leftTime_, rightTime_;
  int64_t lower_, upper_;
  ExprPtr residual_;
  bool leftOuter_;
  size_t leftWidth_, rightWidth_;
  std::vector<DataTypePtr> leftTypes_, rightTypes_;
  std::unique_ptr<StateTable> state_;
  int64_t watermark_ = std::numeric_limits<int64_t>::min();
  int64_t seq_ = 0;
  bool seqStored_ = false;
  // Buffers reused for every row.
  std::string jk_, key_, value_, from_, to_;
  std::vector<std::pair<std::string, std::string>> found_;
  Row out_;
};

}  // namespace

OperatorPtr makeStreamJoin(const StreamJoinSpec& spec, std::unique_ptr<StateTable> state) {
  return std::make_unique<StreamJoinOperator>(spec, std::move(state));
}

}  // namespace rtsql
