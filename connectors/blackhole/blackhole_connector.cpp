// BlackholeConnector (see blackhole_connector.h).
#include "connectors/blackhole/blackhole_connector.h"

#include "connectors/blackhole/blackhole_sink.h"

namespace rtsql {

void BlackholeConnector::validateSink(const Options& options, size_t stmtPos) const {
  validateBlackholeOptions(options, stmtPos);
}

std::unique_ptr<SinkWriter> BlackholeConnector::openSink(const SinkSpec& sink, const ConnectorEnv&,
                                                         const std::string& flowName,
                                                         int task) const {
  return makeBlackholeSink(sink, flowName, task);
}

}  // namespace rtsql
