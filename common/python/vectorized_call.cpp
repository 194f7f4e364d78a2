// Vectorized Python functions over a batch of rows: the calls an operator's
// expressions hold, each made once per batch, and each row's result handed to
// its node while the operator evaluates that row (see vectorized_call.h).
#include "common/python/vectorized_call.h"

#include "common/python/call_expr.h"

namespace rtsql {

using python_internal::PythonVectorizedCallExpr;

namespace {

// The innermost VectorizedBatch::RowScope of this thread.
thread_local const VectorizedBatch::RowScope* tScope = nullptr;

}  // namespace

namespace python_internal {

Value PythonVectorizedCallExpr::eval(const Row& row) const {
  if (const Value* v = VectorizedBatch::RowScope::find(this)) return *v;
  // Outside a batching operator (a SELECT without a flow): a batch of one.
  std::vector<std::vector<Value>> columns(args_.size());
  for (size_t i = 0; i < args_.size(); ++i) columns[i].push_back(args_[i]->eval(row));
  return std::move(fn_->callBatch(columns, 1).front());
}

}  // namespace python_internal

namespace {

// Depth first, children before their parent: a call inside another's arguments
// is computed, and so listed, first. A node shared by two parents is listed once.
void collectVectorizedCalls(const Expr& expr, std::vector<VectorizedCall>& out) {
  expr.forEachChild([&out](const Expr& child) { collectVectorizedCalls(child, out); });
  const auto* call = dynamic_cast<const PythonVectorizedCallExpr*>(&expr);
  if (!call) return;
  for (const VectorizedCall& c : out) {
    if (c.node == call) return;
  }
  out.push_back(VectorizedCall{call, call->function().name(), call->pos()});
}

}  // namespace

std::vector<VectorizedCall> vectorizedCallsIn(const Expr& expr) {
  std::vector<VectorizedCall> out;
  collectVectorizedCalls(expr, out);
  return out;
}

std::vector<VectorizedCall> vectorizedCallsIn(const std::vector<ExprPtr>& exprs) {
  std::vector<VectorizedCall> calls;
  for (const ExprPtr& e : exprs) {
    if (!e) continue;
    for (VectorizedCall& c : vectorizedCallsIn(*e)) {
      bool seen = false;
      for (const VectorizedCall& k : calls) seen = seen || k.node == c.node;
      if (!seen) calls.push_back(std::move(c));
    }
  }
  return calls;
}

void VectorizedBatch::evaluate(const std::vector<Row>& rows, size_t count) {
  results_.assign(calls_.size(), {});
  for (size_t k = 0; k < calls_.size(); ++k) {
    const auto& call = static_cast<const PythonVectorizedCallExpr&>(*calls_[k].node);
    // The arguments are computed before the GIL is taken, with rtsql's own
    // code; a call inside them reads the results computed before it.
    std::vector<std::vector<Value>> columns(call.args().size());
    for (auto& c : columns) c.resize(count);
    for (size_t i = 0; i < count; ++i) {
      RowScope scope(*this, i, k);
      for (size_t p = 0; p < call.args().size(); ++p) {
        call.args()[p]->evalInto(rows[i], columns[p][i]);
      }
    }
    results_[k] = call.function().callBatch(columns, count);
  }
}

VectorizedBatch::RowScope::RowScope(const VectorizedBatch& batch, size_t index, size_t known)
    : batch_(batch), index_(index), known_(known), outer_(tScope) {
  tScope = this;
}

VectorizedBatch::RowScope::~RowScope() {
  tScope = outer_;
}

const Value* VectorizedBatch::RowScope::find(const Expr* node) {
  for (const RowScope* s = tScope; s; s = s->outer_) {
    for (size_t k = 0; k < s->known_; ++k) {
      if (s->batch_.calls_[k].node == node) return &s->batch_.results_[k][s->index_];
    }
  }
  return nullptr;
}

}  // namespace rtsql
