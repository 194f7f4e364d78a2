// CREATE OR REPLACE FLOW and its EXPLAIN: a running flow's query changed
// with its state carried over, as the state plan (planner/state_plan.h)
// says. The running plan ends its epoch and checkpoints; the catalog then
// records the new statement together with the state migration, so that
// every start of the new plan (this one, or one after a crash or restart)
// restores that checkpoint through it (executor/flow_state_migration.cpp).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "planner/state_plan.h"

namespace rtsql {

// The flow control setting that holds a replaced flow's pending migration.
inline constexpr const char* kStateMigrationSetting = "rtsql.state_migration";

// The migration a flow's settings hold, if any.
std::optional<StateMigration> storedStateMigration(
    const std::vector<std::pair<std::string, std::string>>& settings);

}  // namespace rtsql
