// Live queries: `SELECT ... FROM <source> [LIMIT n]` runs as a temporary flow
// whose sink is the client's connection. Rows reach the client as they are
// produced; LIMIT, a cancel request or a disconnect ends the flow and frees its
// slots. The temporary flow commits no offsets, so it leaves no trace in the
// source's consumer groups. A Kafka source read from the latest offsets is
// read through the server's live taps (connectors/kafka/tap.h): one consumer
// for all the live queries of that source.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "executor/connector_provider.h"
#include "executor/slot_pool.h"
#include "planner/physical_plan.h"
#include "server/query_handler.h"

namespace rtsql {

class KafkaTaps;

// Runs `plan` (whose sink connector is "client") until `limit` rows were sent
// (no limit when empty) or the client cancels. Streams the rows to `out` and
// completes with "SELECT n". Throws SqlError when the flow cannot start or
// fails, with the SQLSTATE of the failure.
void runLiveQuery(PhysicalPlan plan, std::optional<int64_t> limit, ConnectorProvider& connectors,
                  KafkaTaps& taps, SlotPool& slots, const std::string& stateDir,
                  ResultWriter& out);

// The columns a live query of `plan` returns: the query's own, after a first
// column "op" ("+I", "-U", "+U", "-D": each row's change) when its changelog
// retracts rows (PhysicalPlan::output is retract).
std::vector<ResultColumn> liveQueryColumns(const PhysicalPlan& plan);

}  // namespace rtsql
