// Dead letters of a Kafka source (see dead_letter.h).
#include "connectors/kafka/dead_letter.h"

#include <fmt/format.h>

#include <utility>
#include <vector>

#include "common/error.h"
#include "common/schema.h"
#include "connectors/kafka/client.h"
#include "connectors/kafka/sink.h"

namespace rtsql::kafka {

namespace {

// Kafka's own rule for topic names: 1 to 249 of these characters, and
// neither "." nor "..".
bool validTopicName(std::string_view name) {
  if (name.empty() || name.size() > 249 || name == "." || name == "..") return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

// The raw sink a source's dead letters are written through: the record's
// value, key and headers as they were, to the dead-letter topic, with the
// source's `kafka.<name>` options (its cluster, its security settings).
SinkSpec deadLetterSink(const ScanSpec& scan, const std::string& topic) {
  SinkSpec sink;
  // The name keeps the dead-letter producer apart from the flow's sink's.
  sink.name = scan.name + " dead letters";
  sink.connector = "kafka";
  sink.format = "raw";
  std::vector<OptionEntry> entries;
  for (const OptionEntry& e : scan.options.entries()) {
    if (e.key.size() > 6 && iequals(std::string_view(e.key).substr(0, 6), "kafka.")) {
      entries.push_back(e);
    }
  }
  entries.push_back({"topic", topic});
  sink.options = Options(std::move(entries));
  DataTypePtr binary = DataType::of(TypeId::Binary);
  DataTypePtr header =
      DataType::structOf({{"key", DataType::of(TypeId::String)}, {"value", binary}});
  sink.input.columns = {{"value", binary, false},
                        {"key", binary, false},
                        {"headers", DataType::arrayOf(header), false}};
  sink.valueColumn = 0;
  sink.headersColumn = 2;
  return sink;
}

}  // namespace

bool writesDeadLetters(const Options& options) {
  return iequals(options.getString("on.error", "fail"), "dead-letter");
}

void validateDeadLetterOptions(const Options& options, size_t stmtPos) {
  const OptionEntry* topic = options.find(kDeadLetterTopicOption);
  if (writesDeadLetters(options)) {
    if (!topic) {
      const OptionEntry* onError = options.find("on.error");
      throw SqlError(sqlstate::kInvalidParameterValue,
                     "'on.error' = 'dead-letter' needs the option 'dead-letter.topic'",
                     onError ? onError->valuePos : stmtPos,
                     "add 'dead-letter.topic' = '<topic>': the topic on the source's cluster "
                     "that receives the records that cannot be decoded");
    }
  } else if (topic) {
    throw SqlError(sqlstate::kInvalidParameterValue,
                   "'dead-letter.topic' applies only with 'on.error' = 'dead-letter'",
                   topic->keyPos, "add 'on.error' = 'dead-letter', or drop 'dead-letter.topic'");
  } else {
    return;
  }
  if (topic->value.find_first_not_of(" \t") == std::string::npos) {
    throw SqlError(sqlstate::kInvalidParameterValue, "option 'dead-letter.topic' is empty",
                   topic->valuePos,
                   "name the topic that receives the records that cannot be decoded");
  }
  if (!validTopicName(topic->value)) {
    throw SqlError(sqlstate::kInvalidParameterValue,
                   fmt::format("'{}' is not a valid Kafka topic name", topic->value),
                   topic->valuePos,
                   "a topic name has 1 to 249 of the characters a-z, A-Z, 0-9, '.', '_' and '-'");
  }
  for (const std::string& read : splitTopics(options.getString("subscribe"))) {
    if (read == topic->value) {
      // A record that cannot be decoded would be read back, fail again and be
      // written again, for ever.
      throw SqlError(sqlstate::kInvalidParameterValue,
                     fmt::format("the dead-letter topic '{}' is one of the topics the source reads",
                                 topic->value),
                     topic->valuePos, "write dead letters to a topic of their own");
    }
  }
}

Headers deadLetterHeaders(Headers original, const DeadLetterOrigin& origin) {
  Headers out = std::move(original);
  out.emplace_back(kErrorHeader, std::string(origin.reason));
  out.emplace_back(kFlowHeader, std::string(origin.flow));
  out.emplace_back(kSourceHeader, std::string(origin.source));
  out.emplace_back(kTopicHeader, std::string(origin.topic));
  out.emplace_back(kPartitionHeader, std::to_string(origin.partition));
  out.emplace_back(kOffsetHeader, std::to_string(origin.offset));
  return out;
}

DeadLetterWriter::DeadLetterWriter(const ScanSpec& scan, const std::string& bootstrap,
                                   const std::string& flowName, int task)
    : source_(scan.name), flow_(flowName), topic_(scan.options.getString(kDeadLetterTopicOption)) {
  sink_ = makeKafkaSink(deadLetterSink(scan, topic_), bootstrap, flowName, task);
  row_.resize(3);
}

DeadLetterWriter::~DeadLetterWriter() = default;

void DeadLetterWriter::write(const rd_kafka_message_t* m, std::string_view topic,
                             std::string_view reason) {
  readHeaders(m, headers_);
  DeadLetterOrigin origin{reason, flow_, source_, topic, m->partition, m->offset};
  ValueList headers;
  for (auto& [name, value] : deadLetterHeaders(std::move(headers_), origin)) {
    headers.push_back(
        Value::structure({Value::string(std::move(name)), Value::binary(std::move(value))}));
  }
  // A record without a value (a tombstone) or without a key stays so.
  row_[0] = m->payload ? Value::binary(std::string(static_cast<const char*>(m->payload), m->len))
                       : Value();
  row_[1] =
      m->key ? Value::binary(std::string(static_cast<const char*>(m->key), m->key_len)) : Value();
  row_[2] = Value::array(std::move(headers));
  headers_.clear();
  sink_->write(row_, 0);
  count_.fetch_add(1, std::memory_order_relaxed);
}

void DeadLetterWriter::flush(int timeoutMs) {
  try {
    sink_->flush(timeoutMs);
  } catch (SqlError& e) {
    throw SqlError(
        e.sqlstate(),
        fmt::format("dead letters of source '{}' to topic '{}': {}", source_, topic_, e.message()),
        SqlError::npos, e.hint());
  }
}

}  // namespace rtsql::kafka
