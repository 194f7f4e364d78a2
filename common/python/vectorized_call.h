// Vectorized Python functions over a batch of rows (LANGUAGE PYTHON
// VECTORIZED, see function.h): the vectorized calls an operator's expressions
// hold, and the batch that calls each once over the operator's rows and then
// gives each row's node its result.
#pragma once

#include <string>
#include <vector>

#include "common/expr.h"
#include "common/value.h"

namespace rtsql {

// A vectorized call found in an expression: its node, the function's name and
// the call's place in the statement.
struct VectorizedCall {
  const Expr* node = nullptr;
  std::string function;
  size_t pos = SqlError::npos;
};

// The vectorized calls in `expr` (found through Expr::forEachChild), inner
// calls before the calls whose arguments hold them, each once.
std::vector<VectorizedCall> vectorizedCallsIn(const Expr& expr);
// The same over several expressions (an operator's), each call once.
std::vector<VectorizedCall> vectorizedCallsIn(const std::vector<ExprPtr>& exprs);

// Evaluates the vectorized calls of an operator's expressions over a batch of
// rows, then lets the operator evaluate its expressions row by row with each
// call's result for that row. Used by one task thread at a time.
class VectorizedBatch {
 public:
  explicit VectorizedBatch(std::vector<VectorizedCall> calls) : calls_(std::move(calls)) {}

  // Calls each function once over the first `count` of `rows`, in order (a
  // call whose arguments hold another call sees that call's results).
  void evaluate(const std::vector<Row>& rows, size_t count);
  void evaluate(const std::vector<Row>& rows) { evaluate(rows, rows.size()); }

  // While alive, the calls' nodes evaluated on this thread give their results
  // for row `index` of the last evaluate(). Scopes nest (a batching operator
  // after another one); the innermost that knows a node answers for it.
  class RowScope {
   public:
    RowScope(const VectorizedBatch& batch, size_t index)
        : RowScope(batch, index, batch.calls_.size()) {}
    ~RowScope();
    RowScope(const RowScope&) = delete;
    RowScope& operator=(const RowScope&) = delete;

    // The result for this row of `node` when this scope or an outer one
    // knows it, else null.
    static const Value* find(const Expr* node);

   private:
    friend class VectorizedBatch;
    // Only the first `known` calls have results (evaluate() in progress).
    RowScope(const VectorizedBatch& batch, size_t index, size_t known);

    const VectorizedBatch& batch_;
    size_t index_;
    size_t known_;
    const RowScope* outer_;
  };

  const std::vector<VectorizedCall>& calls() const { return calls_; }

 private:
  std::vector<VectorizedCall> calls_;
  std::vector<std::vector<Value>> results_;  // per call, per row
};

}  // namespace rtsql
