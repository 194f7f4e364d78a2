// The HTTP endpoint's view of a running Engine: adapts the engine's read-only
// flow and slot API to http::Source.
#pragma once

#include "server/engine.h"
#include "server/http/source.h"

namespace rtsql::http {

class EngineSource : public Source {
 public:
  // `engine` must outlive this source and every HTTP request that reads it.
  // Statements of the SQL box run through it: it is not const.
  explicit EngineSource(Engine& engine) : engine_(engine) {}

  std::vector<FlowStatus> flows(bool withProgress) const override;
  std::optional<std::string> progress(const std::string& flow) const override;
  SlotUsage slots() const override;
  std::optional<std::string> planJson(const std::string& flow) const override;
  SqlResult runReadOnly(const std::string& user, const std::string& sql,
                        const SqlLimits& limits) const override;

 private:
  Engine& engine_;
};

}  // namespace rtsql::http
