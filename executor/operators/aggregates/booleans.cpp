// count_if, bool_and (every) and bool_or (some, any): counts of a BOOLEAN
// argument, so that they take retractions exactly.
//
// State (appended to the group's state value, family.h):
//   count_if:          fixed64 count of TRUE values
//   bool_and, bool_or: fixed64 count of non-NULL values, fixed64 count of TRUE
//                      values
// As in Spark, count_if of no TRUE value is 0, and bool_and/bool_or of no
// non-NULL value are NULL.
#include "common/error.h"
#include "executor/operators/aggregates/family.h"

namespace rtsql::aggregates {
namespace {

class CountIf final : public AggregateFamily {
 public:
  void add(Accumulator& a, const Value& v) const override {
    if (v.asBool()) ++a.count;
  }
  void retract(Accumulator& a, const Value& v) const override {
    if (v.asBool() && a.count > 0) --a.count;
  }
  void merge(Accumulator& into, const Accumulator& from) const override {
    into.count += from.count;
  }
  void encode(std::string& out, const Accumulator& a) const override {
    putFixed64(out, static_cast<uint64_t>(a.count));
  }
  void decode(std::string_view& in, Accumulator& a) const override {
    a.count = static_cast<int64_t>(getFixed64(in));
  }
  Value result(const Accumulator& a) const override { return Value::bigint(a.count); }
};

class BoolAndOr final : public AggregateFamily {
 public:
  explicit BoolAndOr(bool isAnd) : and_(isAnd) {}
  void add(Accumulator& a, const Value& v) const override {
    ++a.count;
    if (v.asBool()) ++a.hits;
  }
  void retract(Accumulator& a, const Value& v) const override {
    if (a.count <= 0) return;
    --a.count;
    if (v.asBool() && a.hits > 0) --a.hits;
  }
  void merge(Accumulator& into, const Accumulator& from) const override {
    into.count += from.count;
    into.hits += from.hits;
  }
  void encode(std::string& out, const Accumulator& a) const override {
    putFixed64(out, static_cast<uint64_t>(a.count));
    putFixed64(out, static_cast<uint64_t>(a.hits));
  }
  void decode(std::string_view& in, Accumulator& a) const override {
    a.count = static_cast<int64_t>(getFixed64(in));
    a.hits = static_cast<int64_t>(getFixed64(in));
  }
  Value result(const Accumulator& a) const override {
    if (a.count == 0) return Value();
    return Value::boolean(and_ ? a.hits == a.count : a.hits > 0);
  }

 private:
  bool and_;
};

}  // namespace

std::shared_ptr<const AggregateFamily> makeBooleans(const AggregateCall& call) {
  switch (call.function) {
    case AggregateFunction::CountIf: return std::make_shared<CountIf>();
    case AggregateFunction::BoolAnd: return std::make_shared<BoolAndOr>(true);
    case AggregateFunction::BoolOr: return std::make_shared<BoolAndOr>(false);
    default: throw InternalError("not a boolean aggregate");
  }
}

}  // namespace rtsql::aggregates
