// The base of a connector's own settings: those only the connector's code
// reads (a generator's rates, an HTTP sink's endpoint), read from the WITH
// options once at CREATE by the connector (Connector::parseSource,
// parseSink) into a struct of its own derived from this one, carried by the
// plan (SourceOptions::own, SinkOptions::own) and read back at open.
#pragma once

namespace rtsql {

struct ConnectorOptions {
  virtual ~ConnectorOptions() = default;
};

}  // namespace rtsql
