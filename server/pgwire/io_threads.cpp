#include "server/pgwire/io_threads.h"

#include <pthread.h>

#include <algorithm>

namespace rtsql::pgwire {

IoThreads::IoThreads(size_t count, const char* name) {
  count = std::max<size_t>(count, 1);
  contexts_.reserve(count);
  guards_.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    // Concurrency hint 1: one thread runs the context, so the scheduler
    // never wakes another for the reactor.
    contexts_.push_back(std::make_unique<boost::asio::io_context>(1));
    guards_.emplace_back(contexts_.back()->get_executor());
  }
  threads_.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    boost::asio::io_context& io = *contexts_[i];
    threads_.emplace_back([&io] { io.run(); });
    pthread_setname_np(threads_.back().native_handle(), name);
  }
}

IoThreads::~IoThreads() { stop(); }

boost::asio::io_context& IoThreads::next() {
  return *contexts_[next_.fetch_add(1, std::memory_order_relaxed) % contexts_.size()];
}

void IoThreads::stop() {
  for (Guard& g : guards_) g.reset();
  for (auto& io : contexts_) io->stop();
  for (std::thread& t : threads_) {
    if (t.joinable()) t.join();
  }
}

}  // namespace rtsql::pgwire
