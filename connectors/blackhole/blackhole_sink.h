// The blackhole sink: counts the rows a flow writes and drops them, so that a
// flow's cost can be measured without any output system (the Nexmark engine
// runs, bench/nexmark/nexmark_engine.sh).
//
//   CREATE SINK nowhere WITH (connector = 'blackhole');
//
// A write is one counter update by the task's own thread. The description in
// progress is `Blackhole[rows=N]`, N the rows every sink task of the flow run
// has dropped so far, beside the epoch's numOutputRows that every sink has.
#pragma once

#include <memory>
#include <string>

#include "common/options.h"
#include "executor/connector_provider.h"
#include "planner/physical_plan.h"

namespace rtsql {

// Throws SqlError 22023 at an unknown option's key: 'connector' is the only
// option.
void validateBlackholeOptions(const Options& options, size_t stmtPos);

// Sink task `task` of flow `flowName`. The tasks of one flow run that write
// the same sink share the count their description shows.
std::unique_ptr<SinkWriter> makeBlackholeSink(const SinkSpec& sink, const std::string& flowName,
                                              int task);

}  // namespace rtsql
