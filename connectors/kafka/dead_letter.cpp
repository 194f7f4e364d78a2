// Dead letters of a source (see dead_letter.h).
#include "connectors/kafka/dead_letter.h"

#include <fmt/format.h>

#include <utility>
#include <vector>

#include "common/error.h"
#include "common/json.h"
#include "common/kafka_topic_name.h"
#include "common/schema.h"
#include "connectors/kafka/client.h"
#include "connectors/kafka/sink.h"
#include "connectors/registry.h"
#include "planner/flow_dead_letters.h"
#include "planner/row_error_policy.h"

namespace rtsql::kafka {

namespace {

// The raw sink dead letters are written through: a value, a key and headers,
// to the dead-letter topic, with the `kafka.<name>` options of `options` (a
// source's: its cluster, its security settings).
SinkSpec deadLetterSink(std::string name, const Options& options, const std::string& topic) {
  SinkSpec sink;
  // The name keeps the dead-letter producer apart from the flow's sink's.
  sink.name = std::move(name);
  sink.connector = "kafka";
  sink.format = "raw";
  std::vector<OptionEntry> entries;
  for (const OptionEntry& e : options.entries()) {
    if (e.key.size() > 6 && iequals(std::string_view(e.key).substr(0, 6), "kafka.")) {
      entries.push_back(e);
    }
  }
  entries.push_back({"topic", topic});
  sink.options = Options(std::move(entries));
  SinkOptions parsed;
  parsed.topic = topic;
  sink.parsed = std::make_shared<const SinkOptions>(std::move(parsed));
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

void validateDeadLetterOptions(const Options& options, size_t stmtPos, bool ownCluster) {
  const OptionEntry* topic = options.find(kDeadLetterTopicOption);
  const OptionEntry* bootstrap = ownCluster ? nullptr : options.find(kDeadLetterBootstrapOption);
  const char* where = ownCluster ? "the topic on the source's cluster" : "the Kafka topic";
  if (parseRowErrorPolicy(options) == RowErrorPolicy::DeadLetter) {
    if (!topic) {
      const OptionEntry* onError = options.find(kOnErrorOption);
      throw SqlError(sqlstate::kInvalidParameterValue,
                     "'on.error' = 'dead-letter' needs the option 'dead-letter.topic'",
                     onError ? onError->valuePos : stmtPos,
                     fmt::format("add 'dead-letter.topic' = '<topic>': {} that receives the "
                                 "records that cannot be decoded",
                                 where));
    }
  } else {
    for (const OptionEntry* e : {topic, bootstrap}) {
      if (!e) continue;
      throw SqlError(sqlstate::kInvalidParameterValue,
                     fmt::format("'{}' applies only with 'on.error' = 'dead-letter'", e->key),
                     e->keyPos,
                     fmt::format("add 'on.error' = 'dead-letter', or drop '{}'", e->key));
    }
    return;
  }
  if (topic->value.find_first_not_of(" \t") == std::string::npos) {
    throw SqlError(sqlstate::kInvalidParameterValue, "option 'dead-letter.topic' is empty",
                   topic->valuePos,
                   "name the topic that receives the records that cannot be decoded");
  }
  if (!validKafkaTopicName(topic->value)) {
    throw SqlError(sqlstate::kInvalidParameterValue,
                   fmt::format("'{}' is not a valid Kafka topic name", topic->value),
                   topic->valuePos, kKafkaTopicNameHint);
  }
  if (!ownCluster &&
      (!bootstrap || bootstrap->value.find_first_not_of(" \t") == std::string::npos)) {
    throw SqlError(sqlstate::kInvalidParameterValue,
                   fmt::format("'on.error' = 'dead-letter' needs the option '{}': the source has "
                               "no Kafka cluster of its own",
                               kDeadLetterBootstrapOption),
                   bootstrap ? bootstrap->valuePos : options.find(kOnErrorOption)->valuePos,
                   fmt::format("add '{}' = 'host:port' (or 'embedded', the server's own broker): "
                               "the Kafka cluster of 'dead-letter.topic'",
                               kDeadLetterBootstrapOption));
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

Options deadLetterKafkaOptions(const std::string& bootstrap) {
  return Options(std::vector<OptionEntry>{{"kafka.bootstrap.servers", bootstrap}});
}

Headers kafkaPosition(std::string_view topic, int32_t partition, int64_t offset) {
  return {{kTopicHeader, std::string(topic)},
          {kPartitionHeader, std::to_string(partition)},
          {kOffsetHeader, std::to_string(offset)}};
}

Headers kinesisPosition(std::string_view stream, std::string_view shard,
                        std::string_view sequenceNumber) {
  return {{kStreamHeader, std::string(stream)},
          {kShardHeader, std::string(shard)},
          {kSequenceNumberHeader, std::string(sequenceNumber)}};
}

Headers deadLetterHeaders(Headers original, const DeadLetterOrigin& origin) {
  Headers out = std::move(original);
  out.emplace_back(kErrorHeader, std::string(origin.reason));
  out.emplace_back(kFlowHeader, std::string(origin.flow));
  out.emplace_back(kSourceHeader, std::string(origin.source));
  for (const auto& h : origin.where) out.push_back(h);
  return out;
}

namespace {

// The headers a late or failed row starts with: the reason, the flow, the
// operator and, for a join's row, its side.
template <typename Origin>
Headers operatorRowHeaders(std::string_view reason, std::string_view flow, const Origin& origin) {
  Headers out;
  out.emplace_back(kErrorHeader, std::string(reason));
  out.emplace_back(kFlowHeader, std::string(flow));
  out.emplace_back(kOperatorHeader, std::string(origin.operatorName));
  out.emplace_back(kOperatorIdHeader, std::to_string(origin.operatorId));
  if (!origin.input.empty()) out.emplace_back(kInputHeader, std::string(origin.input));
  return out;
}

}  // namespace

Headers lateRowHeaders(std::string_view flow, const LateRowOrigin& origin) {
  Headers out = operatorRowHeaders(kLateReason, flow, origin);
  out.emplace_back(kEventTimeHeader, formatTimestamp(origin.eventTimeMicros, true));
  out.emplace_back(kWatermarkHeader, formatTimestamp(origin.watermarkMicros, true));
  return out;
}

Headers rowErrorHeaders(std::string_view flow, const RowErrorOrigin& origin) {
  Headers out = operatorRowHeaders(kErrorReason, flow, origin);
  out.emplace_back(kSqlstateHeader, std::string(origin.sqlstate));
  out.emplace_back(kMessageHeader, std::string(origin.message));
  if (!origin.detail.empty()) out.emplace_back(kDetailHeader, std::string(origin.detail));
  return out;
}

DeadLetterWriter::DeadLetterWriter(const ScanSpec& scan, const Options& kafkaOptions,
                                   const std::string& bootstrap, const std::string& flowName,
                                   int task)
    : what_(fmt::format("dead letters of source '{}'", scan.name)),
      source_(scan.name),
      flow_(flowName),
      topic_(sourceOptionsOf(scan).deadLetterTopic) {
  sink_ = makeKafkaSink(deadLetterSink(scan.name + " dead letters", kafkaOptions, topic_),
                        bootstrap, flowName, task);
  row_.resize(3);
}

DeadLetterWriter::DeadLetterWriter(std::string what, const Options& kafkaOptions, std::string topic,
                                   const std::string& bootstrap, const std::string& flowName,
                                   int task)
    : what_(std::move(what)), flow_(flowName), topic_(std::move(topic)) {
  sink_ = makeKafkaSink(deadLetterSink(what_, kafkaOptions, topic_), bootstrap, flowName, task);
  row_.resize(3);
}

DeadLetterWriter::~DeadLetterWriter() = default;

void DeadLetterWriter::write(const rd_kafka_message_t* m, std::string_view topic,
                             std::string_view reason) {
  readHeaders(m, headers_);
  DeadLetterOrigin origin{reason, flow_, source_, kafkaPosition(topic, m->partition, m->offset)};
  Headers headers = deadLetterHeaders(std::move(headers_), origin);
  headers_.clear();
  // A record without a value (a tombstone) or without a key stays so.
  write(m->payload ? Value::binary(std::string(static_cast<const char*>(m->payload), m->len))
                   : Value(),
        m->key ? Value::binary(std::string(static_cast<const char*>(m->key), m->key_len)) : Value(),
        std::move(headers));
}

void DeadLetterWriter::writeRecord(Value value, Value key, std::string_view reason, Headers where) {
  DeadLetterOrigin origin{reason, flow_, source_, std::move(where)};
  write(std::move(value), std::move(key), deadLetterHeaders({}, origin));
}

void DeadLetterWriter::write(Value value, Value key, Headers headers) {
  ValueList list;
  list.reserve(headers.size());
  for (auto& [name, v] : headers) {
    list.push_back(Value::structure({Value::string(std::move(name)), Value::binary(std::move(v))}));
  }
  row_[0] = std::move(value);
  row_[1] = std::move(key);
  row_[2] = Value::array(std::move(list));
  sink_->write(row_, 0);
  count_.fetch_add(1, std::memory_order_relaxed);
}

void DeadLetterWriter::flush(int timeoutMs) {
  try {
    sink_->flush(timeoutMs);
  } catch (SqlError& e) {
    throw SqlError(e.sqlstate(), fmt::format("{} to topic '{}': {}", what_, topic_, e.message()),
                   SqlError::npos, e.hint());
  }
}

namespace {

// A flow's late rows or failed rows: each as the JSON object of its columns,
// no key.
class KafkaFlowDeadLetterWriter final : public FlowDeadLetterWriter {
 public:
  KafkaFlowDeadLetterWriter(const PhysicalPlan& plan, FlowDeadLetters which,
                            const std::string& embeddedBootstrap, int task)
      : flow_(plan.flowName) {
    const bool late = which == FlowDeadLetters::LateRows;
    const FlowDeadLetterOptions& options = late ? kLateRowsDeadLetters : kRowErrorsDeadLetters;
    // The topic and cluster CREATE FLOW read.
    const FlowDeadLetterTopic& target = late ? plan.lateRowsTopic : plan.rowErrorsTopic;
    Options kafkaOptions = flowDeadLetterKafkaOptions(plan, target);
    out_ = std::make_unique<DeadLetterWriter>(
        fmt::format("{} of flow '{}'", options.shortRows, plan.flowName), kafkaOptions,
        target.topic, resolveBootstrap(kafkaOptions, embeddedBootstrap), plan.flowName, task);
  }

  void writeLate(const Row& row, const Schema& schema, const LateRowOrigin& origin) override {
    out_->write(Value::binary(rowToJson(row, schema)), Value(), lateRowHeaders(flow_, origin));
  }
  void writeError(const Row& row, const Schema& schema, const RowErrorOrigin& origin) override {
    out_->write(Value::binary(rowToJson(row, schema)), Value(), rowErrorHeaders(flow_, origin));
  }
  void flush(int timeoutMs) override { out_->flush(timeoutMs); }

 private:
  std::string flow_;
  std::unique_ptr<DeadLetterWriter> out_;
};

}  // namespace

std::unique_ptr<FlowDeadLetterWriter> openFlowDeadLetterWriter(const PhysicalPlan& plan,
                                                               FlowDeadLetters which,
                                                               const std::string& embeddedBootstrap,
                                                               int task) {
  return std::make_unique<KafkaFlowDeadLetterWriter>(plan, which, embeddedBootstrap, task);
}

}  // namespace rtsql::kafka
