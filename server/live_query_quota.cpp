#include "server/live_query_quota.h"

#include <fmt/format.h>

#include "common/error.h"

namespace rtsql {

LiveQueryQuota::Hold::~Hold() {
  if (quota_) quota_->release(user_, slots_);
}

LiveQueryQuota::Hold LiveQueryQuota::acquire(const std::string& user, int slots) {
  std::lock_guard lock(mu_);
  auto it = held_.find(user);
  const int now = it == held_.end() ? 0 : it->second;
  if (now + slots > perUser_) {
    throw SqlError(
        sqlstate::kConfigurationLimitExceeded,
        fmt::format("live query needs {} task slot{}, but user \"{}\" may hold {} for live "
                    "queries and holds {}",
                    slots, slots == 1 ? "" : "s", user, perUser_, now),
        SqlError::npos,
        now > 0 ? "End one of this user's live queries first, or ask the operator to raise "
                  "rtsqld --max-live-query-slots-per-user."
                : "Read fewer partitions (the source's maxPartitions) or lower "
                  "shuffle.partitions, or ask the operator to raise rtsqld "
                  "--max-live-query-slots-per-user.");
  }
  held_[user] = now + slots;
  return Hold(this, user, slots);
}

int LiveQueryQuota::held(const std::string& user) const {
  std::lock_guard lock(mu_);
  auto it = held_.find(user);
  return it == held_.end() ? 0 : it->second;
}

void LiveQueryQuota::release(const std::string& user, int slots) {
  std::lock_guard lock(mu_);
  auto it = held_.find(user);
  if (it == held_.end()) return;
  it->second -= slots;
  if (it->second <= 0) held_.erase(it);
}

}  // namespace rtsql
