// How many task slots one user's live queries may hold at once
// (--max-live-query-slots-per-user). Live queries take their slots from the
// pool flows use; without a per-user bound one user's open queries could take
// every slot, and no one else could start a flow or a query.
//
// The bound counts slots, not queries, because one query takes as many slots
// as it has tasks (its source's partitions, shuffle.partitions after a GROUP
// BY). Superusers are not bound by it (server/privileges.h): the operator may
// need the whole server, and a trusted local server has only superusers.
#pragma once

#include <map>
#include <mutex>
#include <string>

namespace rtsql {

class LiveQueryQuota {
 public:
  // `perUser` is the bound; at least 1.
  explicit LiveQueryQuota(int perUser) : perUser_(perUser < 1 ? 1 : perUser) {}

  // A user's hold on slots of the quota; gives them back when destroyed.
  class Hold {
   public:
    Hold() = default;
    Hold(Hold&& o) noexcept : quota_(o.quota_), user_(std::move(o.user_)), slots_(o.slots_) {
      o.quota_ = nullptr;
    }
    Hold& operator=(Hold&&) = delete;
    ~Hold();

   private:
    friend class LiveQueryQuota;
    Hold(LiveQueryQuota* quota, std::string user, int slots)
        : quota_(quota), user_(std::move(user)), slots_(slots) {}
    LiveQueryQuota* quota_ = nullptr;
    std::string user_;
    int slots_ = 0;
  };

  // Counts `slots` against `user`. Throws SqlError 53400 naming the user, the
  // slots the user's live queries hold and the bound when they would exceed
  // it.
  Hold acquire(const std::string& user, int slots);

  int perUser() const { return perUser_; }
  // The slots `user`'s live queries hold now.
  int held(const std::string& user) const;

 private:
  void release(const std::string& user, int slots);

  const int perUser_;
  mutable std::mutex mu_;
  std::map<std::string, int> held_;  // only users holding slots
};

}  // namespace rtsql
