// The threads that serve the connections' I/O when the server runs its own
// (PgServerOptions::ioThreads): one io_context per thread, a connection
// pinned to one of them for its life. An io_context that several threads
// run hands every ready socket's handler to one thread and wakes another to
// wait on epoll in its place: a futex wake-up and a thread switch per
// message, which a request and its answer on one connection do not need.
// With a context of its own, a thread that epoll wakes for a connection's
// message reads it, answers it (a prepared lookup is answered there,
// server/prepared_lookup.cpp) and writes the answer, then waits on epoll
// again, and no other thread is involved.
#pragma once

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <atomic>
#include <cstddef>
#include <memory>
#include <thread>
#include <vector>

namespace rtsql::pgwire {

class IoThreads {
 public:
  // Starts `count` threads (at least 1), named `name` for top and perf.
  IoThreads(size_t count, const char* name);
  // stop(); then the contexts go, with any handler they still hold.
  ~IoThreads();
  IoThreads(const IoThreads&) = delete;
  IoThreads& operator=(const IoThreads&) = delete;

  // The context of the next connection: each in turn, so that connections
  // spread evenly over the threads.
  boost::asio::io_context& next();
  // Stops every context and waits for the threads: a handler not yet run
  // then never runs, and is dropped with the contexts (a connection's last
  // reference with it). Not from one of the threads; more than once is
  // harmless.
  void stop();
  size_t size() const { return contexts_.size(); }

 private:
  using Guard = boost::asio::executor_work_guard<boost::asio::io_context::executor_type>;
  std::vector<std::unique_ptr<boost::asio::io_context>> contexts_;
  std::vector<Guard> guards_;
  std::vector<std::thread> threads_;
  std::atomic<size_t> next_{0};
};

}  // namespace rtsql::pgwire
