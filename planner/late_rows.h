// 'late.rows': what a flow does with a row that reaches a stateful operator
// below the watermark, when the operator can no longer take it (a window
// already closed, a join bound the watermark passed, a dedup key forgotten).
// 'drop' (the default) drops and counts it (numRowsDroppedByWatermark);
// 'dead-letter' writes it as JSON to 'late.rows.topic' on a Kafka cluster
// (connectors/kafka/dead_letter.h) and counts it (numLateRowsDeadLettered).
//
// The cluster is the flow's sink's when the sink is Kafka; any other sink
// names one with 'late.rows.kafka.bootstrap.servers'
// (planner/flow_dead_letters.h, shared with 'on.error'). This file holds the
// option names, CREATE FLOW's checks of them, and which operators see late
// rows.
#pragma once

#include <cstddef>

#include "common/options.h"
#include "planner/flow_dead_letters.h"
#include "planner/physical_plan.h"

namespace rtsql {

struct SinkDef;

inline constexpr const char* kLateRowsOption = kLateRowsDeadLetters.mode;
inline constexpr const char* kLateRowsTopicOption = kLateRowsDeadLetters.topic;
inline constexpr const char* kLateRowsBootstrapOption = kLateRowsDeadLetters.bootstrap;

// Whether the flow's 'late.rows' is 'dead-letter'.
bool deadLettersLateRows(const Options& flowOptions);

// Whether the operator drops rows below the watermark: a window (tumbling,
// sliding or session), DISTINCT ON ... WITHIN WATERMARK, a stream-stream
// join with a time bound.
bool seesLateRows(const OperatorSpec& op);

// CREATE FLOW: 'late.rows' is 'drop' or 'dead-letter'; 'dead-letter' needs
// 'late.rows.topic', a cluster (a Kafka sink, or
// 'late.rows.kafka.bootstrap.servers' with any other sink, and only then),
// and an operator that sees late rows; the other two options need
// 'dead-letter'. SqlError 22023 at the option, with a hint.
void checkLateRows(const PhysicalPlan& plan, const SinkDef& sink, const Options& flowOptions);

}  // namespace rtsql
