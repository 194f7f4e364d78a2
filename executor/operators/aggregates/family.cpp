// The dispatch from an aggregate call to its family, and the state encoding
// helpers the families share (family.h).
#include "executor/operators/aggregates/family.h"

#include <algorithm>
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
    case TypeId::Struct:
    case TypeId::Map: {
      size_t n = 8;
      for (const Value& item : v.asList()) n += valueBytes(item);
      return n;
    }
    default:
      return 8;
  }
}

void checkListSize(const char* fn, size_t bytes) { checkBuiltValueSize(fn, bytes); }

namespace {

// The position of `v` in the sorted items, or where it would go.
size_t findCounted(const Accumulator& a, const Value& v) {
  auto it = std::lower_bound(a.items.begin(), a.items.end(), v,
                             [](const Value& x, const Value& y) { return x.compare(y) < 0; });
  return static_cast<size_t>(it - a.items.begin());
}

}  // namespace

void addCounted(Accumulator& a, const Value& v, int64_t n, const char* fn) {
  const size_t i = findCounted(a, v);
  if (i < a.items.size() && a.items[i].compare(v) == 0) {
    a.counts[i] += n;
    return;
  }
  const size_t grown = a.bytes + valueBytes(v);
  checkListSize(fn, grown);
  a.items.insert(a.items.begin() + static_cast<long>(i), v);
  a.counts.insert(a.counts.begin() + static_cast<long>(i), n);
  a.bytes = grown;
}

bool retractCounted(Accumulator& a, const Value& v) {
  const size_t i = findCounted(a, v);
  if (i == a.items.size() || a.items[i].compare(v) != 0) return false;
  if (--a.counts[i] > 0) return true;
  a.bytes -= std::min(a.bytes, valueBytes(a.items[i]));
  a.items.erase(a.items.begin() + static_cast<long>(i));
  a.counts.erase(a.counts.begin() + static_cast<long>(i));
  return true;
}

}  // namespace aggregates
}  // namespace rtsql
