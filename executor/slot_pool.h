// The server's fixed pool of task slots. A flow reserves one slot per task for
// its whole life, all at once when it starts: either every task gets a slot or
// the flow is refused (SQLSTATE 53000) and nothing is taken.
#pragma once

#include <mutex>
#include <string>

namespace rtsql {

class SlotPool {
 public:
  explicit SlotPool(int total) : total_(total) {}

  // RAII reservation; releases its slots when destroyed.
  class Reservation {
   public:
    Reservation() = default;
    Reservation(SlotPool* pool, int n) : pool_(pool), n_(n) {}
    Reservation(Reservation&& o) noexcept : pool_(o.pool_), n_(o.n_) { o.pool_ = nullptr; }
    Reservation& operator=(Reservation&& o) noexcept;
    ~Reservation() { release(); }
    void release();
    int slots() const { return pool_ ? n_ : 0; }

   private:
    SlotPool* pool_ = nullptr;
    int n_ = 0;
  };

  // Throws SqlError 53000 naming the needed and free slots when `n` do not fit.
  Reservation reserve(int n, const std::string& flowName);

  int total() const { return total_; }
  int used() const;

 private:
  mutable std::mutex mu_;
  int total_;
  int used_ = 0;
};

}  // namespace rtsql
