// The Kafka sink: one producer per flow, shared by its sink tasks, tuned for
// latency (linger.ms 0.5 under load, none when rows are sparse; Nagle off) and
// for safety (acks=all, idempotence); two requests in flight per broker,
// which spares the client's thread a busy loop (sink.cpp, setProducerSafety).
// write() never waits for the broker; a full producer queue is backpressure
// (the task waits for room), never loss. flush() at epoch ends waits for the
// acknowledgement of every row the task wrote and reports delivery failures as
// a SqlError.
#pragma once

#include <memory>
#include <string>

#include "connectors/kafka/flow_ids.h"
#include "executor/connector_provider.h"

namespace rtsql {

// `bootstrap` is resolved (never 'embedded'). On the embedded broker the sink's
// topic is created at open when missing.
std::unique_ptr<SinkWriter> makeKafkaSink(const SinkSpec& sink, const std::string& bootstrap,
                                          const std::string& flowName, int task);

// How many Kafka producers sinks have open now (one per flow with a Kafka sink).
int kafkaSinkProducers();

// How many batches of rows sink tasks sent through their producer's prompt
// client (linger 0), which a producer uses while its rows come sparsely.
int64_t kafkaSinkPromptBatches();

// Exactly-once: the flow run's transactional producer (transactional.id
// ids.transactionalId(), connectors/kafka/flow_ids.h), and sink tasks that
// write through it. See SinkTransaction.
std::unique_ptr<SinkTransaction> makeKafkaSinkTransaction(const SinkSpec& sink,
                                                          const std::string& bootstrap,
                                                          const std::string& flowName,
                                                          const kafka::FlowKafkaIds& ids,
                                                          int64_t timeoutMs);
std::unique_ptr<SinkWriter> makeKafkaTransactionalSink(const SinkSpec& sink,
                                                       const std::string& bootstrap,
                                                       const std::string& flowName, int task,
                                                       SinkTransaction& transaction);

}  // namespace rtsql
