// The nexmark connector: what 'connector' = 'nexmark' means for a source. Its
// rows are Nexmark events made in the server (nexmark_source.h), so its schema
// is the chosen table's fields, all of them or the declared ones.
#pragma once

#include <string_view>

#include "connectors/connector.h"

namespace rtsql {

class NexmarkConnector final : public Connector {
 public:
  static constexpr std::string_view kName = "nexmark";

  NexmarkConnector() : Connector(kName, {ConnectorRole::Source}) {}

  void validateSource(const Options& options, size_t stmtPos) const override;
  Schema bindSourceSchema(const ast::CreateSource& stmt, const Options& options) const override;
  SourceOptions parseSource(const Options& options) const override;

  // 'partitions', 1 by default.
  int sourcePartitions(const ScanSpec& scan, const ConnectorEnv& env) const override;
  std::unique_ptr<SourceTask> openSource(const ScanSpec& scan, const ConnectorEnv& env,
                                         const std::string& flowName, int task,
                                         int tasks) const override;
};

}  // namespace rtsql
