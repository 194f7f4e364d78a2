// KinesisConnector (see kinesis_connector.h): the Kinesis source's option
// checks, schema and task factory.
#include "connectors/kinesis/kinesis_connector.h"

#include <fmt/format.h>

#include "common/error.h"
#include "common/json.h"
#include "connectors/format/avro_schema.h"
#include "connectors/format/decoders.h"
#include "connectors/format/protobuf_schema.h"
#include "connectors/http/http_sink.h"
#include "connectors/kafka/client.h"
#include "connectors/kafka/dead_letter.h"
#include "connectors/kinesis/columns.h"
#include "connectors/kinesis/source.h"
#include "connectors/restore_position.h"
#include "planner/planner.h"

namespace rtsql {

namespace {

const OptionEntry& requireNonEmpty(const Options& options, const char* key, size_t stmtPos) {
  const OptionEntry& e = options.require(key, stmtPos);
  if (e.value.find_first_not_of(" \t") == std::string::npos) {
    throw SqlError(sqlstate::kInvalidParameterValue, fmt::format("option '{}' is empty", key),
                   e.valuePos);
  }
  return e;
}

// Options that apply only with one format.
void refuseUnlessFormat(const Options& options, const std::string& format, const char* owner,
                        std::initializer_list<const char*> keys) {
  if (format == owner) return;
  for (const char* key : keys) {
    if (const OptionEntry* e = options.find(key)) {
      throw SqlError(sqlstate::kInvalidParameterValue,
                     fmt::format("option '{}' applies to format '{}'", key, owner), e->keyPos,
                     fmt::format("set format = '{}', or drop the option", owner));
    }
  }
}

}  // namespace

void KinesisConnector::validateSource(const Options& options, size_t stmtPos) const {
  options.checkKnown({"connector",
                      "kinesis.stream",
                      "kinesis.region",
                      "kinesis.endpoint",
                      "kinesis.startingPosition",
                      "kinesis.startingTimestamp",
                      "kinesis.accessKeyId",
                      "kinesis.secretKey",
                      "kinesis.sessionToken",
                      "kinesis.pollInterval",
                      "kinesis.requestTimeout",
                      "kinesis.maxRecordsPerFetch",
                      "format",
                      kOnErrorOption,
                      kafka::kDeadLetterTopicOption,
                      kafka::kDeadLetterBootstrapOption,
                      "json.ignore-missing",
                      "csv.delimiter",
                      "avro.schema",
                      "avro.framing",
                      "protobuf.descriptor",
                      "protobuf.message",
                      "protobuf.framing",
                      kIdleTimeoutOption,
                      kFailOnDataLossOption});
  requireNonEmpty(options, "kinesis.stream", stmtPos);
  requireNonEmpty(options, "kinesis.region", stmtPos);
  failOnDataLoss(options);
  if (const OptionEntry* e = options.find("kinesis.endpoint")) {
    std::string why;
    if (!parseHttpUrl(e->value, why)) {
      throw SqlError(
          sqlstate::kInvalidParameterValue,
          fmt::format("invalid 'kinesis.endpoint' '{}': {}", e->value, why), e->valuePos,
          "an http:// or https:// URL, such as 'https://kinesis.us-east-1.amazonaws.com'");
    }
  }
  const std::string start = toUpper(options.getEnum("kinesis.startingPosition", "LATEST",
                                                    {"TRIM_HORIZON", "LATEST", "AT_TIMESTAMP"}));
  const OptionEntry* ts = options.find("kinesis.startingTimestamp");
  if (start == "AT_TIMESTAMP") {
    const OptionEntry& e = requireNonEmpty(options, "kinesis.startingTimestamp", stmtPos);
    int64_t micros = 0;
    if (!parseTimestamp(e.value, &micros)) {
      throw SqlError(sqlstate::kInvalidParameterValue,
                     fmt::format("invalid 'kinesis.startingTimestamp' '{}'", e.value), e.valuePos,
                     "a timestamp such as '2024-05-01 10:00:00' (UTC) or '2024-05-01T10:00:00Z'");
    }
  } else if (ts) {
    throw SqlError(sqlstate::kInvalidParameterValue,
                   "option 'kinesis.startingTimestamp' applies to 'kinesis.startingPosition' = "
                   "'AT_TIMESTAMP'",
                   ts->keyPos,
                   "set 'kinesis.startingPosition' = 'AT_TIMESTAMP', or drop the option");
  }
  // Credentials come as a pair; a token only with them.
  const OptionEntry* id = options.find("kinesis.accessKeyId");
  const OptionEntry* secret = options.find("kinesis.secretKey");
  if ((id == nullptr) != (secret == nullptr)) {
    const OptionEntry* given = id ? id : secret;
    throw SqlError(sqlstate::kInvalidParameterValue,
                   fmt::format("option '{}' needs '{}'", given->key,
                               id ? "kinesis.secretKey" : "kinesis.accessKeyId"),
                   given->keyPos,
                   "give both keys, or neither to take AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY "
                   "from the server's environment");
  }
  if (const OptionEntry* token = options.find("kinesis.sessionToken"); token && !id) {
    throw SqlError(
        sqlstate::kInvalidParameterValue,
        "option 'kinesis.sessionToken' needs 'kinesis.accessKeyId' and 'kinesis.secretKey'",
        token->keyPos, "a session token belongs to the temporary keys it came with");
  }
  options.getInterval("kinesis.pollInterval", 200'000, 1'000, 60'000'000);
  options.getInterval("kinesis.requestTimeout", 10'000'000, 100'000, 60'000'000);
  options.getInt("kinesis.maxRecordsPerFetch", 10000, 1, 10000);
  const std::string format =
      toLower(options.getEnum("format", "json", {"json", "csv", "raw", "avro", "protobuf"}));
  refuseUnlessFormat(options, format, "avro", {"avro.schema", "avro.framing"});
  refuseUnlessFormat(options, format, "protobuf",
                     {"protobuf.descriptor", "protobuf.message", "protobuf.framing"});
  refuseUnlessFormat(options, format, "csv", {"csv.delimiter"});
  if (format == "avro") {
    options.require("avro.schema", stmtPos);
    options.getEnum("avro.framing", "none", {"none", "confluent"});
  }
  if (format == "protobuf") {
    options.require("protobuf.descriptor", stmtPos);
    options.require("protobuf.message", stmtPos);
    options.getEnum("protobuf.framing", "none", {"none", "confluent"});
  }
  if (format == "csv") format::csvDelimiter(options);
  parseRowErrorPolicy(options);
  kafka::validateDeadLetterOptions(options, stmtPos, false);
  options.getBool("json.ignore-missing", true);
  sourceIdleTimeoutMicros(options);
}

ServerSideOptions KinesisConnector::serverSideOptions(const Options& options) const {
  ServerSideOptions out;
  if (const OptionEntry* e = options.find("protobuf.descriptor")) out.files.push_back(e);
  if (const OptionEntry* e = options.find("kinesis.endpoint")) out.destinations.push_back(e);
  // Without keys of its own the source signs with the server's environment's.
  out.serverCredentials = !options.has("kinesis.accessKeyId");
  return out;
}

std::string KinesisConnector::sourceFormat(const Options& options) const {
  return toLower(options.getString("format", "json"));
}

Schema KinesisConnector::bindSourceSchema(const ast::CreateSource& stmt,
                                          const Options& options) const {
  const std::string format = sourceFormat(options);
  std::vector<size_t> positions;
  for (const auto& c : stmt.columns) positions.push_back(c.pos);
  if (format == "avro") {
    const OptionEntry& entry = options.require("avro.schema", stmt.namePos);
    auto avro = format::AvroSchema::parse(entry.value, entry.valuePos);
    return kinesis::bindKinesisSchema(
        stmt, format,
        format::avroSourceColumns(*avro, bindColumns(stmt.columns), positions, entry.valuePos));
  }
  if (format == "protobuf") {
    auto proto = format::ProtobufSchema::fromOptions(options, stmt.namePos, true);
    const OptionEntry& message = options.require("protobuf.message", stmt.namePos);
    return kinesis::bindKinesisSchema(
        stmt, format,
        format::protobufSourceColumns(*proto, bindColumns(stmt.columns), positions,
                                      message.valuePos));
  }
  if (format != "raw" && stmt.columns.empty()) {
    throw SqlError(sqlstate::kInvalidParameterValue,
                   fmt::format("format '{}' needs a column list", format), stmt.namePos,
                   fmt::format("declare the columns: CREATE SOURCE {} (id BIGINT, ...), or use "
                               "format 'raw' for the bytes",
                               stmt.name));
  }
  return kinesis::bindKinesisSchema(stmt, format, bindColumns(stmt.columns));
}

SourceOptions KinesisConnector::parseSource(const Options& options) const {
  SourceOptions parsed = parseCommonSourceOptions(options);
  parsed.own =
      std::make_shared<const kinesis::KinesisOptions>(kinesis::parseKinesisOptions(options));
  return parsed;
}

int KinesisConnector::sourcePartitions(const ScanSpec& scan, const ConnectorEnv&) const {
  return kinesis::kinesisSourcePartitions(scan);
}

std::unique_ptr<SourceTask> KinesisConnector::openSource(const ScanSpec& scan,
                                                         const ConnectorEnv& env,
                                                         const std::string& flowName, int task,
                                                         int tasks) const {
  return kinesis::makeKinesisSource(scan, flowName, task, tasks, env.embeddedBootstrap);
}

void KinesisConnector::checkCreate(const Options& options, const ConnectorEnv& env) const {
  const OptionEntry* e = options.find(kafka::kDeadLetterBootstrapOption);
  if (!e) return;
  try {
    kafka::resolveBootstrap(kafka::deadLetterKafkaOptions(e->value), env.embeddedBootstrap);
  } catch (SqlError& error) {
    error.setPosition(e->valuePos);
    throw;
  }
}

}  // namespace rtsql
