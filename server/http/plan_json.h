// A physical plan as JSON, for GET /flows/<name>/plan and the web console's
// plan graph: the facts EXPLAIN prints (planner/explain.cpp), as fields rather
// than lines. Operators and changelogs are described by the same functions
// EXPLAIN calls, so the two never disagree.
//
//   {"flow", "sink": {"name","connector","format","topic"}, "checkpointIntervalMs",
//    "slots", "changelog": {"mode","text"},
//    "stages": [{"id","tasks","scan": {"name","connector","format","topic",
//                "partitions","watermark"} | null,
//                "operators": [{"id","text","changelog","changelogText","state"}],
//                "output": {"kind": "shuffle","targetStage","targetInput","keys":[...]}
//                        | {"kind": "exchange","topic","partitions","keys":[...],
//                           "targetStage","targetInput" (the copy's own rows, in process)}
//                        | {"kind": "sink"}}]}
#pragma once

#include <string>

#include "planner/physical_plan.h"

namespace rtsql::http {

std::string planJson(const PhysicalPlan& plan);

}  // namespace rtsql::http
