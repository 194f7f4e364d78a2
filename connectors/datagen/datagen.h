// The datagen source: rows made up on the spot at a fixed rate, so a flow can
// run with nothing else installed (the demo and the quick start use it). Each
// column is filled by its type unless `fields.<column>.*` options say otherwise.
//
//   CREATE SOURCE orders (id BIGINT, user_id STRING, amount DOUBLE, ts TIMESTAMP)
//   WITH (connector = 'datagen', 'rows-per-second' = '100',
//         'fields.id.kind' = 'sequence', 'fields.id.start' = '1',
//         'fields.user_id.values' = 'alice,bob,carol',
//         'fields.amount.min' = '1', 'fields.amount.max' = '5000');
//
// The rate is the total over all source tasks. Each task paces itself against
// the clock: it hands out the rows that are due and otherwise waits, never spins.
// Rows are deterministic per task (seeded by `seed` and the task number), so a
// test can rely on what it gets.
#pragma once

#include <memory>

#include "common/options.h"
#include "common/schema.h"
#include "executor/connector_provider.h"
#include "planner/connector_options.h"
#include "planner/physical_plan.h"

namespace rtsql {

// Throws SqlError 22023 (at the offending option's value, else at `stmtPos`) for
// unknown option keys, a rate below 1, a negative row count, and bad field
// options. With a schema, `fields.<column>` must also name one of its columns
// and the field options must fit the column's type.
void validateDatagenOptions(const Options& options, size_t stmtPos);
void validateDatagenOptions(const Options& options, const Schema& schema, size_t stmtPos);

// The options validateDatagenOptions accepted, read for the plan to carry
// (SourceOptions::own): DatagenConnector::parseSource.
std::shared_ptr<const ConnectorOptions> parseDatagenOptions(const Options& options);

// Source task `task` of `tasks`, generating by the options CREATE SOURCE read.
std::unique_ptr<SourceTask> makeDatagenSource(const ScanSpec& scan, int task, int tasks);

}  // namespace rtsql
