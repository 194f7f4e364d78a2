// HttpConnector (see http_connector.h).
#include "connectors/http/http_connector.h"

#include "connectors/http/http_sink.h"

namespace rtsql {

void HttpConnector::validateSink(const Options& options, size_t stmtPos) const {
  parseHttpSinkOptions(options, stmtPos);
}

SinkOptions HttpConnector::parseSink(const Options& options) const {
  SinkOptions parsed = parseCommonSinkOptions(options);
  parsed.own =
      std::make_shared<const HttpSinkConfig>(parseHttpSinkOptions(options, SqlError::npos));
  return parsed;
}

ServerSideOptions HttpConnector::serverSideOptions(const Options& options) const {
  ServerSideOptions out;
  if (const OptionEntry* e = options.find("http.ca")) out.files.push_back(e);
  if (const OptionEntry* e = options.find("url")) out.destinations.push_back(e);
  return out;
}

std::unique_ptr<SinkWriter> HttpConnector::openSink(const SinkSpec& sink, const ConnectorEnv&,
                                                    const std::string& flowName, int task) const {
  return makeHttpSink(sink, flowName, task);
}

}  // namespace rtsql
