// The datagen connector: what 'connector' = 'datagen' means for a source. Its
// rows are made up from the declared columns (datagen.h), so the schema is
// exactly those columns and the generator options are checked against them.
#pragma once

#include <string_view>

#include "connectors/connector.h"

namespace rtsql {

class DatagenConnector final : public Connector {
 public:
  static constexpr std::string_view kName = "datagen";

  DatagenConnector() : Connector(kName, {ConnectorRole::Source}) {}

  void validateSource(const Options& options, size_t stmtPos) const override;
  // The declared columns; a datagen source without any is SqlError 22023.
  Schema bindSourceSchema(const ast::CreateSource& stmt, const Options& options) const override;
  void validateSourceColumns(const Options& options, const Schema& schema,
                             size_t stmtPos) const override;
  // The generators' settings (datagen.h), carried to the tasks.
  SourceOptions parseSource(const Options& options) const override;

  // 'maxPartitions', 1 by default: the number of generating tasks.
  int sourcePartitions(const ScanSpec& scan, const ConnectorEnv& env) const override;
  std::unique_ptr<SourceTask> openSource(const ScanSpec& scan, const ConnectorEnv& env,
                                         const std::string& flowName, int task,
                                         int tasks) const override;
};

}  // namespace rtsql
