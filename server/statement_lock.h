// The lock that serializes what changes the catalog or the set of running
// flows, so that a CREATE FLOW and a DROP SOURCE never interleave.
//
// Who takes it, and why none of them can deadlock with another:
//   - A client's statement takes it through its StatementGuard, only for
//     the part that changes something: a source's remote service (a schema
//     registry) is asked before, and a flow's stop is waited for after it is
//     let go (the flow stays in the registry's stopping set meanwhile).
//   - A cluster change (a peer's DDL read from the catalog topic) and the
//     replay of the catalog at start take it once for the whole change, and
//     run its statements through the same handlers with a guard that already
//     holds it: the handlers' lock() and unlock() then do nothing, so the
//     change is applied whole and nothing re-enters the mutex. Which guard a
//     statement has is said by who made it, never by the thread it runs on.
//   - A client's statement that writes the cluster's catalog does so under
//     the lock, and ClusterCatalog::publish never waits for the follower:
//     when the follower has an entry to apply (or is applying one, waiting
//     for this lock), publish fails at once with 40001 and the statement
//     changes nothing. The follower waits only for the lock; so a cluster
//     change and a client's statement each wait for at most the other's end.
//   - The supervisor only tries the lock (a statement is changing flows:
//     it looks again next round), and a release of flows whose slots moved
//     (on the group's thread) takes it; the supervisor lets it go between
//     two starts while a release waits.
// The mutex is not recursive: a holder that would take it again is a bug.
#pragma once

#include <mutex>

namespace rtsql {

class StatementLock {
 public:
  // A statement's hold of the lock: taken with lock(), let go with unlock()
  // and at the end of the scope. Made held(), it stands for a hold its
  // maker already has (a cluster change, a replay): lock() and unlock() do
  // nothing.
  class Guard {
   public:
    explicit Guard(StatementLock& owner) : lock_(owner.mu_, std::defer_lock) {}
    static Guard held() { return Guard(); }
    Guard(Guard&&) = default;

    void lock() {
      if (lock_.mutex() && !lock_.owns_lock()) lock_.lock();
    }
    void unlock() {
      if (lock_.owns_lock()) lock_.unlock();
    }

   private:
    Guard() = default;
    std::unique_lock<std::mutex> lock_;
  };

  std::mutex& mutex() { return mu_; }

 private:
  std::mutex mu_;
};

}  // namespace rtsql
