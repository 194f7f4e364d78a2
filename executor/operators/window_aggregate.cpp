#include "executor/operators/window_aggregate.h"

#include <set>

#include "common/error.h"
#include "common/row_codec.h"
#include "executor/operators/aggregate_common.h"

namespace rtsql {
namespace {

// Floor division (rounds towards negative infinity), so that windows before
// the epoch are aligned like the ones after it.
int64_t floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

// State (TimeIndexedTable families, see aggregate.h for the whole layout):
//   'W' time-ordered: time = window end, rest = g (the group key encoding)
//       -> [ctx (16 bytes)] accumulators [group key values]
// The bracketed parts are kept only when emitting on close.
constexpr char kWindowTag = 'W';

class WindowAggregateOperator final : public AggregateOperatorBase {
 public:
  WindowAggregateOperator(const AggregateSpec& spec, std::unique_ptr<StateTable> state)
      : AggregateOperatorBase(spec, std::move(state)), time_(spec.window.time) {
    sizeMicros_ = spec.window.sizeMicros;
    slideMicros_ = spec.window.kind == WindowKind::Tumbling || spec.window.slideMicros <= 0
                       ? sizeMicros_
                       : spec.window.slideMicros;
    if (!time_) throw InternalError("window aggregate without a time expression");
    if (sizeMicros_ <= 0) throw InternalError("window aggregate with a non-positive size");
  }

  void push(Row& row, const RecordContext& ctx) override {
    countIn();
    Value tv = time_->eval(row);
    if (tv.isNull()) return;  // a row without event time belongs to no window
    const int64_t t = tv.asInt();
    // Windows [k*slide, k*slide + size) containing t: t - size < k*slide <= t.
    const int64_t firstK = floorDiv(t - sizeMicros_, slideMicros_) + 1;
    const int64_t lastK = floorDiv(t, slideMicros_);
    if (firstK > lastK) return;  // a gap between hopping windows

    bool evaluated = false;
    bool anyOpen = false;
    for (int64_t k = firstK; k <= lastK; ++k) {
      const int64_t start = k * slideMicros_;
      const int64_t end = start + sizeMicros_;
      if (end <= watermark_) continue;  // this window is closed already
      anyOpen = true;
      if (!evaluated) {
        // The group key is encoded once per row, however many windows it updates.
        evalGroupKey(row);
        calls_.evalArgs(row, args_);
        evaluated = true;
      }
      updateWindow(start, end, ctx);
    }
    if (!anyOpen) late(row, t);
    refreshStats();
  }

  std::string name() const override { return "WindowAggregate"; }

 private:
  void updateWindow(int64_t start, int64_t end, const RecordContext& ctx) {
    bool existed = false;
    if (state_.getAt(kWindowTag, end, groupKey_, value_)) {
      std::string_view in = value_;
      if (emitOnClose_) in.remove_prefix(16);
      calls_.decode(in, accs_);
      existed = true;
      if (retractOut_) buildOutput(old_, groupValues_, true, start, end, accs_);
    } else {
      calls_.reset(accs_);
      ends_.insert(end);
    }
    calls_.update(accs_, args_);
    value_.clear();
    if (emitOnClose_) {
      putFixed64(value_, static_cast<uint64_t>(ctx.sourceTimestampMicros));
      putFixed64(value_, static_cast<uint64_t>(ctx.readMicros));
    }
    calls_.encode(value_, accs_);
    if (emitOnClose_) value_.append(groupValueBytes_);
    state_.putAt(kWindowTag, end, groupKey_, value_);
    countUpdate();
    if (!emitOnClose_) {
      buildOutput(out_, groupValues_, true, start, end, accs_);
      emitChange(ctx, existed);
    }
  }

  // Drops every window with end <= watermark, in end order, emitting each
  // final row first when emitting on close. The watermark advances with
  // nearly every poll of the source, and a state scan flushes the task's
  // cached writes to RocksDB and opens an iterator: at 10,000 records/s that
  // was most of the flow's time. So the scan runs only when a window closes.
  void expire(int64_t watermark) override {
    if (!endsKnown_) {
      // The state may come from a checkpoint: learn its windows once.
      state_.forEachAt(kWindowTag, [this](int64_t end, std::string_view, std::string_view) {
        ends_.insert(end);
      });
      endsKnown_ = true;
    }
    if (ends_.empty() || *ends_.begin() > watermark) return;
    auto close = [this](int64_t end, std::string_view, std::string_view value) {
      if (!emitOnClose_) return;
      std::string_view in = value;
      RecordContext ctx;
      ctx.sourceTimestampMicros = static_cast<int64_t>(getFixed64(in));
      ctx.readMicros = static_cast<int64_t>(getFixed64(in));
      calls_.decode(in, accs_);
      decodeGroupValues(in, groupValues_);
      buildOutput(out_, groupValues_, true, end - sizeMicros_, end, accs_);
      emit(out_, ctx);
    };
    state_.expireThrough(kWindowTag, watermark, close);
    ends_.erase(ends_.begin(), ends_.upper_bound(watermark));
  }

  ExprPtr time_;
  int64_t sizeMicros_ = 0;
  int64_t slideMicros_ = 0;
  std::set<int64_t> ends_;  // ends of the windows in the state
  bool endsKnown_ = false;  // ends_ has been filled from the state
};

}  // namespace

OperatorPtr makeWindowAggregate(const AggregateSpec& spec, std::unique_ptr<StateTable> state) {
  return std::make_unique<WindowAggregateOperator>(spec, std::move(state));
}

}  // namespace rtsql
