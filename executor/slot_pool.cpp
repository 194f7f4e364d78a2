#include "executor/slot_pool.h"

#include "common/error.h"

namespace rtsql {

SlotPool::Reservation& SlotPool::Reservation::operator=(Reservation&& o) noexcept {
  if (this != &o) {
    release();
    pool_ = o.pool_;
    n_ = o.n_;
    o.pool_ = nullptr;
  }
  return *this;
}

void SlotPool::Reservation::release() {
  if (!pool_) return;
  std::lock_guard lock(pool_->mu_);
  pool_->used_ -= n_;
  pool_ = nullptr;
}

SlotPool::Reservation SlotPool::reserve(int n, const std::string& flowName) {
  std::lock_guard lock(mu_);
  int free = total_ - used_;
  if (n > free) {
    throw SqlError(sqlstate::kInsufficientResources,
                   fmt::format("flow \"{}\" needs {} task slots but only {} of {} are free", flowName,
                               n, free, total_),
                   SqlError::npos,
                   "stop or drop another flow, lower maxPartitions, or start rtsqld with more --slots");
  }
  used_ += n;
  return Reservation(this, n);
}

int SlotPool::used() const {
  std::lock_guard lock(mu_);
  return used_;
}

}  // namespace rtsql
