// How a Kafka source's consumer fetches, chosen by the rate its records come
// at. Prompt fetches (the broker answers as soon as one byte is there) give a
// sparse record the lowest latency, but at 10,000 records a second they cost
// a fetch, and a wakeup of the client's threads, every record or two.
// Batching fetches (the broker waits up to a few ms for 60,000 bytes) take
// tens of records a fetch and halve the CPU per record, but would hold every
// sparse record for the wait. librdkafka reads both settings only when a
// client is made, so the source keeps a client of each kind and moves its
// partitions between them (connectors/kafka/source.cpp); this unit decides
// when, with hysteresis, so that a rate near the threshold does not move
// them back and forth.
#pragma once

#include <cstdint>
#include <mutex>

namespace rtsql::kafka {

enum class FetchMode { Prompt, Batching };

// The consumer settings of a batching fetch. Measured on Apache Kafka with
// 1.2 KB records (docs/benchmarks.md): at 10,000 records a second a fetch
// then waits the whole 3 ms, about 30 records.
inline constexpr const char* kBatchingFetchMinBytes = "60000";
inline constexpr const char* kBatchingFetchWaitMs = "3";

// The source option that sets the rate (records a second, read by a node's
// tasks of the source together) from which its consumer fetches in batches;
// 0 never does.
inline constexpr const char* kFetchBatchingRateOption = "fetchBatchingRate";
inline constexpr int64_t kDefaultFetchBatchingRate = 5000;
inline constexpr int64_t kMaxFetchBatchingRate = 100'000'000;

// Counts the records a source's tasks on one node read, by window of a
// second, and says which fetch mode fits: batching once `upWindows` windows
// in a row came at `rate` or more, prompt again once `downWindows` windows in
// a row came below half of it. Time is passed in, so that tests need no
// clock. Any thread; the tasks of the source share one.
class FetchRateDetector {
 public:
  struct Settings {
    int64_t rate = kDefaultFetchBatchingRate;  // records a second; 0: always prompt
    int upWindows = 3;
    int downWindows = 2;
    int64_t windowMicros = 1'000'000;
  };

  explicit FetchRateDetector(Settings settings) : settings_(settings) {}

  // Counts `records` read at `nowMicros` (0 records when a poll found none,
  // so that an idle source still closes its windows) and returns the mode
  // wanted now.
  FetchMode add(int64_t records, int64_t nowMicros);

  FetchMode mode() const;

 private:
  // Ends the window that began at windowStart_, with mu_ held.
  void closeWindow(int64_t nowMicros);

  const Settings settings_;
  mutable std::mutex mu_;
  FetchMode mode_ = FetchMode::Prompt;
  int64_t windowStart_ = -1;  // none yet
  int64_t count_ = 0;
  int streak_ = 0;  // windows in a row that argue for the other mode
};

}  // namespace rtsql::kafka
