#include "executor/operators/factory.h"

#include "executor/operators/aggregate.h"
#include "executor/operators/analytic_window.h"
#include "executor/operators/broadcast_join.h"
#include "executor/operators/dedup.h"
#include "executor/operators/expand.h"
#include "executor/operators/filter.h"
#include "executor/operators/over_aggregate.h"
#include "executor/operators/project.h"
#include "executor/operators/stream_join.h"
#include "executor/operators/top_n.h"
#include "executor/operators/transform.h"
#include "executor/operators/vectorized_batch.h"
#include "executor/state/state_store.h"

namespace rtsql {

namespace {

// One callable made of several lambdas, for std::visit.
template <typename... Fs>
struct Overloaded : Fs... {
  using Fs::operator()...;
};
template <typename... Fs>
Overloaded(Fs...) -> Overloaded<Fs...>;

}  // namespace

OperatorPtr makeOperator(const OperatorSpec& spec, StateStore* store, int task) {
  auto table = [&] {
    if (!store) throw InternalError("stateful operator without a state store");
    return store->table(spec.id(), task);
  };
  // One line per kind, and no catch-all: a kind without a line here does not
  // compile.
  OperatorPtr op = std::visit(
      Overloaded{
          [](const FilterSpec& s) { return makeFilter(s); },
          [](const ProjectSpec& s) { return makeProject(s); },
          [](const BroadcastJoinSpec& s) { return makeBroadcastJoin(s); },
          [&](const AggregateSpec& s) { return makeAggregate(s, table()); },
          [&](const DedupSpec& s) { return makeDedup(s, table()); },
          [&](const StreamJoinSpec& s) { return makeStreamJoin(s, table()); },
          [&](const TopNSpec& s) { return makeTopN(s, table()); },
          [&](const OverAggregateSpec& s) {
            return s.analytic.empty() ? makeOverAggregate(s, table())
                                      : makeAnalyticWindow(s, table());
          },
          [](const VectorizedBatchSpec& s) { return makeVectorizedBatch(s); },
          [&](const TransformSpec& s) { return makeTransform(s, table()); },
          [](const ExpandSpec& s) { return makeExpand(s); },
      },
      spec.kind());
  // The plan decides from the spec which operators get state and checkpoint
  // barriers; an operator that is built otherwise would lose its state.
  if (op->stateful() != spec.stateful()) {
    throw InternalError(op->name() + ": the operator and its spec disagree about keeping state");
  }
  return op;
}

}  // namespace rtsql
