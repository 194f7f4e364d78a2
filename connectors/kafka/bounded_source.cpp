#include "connectors/kafka/bounded_source.h"

#include <fmt/format.h>
#include <librdkafka/rdkafka.h>

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>

#include "common/error.h"
#include "connectors/kafka/client.h"
#include "connectors/registry.h"

namespace rtsql {

namespace {

class BoundedKafkaSource final : public SourceTask {
 public:
  BoundedKafkaSource(std::unique_ptr<SourceTask> inner, const ScanSpec& scan,
                     const std::string& bootstrap, std::function<void()> finished)
      : inner_(std::move(inner)), finished_(std::move(finished)) {
    const std::vector<std::string> topics = sourceOptionsOf(scan).topics;
    if (topics.size() != 1) {
      throw SqlError(sqlstate::kFeatureNotSupported,
                     fmt::format("FOR OFFSETS BETWEEN reads a source of one topic; \"{}\" "
                                 "subscribes to {}",
                                 scan.name, topics.size()));
    }
    // The end of each partition is what the broker holds when the query
    // starts: what arrives later is not read.
    kafka::HandlePtr rk = kafka::newClient(RD_KAFKA_CONSUMER, bootstrap, scan.options,
                                           {{"client.id", "rtsql-bounded"}}, {});
    for (const PartitionProgress& p : inner_->progress()) {
      int64_t low = -1, high = -1;
      const rd_kafka_resp_err_t err = rd_kafka_query_watermark_offsets(
          rk.get(), p.topic.c_str(), p.partition, &low, &high, kafka::kMetadataTimeoutMs);
      if (err) {
        throw SqlError(sqlstate::kConnectionFailure,
                       fmt::format("cannot read the end offset of partition {}-{} on {}: {}",
                                   p.topic, p.partition, bootstrap, rd_kafka_err2str(err)));
      }
      Partition& part = parts_[p.partition];
      part.end = high;
      part.done = high <= std::max<int64_t>(low, p.endOffset);
    }
  }

  void poll(std::vector<SourceRecord>& out, size_t maxRecords, int timeoutMs) override {
    if (!finishedSent_ && allDone()) {
      finishedSent_ = true;
      finished_();
    }
    if (finishedSent_) {
      std::unique_lock lock(mu_);
      cv_.wait_for(lock, std::chrono::milliseconds(timeoutMs), [&] { return woken_; });
      woken_ = false;
      return;
    }
    const size_t before = out.size();
    inner_->poll(out, maxRecords, timeoutMs);
    size_t kept = before;
    for (size_t i = before; i < out.size(); ++i) {
      auto it = parts_.find(out[i].partition);
      if (it != parts_.end() && out[i].offset >= it->second.end) {
        it->second.done = true;
        continue;
      }
      if (kept != i) out[kept] = std::move(out[i]);
      ++kept;
    }
    out.resize(kept);
    if (allDone()) return;
    // The next offset to read is the end, or the partition has been read to
    // the broker's end, which is at or past it (a transaction's marker may
    // hold the last offset). One progress() per poll: it copies every
    // partition's position.
    for (const PartitionProgress& p : inner_->progress()) {
      auto it = parts_.find(p.partition);
      if (it != parts_.end() && !it->second.done && p.endOffset >= it->second.end) {
        it->second.done = true;
      }
    }
    for (auto& [partition, part] : parts_) {
      if (!part.done && inner_->caughtUp(partition)) part.done = true;
    }
    // Counted in the next poll(), after the task has pushed these records.
  }

  void wake() override {
    inner_->wake();
    std::lock_guard lock(mu_);
    woken_ = true;
    cv_.notify_all();
  }
  bool wakes() const override { return inner_->wakes(); }
  void commit() override { inner_->commit(); }
  void commit(const std::vector<PartitionProgress>& upTo) override { inner_->commit(upTo); }
  std::vector<PartitionProgress> progress() const override { return inner_->progress(); }
  bool caughtUp(int32_t partition) const override { return inner_->caughtUp(partition); }
  int64_t decodeErrors() const override { return inner_->decodeErrors(); }
  std::string description() const override { return "Bounded" + inner_->description(); }

 private:
  struct Partition {
    int64_t end = 0;
    bool done = false;
  };

  bool allDone() const {
    for (const auto& [partition, part] : parts_) {
      if (!part.done) return false;
    }
    return true;
  }

  std::unique_ptr<SourceTask> inner_;
  std::function<void()> finished_;
  std::map<int32_t, Partition> parts_;
  bool finishedSent_ = false;
  std::mutex mu_;
  std::condition_variable cv_;
  bool woken_ = false;
};

}  // namespace

std::unique_ptr<SourceTask> makeBoundedKafkaSource(std::unique_ptr<SourceTask> inner,
                                                   const ScanSpec& scan,
                                                   const std::string& bootstrap,
                                                   std::function<void()> finished) {
  return std::make_unique<BoundedKafkaSource>(std::move(inner), scan, bootstrap,
                                              std::move(finished));
}

}  // namespace rtsql
