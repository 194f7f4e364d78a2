// AnalyticWindow: a bounded query's analytic functions OVER one window,
// `f(...) OVER (PARTITION BY k ORDER BY o [frame])`, with Spark's semantics:
// the ranking functions (row_number, rank, dense_rank, percent_rank,
// cume_dist, ntile), the offset functions (lag, lead, with an offset, a
// default and IGNORE NULLS), the values of a frame (first_value, last_value,
// nth_value) and aggregates over any frame Spark takes (ROWS or RANGE,
// bounds before or after the current row).
//
// A bounded query's input is finite, and every one of these functions may
// depend on rows after the current one, so the operator collects its input
// and computes the functions once it is complete: at the end of an epoch
// (the run's final epoch carries every row), each partition that took rows
// since the last epoch is sorted by the order keys (equal keys keep their
// arrival order; ASC puts NULL first, DESC last, as Spark) and every row of
// it emitted with its values. Should a run end an earlier epoch, a partition
// changed since then is emitted again: its earlier rows are deleted first, so
// the output retracts. A retracted input row (UpdateBefore, Delete) is taken
// out of its partition.
//
// The rows are kept in memory, not in the state table: a bounded query holds
// its whole result in memory anyway (rtsql.bounded_max_rows bounds it), and
// this operator's output has as many rows as its input. It keeps no state
// across a restart; a flow never plans it.
#pragma once

#include <memory>

#include "executor/operators/operator.h"
#include "executor/state/state_store.h"
#include "planner/physical_plan.h"

namespace rtsql {

// Uses spec.partitionKeys, orderKeys, descending, analytic and the output
// schema (the input row's columns, then one per analytic call). `state` is
// the table every stateful operator is given; it stays empty.
OperatorPtr makeAnalyticWindow(const OverAggregateSpec& spec, std::unique_ptr<StateTable> state);

}  // namespace rtsql
