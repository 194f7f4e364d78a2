// The task slots a query takes (query_slots.h).
#include "server/query_slots.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>

namespace rtsql {

QuerySlots querySlotsOf(const PhysicalPlan& plan) {
  QuerySlots s;
  s.total = plan.slots();
  for (const StageSpec& stage : plan.stages) {
    if (stage.scan >= 0) {
      s.reading += stage.tasks;
    } else {
      ++s.stages;
      s.partitions = std::max(s.partitions, stage.tasks);
    }
  }
  return s;
}

std::optional<int> partitionsThatFit(const QuerySlots& need, int free) {
  if (need.total <= free || need.stages == 0) return std::nullopt;
  const int fits = (free - need.reading) / need.stages;
  if (fits < 1 || fits >= need.partitions) return std::nullopt;
  return fits;
}

SqlError querySlotsError(std::string_view what, const QuerySlots& need, const SlotPool& pool) {
  const int free = std::max(0, pool.total() - pool.used());
  std::string hint;
  if (const std::optional<int> fits = partitionsThatFit(need, free)) {
    hint = fmt::format("SET shuffle.partitions = {} fits them now (the answer is the same); or ",
                       *fits);
  }
  hint += "stop a flow, let other queries end, or start rtsqld with more --slots";
  std::string stages;
  if (need.stages > 0) {
    stages = fmt::format("; {} {} after a shuffle (a join, GROUP BY, DISTINCT) {} {} tasks each "
                         "(shuffle.partitions)",
                         need.stages, need.stages == 1 ? "stage" : "stages",
                         need.stages == 1 ? "runs" : "run", need.partitions);
  }
  return SqlError(sqlstate::kInsufficientResources,
                  fmt::format("{} needs {} task slots on this node, but only {} of {} are free",
                              what, need.total, free, pool.total()))
      .withHint(hint)
      .withDetail(fmt::format("{} {} its relations{}; the flows and queries of a node share its "
                              "--slots",
                              need.reading, need.reading == 1 ? "task reads" : "tasks read",
                              stages));
}

}  // namespace rtsql
