// The expression nodes that call a Python function: per row, or, for a
// vectorized one, through the batch its row is in (see function.h).
#include "common/python/call_expr.h"

#include <array>

namespace rtsql {

namespace {

class PythonCallExpr final : public Expr {
 public:
  void forEachChild(const std::function<void(const Expr&)>& fn) const override {
    for (const ExprPtr& a : args_) fn(*a);
  }
  PythonCallExpr(std::shared_ptr<const PythonFunction> fn, std::vector<ExprPtr> args)
      : Expr(fn->returns()), fn_(std::move(fn)), args_(std::move(args)) {}
  ExprPtr withChildren(std::vector<ExprPtr> children) const override {
    return std::make_shared<PythonCallExpr>(fn_, std::move(children));
  }

  Value eval(const Row& row) const override {
    // The arguments are computed before the GIL is taken: they are rtsql's
    // own work and need no Python.
    constexpr size_t kInline = 8;
    if (args_.size() <= kInline) {
      std::array<Value, kInline> values;
      for (size_t i = 0; i < args_.size(); ++i) args_[i]->evalInto(row, values[i]);
      return fn_->call(values.data(), args_.size());
    }
    std::vector<Value> values(args_.size());
    for (size_t i = 0; i < args_.size(); ++i) args_[i]->evalInto(row, values[i]);
    return fn_->call(values.data(), values.size());
  }

  std::string toString() const override { return python_internal::callText(*fn_, args_); }

 private:
  std::shared_ptr<const PythonFunction> fn_;
  std::vector<ExprPtr> args_;
};

}  // namespace

namespace python_internal {

std::string callText(const PythonFunction& fn, const std::vector<ExprPtr>& args) {
  std::string out = fn.name() + "(";
  for (size_t i = 0; i < args.size(); ++i) {
    if (i) out += ", ";
    out += args[i]->toString();
  }
  return out + ")";
}

}  // namespace python_internal

ExprPtr makePythonCall(std::shared_ptr<const PythonFunction> fn, std::vector<ExprPtr> args,
                       size_t pos) {
  if (fn->vectorized()) {
    return std::make_shared<python_internal::PythonVectorizedCallExpr>(std::move(fn),
                                                                       std::move(args), pos);
  }
  return std::make_shared<PythonCallExpr>(std::move(fn), std::move(args));
}

}  // namespace rtsql
