// Vectorized Python functions over a batch of rows: the calls an operator's
// expressions hold, the expressions rewritten to read each call's column, and
// each call made once per batch with its results appended to the rows (see
// vectorized_call.h).
#include "common/python/vectorized_call.h"

#include <unordered_map>

#include "common/python/call_expr.h"

namespace rtsql {

using python_internal::PythonVectorizedCallExpr;

namespace python_internal {

Value PythonVectorizedCallExpr::eval(const Row& row) const {
  // Outside a batching step (a SELECT without a flow): a batch of one.
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

VectorizedColumns vectorizedColumns(const std::vector<ExprPtr>& exprs, int inputColumns) {
  // Each call's column, filled in call order: an inner call has its column
  // before the call holding it is rewritten.
  std::unordered_map<const Expr*, ExprPtr> columns;
  auto asColumn = [&columns](const Expr& e) -> ExprPtr {
    auto it = columns.find(&e);
    return it == columns.end() ? nullptr : it->second;
  };
  VectorizedColumns out;
  for (const VectorizedCall& c : vectorizedCallsIn(exprs)) {
    const auto& call = static_cast<const PythonVectorizedCallExpr&>(*c.node);
    std::vector<ExprPtr> args;
    args.reserve(call.args().size());
    for (const ExprPtr& a : call.args()) args.push_back(replaceNodes(a, asColumn));
    out.calls.push_back(call.withChildren(std::move(args)));
    const int column = inputColumns + static_cast<int>(out.calls.size() - 1);
    columns.emplace(c.node, makeColumnRef(column, call.type(), call.toString()));
  }
  out.exprs.reserve(exprs.size());
  for (const ExprPtr& e : exprs) out.exprs.push_back(e ? replaceNodes(e, asColumn) : e);
  return out;
}

VectorizedBatch::VectorizedBatch(std::vector<ExprPtr> calls, int inputColumns)
    : calls_(std::move(calls)), inputColumns_(static_cast<size_t>(inputColumns)) {
  for (const ExprPtr& c : calls_) {
    if (!dynamic_cast<const PythonVectorizedCallExpr*>(c.get())) {
      throw InternalError("a VectorizedBatch call that is not a vectorized Python call: " +
                          c->toString());
    }
  }
}

void VectorizedBatch::appendResults(std::vector<Row>& rows, size_t count) const {
  for (size_t i = 0; i < count; ++i) rows[i].resize(inputColumns_ + calls_.size());
  for (size_t k = 0; k < calls_.size(); ++k) {
    const auto& call = static_cast<const PythonVectorizedCallExpr&>(*calls_[k]);
    // The arguments are computed before the GIL is taken, with rtsql's own
    // code; a call inside them reads the column appended before it.
    std::vector<std::vector<Value>> columns(call.args().size());
    for (auto& c : columns) c.resize(count);
    for (size_t i = 0; i < count; ++i) {
      for (size_t p = 0; p < call.args().size(); ++p) {
        call.args()[p]->evalInto(rows[i], columns[p][i]);
      }
    }
    std::vector<Value> results = call.function().callBatch(columns, count);
    for (size_t i = 0; i < count; ++i) rows[i][inputColumns_ + k] = std::move(results[i]);
  }
}

}  // namespace rtsql
