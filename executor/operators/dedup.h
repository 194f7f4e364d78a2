// Dedup: `SELECT DISTINCT ON (keys) ...`, the streaming drop-duplicates. The
// first row of each key passes unchanged; later rows with the same key are
// dropped. NULL key values form a key like any other (NULLs are equal here).
//
// Without WITHIN WATERMARK a key is remembered forever. With it, a key is
// remembered together with the event time of its first row and forgotten once
// the watermark reaches that time, so a later row with the same key passes
// again; rows whose event time is already below the watermark are late:
// dropped, or written out with the flow's 'late.rows' (StatefulOperator::late).
#pragma once

#include <memory>

#include "executor/operators/operator.h"
#include "executor/state/state_store.h"
#include "planner/physical_plan.h"

namespace rtsql {

// Uses spec.dedupKeys, spec.withinWatermark and spec.eventTime.
OperatorPtr makeDedup(const DedupSpec& spec, std::unique_ptr<StateTable> state);

}  // namespace rtsql
