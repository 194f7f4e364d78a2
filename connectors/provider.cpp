#include "connectors/provider.h"

#include <fmt/format.h>

#include "common/error.h"
#include "common/schema.h"
#include "connectors/datagen/datagen.h"
#include "connectors/file/file_sink.h"
#include "connectors/kafka/client.h"
#include "connectors/kafka/sink.h"
#include "connectors/kafka/source.h"

namespace rtsql {

namespace {

const char* const kSourceConnectors = "kafka, datagen";
const char* const kSinkConnectors = "kafka, file";

size_t connectorPos(const Options& options, size_t stmtPos) {
  const OptionEntry* e = options.find("connector");
  return e && e->valuePos != SqlError::npos ? e->valuePos : stmtPos;
}

[[noreturn]] void unknownConnector(const std::string& connector, const Options& options,
                                   size_t stmtPos, const char* kind, const char* allowed) {
  throw SqlError(sqlstate::kInvalidParameterValue,
                 fmt::format("unknown {} connector '{}'", kind, connector),
                 connectorPos(options, stmtPos), fmt::format("available: {}", allowed));
}

void requireNonEmpty(const Options& options, const char* key, size_t stmtPos) {
  const OptionEntry& e = options.require(key, stmtPos);
  if (e.value.find_first_not_of(" \t,") == std::string::npos) {
    throw SqlError(sqlstate::kInvalidParameterValue, fmt::format("option '{}' is empty", key),
                   e.valuePos);
  }
}

void validateKafkaSource(const Options& options, size_t stmtPos) {
  options.checkKnown({"connector", "subscribe", "startingOffsets", "maxPartitions", "format",
                      "on.error", "includeHeaders", "json.ignore-missing", "csv.delimiter",
                      kIdleTimeoutOption},
                     {"kafka."});
  requireNonEmpty(options, "kafka.bootstrap.servers", stmtPos);
  requireNonEmpty(options, "subscribe", stmtPos);
  options.getEnum("startingOffsets", "latest", {"earliest", "latest"});
  if (options.has("maxPartitions")) options.getInt("maxPartitions", 1, 1, 1 << 20);
  options.getEnum("format", "json", {"json", "csv", "raw"});
  options.getEnum("on.error", "fail", {"fail", "skip"});
  options.getBool("includeHeaders", false);
  options.getBool("json.ignore-missing", true);
  sourceIdleTimeoutMicros(options);
  kafka::validateUserProperties(options);
}

void validateKafkaSink(const Options& options, size_t stmtPos) {
  options.checkKnown({"connector", "topic", "format", "key"}, {"kafka."});
  requireNonEmpty(options, "kafka.bootstrap.servers", stmtPos);
  requireNonEmpty(options, "topic", stmtPos);
  options.getEnum("format", "json", {"json", "raw"});
  kafka::validateUserProperties(options);
}

}  // namespace

int DefaultConnectorProvider::sourcePartitions(const ScanSpec& scan) {
  if (iequals(scan.connector, "kafka")) {
    return kafkaSourcePartitions(scan, kafka::resolveBootstrap(scan.options, embeddedBootstrap_));
  }
  if (iequals(scan.connector, "datagen")) {
    return static_cast<int>(scan.options.getInt("maxPartitions", 1, 1, 1 << 20));
  }
  unknownConnector(scan.connector, scan.options, SqlError::npos, "source", kSourceConnectors);
}

std::unique_ptr<SourceTask> DefaultConnectorProvider::openSource(const ScanSpec& scan,
                                                                 const std::string& flowName,
                                                                 int task, int tasks) {
  if (iequals(scan.connector, "kafka")) {
    return makeKafkaSource(scan, kafka::resolveBootstrap(scan.options, embeddedBootstrap_),
                           flowName, task, tasks);
  }
  if (iequals(scan.connector, "datagen")) return makeDatagenSource(scan, task, tasks);
  unknownConnector(scan.connector, scan.options, SqlError::npos, "source", kSourceConnectors);
}

std::unique_ptr<SinkWriter> DefaultConnectorProvider::openSink(const SinkSpec& sink,
                                                               const std::string& flowName,
                                                               int task) {
  if (iequals(sink.connector, "kafka")) {
    return makeKafkaSink(sink, kafka::resolveBootstrap(sink.options, embeddedBootstrap_),
                         flowName, task);
  }
  if (iequals(sink.connector, "file")) return makeFileSink(sink, task);
  unknownConnector(sink.connector, sink.options, SqlError::npos, "sink", kSinkConnectors);
}

std::unique_ptr<SinkTransaction> DefaultConnectorProvider::openSinkTransaction(
    const SinkSpec& sink, const std::string& flowName, int64_t timeoutMs) {
  if (!iequals(sink.connector, "kafka")) {
    return ConnectorProvider::openSinkTransaction(sink, flowName, timeoutMs);
  }
  return makeKafkaSinkTransaction(sink, kafka::resolveBootstrap(sink.options, embeddedBootstrap_),
                                  flowName, timeoutMs);
}

std::unique_ptr<SinkWriter> DefaultConnectorProvider::openTransactionalSink(
    const SinkSpec& sink, const std::string& flowName, int task, SinkTransaction& transaction) {
  if (!iequals(sink.connector, "kafka")) {
    return ConnectorProvider::openTransactionalSink(sink, flowName, task, transaction);
  }
  return makeKafkaTransactionalSink(sink, kafka::resolveBootstrap(sink.options, embeddedBootstrap_),
                                    flowName, task, transaction);
}

void DefaultConnectorProvider::checkBootstrap(const std::string& connector,
                                              const Options& options) const {
  if (!iequals(connector, "kafka")) return;
  try {
    kafka::resolveBootstrap(options, embeddedBootstrap_);
  } catch (SqlError& e) {
    if (const OptionEntry* entry = options.find("kafka.bootstrap.servers")) {
      e.setPosition(entry->valuePos);
    }
    throw;
  }
}

void validateSourceOptions(const std::string& connector, const Options& options, size_t stmtPos) {
  if (iequals(connector, "kafka")) return validateKafkaSource(options, stmtPos);
  if (iequals(connector, "datagen")) return validateDatagenOptions(options, stmtPos);
  unknownConnector(connector, options, stmtPos, "source", kSourceConnectors);
}

void validateSinkOptions(const std::string& connector, const Options& options, size_t stmtPos) {
  if (iequals(connector, "kafka")) return validateKafkaSink(options, stmtPos);
  if (iequals(connector, "file")) return validateFileSinkOptions(options, stmtPos);
  unknownConnector(connector, options, stmtPos, "sink", kSinkConnectors);
}

ServerSideOptions serverSideOptions(const std::string& connector, const Options& options) {
  // librdkafka's properties (CONFIGURATION.md) that hold a path the client
  // opens, and those that name a library it loads or a command it runs.
  static const char* const kKafkaFiles[] = {
      "kafka.ssl.key.location",      "kafka.ssl.certificate.location", "kafka.ssl.ca.location",
      "kafka.ssl.crl.location",      "kafka.ssl.keystore.location",    "kafka.sasl.kerberos.keytab",
      "kafka.offset.store.path"};
  static const char* const kKafkaPrograms[] = {"kafka.plugin.library.paths",
                                               "kafka.ssl.engine.location",
                                               "kafka.sasl.kerberos.kinit.cmd"};
  ServerSideOptions out;
  if (iequals(connector, "file")) {
    if (const OptionEntry* e = options.find("path")) out.files.push_back(e);
  } else if (iequals(connector, "kafka")) {
    for (const char* key : kKafkaFiles) {
      const OptionEntry* e = options.find(key);
      // 'probe' asks the client to look in the system's usual CA locations,
      // which every user may rely on.
      if (e && !(iequals(key, "kafka.ssl.ca.location") && iequals(e->value, "probe"))) {
        out.files.push_back(e);
      }
    }
    for (const char* key : kKafkaPrograms) {
      if (const OptionEntry* e = options.find(key)) out.programs.push_back(e);
    }
  }
  return out;
}

}  // namespace rtsql
