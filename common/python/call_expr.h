// The expression nodes of a Python function's call (call_expr.cpp), for the
// code of the Python embedding only: vectorized_call.cpp finds and evaluates
// the vectorized ones. Everything else makes them with makePythonCall()
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

// A call of a vectorized function: its row's result comes from the
// VectorizedBatch that called the function over the batch the row is in.
class PythonVectorizedCallExpr final : public Expr {
 public:
  void forEachChild(const std::function<void(const Expr&)>& fn) const override {
    for (const ExprPtr& a : args_) fn(*a);
  }
  PythonVectorizedCallExpr(std::shared_ptr<const PythonFunction> fn, std::vector<ExprPtr> args,
                           size_t pos)
      : Expr(fn->returns()), fn_(std::move(fn)), args_(std::move(args)), pos_(pos) {}

  // Its row's result from the VectorizedBatch that evaluated it
  // (vectorized_call.cpp).
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
