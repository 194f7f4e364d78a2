// A flow's dead-letter topics: where the rows go that a flow sets aside
// instead of processing, each under an option of its own ('late.rows' for
// rows below the watermark, planner/late_rows.h; 'on.error' for rows whose
// evaluation failed, planner/row_errors.h). Both write to a Kafka topic: on
// the cluster of the flow's sink when the sink is Kafka (its `kafka.<name>`
// options, security settings included), or on the cluster a
// '<prefix>.kafka.bootstrap.servers' option names when it is not. This file
// holds the checks both options share and the producer settings they use;
// connectors/kafka/dead_letter.h writes the rows.
#pragma once

#include "common/options.h"
#include "planner/physical_plan.h"
#include "planner/row_error_policy.h"

namespace rtsql {

struct SinkDef;

// One of a flow's dead-letter topics, as its options name it.
struct FlowDeadLetterOptions {
  const char* mode;       // "late.rows"
  const char* value;      // "'late.rows' = 'dead-letter'", as the messages quote it
  const char* topic;      // "late.rows.topic"
  const char* bootstrap;  // "late.rows.kafka.bootstrap.servers"
  const char* rows;       // "the rows that arrive below the watermark", for hints
  const char* shortRows;  // "late rows"
};

inline constexpr FlowDeadLetterOptions kLateRowsDeadLetters{
    "late.rows",
    "'late.rows' = 'dead-letter'",
    "late.rows.topic",
    "late.rows.kafka.bootstrap.servers",
    "the rows that arrive below the watermark",
    "late rows"};
inline constexpr FlowDeadLetterOptions kRowErrorsDeadLetters{kOnErrorOption,
                                                             "'on.error' = 'dead-letter'",
                                                             "dead-letter.topic",
                                                             "dead-letter.kafka.bootstrap.servers",
                                                             "the rows whose evaluation fails",
                                                             "failed rows"};

// CREATE FLOW, with `which.mode` = 'dead-letter' when `deadLetters`: the topic
// is named and not empty, and the cluster is the Kafka sink's or (any other
// sink, and only then) `which.bootstrap`'s. Without 'dead-letter' neither the
// topic nor the bootstrap option applies. SqlError 22023 at the option, with a
// hint.
void checkFlowDeadLetters(const FlowDeadLetterOptions& which, bool deadLetters, const SinkDef& sink,
                          const Options& flowOptions);

// The topic and cluster `which` names in `flowOptions` (checked by
// checkFlowDeadLetters), read once for the plan to carry; empty without
// 'dead-letter'.
FlowDeadLetterTopic readFlowDeadLetterTopic(const FlowDeadLetterOptions& which, bool deadLetters,
                                            const Options& flowOptions);

// The `kafka.<name>` options of the producer that writes `target`, one of
// the flow's dead-letter topics: the Kafka sink's, or `target.bootstrap` as
// 'kafka.bootstrap.servers'.
Options flowDeadLetterKafkaOptions(const PhysicalPlan& plan, const FlowDeadLetterTopic& target);

}  // namespace rtsql
