// The Kafka connector: what 'connector' = 'kafka' means for a source (its
// options, the hidden metadata columns of its records, its partitions, its
// source tasks) and for a sink (options, writers, exactly-once transactions).
// The tasks themselves are in source.h and sink.h; this class is the one place
// that decides which of them a Kafka source or sink gets.
#pragma once

#include <string_view>

#include "connectors/connector.h"

namespace rtsql {

class KafkaConnector final : public Connector {
 public:
  static constexpr std::string_view kName = "kafka";

  KafkaConnector() : Connector(kName, {ConnectorRole::Source, ConnectorRole::Sink}) {}

  void validateSource(const Options& options, size_t stmtPos) const override;
  void validateSink(const Options& options, size_t stmtPos) const override;
  // 'on.error', 'failOnDataLoss', the topics of 'subscribe' and
  // 'startingOffsets'.
  SourceOptions parseSource(const Options& options) const override;
  SinkOptions parseSink(const Options& options) const override;
  // Records named by topic partition and offset.
  SourceTraits sourceTraits() const override { return {.partitionedLog = true}; }
  SinkTraits sinkTraits() const override { return {.kafkaCluster = true}; }
  // 'kafka.bootstrap.servers' = 'embedded' on a server without the embedded
  // broker is SqlError 55000 at the option's value.
  void checkCreate(const Options& options, const ConnectorEnv& env) const override;
  // The Kafka client's certificate, key, CRL, keystore, keytab and
  // offset-file locations; its plugin.library.paths, ssl.engine.location and
  // sasl.kerberos.kinit.cmd.
  ServerSideOptions serverSideOptions(const Options& options) const override;

  // 'format': json (the default), csv or raw.
  std::string sourceFormat(const Options& options) const override;
  // bindKafkaRecordSchema (planner/planner.h) for the source's format.
  Schema bindSourceSchema(const ast::CreateSource& stmt, const Options& options) const override;

  // Partitions of all the topics of 'subscribe', summed.
  int sourcePartitions(const ScanSpec& scan, const ConnectorEnv& env) const override;
  std::unique_ptr<SourceTask> openSource(const ScanSpec& scan, const ConnectorEnv& env,
                                         const std::string& flowName, int task,
                                         int tasks) const override;
  std::unique_ptr<SinkWriter> openSink(const SinkSpec& sink, const ConnectorEnv& env,
                                       const std::string& flowName, int task) const override;

  bool exactlyOnce() const override { return true; }
  std::unique_ptr<SinkTransaction> openSinkTransaction(const SinkSpec& sink, const ConnectorEnv& env,
                                                       const std::string& flowName,
                                                       int64_t timeoutMs) const override;
  std::unique_ptr<SinkWriter> openTransactionalSink(const SinkSpec& sink, const ConnectorEnv& env,
                                                    const std::string& flowName, int task,
                                                    SinkTransaction& transaction) const override;
};

}  // namespace rtsql
