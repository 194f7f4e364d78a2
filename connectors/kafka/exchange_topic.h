// A sharded flow's exchange (executor/exchange.h) on Kafka: the writer a front
// task sends its rows and markers through, and the source task a back reads
// its partition of the exchange topic with.
//
// The topic lives on the cluster's Kafka, with one partition per copy of the
// flow, time-based retention of a week and the broker's append time as each
// message's timestamp (so rows that carry old source timestamps are neither
// refused nor removed early). Whichever side opens first creates it.
//
// The writer is one idempotent producer per front task with the gapless
// guarantee: each partition gets the task's messages in order and without a
// hole, which is what lets the back tell a repeat from a new row. It is tuned
// for latency as the Kafka sink is (connectors/kafka/sink.h); a delivery that
// failed, or the producer's fatal error, fails the next send() or flush().
//
// The source reads its partitions with a fixed assignment, from the start of
// the topic or from the checkpointed offset and position token (seek()). Each
// partition has its ExchangeReceiver: rows it has taken before are dropped,
// markers make the watermark the task takes (ownWatermark()). Positions live
// in the flow's checkpoint only; nothing is committed to Kafka.
#pragma once

#include <memory>
#include <string>

#include "executor/connector_provider.h"
#include "executor/exchange.h"
#include "planner/physical_plan.h"

namespace rtsql::kafka {

// Front task `task`'s writer into `spec.topic` on `spec.bootstrap` (resolved,
// never 'embedded'). Creates the topic when missing; throws SqlError 08006
// when it cannot be had, 55000 when it has fewer partitions than the flow's
// copies.
std::unique_ptr<ExchangeOut> makeExchangeWriter(const ExchangeSpec& spec,
                                                const std::string& flowName, int task);

// The back's source task over the partitions p of `scan.exchange.topic` that
// `scan.share.reads(p)`, whose rows have the columns of `scan.schema`. Creates
// the topic as the writer does.
std::unique_ptr<SourceTask> makeExchangeSource(const ScanSpec& scan, const std::string& flowName);

}  // namespace rtsql::kafka
