// Bounded queries: a SELECT whose every FROM name is a finite relation (a
// static table, planner/bounded_relation.h) or a Kafka source read FOR
// OFFSETS BETWEEN 'earliest' AND 'latest' (connectors/kafka/bounded_source.h)
// reads all of it and ends, so that
// ORDER BY, GROUP BY and a count finish (docs/sql.md, "Bounded queries").
// One engine with flows: the query is planned by the planner
// (planBoundedQuery) and run by a FlowRuntime with the flow operators; each
// relation's source task says when it has returned its last row, and once
// every one has, the run ends a final epoch, which flushes every stage to the
// client sink. That sink applies the result's changelog (an update replaces
// its key's row, a delete removes it, appended rows are kept as they come);
// then ORDER BY, OFFSET and LIMIT run over the collected rows. The result is
// held in memory up to `rtsql.bounded_max_rows` rows and
// `rtsql.bounded_max_bytes` bytes, and refused with 54000 above either. The run keeps no checkpoints; its state directory is removed at
// the end. A cancel, statement_timeout or the client leaving stops it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/pg_session.h"
#include "executor/connector_provider.h"
#include "executor/slot_pool.h"
#include "parser/ast.h"
#include "planner/bounded_relation.h"
#include "planner/catalog.h"
#include "planner/physical_plan.h"
#include "planner/planner.h"
#include "server/query_handler.h"

namespace rtsql {

using BoundedLookup = std::function<std::shared_ptr<const BoundedRelation>(const std::string&)>;

// The bounded relation `name` names in `catalog`, or null: a static table.
// Another kind of finite relation (a view's snapshot, a catalog relation)
// gets its case here.
std::shared_ptr<const BoundedRelation> boundedRelationOf(const Catalog& catalog,
                                                         const std::string& name);

// Whether `query` is bounded: each of its terms reads FROM, and every name
// it reads is a bounded relation (`lookup` answers it) or has a FOR OFFSETS
// BETWEEN range. A query that also reads a source as it grows is a live one
// (a source joined with a table).
// The lookup of a statement's bounded queries: `catalog`'s static tables,
// then what `others` finds (materialized views' snapshots; may be empty),
// then the catalog as PostgreSQL shows it to the session (`pg`, the
// statement's; may be null). All but static tables are made once, when first
// named (on the statement's thread: the query is checked and planned there
// before it runs), and kept for the run's own threads. `catalog` and `pg`
// must outlive the lookup.
BoundedLookup boundedLookupOf(const Catalog& catalog, const PgSession* pg, BoundedLookup others);

bool isBoundedQuery(const ast::Query& query, const BoundedLookup& lookup);

// `base` with its lookup of bounded relations: what planBoundedQuery takes.
PlanContext boundedPlanContext(PlanContext base, BoundedLookup lookup);

// `ctx` for `query`, which plans each of its operators as one task when it
// reads only the catalog as PostgreSQL shows it (psql's \d, drivers'
// metadata calls): a few hundred rows, joined seven ways by pgjdbc, which
// at the session's shuffle.partitions would take task slots by the dozen.
PlanContext catalogQueryContext(const ast::Query& query, const BoundedLookup& lookup,
                                PlanContext ctx);

// The columns a bounded query of `plan` returns: the query's own.
std::vector<ResultColumn> boundedQueryColumns(const PhysicalPlan& plan);

struct BoundedRun {
  ConnectorProvider* connectors = nullptr;
  SlotPool* slots = nullptr;
  BoundedLookup lookup;
  const Catalog* catalog = nullptr;  // user functions an ORDER BY expression calls
  std::string stateDir;              // a directory of its own is made beneath it
  std::string embeddedBootstrap;     // what a source's 'embedded' bootstrap is
  int64_t maxRows = 1'000'000;       // the most result rows held
  int64_t maxBytes = int64_t{1} << 30;  // the most bytes of result rows held (about)
};

// Runs `plan` (planned by planBoundedQuery from `query`) to the end of its
// input and sends its rows, sorted and cut by the query's ORDER BY and LIMIT,
// to `out`. Throws SqlError on a failure, 54000 when the result has more than
// run.maxRows rows or holds more than run.maxBytes, Interrupted when `out` is
// cancelled.
void runBoundedQuery(PhysicalPlan plan, const ast::Query& query, const BoundedRun& run,
                     ResultWriter& out);

// What runBoundedQuery sends: the result's rows (its visible columns), sorted
// and cut; `out` is asked only whether the statement is cancelled. INSERT
// INTO a source ... SELECT takes them (server/insert_into.h).
std::vector<Row> collectBoundedRows(PhysicalPlan plan, const ast::Query& query,
                                    const BoundedRun& run, const ResultWriter& out);

}  // namespace rtsql
