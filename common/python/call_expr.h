// The expression nodes of a Python function's call (call_expr.cpp), for the
// code of the Python embedding only: vectorized_call.cpp finds the vectorized
// ones and calls them over a batch. Everything else makes them with makePythonCall()
// (function.h).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/expr.h"
#include "common/python/function.h"

namespace rtsql::python_internal {

// `f(x, y + 1)`: a call of `fn` as EXPLAIN shows it.
std::string callText(const PythonFunction& fn, const std::vector<ExprPtr>& args);

// A call of a vectorized function. In a flow the planner replaces it by the
// column a VectorizedBatch step appends with its results (vectorized_call.h);
// evaluated on its own, a row is a batch of one.
class PythonVectorizedCallExpr final : public Expr {
 public:
  void forEachChild(const std::function<void(const Expr&)>& fn) const override {
    for (const ExprPtr& a : args_) fn(*a);
  }
  PythonVectorizedCallExpr(std::shared_ptr<const PythonFunction> fn, std::vector<ExprPtr> args,
                           size_t pos)
      : Expr(fn->returns()), fn_(std::move(fn)), args_(std::move(args)), pos_(pos) {}
  ExprPtr withChildren(std::vector<ExprPtr> children) const override {
    return std::make_shared<PythonVectorizedCallExpr>(fn_, std::move(children), pos_);
  }

  // The function called over a batch of this one row.
  Value eval(const Row& row) const override;

  std::string toString() const override { return callText(*fn_, args_); }

  const PythonFunction& function() const { return *fn_; }
  const std::vector<ExprPtr>& args() const { return args_; }
  size_t pos() const { return pos_; }

 private:
  std::shared_ptr<const PythonFunction> fn_;
  std::vector<ExprPtr> args_;
  size_t pos_;
};

}  // namespace rtsql::python_internal
