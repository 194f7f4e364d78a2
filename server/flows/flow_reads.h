// What the HTTP endpoint (server/http) reads of the server's flows and slots:
// a small read-only interface, so that the endpoint depends on neither the
// engine nor the flow registry. The views take the catalog lock, the flows
// lock and each flow's own lock only briefly, never the statement lock, so
// a scrape neither waits for a statement nor holds up a flow.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "executor/flow_runtime.h"

namespace rtsql {

struct FlowInfo {
  std::string name;  // as declared
  std::string sink;
  FlowState state = FlowState::Stopped;
  std::string failure;        // why it failed (Failed) or is not running yet (Recovering)
  std::optional<int> slots;   // the slots it holds; none unless it runs
  std::string progressJson;   // SHOW PROGRESS's JSON, filled only when asked for
  bool materializedView = false;  // the flow of CREATE MATERIALIZED VIEW
};

class FlowReads {
 public:
  virtual ~FlowReads() = default;
  // Every flow of the catalog, in SHOW FLOWS order.
  virtual std::vector<FlowInfo> flowInfos(bool withProgress) const = 0;
  // SHOW PROGRESS's JSON of a flow (name matched as SQL matches identifiers);
  // nullopt when there is no such flow.
  virtual std::optional<std::string> progress(const std::string& flow) const = 0;
  // Calls `read` with the plan the flow runs, under the flows lock (keep it
  // short); false when there is no such flow or it has no runtime.
  virtual bool readPlan(const std::string& flow,
                        const std::function<void(const PhysicalPlan&)>& read) const = 0;
  virtual int slotsUsed() const = 0;
  virtual int slotsTotal() const = 0;
};

}  // namespace rtsql
