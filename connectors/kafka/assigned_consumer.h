// What every Kafka consumer of rtsqld that reads a fixed assignment (a flow's
// source task, a live query's tap, a sharded flow's exchange) has in common:
// it never joins its group, holds the messages it is working through, waits
// like an idle task when it has no partition, and says a broker's error at
// most every 10 s while the client reconnects by itself.
#pragma once

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "common/clock.h"
#include "connectors/kafka/client.h"

namespace rtsql::kafka {

struct MessageDeleter {
  void operator()(rd_kafka_message_t* m) const { rd_kafka_message_destroy(m); }
};
using MessagePtr = std::unique_ptr<rd_kafka_message_t, MessageDeleter>;

struct ListDeleter {
  void operator()(rd_kafka_topic_partition_list_t* l) const {
    rd_kafka_topic_partition_list_destroy(l);
  }
};
using ListPtr = std::unique_ptr<rd_kafka_topic_partition_list_t, ListDeleter>;

// Closes a consumer that never joined its group: its queue, then the client,
// without the consumer close (nothing to leave, and an unanswered commit with
// the broker down would hold the caller up). Every message of the client
// must have been destroyed first.
inline void destroyAssignedConsumer(HandlePtr& rk, rd_kafka_queue_t*& queue) {
  if (queue) rd_kafka_queue_destroy(queue);
  queue = nullptr;
  if (rk) rd_kafka_destroy_flags(rk.release(), RD_KAFKA_DESTROY_F_NO_CONSUMER_CLOSE);
}

// The wait of a task that has no partition to read (more tasks than
// partitions): until the timeout or a wake(), like an idle task, never a spin.
// A wake() while nobody waits ends the next wait.
class IdleWait {
 public:
  void wait(int timeoutMs) {
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, std::chrono::milliseconds(std::max(timeoutMs, 0)), [&] { return woken_; });
    woken_ = false;
  }
  void wake() {
    std::lock_guard lock(mu_);
    woken_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool woken_ = false;
};

// Whether a consumer's error is said now: at most once every 10 s, so that a
// broker away for a while fills no log.
class ErrorLogPace {
 public:
  bool due() {
    const int64_t now = monotonicMicros();
    if (now - last_ < 10'000'000) return false;
    last_ = now;
    return true;
  }

 private:
  int64_t last_ = INT64_MIN / 2;
};

}  // namespace rtsql::kafka
