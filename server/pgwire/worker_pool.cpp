#include "server/pgwire/worker_pool.h"

#include <system_error>

namespace rtsql::pgwire {

WorkerPool::WorkerPool(size_t maxThreads, std::chrono::milliseconds idleTimeout)
    : maxThreads_(maxThreads == 0 ? 1 : maxThreads), idleTimeout_(idleTimeout) {}

WorkerPool::~WorkerPool() { shutdown(); }

bool WorkerPool::submit(std::function<void()> task) {
  std::vector<std::thread> finished;
  bool accepted = true;
  {
    std::lock_guard lock(mu_);
    if (stopping_) return false;
    tasks_.push_back(std::move(task));
    for (const auto& id : exited_) {
      auto it = threads_.find(id);
      if (it != threads_.end()) {
        finished.push_back(std::move(it->second));
        threads_.erase(it);
      }
    }
    exited_.clear();
    // Every queued task needs a thread of its own that is free to take it:
    // either an idle one or a new one. Waking an idle thread is not enough when
    // more tasks are queued than threads are idle, or a task would wait behind
    // a statement that might never end.
    if (tasks_.size() <= idle_ || threads_.size() >= maxThreads_) {
      cv_.notify_one();
    } else {
      try {
        std::thread t([this] { run(); });
        const auto id = t.get_id();
        threads_.emplace(id, std::move(t));
      } catch (const std::system_error&) {
        // Out of threads: queue the task behind the running ones if there are
        // any, otherwise nobody would ever run it.
        if (threads_.empty()) {
          tasks_.pop_back();
          accepted = false;
        } else {
          cv_.notify_one();
        }
      }
    }
  }
  joinAll(finished);
  return accepted;
}

void WorkerPool::run() {
  std::unique_lock lock(mu_);
  for (;;) {
    if (!tasks_.empty()) {
      auto task = std::move(tasks_.front());
      tasks_.pop_front();
      lock.unlock();
      try {
        task();
      } catch (...) {
        // Tasks report their own errors; a stray exception must not end the
        // thread (std::terminate) and take the server down with it.
      }
      // Destroy what the task captured (a connection, a session) before
      // taking the lock again: destructors may do real work.
      task = nullptr;
      lock.lock();
      continue;
    }
    if (stopping_) break;
    ++idle_;
    const bool woken =
        cv_.wait_for(lock, idleTimeout_, [this] { return stopping_ || !tasks_.empty(); });
    --idle_;
    if (!woken) break;
  }
  if (!stopping_) exited_.push_back(std::this_thread::get_id());
}

void WorkerPool::shutdown() {
  std::vector<std::thread> threads;
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    for (auto& [id, t] : threads_) threads.push_back(std::move(t));
    threads_.clear();
    exited_.clear();
  }
  cv_.notify_all();
  joinAll(threads);
}

size_t WorkerPool::threadCount() const {
  std::lock_guard lock(mu_);
  return threads_.size() - exited_.size();
}

void WorkerPool::joinAll(std::vector<std::thread>& threads) {
  for (auto& t : threads) {
    if (t.joinable()) t.join();
  }
}

}  // namespace rtsql::pgwire
