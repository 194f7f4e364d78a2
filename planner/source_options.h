// A source's WITH options as its connector read them once, at CREATE SOURCE
// (Connector::parseSource): the settings the planner, the executor and the
// server act on, typed. The catalog keeps the text for SHOW and durability;
// the code that runs a source reads this instead of looking options up again.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "planner/connector_options.h"
#include "planner/row_error_policy.h"

namespace rtsql {

// The settings a source's format decodes by, each at its default when not set
// (format::decodeOptions).
struct DecodeOptions {
  char csvDelimiter = ',';         // 'csv.delimiter'
  bool jsonIgnoreMissing = true;   // 'json.ignore-missing': a missing field is NULL
  bool avroConfluent = false;      // 'avro.framing' = 'confluent'
  bool protobufConfluent = false;  // 'protobuf.framing' = 'confluent'
};

struct SourceOptions {
  // 'on.error': what the source does with a record it cannot decode.
  RowErrorPolicy onError = RowErrorPolicy::Fail;
  // A Kafka source's 'subscribe', split at its commas: the topics it reads,
  // by which its partitions' progress is told from another source's. Empty
  // for a source that reads no topics.
  std::vector<std::string> topics;
  // A Kafka source's 'startingOffsets' = 'earliest': a reader without a
  // committed position starts at the oldest record rather than the next.
  bool fromEarliest = false;
  // 'failOnDataLoss' (connectors/restore_position.h): whether a restored
  // position the source no longer holds fails the flow.
  bool failOnDataLoss = true;
  // 'maxPartitions': at most this many tasks read the source; 0 when it is
  // not set (a task per partition).
  int maxPartitions = 0;
  // With 'on.error' = 'dead-letter': the Kafka topic that receives the
  // records that cannot be decoded ('dead-letter.topic'), and its cluster
  // ('dead-letter.kafka.bootstrap.servers'; empty for a Kafka source, which
  // writes them to its own cluster with its own settings).
  std::string deadLetterTopic = {};
  std::string deadLetterBootstrap = {};
  // A Kafka source's 'kafka.group.id' is set: its positions are committed
  // to the user's consumer group, never to the flow's.
  bool userGroup = false;
  // How its records are decoded.
  DecodeOptions decode = {};
  // The connector's own settings (planner/connector_options.h), or null when
  // it has none to carry.
  std::shared_ptr<const ConnectorOptions> own = nullptr;
};

}  // namespace rtsql
