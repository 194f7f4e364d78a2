// How a source task fetches now, for the progress JSON's "fetchMode" of its
// source (executor/flow_progress.cpp): an interface a SourceTask implements
// only when it has modes. A Kafka source says "prompt" or "batching"
// (connectors/kafka/fetch_rate.h). Kept apart from SourceTask so that the
// sources without modes need nothing.
#pragma once

#include <string>

namespace rtsql {

class SourceFetchMode {
 public:
  virtual ~SourceFetchMode() = default;
  // "prompt" or "batching"; any thread may call it.
  virtual std::string fetchMode() const = 0;
};

}  // namespace rtsql
