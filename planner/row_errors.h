// 'on.error' of a flow: what the flow does with a row whose evaluation fails
// with a data error in one of its operators (SQLSTATE class 22, or P0001 from
// raise_error() and assert_true()): an exception in a Python function or
// processor (with its traceback), a cast that fails, a value out of range.
//   'fail' (the default)  the flow fails, as any error fails it;
//   'skip'                the row is dropped, counted (numRowErrorsSkipped),
//                         and the flow goes on;
//   'dead-letter'         the row is written as JSON to 'dead-letter.topic'
//                         (connectors/kafka/dead_letter.h), counted
//                         (numRowErrorsDeadLettered), and the flow goes on.
// The topic's cluster is the Kafka sink's, or the one
// 'dead-letter.kafka.bootstrap.servers' names for any other sink
// (planner/flow_dead_letters.h). Other errors (internal ones, I/O, a batch of
// a vectorized function) fail the flow whatever the option says. The
// executor's side is executor/row_errors.h.
#pragma once

#include "common/options.h"
#include "planner/flow_dead_letters.h"
#include "planner/row_error_policy.h"

namespace rtsql {

struct SinkDef;

inline constexpr const char* kRowErrorsTopicOption = kRowErrorsDeadLetters.topic;
inline constexpr const char* kRowErrorsBootstrapOption = kRowErrorsDeadLetters.bootstrap;

// CREATE FLOW: 'on.error' is 'fail', 'skip' or 'dead-letter'; 'dead-letter'
// needs 'dead-letter.topic' and a cluster, and those options need it.
// SqlError 22023 at the option, with a hint.
void checkRowErrors(const SinkDef& sink, const Options& flowOptions);

}  // namespace rtsql
