// KafkaConnector (see kafka_connector.h): the Kafka source's and sink's option
// checks, schema and task factories.
#include "connectors/kafka/kafka_connector.h"

#include <fmt/format.h>

#include "common/error.h"
#include "connectors/format/avro_schema.h"
#include "connectors/format/decoders.h"
#include "connectors/format/protobuf_schema.h"
#include "connectors/kafka/client.h"
#include "connectors/kafka/dead_letter.h"
#include "connectors/kafka/fetch_rate.h"
#include "connectors/kafka/flow_ids.h"
#include "connectors/kafka/sink.h"
#include "connectors/kafka/sink_topic.h"
#include "connectors/kafka/source.h"
#include "connectors/restore_position.h"
#include "connectors/schema_registry/schema_registry.h"
#include "planner/planner.h"

namespace rtsql {

namespace {

void requireNonEmptyList(const Options& options, const char* key, size_t stmtPos) {
  const OptionEntry& e = options.require(key, stmtPos);
  if (e.value.find_first_not_of(" \t,") == std::string::npos) {
    throw SqlError(sqlstate::kInvalidParameterValue, fmt::format("option '{}' is empty", key),
                   e.valuePos);
  }
}

// The protobuf options: the descriptor file and message are required with
// format 'protobuf' and refused without it. Whether the file holds the message
// is checked where the file is read (bindSourceSchema, validateSink). With a
// schema registry, which gives the schemas, only 'protobuf.message' applies
// (checked by validateRegistryOptions).
void validateProtobufOptions(const Options& options, const std::string& format, size_t stmtPos) {
  if (format == "protobuf") {
    if (schema_registry::hasRegistry(options)) return;
    options.require("protobuf.descriptor", stmtPos);
    options.require("protobuf.message", stmtPos);
    options.getEnum("protobuf.framing", "none", {"none", "confluent"});
    return;
  }
  for (const char* key : {"protobuf.descriptor", "protobuf.message", "protobuf.framing"}) {
    if (const OptionEntry* e = options.find(key)) {
      throw SqlError(sqlstate::kInvalidParameterValue,
                     fmt::format("option '{}' applies to format 'protobuf'", key), e->keyPos,
                     "set format = 'protobuf', or drop the option");
    }
  }
}

// The schema registry's options: with formats 'avro' and 'protobuf' only,
// where they replace the inline schema and its framing options (every value
// is framed, and the id names its schema).
void validateRegistryOptions(const Options& options, const std::string& format) {
  if (!schema_registry::hasRegistry(options)) {
    for (const std::string& key : schema_registry::registryOptionKeys()) {
      if (options.has(key)) schema_registry::registryConfig(options);  // names the key
    }
    return;
  }
  const OptionEntry* url = options.find(schema_registry::kUrlOption);
  if (format != "avro" && format != "protobuf") {
    throw SqlError(
        sqlstate::kFeatureNotSupported,
        fmt::format("'{}' applies to formats 'avro' and 'protobuf'", schema_registry::kUrlOption),
        url->keyPos, "set format = 'avro' or 'protobuf', or drop the option");
  }
  for (const char* key :
       {"avro.schema", "avro.framing", "protobuf.descriptor", "protobuf.framing"}) {
    if (const OptionEntry* e = options.find(key)) {
      throw SqlError(sqlstate::kInvalidParameterValue,
                     fmt::format("option '{}' does not go with '{}': the schema registry gives "
                                 "each value's schema, and every value is framed with its id",
                                 key, schema_registry::kUrlOption),
                     e->keyPos, fmt::format("drop '{}'", key));
    }
  }
  schema_registry::registryConfig(options);
}

// The latest schema of the subject of a source's (first) topic's values,
// with the schemas it references, for the columns of a source that declares
// none: 42704 when there is none, 08006 when the registry does not answer,
// 22023 when it is not of `type` (AVRO, PROTOBUF), at the URL.
struct LatestValueSchema {
  std::string subject;
  int32_t id = 0;
  schema_registry::RegisteredSchema schema;
  std::vector<schema_registry::NamedSchema> referenced;
};

LatestValueSchema latestValueSchema(const ast::CreateSource& stmt, const Options& options,
                                    const std::string& type) {
  const OptionEntry& url = *options.find(schema_registry::kUrlOption);
  std::string topic = options.getString("subscribe");
  topic = topic.substr(0, topic.find(','));
  while (!topic.empty() && topic.back() == ' ') topic.pop_back();
  while (!topic.empty() && topic.front() == ' ') topic.erase(0, 1);
  LatestValueSchema out;
  out.subject = schema_registry::valueSubject(topic);
  auto registry =
      schema_registry::SchemaRegistryClient::shared(schema_registry::registryConfig(options));
  schema_registry::RegistryError error;
  auto latest = registry->latest(out.subject, error);
  std::optional<std::vector<schema_registry::NamedSchema>> referenced;
  if (latest) referenced = registry->referencedSchemas(latest->second, error);
  if (!referenced) {
    throw SqlError(
        error.kind == schema_registry::RegistryError::Kind::Unreachable
            ? sqlstate::kConnectionFailure
            : sqlstate::kUndefinedObject,
        fmt::format("source \"{}\" declares no columns, and its schema cannot be read from "
                    "subject \"{}\": {}",
                    stmt.name, out.subject, error.message),
        url.valuePos, "declare the columns, or register the topic's value schema first");
  }
  if (latest->second.type != type) {
    throw SqlError(sqlstate::kInvalidParameterValue,
                   fmt::format("the latest schema (id {}) of subject \"{}\" is {}, not {}",
                               latest->first, out.subject, latest->second.type, type),
                   url.valuePos,
                   "read the topic with the format of its schemas, or declare the columns");
  }
  out.id = latest->first;
  out.schema = std::move(latest->second);
  out.referenced = std::move(*referenced);
  return out;
}

// `known` and the registry options.
std::vector<std::string> withRegistryKeys(std::vector<std::string> known) {
  for (const std::string& key : schema_registry::registryOptionKeys()) known.push_back(key);
  return known;
}

}  // namespace

void KafkaConnector::validateSource(const Options& options, size_t stmtPos) const {
  options.checkKnown(
      withRegistryKeys({"connector", "subscribe", "startingOffsets", "maxPartitions", "format",
                        kOnErrorOption, "includeHeaders", "json.ignore-missing", "csv.delimiter",
                        "avro.schema", "avro.framing", "protobuf.descriptor", "protobuf.message",
                        "protobuf.framing", kIdleTimeoutOption, kafka::kDeadLetterTopicOption,
                        kFailOnDataLossOption, kafka::kFetchBatchingRateOption}),
      {"kafka."});
  requireNonEmptyList(options, "kafka.bootstrap.servers", stmtPos);
  requireNonEmptyList(options, "subscribe", stmtPos);
  options.getEnum("startingOffsets", "latest", {"earliest", "latest"});
  if (options.has("maxPartitions")) options.getInt("maxPartitions", 1, 1, 1 << 20);
  const std::string format = toLower(options.getEnum(
      "format", "json", {"json", "csv", "raw", "debezium-json", "avro", "protobuf"}));
  validateProtobufOptions(options, format, stmtPos);
  validateRegistryOptions(options, format);
  if (format == "avro" && schema_registry::hasRegistry(options)) {
    // The schemas come from the registry.
  } else if (format == "avro") {
    options.require("avro.schema", stmtPos);
    options.getEnum("avro.framing", "none", {"none", "confluent"});
  } else {
    for (const char* key : {"avro.schema", "avro.framing"}) {
      if (const OptionEntry* e = options.find(key)) {
        throw SqlError(sqlstate::kInvalidParameterValue,
                       fmt::format("option '{}' applies to format 'avro'", key), e->keyPos,
                       "set format = 'avro', or drop the option");
      }
    }
  }
  parseRowErrorPolicy(options);
  kafka::validateDeadLetterOptions(options, stmtPos);
  options.getBool("includeHeaders", false);
  failOnDataLoss(options);
  options.getInt(kafka::kFetchBatchingRateOption, kafka::kDefaultFetchBatchingRate, 0,
                 kafka::kMaxFetchBatchingRate);
  options.getBool("json.ignore-missing", true);
  sourceIdleTimeoutMicros(options);
  kafka::validateUserProperties(options);
}

SourceOptions KafkaConnector::parseSource(const Options& options) const {
  SourceOptions parsed = parseCommonSourceOptions(options);
  parsed.topics = kafka::splitTopics(options.getString("subscribe"));
  parsed.fromEarliest = iequals(options.getString("startingOffsets", "latest"), "earliest");
  parsed.userGroup = options.has("kafka.group.id");
  return parsed;
}

SinkOptions KafkaConnector::parseSink(const Options& options) const {
  SinkOptions parsed = parseCommonSinkOptions(options);
  parsed.topic = options.getString("topic");
  parsed.topicPartitions = kafka::sinkTopicPartitions(options);
  if (const OptionEntry* key = options.find("key")) parsed.key = key->value;
  parsed.protobufConfluent = format::protobufConfluentFraming(options);
  return parsed;
}

void KafkaConnector::validateSink(const Options& options, size_t stmtPos) const {
  options.checkKnown(
      withRegistryKeys({"connector", "topic", "format", "key", "mode", "csv.delimiter",
                        "csv.header", "protobuf.descriptor", "protobuf.message", "protobuf.framing",
                        kafka::kTopicPartitionsOption}),
      {"kafka."});
  requireNonEmptyList(options, "kafka.bootstrap.servers", stmtPos);
  requireNonEmptyList(options, "topic", stmtPos);
  std::string format = toLower(options.getEnum(
      "format", "json", {"json", "csv", "raw", "debezium-json", "avro", "protobuf"}));
  validateProtobufOptions(options, format, stmtPos);
  validateRegistryOptions(options, format);
  // The file is read now, so that a missing one or a message it lacks fails
  // CREATE SINK; the columns are checked against the message at CREATE FLOW.
  // With a registry the message is the columns', named by 'protobuf.message'.
  if (format == "protobuf" && schema_registry::hasRegistry(options)) {
    format::protobufSinkMessageName(options, "row");
  } else if (format == "protobuf") {
    format::ProtobufSchema::fromOptions(options, stmtPos, true);
  }
  format::csvDelimiter(options);
  kafka::sinkTopicPartitions(options);
  if (const OptionEntry* header = options.find("csv.header")) {
    // A topic has no beginning a header could stand at: each record is a row.
    throw SqlError(
        sqlstate::kFeatureNotSupported,
        "'csv.header' applies to file sinks; a Kafka record is one row", header->keyPos,
        "drop 'csv.header': each record's value is one csv line of the columns in order");
  }
  std::string mode = toLower(options.getEnum("mode", "update", {"append", "update", "upsert"}));
  if (mode == "upsert") {
    // Upsert keys each row by the flow's unique key and writes json values.
    size_t pos = options.find("mode")->valuePos;
    if (format != "json") {
      throw SqlError(
          sqlstate::kFeatureNotSupported,
          fmt::format("'mode' = 'upsert' writes json rows; this sink has format '{}'", format), pos,
          format == "raw"   ? "a raw sink writes the key and value its query gives"
          : format == "csv" ? "use format = 'json' for upserts, or drop 'mode' to write each "
                              "row's latest values as csv lines"
                            : "debezium-json already writes every change: drop 'mode'");
    }
    if (const OptionEntry* key = options.find("key")) {
      throw SqlError(sqlstate::kFeatureNotSupported,
                     "'mode' = 'upsert' keys each row by the flow's unique key; it takes no 'key'",
                     key->keyPos, "drop the 'key' option");
    }
  }
  kafka::validateUserProperties(options);
}

void KafkaConnector::checkCreate(const Options& options, const ConnectorEnv& env) const {
  try {
    kafka::resolveBootstrap(options, env.embeddedBootstrap);
  } catch (SqlError& e) {
    if (const OptionEntry* entry = options.find("kafka.bootstrap.servers")) {
      e.setPosition(entry->valuePos);
    }
    throw;
  }
}

ServerSideOptions KafkaConnector::serverSideOptions(const Options& options) const {
  // librdkafka's properties (CONFIGURATION.md) that hold a path the client
  // opens, and those that name a library it loads or a command it runs.
  static const char* const kFiles[] = {
      "kafka.ssl.key.location",      "kafka.ssl.certificate.location",
      "kafka.ssl.ca.location",       "kafka.ssl.crl.location",
      "kafka.ssl.keystore.location", "kafka.sasl.kerberos.keytab",
      "kafka.offset.store.path",     "protobuf.descriptor"};
  static const char* const kPrograms[] = {"kafka.plugin.library.paths", "kafka.ssl.engine.location",
                                          "kafka.sasl.kerberos.kinit.cmd"};
  ServerSideOptions out;
  for (const char* key : kFiles) {
    const OptionEntry* e = options.find(key);
    // 'probe' asks the client to look in the system's usual CA locations,
    // which every user may rely on.
    if (e && !(iequals(key, "kafka.ssl.ca.location") && iequals(e->value, "probe"))) {
      out.files.push_back(e);
    }
  }
  for (const char* key : kPrograms) {
    if (const OptionEntry* e = options.find(key)) out.programs.push_back(e);
  }
  if (const OptionEntry* e = options.find(schema_registry::kUrlOption)) {
    out.destinations.push_back(e);
  }
  for (const char* key : {"kafka.bootstrap.servers", kafka::kDeadLetterBootstrapOption}) {
    if (const OptionEntry* e = options.find(key)) out.brokers.push_back(e);
  }
  return out;
}

std::string KafkaConnector::sourceFormat(const Options& options) const {
  return toLower(options.getString("format", "json"));
}

Schema KafkaConnector::bindSourceSchema(const ast::CreateSource& stmt,
                                        const Options& options) const {
  const std::string format = sourceFormat(options);
  if ((format == "avro" || format == "protobuf") && schema_registry::hasRegistry(options)) {
    // The declared columns, each read from the writer's field of its name;
    // without any, the fields of the latest schema of the (first) topic's
    // subject (protobuf: of its 'protobuf.message', or its first message).
    Schema payload = bindColumns(stmt.columns);
    if (payload.columns.empty()) {
      const size_t urlPos = options.find(schema_registry::kUrlOption)->valuePos;
      if (format == "avro") {
        auto latest = latestValueSchema(stmt, options, "AVRO");
        auto avro = format::AvroSchema::parse(latest.schema.text, urlPos);
        payload = format::avroSourceColumns(*avro, payload, {}, urlPos);
      } else {
        auto latest = latestValueSchema(stmt, options, "PROTOBUF");
        std::vector<format::ProtoImport> imports;
        for (auto& r : latest.referenced) imports.push_back({std::move(r.name), std::move(r.text)});
        const OptionEntry* message = options.find("protobuf.message");
        auto proto = format::ProtobufSchema::fromProtoText(
            latest.schema.text, fmt::format("schema-{}.proto", latest.id), imports,
            message ? message->value : std::string(),
            fmt::format("the latest schema (id {}) of subject \"{}\"", latest.id, latest.subject),
            urlPos, message ? message->valuePos : urlPos);
        payload = format::protobufSourceColumns(*proto, payload, {}, urlPos);
      }
    }
    return bindKafkaRecordSchema(stmt, format, options.getBool("includeHeaders", false), &payload);
  }
  if (format == "avro") {
    // The columns are the record schema's fields, or the declared ones checked
    // against them.
    const OptionEntry& entry = options.require("avro.schema", stmt.namePos);
    auto avro = format::AvroSchema::parse(entry.value, entry.valuePos);
    std::vector<size_t> positions;
    for (const auto& c : stmt.columns) positions.push_back(c.pos);
    Schema payload =
        format::avroSourceColumns(*avro, bindColumns(stmt.columns), positions, entry.valuePos);
    return bindKafkaRecordSchema(stmt, format, options.getBool("includeHeaders", false), &payload);
  }
  if (format == "protobuf") {
    // The columns are the message's fields, or the declared ones checked
    // against them. The descriptor file is read here, at CREATE SOURCE and
    // when a restarted server replays it.
    auto proto = format::ProtobufSchema::fromOptions(options, stmt.namePos, true);
    std::vector<size_t> positions;
    for (const auto& c : stmt.columns) positions.push_back(c.pos);
    const OptionEntry& message = options.require("protobuf.message", stmt.namePos);
    Schema payload = format::protobufSourceColumns(*proto, bindColumns(stmt.columns), positions,
                                                   message.valuePos);
    return bindKafkaRecordSchema(stmt, format, options.getBool("includeHeaders", false), &payload);
  }
  return bindKafkaRecordSchema(stmt, format, options.getBool("includeHeaders", false));
}

int KafkaConnector::sourcePartitions(const ScanSpec& scan, const ConnectorEnv& env) const {
  return kafkaSourcePartitions(scan, kafka::resolveBootstrap(scan.options, env.embeddedBootstrap));
}

std::unique_ptr<SourceTask> KafkaConnector::openSource(const ScanSpec& scan,
                                                       const ConnectorEnv& env,
                                                       const std::string& flowName, int task,
                                                       int tasks) const {
  return makeKafkaSource(scan, kafka::resolveBootstrap(scan.options, env.embeddedBootstrap),
                         flowName, kafka::flowKafkaIds(env.cluster, flowName), task, tasks);
}

std::unique_ptr<SinkWriter> KafkaConnector::openSink(const SinkSpec& sink, const ConnectorEnv& env,
                                                     const std::string& flowName, int task) const {
  return makeKafkaSink(sink, kafka::resolveBootstrap(sink.options, env.embeddedBootstrap), flowName,
                       task);
}

std::unique_ptr<SinkTransaction> KafkaConnector::openSinkTransaction(const SinkSpec& sink,
                                                                     const ConnectorEnv& env,
                                                                     const std::string& flowName,
                                                                     int64_t timeoutMs) const {
  return makeKafkaSinkTransaction(sink,
                                  kafka::resolveBootstrap(sink.options, env.embeddedBootstrap),
                                  flowName, kafka::flowKafkaIds(env.cluster, flowName), timeoutMs);
}

std::unique_ptr<SinkWriter> KafkaConnector::openTransactionalSink(
    const SinkSpec& sink, const ConnectorEnv& env, const std::string& flowName, int task,
    SinkTransaction& transaction) const {
  return makeKafkaTransactionalSink(sink,
                                    kafka::resolveBootstrap(sink.options, env.embeddedBootstrap),
                                    flowName, task, transaction);
}

}  // namespace rtsql
