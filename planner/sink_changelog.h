// What a flow's sink can write, against the changelog its query emits
// (planner/changelog.h), checked when the flow is planned so that a flow never
// starts only to meet a change its sink has no way to write.
//
// A sink's 'mode' option says how it writes a stream that is not append-only:
//   update  (the default) each key's latest row, as Spark's update mode: an
//           update is written as the new row, the old row is dropped. Nothing
//           can say that a row is gone, so a query that retracts rows is
//           refused;
//   append  only append-only queries: a query that updates rows is refused;
//   upsert  Kafka only: each row keyed by the query's unique key, an update as
//           the new row under its key, a delete as a tombstone (the key and a
//           null value), which is what a compacted topic or a Kafka table
//           reader keeps. A query without a unique key is refused.
// The debezium-json format writes every change, old row and new, and takes
// any query.
#pragma once

#include <cstddef>

#include "planner/physical_plan.h"

namespace rtsql {

// The sink's 'mode' option (SinkMode::Update when absent), as CREATE SINK
// reads it into SinkOptions::mode.
SinkMode sinkMode(const Options& options);

// The 'mode' CREATE SINK read (SinkSpec::parsed); SinkMode::Update for a
// sink without options (a live query's client).
SinkMode modeOf(const SinkSpec& sink);

// Whether the sink can write a retracting stream: deletes and old rows.
bool sinkWritesRetractions(const SinkSpec& sink);

// Refuses (0A000 at `pos`, the flow's query) a flow whose changelog
// (plan.output) its sink cannot write.
void checkSinkChangelog(const PhysicalPlan& plan, size_t pos);

}  // namespace rtsql
