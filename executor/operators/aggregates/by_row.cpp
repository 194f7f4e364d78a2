// max_by, min_by, first (any_value) and last: aggregates that answer with one
// row's value. They read struct(x, ord) (max_by/min_by) or struct(x)
// (first/last), so that a row whose x is NULL still counts, and keep that
// struct of the chosen row in `value`.
//
// State (family.h): a flag byte (a row was chosen), then encodeValue() of the
// chosen struct when it is set.
//
// As in Spark: max_by/min_by skip rows whose ord is NULL, keep the latest
// row among equal extremes, and answer that row's x even when it is NULL;
// first/last answer the first/last row's x, NULL included, unless
// ignoreNulls, when they answer the first/last non-NULL x. "First" is the
// order in which the operator receives the rows (Spark's is as
// nondeterministic). None takes retractions: the planner refuses them over a
// changelog.
#include "common/error.h"
#include "common/row_codec.h"
#include "executor/operators/aggregates/family.h"

namespace rtsql::aggregates {
namespace {

class ByRow : public AggregateFamily {
 public:
  explicit ByRow(DataTypePtr type) : type_(std::move(type)) {}
  void encode(std::string& out, const Accumulator& a) const override {
    out.push_back(a.has ? 1 : 0);
    if (a.has) encodeValue(out, a.value);
  }
  void decode(std::string_view& in, Accumulator& a) const override {
    a.has = getFlag(in);
    if (a.has) a.value = decodeValue(in, *type_);
  }
  Value result(const Accumulator& a) const override {
    return a.has ? a.value.asList()[0] : Value();
  }

 private:
  DataTypePtr type_;
};

class ExtremeBy final : public ByRow {
 public:
  ExtremeBy(DataTypePtr type, bool isMax) : ByRow(std::move(type)), max_(isMax) {}
  void add(Accumulator& a, const Value& v) const override {
    if (better(v, a)) {
      a.value = v;
      a.has = true;
    }
  }
  void merge(Accumulator& into, const Accumulator& from) const override {
    if (from.has) add(into, from.value);  // `from` holds the later rows
  }

 private:
  // Whether the row `v` replaces the chosen one: its ord is not NULL and
  // not short of the chosen row's (Spark keeps the chosen row only while its
  // ord is strictly beyond the new one's, so the latest of equal ords wins).
  bool better(const Value& v, const Accumulator& a) const {
    const Value& ord = v.asList()[1];
    if (ord.isNull()) return false;
    if (!a.has) return true;
    const int cmp = ord.compare(a.value.asList()[1]);
    return max_ ? cmp >= 0 : cmp <= 0;
  }
  bool max_;
};

class FirstLast final : public ByRow {
 public:
  FirstLast(DataTypePtr type, bool first, bool ignoreNulls)
      : ByRow(std::move(type)), first_(first), ignoreNulls_(ignoreNulls) {}
  void add(Accumulator& a, const Value& v) const override {
    if (ignoreNulls_ && v.asList()[0].isNull()) return;
    if (first_ && a.has) return;
    a.value = v;
    a.has = true;
  }
  void merge(Accumulator& into, const Accumulator& from) const override {
    if (!from.has || (first_ && into.has)) return;
    into.value = from.value;
    into.has = true;
  }

 private:
  bool first_, ignoreNulls_;
};

}  // namespace

std::shared_ptr<const AggregateFamily> makeByRow(const AggregateCall& call) {
  if (!call.arg || call.arg->type()->id != TypeId::Struct)
    throw InternalError("max_by/min_by/first/last read a struct of their arguments");
  const DataTypePtr& t = call.arg->type();
  switch (call.function) {
    case AggregateFunction::MaxBy: return std::make_shared<ExtremeBy>(t, true);
    case AggregateFunction::MinBy: return std::make_shared<ExtremeBy>(t, false);
    case AggregateFunction::First: return std::make_shared<FirstLast>(t, true, call.ignoreNulls);
    case AggregateFunction::Last: return std::make_shared<FirstLast>(t, false, call.ignoreNulls);
    default: throw InternalError("not a by-row aggregate");
  }
}

}  // namespace rtsql::aggregates
