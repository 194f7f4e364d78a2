// DatagenConnector (see datagen_connector.h).
#include "connectors/datagen/datagen_connector.h"

#include "common/error.h"
#include "connectors/datagen/datagen.h"
#include "connectors/registry.h"
#include "planner/planner.h"

namespace rtsql {

void DatagenConnector::validateSource(const Options& options, size_t stmtPos) const {
  validateDatagenOptions(options, stmtPos);
}

Schema DatagenConnector::bindSourceSchema(const ast::CreateSource& stmt, const Options&) const {
  if (stmt.columns.empty()) {
    throw SqlError(sqlstate::kInvalidParameterValue, "a datagen source needs a column list",
                   stmt.namePos, "datagen fills each declared column by its type");
  }
  return bindColumns(stmt.columns);
}

void DatagenConnector::validateSourceColumns(const Options& options, const Schema& schema,
                                             size_t stmtPos) const {
  validateDatagenOptions(options, schema, stmtPos);
}

SourceOptions DatagenConnector::parseSource(const Options& options) const {
  SourceOptions parsed = parseCommonSourceOptions(options);
  parsed.own = parseDatagenOptions(options);
  return parsed;
}

int DatagenConnector::sourcePartitions(const ScanSpec& scan, const ConnectorEnv&) const {
  // A generator has as many partitions as it is given tasks: one by default.
  const int maxPartitions = sourceOptionsOf(scan).maxPartitions;
  return maxPartitions > 0 ? maxPartitions : 1;
}

std::unique_ptr<SourceTask> DatagenConnector::openSource(const ScanSpec& scan, const ConnectorEnv&,
                                                         const std::string&, int task,
                                                         int tasks) const {
  return makeDatagenSource(scan, task, tasks);
}

}  // namespace rtsql
