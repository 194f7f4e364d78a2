// The HTTP endpoint's view of a running server: adapts the flow registry's
// read views (server/flows/flow_reads.h) to http::Source, and runs the SQL
// box's statements through the QueryHandler.
#pragma once

#include "server/flows/flow_reads.h"
#include "server/query_handler.h"
#include "server/http/source.h"

namespace rtsql::http {

class EngineSource : public Source {
 public:
  // `flows` and `statements` must outlive this source and every HTTP request
  // that reads it. Statements of the SQL box run through `statements`: it is
  // not const.
  EngineSource(const FlowReads& flows, QueryHandler& statements)
      : flows_(flows), statements_(statements) {}

  std::vector<FlowStatus> flows(bool withProgress) const override;
  std::optional<std::string> progress(const std::string& flow) const override;
  SlotUsage slots() const override;
  std::optional<std::string> planJson(const std::string& flow) const override;
  SqlResult runReadOnly(const std::string& user, const std::string& sql,
                        const SqlLimits& limits) const override;

 private:
  const FlowReads& flows_;
  QueryHandler& statements_;
};

}  // namespace rtsql::http
