#include "executor/operators/filter.h"

namespace rtsql {
namespace {

class FilterOperator final : public Operator {
 public:
  explicit FilterOperator(ExprPtr predicate) : predicate_(std::move(predicate)) {}

  void push(Row& row, const RecordContext& ctx) override {
    countIn();
    // Read through evalRef: a predicate that is a boolean column costs no copy.
    Value scratch;
    const Value& v = predicate_->evalRef(row, scratch);
    if (!v.isNull() && v.asBool()) emit(row, ctx);
  }
  std::string name() const override { return "Filter"; }

 private:
  ExprPtr predicate_;
};

}  // namespace

OperatorPtr makeFilter(const FilterSpec& spec) {
  return std::make_unique<FilterOperator>(spec.predicate);
}

}  // namespace rtsql
