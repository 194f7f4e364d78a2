// The statement lock (server/statement_lock.h): a statement's guard takes and
// lets go of the mutex; a guard made held() stands for its maker's hold and
// takes nothing, so a cluster change runs its statements under the hold it
// already has without re-entering the mutex.
#include <doctest/doctest.h>

#include <future>

#include "server/statement_lock.h"

using namespace rtsql;

namespace {

// Whether another thread could take the lock now.
bool freeElsewhere(StatementLock& lock) {
  return std::async(std::launch::async, [&] {
           std::unique_lock attempt(lock.mutex(), std::try_to_lock);
           return attempt.owns_lock();
         }).get();
}

}  // namespace

TEST_CASE("a statement's guard holds the lock from lock() to unlock() or its end") {
  StatementLock lock;
  {
    StatementLock::Guard guard(lock);
    CHECK(freeElsewhere(lock));  // nothing taken before lock()
    guard.lock();
    CHECK_FALSE(freeElsewhere(lock));
    guard.lock();  // a second lock() of the same guard takes nothing more
    guard.unlock();
    CHECK(freeElsewhere(lock));  // as while a statement waits for a flow to stop
    guard.lock();
    CHECK_FALSE(freeElsewhere(lock));
  }
  CHECK(freeElsewhere(lock));
}

TEST_CASE("a held() guard runs under its maker's hold and never re-enters the mutex") {
  StatementLock lock;
  std::unique_lock change(lock.mutex());  // a cluster change holds it for all its statements
  {
    StatementLock::Guard guard = StatementLock::Guard::held();
    guard.lock();  // would deadlock on the non-recursive mutex were it taken again
    CHECK_FALSE(freeElsewhere(lock));
    guard.unlock();  // the change keeps its hold
    CHECK_FALSE(freeElsewhere(lock));
  }
  CHECK_FALSE(freeElsewhere(lock));
  change.unlock();
  CHECK(freeElsewhere(lock));
}
