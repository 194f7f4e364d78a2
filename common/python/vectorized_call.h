// Vectorized Python functions over a batch of rows (LANGUAGE PYTHON
// VECTORIZED, see function.h): the vectorized calls an operator's expressions
// hold, those expressions rewritten to read each call's result as a column,
// and the batch that calls each function once over the rows and appends its
// results to them as that column.
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

// An operator's expressions with their vectorized calls made columns: call k
// (in vectorizedCallsIn() order) is column `inputColumns + k` of the row the
// operator reads, appended by a VectorizedBatch over `calls`.
struct VectorizedColumns {
  // The calls, each with the calls inside its arguments already columns (an
  // inner call is appended, so read, before the call that holds it).
  std::vector<ExprPtr> calls;
  // The operator's expressions, each call replaced by a reference to its
  // column named by the call's text, so that EXPLAIN reads as written.
  std::vector<ExprPtr> exprs;
};
VectorizedColumns vectorizedColumns(const std::vector<ExprPtr>& exprs, int inputColumns);

// Calls each of the VectorizedColumns' calls once over a batch of rows and
// appends its results to the rows as its column. Holds no state between
// batches; used by one task thread at a time.
class VectorizedBatch {
 public:
  VectorizedBatch(std::vector<ExprPtr> calls, int inputColumns);

  // Makes the first `count` of `rows` `inputColumns` wide plus one column per
  // call, then calls each function once over them, in order (a call whose
  // arguments hold another reads that call's column).
  void appendResults(std::vector<Row>& rows, size_t count) const;
  void appendResults(std::vector<Row>& rows) const { appendResults(rows, rows.size()); }

 private:
  std::vector<ExprPtr> calls_;
  size_t inputColumns_;
};

}  // namespace rtsql
