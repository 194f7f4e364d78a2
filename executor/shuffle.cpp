#include "executor/shuffle.h"

#include <chrono>

namespace rtsql {

bool ShuffleQueue::waitForRoom(std::unique_lock<std::mutex>& lock,
                               const std::atomic<bool>& stopping) {
  while (items_.size() >= capacity_) {
    if (stopping.load(std::memory_order_relaxed)) return false;
    // The consumer must be running to make room.
    wakeConsumer();
    ++producersWaiting_;
    // The timeout only bounds how late a stop is noticed; a pop wakes us at once.
    notFull_.wait_for(lock, std::chrono::milliseconds(50));
    --producersWaiting_;
  }
  return true;
}

void ShuffleQueue::wakeConsumer() {
  if (consumerWaiting_ && !consumerNotified_) {
    consumerNotified_ = true;
    notEmpty_.notify_one();
  }
}

bool ShuffleQueue::push(ShuffleMessage&& m, const std::atomic<bool>& stopping) {
  std::unique_lock lock(mu_);
  if (!waitForRoom(lock, stopping)) return false;
  items_.push_back(std::move(m));
  wakeConsumer();
  return true;
}

bool ShuffleQueue::pushAll(std::vector<ShuffleMessage>& ms, const std::atomic<bool>& stopping) {
  bool ok = true;
  {
    std::unique_lock lock(mu_);
    for (ShuffleMessage& m : ms) {
      if (!waitForRoom(lock, stopping)) {
        ok = false;
        break;
      }
      items_.push_back(std::move(m));
    }
    wakeConsumer();
  }
  ms.clear();
  return ok;
}

bool ShuffleQueue::popAll(std::deque<ShuffleMessage>& out, int timeoutMs) {
  std::unique_lock lock(mu_);
  if (items_.empty()) {
    consumerWaiting_ = true;
    consumerNotified_ = false;
    notEmpty_.wait_for(lock, std::chrono::milliseconds(timeoutMs),
                       [&] { return !items_.empty() || woken_; });
    consumerWaiting_ = false;
    woken_ = false;
    if (items_.empty()) return false;
  }
  woken_ = false;
  if (out.empty()) {
    out.swap(items_);
  } else {
    for (auto& m : items_) out.push_back(std::move(m));
    items_.clear();
  }
  if (producersWaiting_ > 0) notFull_.notify_all();
  return true;
}

void ShuffleQueue::wakeAll() {
  std::lock_guard lock(mu_);
  woken_ = true;
  notEmpty_.notify_all();
  notFull_.notify_all();
}

size_t ShuffleQueue::size() const {
  std::lock_guard lock(mu_);
  return items_.size();
}

int shardOfKeyHash(size_t keyHash, int shards) {
  // splitmix64's finalizer.
  uint64_t z = static_cast<uint64_t>(keyHash) + 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  return static_cast<int>(z % static_cast<uint64_t>(shards));
}

namespace {

constexpr size_t kKeyHashSeed = 0x9e3779b97f4a7c15ULL;

// One key's value folded into the hash of the keys before it.
size_t combineKeyHash(size_t h, const Value& v) {
  return h ^ (v.hash() + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2));
}

}  // namespace

size_t shuffleKeyHash(const std::vector<ExprPtr>& keys, const Row& row) {
  size_t h = kKeyHashSeed;
  // A key that is a column is hashed where it is: a copy of a kilobyte
  // string key per row was an allocation, a copy and a free.
  Value scratch;
  for (const auto& k : keys) h = combineKeyHash(h, k->evalRef(row, scratch));
  return h;
}

size_t shuffleKeyHashOf(const std::vector<Value>& values) {
  size_t h = kKeyHashSeed;
  for (const Value& v : values) h = combineKeyHash(h, v);
  return h;
}

void ShuffleWriter::push(Row& row, const RecordContext& ctx) {
  pushHashed(row, ctx, shuffleKeyHash(keys_, row));
}

void ShuffleWriter::pushHashed(Row& row, const RecordContext& ctx, size_t keyHash) {
  countIn();
  const size_t target = keyHash % targets_.size();
  ShuffleMessage m;
  m.kind = ShuffleMessage::Kind::Record;
  m.input = input_;
  m.producer = producer_;
  // The row moves instead of being copied (its strings are not duplicated);
  // upstream operators reuse their output rows, so the producer keeps a row
  // of the same width.
  const size_t width = row.size();
  m.row = std::move(row);
  row.clear();
  row.resize(width);
  m.ctx = ctx;
  if (batching_) {
    std::vector<ShuffleMessage>& kept = pending_[target];
    kept.push_back(std::move(m));
    ++pendingCount_;
    if (kept.size() >= kMaxBatch) {
      pendingCount_ -= kept.size();
      const size_t n = kept.size();
      if (targets_[target]->pushAll(kept, stopping_)) {
        for (size_t i = 0; i < n; ++i) countOut();
      }
    }
    return;
  }
  if (targets_[target]->push(std::move(m), stopping_)) {
    countOut();
  }
}

void ShuffleWriter::handOver() {
  if (pendingCount_ == 0) return;
  for (size_t t = 0; t < targets_.size(); ++t) {
    std::vector<ShuffleMessage>& kept = pending_[t];
    if (kept.empty()) continue;
    const size_t n = kept.size();
    if (targets_[t]->pushAll(kept, stopping_)) {
      for (size_t i = 0; i < n; ++i) countOut();
    }
  }
  pendingCount_ = 0;
}

void ShuffleWriter::onWatermark(int64_t watermarkMicros) {
  broadcast(ShuffleMessage::Kind::Watermark, watermarkMicros);
}

void ShuffleWriter::broadcast(ShuffleMessage::Kind kind, int64_t value) {
  // Control messages follow the records produced before them.
  handOver();
  for (ShuffleQueue* q : targets_) {
    ShuffleMessage m;
    m.kind = kind;
    m.input = input_;
    m.producer = producer_;
    m.value = value;
    q->push(std::move(m), stopping_);
  }
}

}  // namespace rtsql
