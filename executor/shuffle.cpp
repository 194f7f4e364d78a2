#include "executor/shuffle.h"

#include <chrono>

namespace rtsql {

bool ShuffleQueue::push(ShuffleMessage&& m, const std::atomic<bool>& stopping) {
  std::unique_lock lock(mu_);
  while (items_.size() >= capacity_) {
    if (stopping.load(std::memory_order_relaxed)) return false;
    ++producersWaiting_;
    // The timeout only bounds how late a stop is noticed; a pop wakes us at once.
    notFull_.wait_for(lock, std::chrono::milliseconds(50));
    --producersWaiting_;
  }
  items_.push_back(std::move(m));
  if (consumerWaiting_) notEmpty_.notify_one();
  return true;
}

bool ShuffleQueue::popAll(std::deque<ShuffleMessage>& out, int timeoutMs) {
  std::unique_lock lock(mu_);
  if (items_.empty()) {
    consumerWaiting_ = true;
    notEmpty_.wait_for(lock, std::chrono::milliseconds(timeoutMs), [&] { return !items_.empty(); });
    consumerWaiting_ = false;
    if (items_.empty()) return false;
  }
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
  notEmpty_.notify_all();
  notFull_.notify_all();
}

size_t ShuffleQueue::size() const {
  std::lock_guard lock(mu_);
  return items_.size();
}

void ShuffleWriter::push(Row& row, const RecordContext& ctx) {
  countIn();
  size_t h = 0x9e3779b97f4a7c15ULL;
  for (const auto& k : keys_) {
    h ^= k->eval(row).hash() + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  }
  ShuffleMessage m;
  m.kind = ShuffleMessage::Kind::Record;
  m.input = input_;
  m.producer = producer_;
  m.row = row;  // a copy: upstream operators reuse their output rows
  m.ctx = ctx;
  if (targets_[h % targets_.size()]->push(std::move(m), stopping_)) {
    countOut();
  }
}

void ShuffleWriter::onWatermark(int64_t watermarkMicros) {
  broadcast(ShuffleMessage::Kind::Watermark, watermarkMicros);
}

void ShuffleWriter::broadcast(ShuffleMessage::Kind kind, int64_t value) {
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
