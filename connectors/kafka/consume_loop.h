// The consume loop of a source task's poll() over a librdkafka queue, shared by
// the Kafka source (source.cpp) and a sharded flow's exchange (exchange.cpp):
// wait for the first message, then take whatever else is queued in batches
// without waiting, so that a poll costs one wakeup per burst of messages and
// not one per message.
#pragma once

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "common/clock.h"
#include "connectors/kafka/assigned_consumer.h"

namespace rtsql::kafka {

// Messages taken per call after the first: large enough to amortize the
// queue's lock, small enough to keep a batch's latency spread low.
constexpr size_t kConsumeBatch = 256;

// What the caller made of one batch of messages.
struct BatchTaken {
  size_t records = 0;  // records added to the poll's output
  bool stop = false;   // end the poll now (a partition's end, a failure)
};

// Fills `held` with messages from `queue` and hands each batch to
// `take(held)`, until `maxRecords` records were added, nothing more is
// queued, `take` says stop, or `timeoutMs` passed without a record. Only the
// first message is waited for: librdkafka's batch call would wait for a full
// batch, the opposite of what real-time mode wants. The wait returns at once
// after rd_kafka_queue_yield(queue) (which also holds for the next call when
// none waits, so a wake is never lost). `held` owns the messages while `take`
// reads them and is empty on return. Returns the records added.
template <class Take>
size_t consumeBatches(rd_kafka_queue_t* queue, std::vector<MessagePtr>& held, size_t maxRecords,
                      int timeoutMs, Take&& take) {
  const int64_t deadline = monotonicMicros() + int64_t(std::max(timeoutMs, 0)) * 1000;
  rd_kafka_message_t* batch[kConsumeBatch];
  size_t added = 0;
  while (added < maxRecords) {
    held.clear();
    if (added == 0) {
      const int64_t remainingMs = std::max<int64_t>(0, (deadline - monotonicMicros()) / 1000);
      rd_kafka_message_t* m = rd_kafka_consume_queue(queue, static_cast<int>(remainingMs));
      if (!m) break;
      held.emplace_back(m);
    } else {
      const size_t want = std::min(maxRecords - added, kConsumeBatch);
      const ssize_t n = rd_kafka_consume_batch_queue(queue, 0, batch, want);
      if (n <= 0) break;
      for (ssize_t i = 0; i < n; ++i) held.emplace_back(batch[i]);
    }
    const BatchTaken t = take(held);
    added += t.records;
    if (t.stop || (added == 0 && monotonicMicros() >= deadline)) break;
  }
  held.clear();
  return added;
}

}  // namespace rtsql::kafka
