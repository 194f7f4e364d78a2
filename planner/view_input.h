// A materialized view named in the FROM of a flow or of another view: the
// flow reads the view's changelog (executor/state/view_changelog.h), its rows
// as of a checkpoint and then every change after it, as a source of its own.
// The source is a changelog (retractions), keyed by the view's key, so
// aggregates over it, joins of it with a stream, and views over it keep the
// right rows through the view's updates and deletes.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "planner/catalog.h"
#include "planner/physical_plan.h"
#include "planner/planner.h"

namespace rtsql {

// The connector and format of a scan of a view's changelog: read by the
// server (server/views/view_inputs.h), not a connector of the registry.
inline constexpr const char* kViewChangelogConnector = "view";
inline constexpr const char* kViewChangelogFormat = "changelog";
// The scan's option holding the view's key columns ("0,2"), for the
// changelog derivation (planner/changelog.h).
inline constexpr const char* kViewKeyOption = "view.key";

// The source that reads view `view`'s changelog: its columns are the view's,
// as its query plans now with `ctx`.
std::shared_ptr<const SourceDef> viewInputSource(const FlowDef& view, const PlanContext& ctx);

// The key columns of a scan of a view's changelog; nullopt for any other scan.
std::optional<std::vector<int>> viewInputKey(const ScanSpec& scan);

}  // namespace rtsql
