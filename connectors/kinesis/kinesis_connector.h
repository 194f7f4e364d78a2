// The Kinesis connector: what 'connector' = 'kinesis' means for a source (its
// options, its columns, its shards as partitions, its tasks). The API client
// is client.h, the tasks source.h.
#pragma once

#include <string_view>

#include "connectors/connector.h"

namespace rtsql {

class KinesisConnector final : public Connector {
 public:
  static constexpr std::string_view kName = "kinesis";

  KinesisConnector() : Connector(kName, {ConnectorRole::Source}) {}

  void validateSource(const Options& options, size_t stmtPos) const override;
  // The protobuf descriptor file.
  ServerSideOptions serverSideOptions(const Options& options) const override;
  // 'format': json (the default), csv, raw, avro or protobuf.
  std::string sourceFormat(const Options& options) const override;
  // kinesis::bindKinesisSchema (columns.h).
  Schema bindSourceSchema(const ast::CreateSource& stmt, const Options& options) const override;
  // The stream, its client's settings and where to start (source.h),
  // carried to the tasks.
  SourceOptions parseSource(const Options& options) const override;
  // The stream's open shards.
  int sourcePartitions(const ScanSpec& scan, const ConnectorEnv& env) const override;
  std::unique_ptr<SourceTask> openSource(const ScanSpec& scan, const ConnectorEnv& env,
                                         const std::string& flowName, int task,
                                         int tasks) const override;
  // 'dead-letter.kafka.bootstrap.servers' = 'embedded' needs the server's
  // embedded broker (55000 at the option otherwise).
  void checkCreate(const Options& options, const ConnectorEnv& env) const override;
};

}  // namespace rtsql
