#include "executor/operators/project.h"

#include <algorithm>
#include <functional>
#include <utility>

namespace rtsql {
namespace {

class ProjectOperator final : public Operator {
 public:
  explicit ProjectOperator(std::vector<ExprPtr> exprs) : exprs_(std::move(exprs)) {
    out_.resize(exprs_.size());
    // The output columns that are an input column read nowhere else: what
    // may be taken from an input row that is the operator's own.
    std::vector<int> reads;
    std::function<void(const Expr&)> count = [&](const Expr& e) {
      const int column = columnRefIndex(e);
      if (column >= 0) {
        if (static_cast<size_t>(column) >= reads.size()) reads.resize(static_cast<size_t>(column) + 1);
        ++reads[static_cast<size_t>(column)];
      }
      e.forEachChild(count);
    };
    for (const ExprPtr& e : exprs_) count(*e);
    for (size_t i = 0; i < exprs_.size(); ++i) {
      const int column = columnRefIndex(*exprs_[i]);
      if (column >= 0 && reads[static_cast<size_t>(column)] == 1)
        takable_.push_back({i, static_cast<size_t>(column)});
    }
  }

  void takeInputRows() override {
    if (taken_.empty() && !takable_.empty()) {
      taken_ = takable_;
      evaluated_.clear();
      for (size_t i = 0; i < exprs_.size(); ++i) {
        if (std::none_of(taken_.begin(), taken_.end(), [&](const auto& t) { return t.first == i; }))
          evaluated_.push_back(i);
      }
    }
  }

  void push(Row& row, const RecordContext& ctx) override {
    countIn();
    // The output row is a member reused for every record: after the first
    // record its vector never reallocates, and evalInto copies a column into
    // the slot's existing string buffer instead of allocating a new one.
    if (taken_.empty()) {
      for (size_t i = 0; i < exprs_.size(); ++i) exprs_[i]->evalInto(row, out_[i]);
    } else {
      // The input row is the operator's own (takeInputRows): a column passed
      // on as it is changes places with the output slot's old value, after
      // everything else is computed (which may throw, and leaves the input
      // whole then). A kilobyte string goes on without being copied, and the
      // row that is refilled next gets the slot's buffer back.
      for (size_t i : evaluated_) exprs_[i]->evalInto(row, out_[i]);
      for (const auto& [i, column] : taken_) {
        if (column < row.size()) {
          std::swap(out_[i], row[column]);
        } else {
          out_[i] = Value();
        }
      }
    }
    emit(out_, ctx);
  }
  std::string name() const override { return "Project"; }

 private:
  std::vector<ExprPtr> exprs_;
  Row out_;
  // (output column, input column) pairs that may be taken from an own input
  // row, and with takeInputRows() those that are, and the outputs computed.
  std::vector<std::pair<size_t, size_t>> takable_;
  std::vector<std::pair<size_t, size_t>> taken_;
  std::vector<size_t> evaluated_;
};

}  // namespace

OperatorPtr makeProject(const ProjectSpec& spec) {
  return std::make_unique<ProjectOperator>(spec.exprs);
}

}  // namespace rtsql
