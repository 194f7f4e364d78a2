// Request bodies and answer parsing of the Kinesis API (see protocol.h).
#include "connectors/kinesis/protocol.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <cmath>

#include "common/json.h"
#include "connectors/format/decode_util.h"

namespace rtsql::kinesis {

namespace {

namespace dom = simdjson::dom;

std::string jsonText(std::string_view s) {
  std::string out;
  appendJsonString(out, s);
  return out;
}

dom::element parse(dom::parser& parser, std::string_view body, std::string_view action) {
  dom::element root;
  if (parser.parse(body.data(), body.size()).get(root) != simdjson::SUCCESS || !root.is_object()) {
    throw ProtocolError(
        fmt::format("the answer to {} is not a JSON object ({} bytes)", action, body.size()));
  }
  return root;
}

// A string field, or empty when it is absent or null; ProtocolError when it
// is of another type.
std::string stringField(dom::element object, std::string_view key, std::string_view action) {
  dom::element v;
  if (object[key].get(v) != simdjson::SUCCESS || v.is_null()) return {};
  std::string_view s;
  if (v.get(s) != simdjson::SUCCESS) {
    throw ProtocolError(fmt::format("the answer to {} has a {} that is not a string", action, key));
  }
  return std::string(s);
}

}  // namespace

std::string listShardsBody(std::string_view stream, std::string_view nextToken) {
  // With NextToken the stream must not be named again.
  if (!nextToken.empty()) return "{\"NextToken\":" + jsonText(nextToken) + "}";
  return "{\"StreamName\":" + jsonText(stream) + "}";
}

std::string shardIteratorBody(std::string_view stream, std::string_view shardId,
                              const StartAt& at) {
  std::string body = "{\"StreamName\":" + jsonText(stream) + ",\"ShardId\":" + jsonText(shardId);
  switch (at.kind) {
    case StartAt::Kind::TrimHorizon:
      body += ",\"ShardIteratorType\":\"TRIM_HORIZON\"";
      break;
    case StartAt::Kind::Latest:
      body += ",\"ShardIteratorType\":\"LATEST\"";
      break;
    case StartAt::Kind::AtTimestamp:
      // Seconds since the epoch, with the milliseconds as a fraction.
      body += fmt::format(",\"ShardIteratorType\":\"AT_TIMESTAMP\",\"Timestamp\":{}.{:03}",
                          at.timestampMillis / 1000, at.timestampMillis % 1000);
      break;
    case StartAt::Kind::AfterSequenceNumber:
      body += ",\"ShardIteratorType\":\"AFTER_SEQUENCE_NUMBER\",\"StartingSequenceNumber\":" +
              jsonText(at.sequenceNumber);
      break;
  }
  return body + "}";
}

std::string getRecordsBody(std::string_view iterator, int64_t limit) {
  return fmt::format("{{\"ShardIterator\":{},\"Limit\":{}}}", jsonText(iterator), limit);
}

std::string describeStreamSummaryBody(std::string_view stream) {
  return "{\"StreamName\":" + jsonText(stream) + "}";
}

std::vector<Shard> parseListShards(std::string_view body, std::string& nextToken) {
  dom::parser parser;
  dom::element root = parse(parser, body, "ListShards");
  nextToken = stringField(root, "NextToken", "ListShards");
  dom::array shards;
  if (root["Shards"].get(shards) != simdjson::SUCCESS) {
    throw ProtocolError("the answer to ListShards has no Shards list");
  }
  std::vector<Shard> out;
  for (dom::element s : shards) {
    if (!s.is_object())
      throw ProtocolError("the answer to ListShards lists a shard that is no object");
    Shard shard;
    shard.id = stringField(s, "ShardId", "ListShards");
    if (shard.id.empty())
      throw ProtocolError("the answer to ListShards lists a shard without ShardId");
    shard.parent = stringField(s, "ParentShardId", "ListShards");
    shard.adjacentParent = stringField(s, "AdjacentParentShardId", "ListShards");
    dom::element range;
    if (s["SequenceNumberRange"].get(range) == simdjson::SUCCESS && range.is_object()) {
      shard.closed = !stringField(range, "EndingSequenceNumber", "ListShards").empty();
    }
    out.push_back(std::move(shard));
  }
  return out;
}

std::string parseShardIterator(std::string_view body) {
  dom::parser parser;
  dom::element root = parse(parser, body, "GetShardIterator");
  std::string it = stringField(root, "ShardIterator", "GetShardIterator");
  if (it.empty()) throw ProtocolError("the answer to GetShardIterator has no ShardIterator");
  return it;
}

RecordsPage parseGetRecords(std::string_view body) {
  dom::parser parser;
  dom::element root = parse(parser, body, "GetRecords");
  RecordsPage page;
  page.nextIterator = stringField(root, "NextShardIterator", "GetRecords");
  int64_t behind = 0;
  if (root["MillisBehindLatest"].get(behind) == simdjson::SUCCESS) page.millisBehindLatest = behind;
  dom::array records;
  if (root["Records"].get(records) != simdjson::SUCCESS) {
    throw ProtocolError("the answer to GetRecords has no Records list");
  }
  for (dom::element r : records) {
    if (!r.is_object())
      throw ProtocolError("the answer to GetRecords holds a record that is no object");
    Record rec;
    rec.sequenceNumber = stringField(r, "SequenceNumber", "GetRecords");
    if (rec.sequenceNumber.empty()) {
      throw ProtocolError("the answer to GetRecords holds a record without SequenceNumber");
    }
    rec.partitionKey = stringField(r, "PartitionKey", "GetRecords");
    if (!format::decodeBase64(stringField(r, "Data", "GetRecords"), rec.data)) {
      throw ProtocolError(
          fmt::format("the record {} has Data that is not base64", rec.sequenceNumber));
    }
    // Seconds since the epoch, a JSON number with a fraction.
    double seconds = 0;
    dom::element ts;
    if (r["ApproximateArrivalTimestamp"].get(ts) == simdjson::SUCCESS &&
        ts.get(seconds) == simdjson::SUCCESS && std::isfinite(seconds) && seconds >= 0 &&
        seconds < 1e11) {
      rec.arrivalMicros = static_cast<int64_t>(std::llround(seconds * 1000.0)) * 1000;
    }
    page.records.push_back(std::move(rec));
  }
  return page;
}

std::string parseStreamStatus(std::string_view body) {
  dom::parser parser;
  dom::element root = parse(parser, body, "DescribeStreamSummary");
  dom::element summary;
  if (root["StreamDescriptionSummary"].get(summary) != simdjson::SUCCESS || !summary.is_object()) {
    throw ProtocolError("the answer to DescribeStreamSummary has no StreamDescriptionSummary");
  }
  return stringField(summary, "StreamStatus", "DescribeStreamSummary");
}

ServiceError parseServiceError(std::string_view body) {
  ServiceError e;
  dom::parser parser;
  dom::element root;
  if (parser.parse(body.data(), body.size()).get(root) != simdjson::SUCCESS || !root.is_object()) {
    e.message = format::shortText(body);
    return e;
  }
  std::string_view s;
  if (root["__type"].get(s) == simdjson::SUCCESS) {
    size_t hash = s.rfind('#');
    e.type = std::string(hash == std::string_view::npos ? s : s.substr(hash + 1));
  }
  // The service writes "message"; some answers say "Message".
  if (root["message"].get(s) == simdjson::SUCCESS || root["Message"].get(s) == simdjson::SUCCESS) {
    e.message = std::string(s);
  }
  return e;
}

int32_t shardNumber(std::string_view shardId) {
  size_t i = shardId.size();
  while (i > 0 && shardId[i - 1] >= '0' && shardId[i - 1] <= '9') --i;
  if (i == shardId.size()) return -1;
  int64_t n = 0;
  for (size_t k = i; k < shardId.size(); ++k) {
    n = n * 10 + (shardId[k] - '0');
    if (n > INT32_MAX) return -1;
  }
  return static_cast<int32_t>(n);
}

bool isRetryable(std::string_view errorType, int httpStatus) {
  return errorType == "ProvisionedThroughputExceededException" ||
         errorType == "LimitExceededException" || errorType == "KMSThrottlingException" ||
         errorType == "ThrottlingException" || errorType == "InternalFailure" ||
         errorType == "ServiceUnavailable" || httpStatus >= 500 || httpStatus == 429;
}

}  // namespace rtsql::kinesis
