#include "executor/operators/aggregate.h"

#include "common/error.h"
#include "executor/operators/aggregate_common.h"
#include "executor/operators/session_window_aggregate.h"
#include "executor/operators/window_aggregate.h"

namespace rtsql {
namespace {

constexpr char kGroupTag = 'G';  // keyed: group key -> accumulators

// GROUP BY without a window: one state entry per group, never expired; every
// input row emits its group's new row.
class AggregateOperator final : public AggregateOperatorBase {
 public:
  AggregateOperator(const AggregateSpec& spec, std::unique_ptr<StateTable> state)
      : AggregateOperatorBase(spec, std::move(state)) {}

  void push(Row& row, const RecordContext& ctx) override {
    countIn();
    evalGroupKey(row);
    calls_.evalArgs(row, args_);
    if (state_.get(kGroupTag, groupKey_, value_)) {
      std::string_view in = value_;
      calls_.decode(in, accs_);
    } else {
      calls_.reset(accs_);
    }
    calls_.update(accs_, args_);
    value_.clear();
    calls_.encode(value_, accs_);
    state_.put(kGroupTag, groupKey_, value_);
    countUpdate();
    refreshStats();
    buildOutput(out_, groupValues_, false, 0, 0, accs_);
    emit(out_, ctx);
  }
  std::string name() const override { return "Aggregate"; }

 private:
  // A group's state never expires: without a window no watermark closes it.
  void expire(int64_t) override {}
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
