// Threads that run statements off the I/O threads. A statement may block for
// seconds, and a live query runs until its client goes away, so a fixed-size
// pool would let a few long statements starve every other session. This pool
// therefore grows: a task never waits behind a running task while fewer than
// `maxThreads` threads exist. Threads that stay idle for `idleTimeout` exit, so
// a burst of sessions does not pin its threads forever.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

namespace rtsql::pgwire {

class WorkerPool {
 public:
  explicit WorkerPool(size_t maxThreads,
                      std::chrono::milliseconds idleTimeout = std::chrono::seconds(30));
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Runs `task` on a pool thread. Returns false (and drops the task) once
  // shutdown() has begun. A task's exceptions are swallowed: tasks are expected
  // to report their own failures.
  bool submit(std::function<void()> task);
  // Stops accepting tasks, lets queued and running tasks finish, and joins every
  // thread. Must not be called from a pool thread.
  void shutdown();

  size_t threadCount() const;

 private:
  void run();
  // Joins threads that exited on their idle timeout. Called without the lock.
  static void joinAll(std::vector<std::thread>& threads);

  const size_t maxThreads_;
  const std::chrono::milliseconds idleTimeout_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;
  std::unordered_map<std::thread::id, std::thread> threads_;
  std::vector<std::thread::id> exited_;
  size_t idle_ = 0;
  bool stopping_ = false;
};

}  // namespace rtsql::pgwire
