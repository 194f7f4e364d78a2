#include "executor/operators/dedup.h"

#include <limits>
#include <string>
#include <vector>

#include "common/row_codec.h"
#include "executor/operators/stateful_operator.h"

namespace rtsql {
namespace {

// State (TimeIndexedTable families):
//   'K' keyed: encodeKey(key values...) -> encodeKeyInt(eventTime), or empty
//                                          without WITHIN WATERMARK
//   'T' time-ordered: time = eventTime, rest = the 'K' key   (WITHIN WATERMARK only)
//       -> empty
// The 'T' entries are a time index: expiring up to the watermark is one ordered
// scan over the times up to the watermark, without looking at live keys.
// Because the key encoding is self-delimiting, an index entry's rest is exactly
// the key of the 'K' entry to erase. Checkpoints hold these bytes;
// state_layout_test.cpp pins them.
constexpr char kKeyTag = 'K';
constexpr char kTimeTag = 'T';

class DedupOperator final : public StatefulOperator {
 public:
  DedupOperator(const DedupSpec& spec, std::unique_ptr<StateTable> state)
      : StatefulOperator(std::move(state)),
        keys_(spec.dedupKeys),
        withinWatermark_(spec.withinWatermark),
        eventTime_(spec.eventTime) {
    if (withinWatermark_ && !eventTime_)
      throw InternalError("Dedup WITHIN WATERMARK needs an event time");
    refreshStats();
  }

  void push(Row& row, const RecordContext& ctx) override {
    countIn();
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
        late(row, t.asInt());
        return;
      } else {
        time = t.asInt();
      }
    }

    key_.clear();
    for (const auto& k : keys_) encodeKey(key_, k->eval(row));
    if (state_.get(kKeyTag, key_, scratch_)) return;  // a duplicate

    if (withinWatermark_) {
      value_.clear();
      encodeKeyInt(value_, time);
      state_.put(kKeyTag, key_, value_);
      state_.putAt(kTimeTag, time, key_, {});
    } else {
      state_.put(kKeyTag, key_, {});
    }
    countUpdate();
    refreshStats();
    emit(row, ctx);
  }

  std::string name() const override { return "Dedup"; }

 private:
  // Forgets every key whose event time is <= the watermark: the watermark
  // already includes the source's delay, so no row of that key can still be
  // on time.
  void expire(int64_t watermark) override {
    if (!withinWatermark_) return;  // keys are remembered forever
    auto forget = [this](int64_t, std::string_view key, std::string_view) {
      state_.erase(kKeyTag, key);
    };
    state_.expireThrough(kTimeTag, watermark, forget);
  }

  // A key WITHIN WATERMARK takes two entries, its 'K' entry and its index entry.
  uint64_t stateRows() const override {
    const uint64_t entries = state_.size();
    return withinWatermark_ ? entries / 2 : entries;
  }

  std::vector<ExprPtr> keys_;
  bool withinWatermark_;
  ExprPtr eventTime_;
  // Buffers reused for every row, so a row costs no allocation once they grew.
  std::string key_, value_, scratch_;
};

}  // namespace

OperatorPtr makeDedup(const DedupSpec& spec, std::unique_ptr<StateTable> state) {
  return std::make_unique<DedupOperator>(spec, std::move(state));
}

}  // namespace rtsql
