// VectorizedBatch: the step before a Filter or Project that calls a vectorized
// Python function. It keeps the rows the task takes together and, at the end
// of that batch, calls each vectorized function once over them (one GIL
// acquisition per function and batch), appends each call's results to the
// rows as a column, then passes the rows on in their order, each with its own
// RecordContext; the next operator reads the columns where it was written to
// call the functions (the planner rewrote the calls, see VectorizedBatchSpec).
//
// The batch ends where the task says so (onBatchEnd: a poll's records, a
// shuffle inbox), and also before a watermark or an epoch end is passed on, so
// that rows stay ahead of the watermark and inside the epoch they came in; it
// is cut at VectorizedBatchSpec::kMaxVectorizedBatchRows rows, which bounds the
// memory kept and the delay of its first row.
#pragma once

#include "executor/operators/operator.h"
#include "planner/operator_spec.h"

namespace rtsql {

OperatorPtr makeVectorizedBatch(const VectorizedBatchSpec& spec);

}  // namespace rtsql
