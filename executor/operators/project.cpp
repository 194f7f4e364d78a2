#include "executor/operators/project.h"

namespace rtsql {
namespace {

class ProjectOperator final : public Operator {
 public:
  explicit ProjectOperator(std::vector<ExprPtr> exprs) : exprs_(std::move(exprs)) {
    out_.resize(exprs_.size());
  }

  void push(Row& row, const RecordContext& ctx) override {
    countIn();
    // The output row is a member reused for every record: after the first
    // record its vector never reallocates, and evalInto copies a column into
    // the slot's existing string buffer instead of allocating a new one.
    for (size_t i = 0; i < exprs_.size(); ++i) exprs_[i]->evalInto(row, out_[i]);
    emit(out_, ctx);
  }
  std::string name() const override { return "Project"; }

 private:
  std::vector<ExprPtr> exprs_;
  Row out_;
};

}  // namespace

OperatorPtr makeProject(const ProjectSpec& spec) {
  return std::make_unique<ProjectOperator>(spec.exprs);
}

}  // namespace rtsql
