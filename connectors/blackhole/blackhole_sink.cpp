// The blackhole sink (see blackhole_sink.h).
#include "connectors/blackhole/blackhole_sink.h"

#include <fmt/format.h>

#include <atomic>
#include <map>
#include <mutex>
#include <vector>

namespace rtsql {

namespace {

// The row counts of the writers of one sink in one flow run, summed for the
// description. Writers register their own counter, which only their thread
// writes: the hot path has no shared cache line and no read-modify-write.
class Tally {
 public:
  void add(const std::atomic<int64_t>* rows) {
    std::lock_guard lock(mu_);
    writers_.push_back(rows);
  }
  // A writer that closes leaves its rows in the sum.
  void remove(const std::atomic<int64_t>* rows) {
    std::lock_guard lock(mu_);
    std::erase(writers_, rows);
    closed_ += rows->load(std::memory_order_relaxed);
  }
  int64_t rows() const {
    std::lock_guard lock(mu_);
    int64_t n = closed_;
    for (const auto* w : writers_) n += w->load(std::memory_order_relaxed);
    return n;
  }

 private:
  mutable std::mutex mu_;
  std::vector<const std::atomic<int64_t>*> writers_;
  int64_t closed_ = 0;
};

// The tallies of the sinks being written, by flow and sink name. An entry
// lives as long as a writer holds it: the writers of a run are opened together
// and closed together, so a new run starts from 0.
std::shared_ptr<Tally> tallyFor(const std::string& flowName, const std::string& sinkName) {
  static std::mutex mu;
  static std::map<std::string, std::weak_ptr<Tally>> tallies;
  std::lock_guard lock(mu);
  std::erase_if(tallies, [](const auto& e) { return e.second.expired(); });
  std::weak_ptr<Tally>& slot = tallies[flowName + '\0' + sinkName];
  std::shared_ptr<Tally> t = slot.lock();
  if (!t) {
    t = std::make_shared<Tally>();
    slot = t;
  }
  return t;
}

class BlackholeSink final : public SinkWriter {
 public:
  explicit BlackholeSink(std::shared_ptr<Tally> tally) : tally_(std::move(tally)) {
    tally_->add(&rows_);
  }
  ~BlackholeSink() override { tally_->remove(&rows_); }

  void write(const Row&, int64_t) override {
    // One writer thread: a plain store, not an atomic increment.
    rows_.store(rows_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
  // Every change counts as a row written, retractions included.
  void writeChange(const Row& row, int64_t ts, RowKind) override { write(row, ts); }
  void flush(int) override {}
  int64_t deliveryErrors() const override { return 0; }
  std::string description() const override {
    return fmt::format("Blackhole[rows={}]", tally_->rows());
  }

 private:
  std::shared_ptr<Tally> tally_;
  std::atomic<int64_t> rows_{0};
};

}  // namespace

void validateBlackholeOptions(const Options& options, size_t) {
  options.checkKnown({"connector"});
}

std::unique_ptr<SinkWriter> makeBlackholeSink(const SinkSpec& sink, const std::string& flowName,
                                              int) {
  return std::make_unique<BlackholeSink>(tallyFor(flowName, sink.name));
}

}  // namespace rtsql
