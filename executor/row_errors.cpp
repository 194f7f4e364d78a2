// A flow's failed rows (see row_errors.h).
#include "executor/row_errors.h"

#include <fmt/format.h>

#include <utility>

#include "executor/metrics/owned_counter.h"
#include "executor/operators/operator.h"

namespace rtsql {

bool isRowDataError(const SqlError& e) {
  return e.sqlstate().starts_with("22") || e.sqlstate() == "P0001";
}

RowErrors::RowErrors(RowErrorPolicy policy, std::string flowName, FlowDeadLetterWriter* out)
    : policy_(policy), flow_(std::move(flowName)), out_(out) {
  if (policy_ == RowErrorPolicy::DeadLetter && !out_) {
    throw InternalError("'on.error' = 'dead-letter' without a writer");
  }
}

void RowErrors::add(const Operator* op, int id, std::vector<Schema> inputs) {
  sites_.push_back(Site{op, id, op->name(), std::move(inputs)});
}

bool RowErrors::take(const SqlError& e, const Operator& op, const Row& row, int input) {
  if (policy_ == RowErrorPolicy::Fail || !isRowDataError(e) || !op.errorsAreRows()) return false;
  if (policy_ == RowErrorPolicy::Skip) {
    addOwned<uint64_t>(skipped_);
    return true;
  }
  const Site* site = nullptr;
  for (const Site& s : sites_) {
    if (s.op == &op) site = &s;
  }
  if (!site || static_cast<size_t>(input) >= site->inputs.size()) {
    throw InternalError(
        fmt::format("a failed row at {}, an operator the task does not know", op.name()));
  }
  const std::string_view side =
      site->inputs.size() < 2 ? std::string_view() : (input == 0 ? "left" : "right");
  out_->writeError(
      row, site->inputs[static_cast<size_t>(input)],
      RowErrorOrigin{site->name, site->id, side, e.sqlstate(), e.message(), e.detail()});
  addOwned<uint64_t>(deadLettered_);
  return true;
}

bool takeRowError(RowErrors* errors, const SqlError& e, const Operator& op, const Row& row,
                  int input) {
  return errors && errors->take(e, op, row, input);
}

}  // namespace rtsql
