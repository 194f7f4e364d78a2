#include "server/views/holder_outages.h"

#include <fmt/format.h>

#include "common/schema.h"

namespace rtsql {

void HolderOutages::failed(const std::string& view, const std::string& holder,
                           const std::string& error, Clock::time_point now) {
  std::lock_guard lock(mu_);
  outages_[toLower(view)] = Outage{holder, error, now};
}

std::optional<std::string> HolderOutages::skip(const std::string& view, const std::string& holder,
                                               Clock::time_point now) {
  std::lock_guard lock(mu_);
  auto it = outages_.find(toLower(view));
  if (it == outages_.end()) return std::nullopt;
  const Outage& o = it->second;
  if (now < o.at) return std::nullopt;  // a read that began before it failed
  if (o.holder != holder || now - o.at >= window_) {
    outages_.erase(it);
    return std::nullopt;
  }
  const auto ago = std::chrono::duration_cast<std::chrono::milliseconds>(now - o.at).count();
  return fmt::format("{} ({} ms ago; the standby copy answers without asking node \"{}\" again "
                     "for up to {} ms)",
                     o.error, ago, holder,
                     std::chrono::duration_cast<std::chrono::milliseconds>(window_).count());
}

void HolderOutages::forget(const std::string& view) {
  std::lock_guard lock(mu_);
  outages_.erase(toLower(view));
}

}  // namespace rtsql
