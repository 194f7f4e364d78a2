// The executor's side of a flow's 'on.error' (planner/row_errors.h): what a
// task does with a row whose evaluation failed with a data error.
//
// Where the error is caught decides what state it may leave behind. Each
// operator hands a row to the next one through Operator::emit(), which
// catches the error the next operator raises for that row; the task catches
// it for its first operator. So the error is taken at the boundary of the
// operator that failed: that operator's row is dropped (or dead-lettered),
// and the operators before it go on as if the row had been passed on, their
// state whole. The failing operator itself has not changed its state for the
// row: aggregates, joins and dedup evaluate a row's expressions before they
// touch state, and a Python processor's call changes state only once it
// returned (executor/operators/transform.cpp). Rows it emitted before it
// failed (a join's first matches) stay emitted: delivery is at least once.
//
// With 'fail' no task has a RowErrors and every error fails the flow, as an
// error that is not of class 22 does with any policy. The record path costs
// the same either way: the try blocks cost nothing until something throws.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "common/error.h"
#include "common/schema.h"
#include "common/value.h"
#include "executor/connector_provider.h"
#include "planner/row_errors.h"

namespace rtsql {

class Operator;

// Whether `e` is a data error of the row being evaluated: SQLSTATE class 22,
// or P0001, the user's own (raise_error(), assert_true()).
bool isRowDataError(const SqlError& e);

// One task's policy for failed rows. Used from the task's thread, except
// skipped() and deadLettered(), which any thread may read.
class RowErrors {
 public:
  // `out` receives the rows with 'dead-letter'; the task owns it.
  RowErrors(RowErrorPolicy policy, std::string flowName, FlowDeadLetterWriter* out);

  // An operator of the task: its plan id (-1 for the sink or shuffle writer)
  // and the schema of each of its inputs (a join's left, then right).
  void add(const Operator* op, int id, std::vector<Schema> inputs);

  // Error `e` was raised while `op` took `row` on input `input` (1: a join's
  // right side). True when the row is skipped or dead-lettered and the flow
  // goes on; false when the error fails the flow (not a data error).
  bool take(const SqlError& e, const Operator& op, const Row& row, int input);

  uint64_t skipped() const { return skipped_.load(std::memory_order_relaxed); }
  uint64_t deadLettered() const { return deadLettered_.load(std::memory_order_relaxed); }

 private:
  struct Site {
    const Operator* op;
    int id;
    std::string name;
    std::vector<Schema> inputs;
  };

  RowErrorPolicy policy_;
  std::string flow_;
  FlowDeadLetterWriter* out_;
  std::vector<Site> sites_;
  std::atomic<uint64_t> skipped_{0};
  std::atomic<uint64_t> deadLettered_{0};
};

// What Operator::emit() and the task call when a push threw: `errors` (none
// with 'fail') takes the error, or it fails the flow (false: rethrow).
bool takeRowError(RowErrors* errors, const SqlError& e, const Operator& op, const Row& row,
                  int input);

}  // namespace rtsql
