// /metrics: the server's flows in the Prometheus text exposition format 0.0.4.
//
// Every number comes from what SHOW FLOWS and SHOW PROGRESS report, so the
// metrics and the progress JSON never disagree. Progress describes epochs: the
// row counts and latency percentiles of a running flow are those of its epoch
// in progress (SHOW PROGRESS's top level), which start again from zero at every
// epoch, so they are gauges, not counters. Families, all labelled by flow:
//
//   rtsql_slots_total, rtsql_slots_used            the server's task slots
//   rtsql_flow_running, rtsql_flow_failed          1 or 0
//   rtsql_flow_slots                               slots the flow holds when running
//   rtsql_flow_epoch                               the epoch's id (batchId)
//   rtsql_flow_epoch_input_rows                    rows read in the epoch
//   rtsql_flow_epoch_output_rows                   rows written to the sink in the epoch
//   rtsql_flow_epoch_decode_errors                 records that could not be decoded
//   rtsql_flow_dead_letters                        records written to a dead-letter topic
//   rtsql_flow_row_errors{action}                  failed rows: skipped, dead_lettered
//   rtsql_flow_input_rows_per_second               the epoch's input rate
//   rtsql_flow_latency_ms{kind,quantile}           kind: processing, source_queuing, e2e
//   rtsql_flow_state_rows{operator,operator_id}    rows kept by a stateful operator
//   rtsql_flow_state_memory_bytes{operator,operator_id}
//   rtsql_flow_late_rows{operator,operator_id,action}  action: dropped, dead_lettered
//   rtsql_flow_source_lag_records                  latest offsets minus read offsets
//   rtsql_flow_watermark_seconds                   the event-time watermark (Unix time)
#pragma once

#include <string>
#include <string_view>

#include "server/http/source.h"

namespace rtsql::http {

inline constexpr const char* kMetricsContentType = "text/plain; version=0.0.4; charset=utf-8";

std::string renderMetrics(const Source& source);

// A label value as the exposition format quotes it: backslash, double quote
// and newline escaped.
std::string escapeLabelValue(std::string_view value);

}  // namespace rtsql::http
