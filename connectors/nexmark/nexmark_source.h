// The nexmark source: one of the three Nexmark streams (person, auction, bid)
// made by the Nexmark generator (generator.h) inside the server, so that a
// Nexmark query can run with no broker and its cost is the engine's alone.
//
//   CREATE SOURCE bid (auction BIGINT, bidder BIGINT, price BIGINT, channel STRING,
//                      url STRING, date_time TIMESTAMP, extra STRING,
//                      WATERMARK FOR date_time AS date_time - INTERVAL '2' SECOND)
//   WITH (connector = 'nexmark', 'nexmark.table' = 'bid', events = '1000000');
//
// The generator's event sequence is split into `partitions` partitions:
// partition p of P holds the events n = k*P + p, and its offset k counts them,
// so an offset names a position in the generator, recorded in checkpoints and
// restored by seek() like a Kafka offset. A source reads only the events of its
// table (the others are passed over, with their offsets), so the sources of
// the three tables in one flow see one consistent event sequence: the same ids,
// the same event times. 'events' bounds the sequence (all kinds together, as the
// Nexmark project counts events); when every partition has reached it the
// source delivers nothing more.
#pragma once

#include <memory>

#include "common/options.h"
#include "common/schema.h"
#include "executor/connector_provider.h"
#include "parser/ast.h"
#include "planner/physical_plan.h"

namespace rtsql {

// Throws SqlError 22023 at the offending option's value (at `stmtPos` for a
// missing 'nexmark.table'): an unknown key, a table other than person, auction
// or bid, a negative or non-integer count or rate, a base time that is not a
// timestamp, partitions outside [1, 1024].
void validateNexmarkOptions(const Options& options, size_t stmtPos);

// The columns of the source: the declared ones, each of which must be a field
// of the table with the field's type (42703 at an unknown column, 42804 at a
// wrong type), or all of the table's fields when none is declared.
Schema bindNexmarkSchema(const ast::CreateSource& stmt, const Options& options);

// The options validateNexmarkOptions accepted, read for the plan to carry
// (SourceOptions::own): NexmarkConnector::parseSource.
std::shared_ptr<const ConnectorOptions> parseNexmarkOptions(const Options& options);

// 'partitions' as CREATE SOURCE read it, 1 by default.
int nexmarkPartitions(const ScanSpec& scan);

// Source task `task` of `tasks`, reading the partitions p with p % tasks == task.
std::unique_ptr<SourceTask> makeNexmarkSource(const ScanSpec& scan, int task, int tasks);

}  // namespace rtsql
