// The state copies of dropped flows kept for the slot's next holder
// (server/cluster/dropped_copies.h).
#include "server/cluster/dropped_copies.h"

#include <fmt/format.h>

#include <vector>

#include "common/error.h"
#include "common/log.h"
#include "common/schema.h"
#include "planner/shard_plan.h"

namespace rtsql {

void DroppedCopies::add(const std::string& name, std::shared_ptr<StateCopy> copy,
                        int64_t nowMicros) {
  if (!copy) return;
  std::lock_guard lock(mu_);
  kept_[toLower(name)] = Kept{std::move(copy), nowMicros, 0};
}

void DroppedCopies::forget(const std::string& name) {
  const std::string flow = toLower(name);
  std::lock_guard lock(mu_);
  // The flow's own copy, and those of its copies when it was sharded.
  for (auto it = kept_.begin(); it != kept_.end();) {
    const auto shard = splitShardFlowName(it->first);
    if (it->first == flow || (shard && shard->first == flow)) {
      it = kept_.erase(it);
    } else {
      ++it;
    }
  }
}

int DroppedCopies::deleteHeld(const std::function<bool(const std::string&)>& holds,
                              int64_t nowMicros) {
  std::vector<std::pair<std::string, Kept>> due;
  {
    std::lock_guard lock(mu_);
    for (auto it = kept_.begin(); it != kept_.end();) {
      if (nowMicros - it->second.sinceMicros > kKeepMicros) {
        logLine(fmt::format("flow \"{}\" dropped; no node of the cluster took its slot within {} "
                            "minutes: its state copy may stay",
                            it->first, kKeepMicros / 60'000'000));
        it = kept_.erase(it);
      } else if (holds(it->first)) {
        due.emplace_back(it->first, std::move(it->second));
        it = kept_.erase(it);
      } else {
        ++it;
      }
    }
  }
  // Deleted without the lock: a deletion waits on the broker.
  int deleted = 0;
  for (auto& [name, kept] : due) {
    try {
      kept.copy->destroy();
      ++deleted;
      logLine(fmt::format("flow \"{}\" dropped: its state copy is deleted (by this node, "
                          "which holds the flow's slot now)",
                          name));
    } catch (const SqlError& e) {
      if (++kept.attempts >= kMaxAttempts) {
        logLine(fmt::format("flow \"{}\" dropped; its state copy stays after {} attempts: {}", name,
                            kept.attempts, e.message()));
        continue;
      }
      logLine(fmt::format("flow \"{}\" dropped; its state copy stays for now ({}); trying again",
                          name, e.message()));
      // The caller holds the statement lock, as CREATE FLOW does: no flow
      // of the name came meanwhile.
      std::lock_guard lock(mu_);
      kept_.try_emplace(name, std::move(kept));
    }
  }
  return deleted;
}

size_t DroppedCopies::size() const {
  std::lock_guard lock(mu_);
  return kept_.size();
}

}  // namespace rtsql
