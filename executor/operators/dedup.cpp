#include "executor/operators/dedup.h"

#include <limits>
#include <string>
#include <vector>

#include "common/row_codec.h"

namespace rtsql {
namespace {

// State layout (keys of this operator's StateTable):
//   'K' + encodeKey(key values...)              -> encodeKeyInt(eventTime), or empty
//   'T' + encodeKeyInt(eventTime) + encoded key -> empty      (WITHIN WATERMARK only)
// The 'T' entries are a time index: expiring up to the watermark is one ordered
// scan over 'T' + [min, watermark], without looking at live keys. Because the
// key encoding is self-delimiting, the encoded key after the 8 time bytes is
// exactly the suffix of the 'K' entry to erase.
constexpr char kKeyTag = 'K';
constexpr char kTimeTag = 'T';

class DedupOperator final : public Operator {
 public:
  DedupOperator(const DedupSpec& spec, std::unique_ptr<StateTable> state)
      : keys_(spec.dedupKeys),
        withinWatermark_(spec.withinWatermark),
        eventTime_(spec.eventTime),
        state_(std::move(state)) {
    if (!state_) throw InternalError("Dedup needs a state table");
    if (withinWatermark_ && !eventTime_) throw InternalError("Dedup WITHIN WATERMARK needs an event time");
    updateStateStats();
  }

  void push(Row& row, const RecordContext& ctx) override {
    stats_.rowsIn.fetch_add(1, std::memory_order_relaxed);
    int64_t time = 0;
    if (withinWatermark_) {
      Value t = eventTime_->eval(row);
      // A row below the watermark belongs to keys that may already have been
      // forgotten: it would break the "within watermark" guarantee, so it is
      // dropped. A row without an event time is never late (as in Spark, whose
      // late-row filter lets NULL through); its key is deduplicated as usual
      // and remembered until the watermark next moves (Spark stores it as
      // expiring at the epoch plus the delay, which the next cleanup forgets).
      if (t.isNull()) {
        time = std::numeric_limits<int64_t>::min();
      } else if (t.asInt() < watermark_) {
        stats_.numRowsDroppedByWatermark.fetch_add(1, std::memory_order_relaxed);
        return;
      } else {
        time = t.asInt();
      }
    }

    key_.clear();
    key_ += kKeyTag;
    for (const auto& k : keys_) encodeKey(key_, k->eval(row));
    if (state_->get(key_, scratch_)) return;  // a duplicate

    if (withinWatermark_) {
      value_.clear();
      encodeKeyInt(value_, time);
      state_->put(key_, value_);
      index_.clear();
      index_ += kTimeTag;
      encodeKeyInt(index_, time);
      index_.append(key_, 1, std::string::npos);
      state_->put(index_, {});
    } else {
      state_->put(key_, {});
    }
    stats_.numRowsUpdated.fetch_add(1, std::memory_order_relaxed);
    updateStateStats();
    emit(row, ctx);
  }

  void onWatermark(int64_t watermarkMicros) override {
    if (watermarkMicros > watermark_) {
      watermark_ = watermarkMicros;
      if (withinWatermark_) expire();
    }
    if (next_) next_->onWatermark(watermarkMicros);
  }

  void onEpochEnd() override {
    state_->flush();
    stats_.numRowsUpdated.store(0, std::memory_order_relaxed);
    updateStateStats();
    if (next_) next_->onEpochEnd();
  }

  bool stateful() const override { return true; }
  std::string name() const override { return "Dedup"; }

 private:
  // Forgets every key whose event time is <= the watermark: the watermark
  // already includes the source's delay, so no row of that key can still be
  // on time.
  void expire() {
    std::string from(1, kTimeTag);
    std::string to(1, kTimeTag);
    if (watermark_ == std::numeric_limits<int64_t>::max()) {
      to = std::string(1, kTimeTag + 1);
    } else {
      encodeKeyInt(to, watermark_ + 1);
    }
    std::vector<std::string> expired;
    state_->scan(from, to, [&](std::string_view key, std::string_view) {
      expired.emplace_back(key);
      return true;
    });
    for (const auto& index : expired) {
      state_->erase(index);
      std::string key(1, kKeyTag);
      key.append(index, 1 + 8, std::string::npos);
      state_->erase(key);
    }
    if (!expired.empty()) updateStateStats();
  }

  void updateStateStats() {
    uint64_t entries = state_->size();
    stats_.numRowsTotal.store(withinWatermark_ ? entries / 2 : entries, std::memory_order_relaxed);
    stats_.memoryUsedBytes.store(state_->memoryBytes(), std::memory_order_relaxed);
  }

  std::vector<ExprPtr> keys_;
  bool withinWatermark_;
  ExprPtr eventTime_;
  std::unique_ptr<StateTable> state_;
  int64_t watermark_ = std::numeric_limits<int64_t>::min();
  // Buffers reused for every row, so a row costs no allocation once they grew.
  std::string key_, index_, value_, scratch_;
};

}  // namespace

OperatorPtr makeDedup(const DedupSpec& spec, std::unique_ptr<StateTable> state) {
  return std::make_unique<DedupOperator>(spec, std::move(state));
}

}  // namespace rtsql
