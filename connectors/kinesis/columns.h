// The columns of a Kinesis source. With format 'raw' they are Spark's
// Kinesis columns, fixed: data BINARY, streamName STRING, partitionKey
// STRING, sequenceNumber STRING, approximateArrivalTimestamp TIMESTAMP and
// shardId STRING. With any other format they are the declared (or the
// schema's) columns decoded from `data`, followed by the same record
// metadata as hidden columns named with a leading underscore
// (_partitionKey, ...), which SELECT * leaves out, as a Kafka source's _key.
#pragma once

#include "common/schema.h"
#include "parser/ast.h"

namespace rtsql::kinesis {

enum class MetaColumn {
  None,
  Data,
  StreamName,
  PartitionKey,
  SequenceNumber,
  ArrivalTimestamp,
  ShardId
};

// Which metadata a column of the source's schema holds: for a raw source
// every column, for the others only the hidden columns above.
MetaColumn metaColumnOf(const Column& column, bool raw);

// The source's schema for `format`; `payload` holds the columns decoded
// from the data (declared, or derived from an Avro or Protobuf schema).
// Throws SqlError 22023 for declared columns with format 'raw', 42701 for a
// payload column named like a hidden one.
Schema bindKinesisSchema(const ast::CreateSource& stmt, const std::string& format, Schema payload);

}  // namespace rtsql::kinesis
