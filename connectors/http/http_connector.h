// The http connector: what 'connector' = 'http' means for a sink, each row
// sent as JSON in a request to a URL (http_sink.h). Its 'http.ca' names a
// file on the server's machine, which is why setting it is a privilege.
#pragma once

#include <string_view>

#include "connectors/connector.h"

namespace rtsql {

class HttpConnector final : public Connector {
 public:
  static constexpr std::string_view kName = "http";

  HttpConnector() : Connector(kName, {ConnectorRole::Sink}) {}

  void validateSink(const Options& options, size_t stmtPos) const override;
  SinkOptions parseSink(const Options& options) const override;
  ServerSideOptions serverSideOptions(const Options& options) const override;
  std::unique_ptr<SinkWriter> openSink(const SinkSpec& sink, const ConnectorEnv& env,
                                       const std::string& flowName, int task) const override;
};

}  // namespace rtsql
