// The Kinesis source: one SourceTask per group of shards. A shard's source
// partition is the number its id ends with (protocol.h, shardNumber), and
// task `task` of `tasks` reads the shards whose number is `task` modulo
// `tasks`, those open when the flow starts and those a reshard opens later.
//
// A task polls each readable shard with GetRecords at most once per
// 'kinesis.pollInterval' (200 ms by default: a shard serves five GetRecords
// a second, and one consumer at that pace never meets the limit), so the
// interval is the latency floor of the source. A shard is readable when its
// parents were read to their end (lineage.h); the tasks of a flow run share
// which shards they drained, so a child waits for a parent another task reads.
//
// Positions are the shards' sequence numbers: each shard's resume token
// (PartitionProgress::position) is checkpointed at every epoch, and a restored
// flow asks for an iterator AFTER_SEQUENCE_NUMBER of the last record the
// checkpoint covers. The tokens are:
//   trim          the shard's oldest record (TRIM_HORIZON)
//   at:<millis>   records that arrived at or after that time (AT_TIMESTAMP)
//   after:<seq>   the records after sequence number <seq>
//   end           the shard is closed and was read to its end
// endOffset counts the records read from the shard since the flow first
// started, so that the progress JSON shows numbers.
#pragma once

#include <memory>
#include <string>

#include "connectors/kinesis/client.h"
#include "connectors/kinesis/protocol.h"
#include "executor/connector_provider.h"
#include "planner/connector_options.h"

namespace rtsql::kinesis {

// The source's options, read once (validated at CREATE SOURCE).
struct SourceConfig {
  std::string stream;
  ClientConfig client;
  std::string startingPosition = "LATEST";  // TRIM_HORIZON | LATEST | AT_TIMESTAMP
  int64_t startingTimestampMillis = 0;      // AT_TIMESTAMP
  int64_t pollIntervalMicros = 200'000;
  int64_t maxRecordsPerFetch = 10000;
};

// The source's options as CREATE SOURCE read them (KinesisConnector::
// parseSource; SourceOptions::own): the configuration with only the
// credentials the options give, and which they give.
struct KinesisOptions final : ConnectorOptions {
  SourceConfig config;
  bool accessKeyId = false;   // 'kinesis.accessKeyId' is set
  bool secretKey = false;     // 'kinesis.secretKey' is set
  bool sessionToken = false;  // 'kinesis.sessionToken' is set
};

// Reads `options` (the ones validateSource accepted).
KinesisOptions parseKinesisOptions(const Options& options);

// The configuration a task opens with: `options`, and the AWS_* environment
// variables, read now, for credentials the options do not give (keys from
// the options never take the environment's session token).
SourceConfig sourceConfig(const KinesisOptions& options);
SourceConfig sourceConfig(const Options& options);

// The shards of the stream, every page of ListShards. Throws SqlError 08006
// when the endpoint cannot be reached, 42704 when the stream does not exist,
// 28000 when the service refuses the credentials.
std::vector<Shard> listAllShards(Client& client, const std::string& stream);

// Open shards of the stream (at least 1): how many source tasks read it.
int kinesisSourcePartitions(const ScanSpec& scan);

// `embeddedBootstrap` is what 'dead-letter.kafka.bootstrap.servers' =
// 'embedded' means on this server (kafka/dead_letter.h).
std::unique_ptr<SourceTask> makeKinesisSource(const ScanSpec& scan, const std::string& flowName,
                                              int task, int tasks,
                                              const std::string& embeddedBootstrap);

}  // namespace rtsql::kinesis
