#include "executor/operators/aggregate.h"

#include "common/error.h"
#include "executor/operators/aggregate_common.h"
#include "executor/operators/session_window_aggregate.h"
#include "executor/operators/window_aggregate.h"

namespace rtsql {
namespace {

constexpr char kGroupTag = 'G';  // keyed: group key -> accumulators [row count]

// GROUP BY without a window: one state entry per group, never expired; every
// input row emits its group's change.
//
// Over a retracting input the value also ends with the group's row count
// (fixed64), which says when the group empties; an append input's value is
// the accumulators only.
class AggregateOperator final : public AggregateOperatorBase {
 public:
  AggregateOperator(const AggregateSpec& spec, std::unique_ptr<StateTable> state)
      : AggregateOperatorBase(spec, std::move(state)),
        retractIn_(spec.input != ChangelogMode::Append),
        seedGroup_(spec.seedGlobalGroup) {}

  void push(Row& row, const RecordContext& ctx) override {
    countIn();
    evalGroupKey(row);
    calls_.evalArgs(row, args_);
    const bool retract = retractIn_ && retractsRow(ctx.kind);
    bool existed = false;
    int64_t rows = 0;
    if (state_.get(kGroupTag, groupKey_, value_)) {
      std::string_view in = value_;
      calls_.decode(in, accs_);
      if (retractIn_) rows = static_cast<int64_t>(getFixed64(in));
      existed = true;
    } else {
      if (retract) return;  // nothing to take the row out of
      calls_.reset(accs_);
    }
    if ((retractOut_ || retractIn_) && existed) buildOutput(old_, groupValues_, false, 0, 0, accs_);
    if (retractIn_ || calls_.keyed())
      calls_.apply(accs_, args_, retract, state_, groupKey_);
    else
      calls_.update(accs_, args_);
    countUpdate();
    if (retractIn_) {
      rows += retract ? -1 : 1;
      if (rows <= 0) {  // the group's last row left: so does the group
        state_.erase(kGroupTag, groupKey_);
        refreshStats();
        emitAs(old_, ctx, RowKind::Delete);
        return;
      }
    }
    value_.clear();
    calls_.encode(value_, accs_);
    if (retractIn_) putFixed64(value_, static_cast<uint64_t>(rows));
    state_.put(kGroupTag, groupKey_, value_);
    refreshStats();
    buildOutput(out_, groupValues_, false, 0, 0, accs_);
    emitChange(ctx, existed);
  }
  std::string name() const override { return "Aggregate"; }

 private:
  // A group's state never expires: without a window no watermark closes it.
  void expire(int64_t) override {}

  // A bounded query's global aggregate (AggregateSpec::seedGlobalGroup)
  // creates its group empty at an epoch end when no row has: the last epoch
  // ends after the last input row, so an empty input answers one row, and a
  // row that comes later updates the seeded one as any group's row.
  void beforeFlush() override {
    if (!seedGroup_ || state_.get(kGroupTag, std::string_view(), value_)) return;
    calls_.reset(accs_);
    value_.clear();
    calls_.encode(value_, accs_);
    if (retractIn_) putFixed64(value_, 0);
    state_.put(kGroupTag, std::string_view(), value_);
    refreshStats();
    buildOutput(out_, groupValues_, false, 0, 0, accs_);
    emitChange(RecordContext{}, false);
  }

  const bool retractIn_;
  const bool seedGroup_;
};

}  // namespace

OperatorPtr makeAggregate(const AggregateSpec& spec, std::unique_ptr<StateTable> state) {
  switch (spec.window.kind) {
    case WindowKind::None:
      return std::make_unique<AggregateOperator>(spec, std::move(state));
    case WindowKind::Tumbling:
    case WindowKind::Sliding:
      return makeWindowAggregate(spec, std::move(state));
    case WindowKind::Session:
      return makeSessionWindowAggregate(spec, std::move(state));
  }
  throw InternalError("unknown window kind");
}

}  // namespace rtsql
