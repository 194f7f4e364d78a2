// The base of a connector's own settings: those only the connector's code
// reads (a generator's rates, an HTTP sink's endpoint), read from the WITH
// options once at CREATE by the connector (Connector::parseSource,
// parseSink) into a struct of its own derived from this one, carried by the
// plan (SourceOptions::own, SinkOptions::own) and read back at open.
#pragma once

#include <memory>
#include <string>

#include "common/error.h"

namespace rtsql {

struct ConnectorOptions {
  virtual ~ConnectorOptions() = default;
};

// The settings `own` carries as connector `connector`'s struct T. A plan
// whose source or sink was created through the connector always carries
// them: anything else is a broken invariant (InternalError).
template <class T>
const T& connectorOptionsAs(const std::shared_ptr<const ConnectorOptions>& own,
                            const char* connector) {
  const auto* typed = dynamic_cast<const T*>(own.get());
  if (!typed) {
    throw InternalError(std::string("a plan carries no ") + connector + " options");
  }
  return *typed;
}

}  // namespace rtsql
