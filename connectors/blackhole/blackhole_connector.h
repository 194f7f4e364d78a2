// The blackhole connector: what 'connector' = 'blackhole' means for a sink,
// rows counted and dropped (blackhole_sink.h).
#pragma once

#include <string_view>

#include "connectors/connector.h"

namespace rtsql {

class BlackholeConnector final : public Connector {
 public:
  static constexpr std::string_view kName = "blackhole";

  BlackholeConnector() : Connector(kName, {ConnectorRole::Sink}) {}

  void validateSink(const Options& options, size_t stmtPos) const override;
  // Counts rows whatever they mean.
  SinkTraits sinkTraits() const override { return {.writesEveryChange = true}; }
  std::unique_ptr<SinkWriter> openSink(const SinkSpec& sink, const ConnectorEnv& env,
                                       const std::string& flowName, int task) const override;
};

}  // namespace rtsql
