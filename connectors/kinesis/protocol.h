// The Kinesis Data Streams API as rtsql speaks it: JSON bodies over HTTP
// POST, the action named by the X-Amz-Target header ("Kinesis_20131202.
// GetRecords"), content type application/x-amz-json-1.1. This file builds
// the request bodies of the four actions the source uses (ListShards,
// GetShardIterator, GetRecords, DescribeStreamSummary) and reads their
// answers and the service's error answers. It does no I/O: client.h sends
// the bodies, source.cpp decides what to ask.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace rtsql::kinesis {

// The X-Amz-Target prefix of every action.
inline constexpr std::string_view kTargetPrefix = "Kinesis_20131202.";
inline constexpr std::string_view kContentType = "application/x-amz-json-1.1";

// An answer that is not the JSON the action returns.
class ProtocolError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One shard as ListShards lists it. A shard with an ending sequence number is
// closed: it was split or merged, and its children take its keys from then on.
struct Shard {
  std::string id;
  std::string parent;          // ParentShardId, empty for none
  std::string adjacentParent;  // AdjacentParentShardId (the other shard of a merge)
  bool closed = false;         // SequenceNumberRange.EndingSequenceNumber is set
};

// Where a shard iterator starts.
struct StartAt {
  enum class Kind {
    TrimHorizon,
    Latest,
    AtTimestamp,
    AfterSequenceNumber
  } kind = Kind::TrimHorizon;
  int64_t timestampMillis = 0;  // AtTimestamp
  std::string sequenceNumber;   // AfterSequenceNumber
};

struct Record {
  std::string sequenceNumber;
  std::string partitionKey;
  std::string data;            // the record's bytes, base64 decoded
  int64_t arrivalMicros = -1;  // ApproximateArrivalTimestamp, -1 when absent
};

struct RecordsPage {
  std::vector<Record> records;
  // Empty when the shard is closed and every record of it was returned.
  std::string nextIterator;
  int64_t millisBehindLatest = -1;
};

// A service error: the exception's short name ("ResourceNotFoundException",
// without the "com.amazonaws...#" prefix some answers carry) and its message.
struct ServiceError {
  std::string type;
  std::string message;
};

std::string listShardsBody(std::string_view stream, std::string_view nextToken);
std::string shardIteratorBody(std::string_view stream, std::string_view shardId, const StartAt& at);
std::string getRecordsBody(std::string_view iterator, int64_t limit);
std::string describeStreamSummaryBody(std::string_view stream);

// ListShards' shards, and its NextToken (empty on the last page) in
// `nextToken`. Throws ProtocolError.
std::vector<Shard> parseListShards(std::string_view body, std::string& nextToken);
// GetShardIterator's ShardIterator. Throws ProtocolError.
std::string parseShardIterator(std::string_view body);
// GetRecords' records (Data decoded), NextShardIterator and
// MillisBehindLatest. Throws ProtocolError.
RecordsPage parseGetRecords(std::string_view body);
// DescribeStreamSummary's StreamStatus ("ACTIVE", "CREATING", ...).
std::string parseStreamStatus(std::string_view body);
// An error answer's __type and message; a body that is not one gives an
// empty type and the start of the body as the message.
ServiceError parseServiceError(std::string_view body);

// The number at the end of a shard id ("shardId-000000000007" is 7): shards
// are numbered in the order the stream made them, so the number is stable
// for the life of the stream and names the shard's source partition. -1 when
// the id does not end in digits or the number does not fit an int32.
int32_t shardNumber(std::string_view shardId);

// Whether a service error is worth trying again after a pause: throttling,
// the service being busy or failing inside, a limit on the account.
bool isRetryable(std::string_view errorType, int httpStatus);

}  // namespace rtsql::kinesis
