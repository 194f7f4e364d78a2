#include "executor/operators/factory.h"

#include "executor/operators/aggregate.h"
#include "executor/operators/broadcast_join.h"
#include "executor/operators/dedup.h"
#include "executor/operators/filter.h"
#include "executor/operators/project.h"
#include "executor/operators/stream_join.h"
#include "executor/state/state_store.h"

namespace rtsql {

bool isStateful(const OperatorSpec& spec) {
  return spec.kind == OperatorKind::Aggregate || spec.kind == OperatorKind::Dedup ||
         spec.kind == OperatorKind::StreamJoin;
}

OperatorPtr makeOperator(const OperatorSpec& spec, StateStore* store, int task) {
  auto table = [&] {
    if (!store) throw InternalError("stateful operator without a state store");
    return store->table(spec.id, task);
  };
  switch (spec.kind) {
    case OperatorKind::Filter: return makeFilter(spec.predicate);
    case OperatorKind::Project: return makeProject(spec.exprs);
    case OperatorKind::BroadcastJoin: return makeBroadcastJoin(spec);
    case OperatorKind::Aggregate: return makeAggregate(spec, table());
    case OperatorKind::Dedup: return makeDedup(spec, table());
    case OperatorKind::StreamJoin: return makeStreamJoin(spec, table());
  }
  throw InternalError("unknown operator kind");
}

}  // namespace rtsql
