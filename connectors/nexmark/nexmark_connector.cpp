// NexmarkConnector (see nexmark_connector.h).
#include "connectors/nexmark/nexmark_connector.h"

#include "connectors/nexmark/nexmark_source.h"

namespace rtsql {

void NexmarkConnector::validateSource(const Options& options, size_t stmtPos) const {
  validateNexmarkOptions(options, stmtPos);
}

Schema NexmarkConnector::bindSourceSchema(const ast::CreateSource& stmt,
                                          const Options& options) const {
  return bindNexmarkSchema(stmt, options);
}

SourceOptions NexmarkConnector::parseSource(const Options& options) const {
  SourceOptions parsed = parseCommonSourceOptions(options);
  parsed.own = parseNexmarkOptions(options);
  return parsed;
}

int NexmarkConnector::sourcePartitions(const ScanSpec& scan, const ConnectorEnv&) const {
  return nexmarkPartitions(scan);
}

std::unique_ptr<SourceTask> NexmarkConnector::openSource(const ScanSpec& scan, const ConnectorEnv&,
                                                         const std::string&, int task,
                                                         int tasks) const {
  return makeNexmarkSource(scan, task, tasks);
}

}  // namespace rtsql
