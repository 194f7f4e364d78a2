// The dispatch from an aggregate call to its family, and the state encoding
// helpers the families share (family.h).
#include "executor/operators/aggregates/family.h"

#include <cstring>

#include "common/error.h"
#include "common/value_size.h"

namespace rtsql {

void AggregateFamily::retract(Accumulator&, const Value&) const {
  throw InternalError(
      "this aggregate takes no retractions; the planner refuses it over a changelog");
}

std::shared_ptr<const AggregateFamily> makeAggregateFamily(const AggregateCall& call) {
  switch (call.function) {
    case AggregateFunction::CountStar:
    case AggregateFunction::Count:
    case AggregateFunction::Sum:
    case AggregateFunction::Min:
    case AggregateFunction::Max:
    case AggregateFunction::Avg:
      return nullptr;
    case AggregateFunction::CountIf:
    case AggregateFunction::BoolAnd:
    case AggregateFunction::BoolOr:
      return aggregates::makeBooleans(call);
    case AggregateFunction::StddevSamp:
    case AggregateFunction::StddevPop:
    case AggregateFunction::VarSamp:
    case AggregateFunction::VarPop:
      return aggregates::makeMoments(call);
    case AggregateFunction::MaxBy:
    case AggregateFunction::MinBy:
    case AggregateFunction::First:
    case AggregateFunction::Last:
      return aggregates::makeByRow(call);
    case AggregateFunction::CollectList:
    case AggregateFunction::CollectSet:
    case AggregateFunction::StringAgg:
      return aggregates::makeCollect(call);
    case AggregateFunction::ApproxCountDistinct:
      return aggregates::makeHyperLogLog(call);
    case AggregateFunction::Percentile:
    case AggregateFunction::PercentileApprox:
      return aggregates::makePercentile(call);
  }
  throw InternalError("unknown aggregate function");
}

namespace aggregates {

void putDouble(std::string& out, double d) {
  uint64_t u;
  std::memcpy(&u, &d, sizeof u);
  putFixed64(out, u);
}

double getDouble(std::string_view& in) {
  const uint64_t u = getFixed64(in);
  double d;
  std::memcpy(&d, &u, sizeof d);
  return d;
}

bool getFlag(std::string_view& in) {
  if (in.empty()) throw InternalError("aggregate state value is truncated");
  const bool f = in[0] != 0;
  in.remove_prefix(1);
  return f;
}

size_t valueBytes(const Value& v) {
  switch (v.type()) {
    case TypeId::String:
    case TypeId::Binary:
      return v.asString().size() + 8;
    case TypeId::Array:
    case TypeId::Struct: {
      size_t n = 8;
      for (const Value& item : v.asList()) n += valueBytes(item);
      return n;
    }
    default:
      return 8;
  }
}

void checkListSize(const char* fn, size_t bytes) { checkBuiltValueSize(fn, bytes); }

}  // namespace aggregates
}  // namespace rtsql
