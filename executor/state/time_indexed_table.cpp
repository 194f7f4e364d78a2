#include "executor/state/time_indexed_table.h"

#include <algorithm>
#include <limits>

#include "common/error.h"
#include "common/row_codec.h"

namespace rtsql {
namespace {

constexpr size_t kTimeBytes = 8;  // encodeKeyInt()

int64_t timeAt(std::string_view bytes) {
  if (bytes.size() < kTimeBytes) throw InternalError("state key is truncated");
  std::string_view t = bytes.substr(0, kTimeBytes);
  return decodeKeyInt(t);
}

}  // namespace

TimeIndexedTable::TimeIndexedTable(std::unique_ptr<StateTable> table, size_t expireBatch)
    : table_(std::move(table)), expireBatch_(expireBatch == 0 ? 1 : expireBatch) {
  if (!table_) throw InternalError("stateful operator without a state table");
  expiredBelow_.fill(std::numeric_limits<int64_t>::min());
}

bool TimeIndexedTable::get(char tag, std::string_view key, std::string& value) {
  key_.assign(1, tag);
  key_.append(key);
  return table_->get(key_, value);
}

void TimeIndexedTable::put(char tag, std::string_view key, std::string_view value) {
  // The usual put follows a get() of the same key (read, modify, write), which
  // left tag + key in key_: comparing is cheaper than copying a long key again.
  if (key_.size() != key.size() + 1 || key_[0] != tag ||
      std::string_view(key_).substr(1) != key) {
    key_.assign(1, tag);
    key_.append(key);
  }
  table_->put(key_, value);
}

void TimeIndexedTable::erase(char tag, std::string_view key) {
  key_.assign(1, tag);
  key_.append(key);
  table_->erase(key_);
}

const std::string& TimeIndexedTable::timeKey(char tag, int64_t time, std::string_view rest) {
  key_.assign(1, tag);
  encodeKeyInt(key_, time);
  key_.append(rest);
  return key_;
}

bool TimeIndexedTable::getAt(char tag, int64_t time, std::string_view rest, std::string& value) {
  return table_->get(timeKey(tag, time, rest), value);
}

void TimeIndexedTable::putAt(char tag, int64_t time, std::string_view rest,
                             std::string_view value) {
  int64_t& below = expiredBelow_[static_cast<uint8_t>(tag)];
  if (time < below) below = time;
  table_->put(timeKey(tag, time, rest), value);
}

void TimeIndexedTable::eraseAt(char tag, int64_t time, std::string_view rest) {
  table_->erase(timeKey(tag, time, rest));
}

void TimeIndexedTable::expireThrough(char tag, int64_t watermark, const Visitor& fn) {
  // time <= watermark is time < watermark + 1, except that at the largest
  // time there is no + 1: then the whole family expires, up to the next tag.
  if (watermark == std::numeric_limits<int64_t>::max()) {
    drain(tag, std::nullopt, fn);
    return;
  }
  expireBefore(tag, watermark + 1, fn);
}

void TimeIndexedTable::expireBefore(char tag, int64_t bound, const Visitor& fn) {
  drain(tag, bound, fn);
}

std::optional<int64_t> TimeIndexedTable::firstAt(char tag) {
  const int64_t below = expiredBelow_[static_cast<uint8_t>(tag)];
  from_.assign(1, tag);
  if (below != std::numeric_limits<int64_t>::min()) encodeKeyInt(from_, below);
  to_.assign(1, static_cast<char>(tag + 1));
  if (collect(batch_, 1) == 0) return std::nullopt;
  return timeAt(std::string_view(batch_[0].first).substr(1));
}

void TimeIndexedTable::forEachAt(char tag, const Visitor& fn) {
  const std::string from(1, tag);
  const std::string to(1, static_cast<char>(tag + 1));
  table_->scan(from, to, [&](std::string_view key, std::string_view value) {
    std::string_view afterTag = key.substr(1);
    fn(timeAt(afterTag), afterTag.substr(kTimeBytes), value);
    return true;
  });
}

const std::string& TimeIndexedTable::keyTimeKey(char tag, std::string_view key, int64_t time,
                                                std::string_view rest) {
  key_.assign(1, tag);
  key_.append(key);
  encodeKeyInt(key_, time);
  key_.append(rest);
  return key_;
}

bool TimeIndexedTable::getKeyAt(char tag, std::string_view key, int64_t time, std::string_view rest,
                                std::string& value) {
  return table_->get(keyTimeKey(tag, key, time, rest), value);
}

void TimeIndexedTable::putKeyAt(char tag, std::string_view key, int64_t time, std::string_view rest,
                                std::string_view value) {
  table_->put(keyTimeKey(tag, key, time, rest), value);
}

void TimeIndexedTable::eraseKeyAt(char tag, std::string_view key, int64_t time,
                                  std::string_view rest) {
  table_->erase(keyTimeKey(tag, key, time, rest));
}

void TimeIndexedTable::scanKey(char tag, std::string_view key, int64_t lo, int64_t hi,
                               const Visitor& fn) {
  if (lo > hi) return;
  from_.assign(1, tag);
  from_.append(key);
  encodeKeyInt(from_, lo);
  // The upper end is hi followed by bytes above any `rest` the operators
  // write (at most 8 bytes, a sequence number), so the inclusive bound needs
  // no hi + 1, which could overflow.
  to_.assign(1, tag);
  to_.append(key);
  encodeKeyInt(to_, hi);
  to_.append(kTimeBytes + 1, '\xff');
  const size_t n = collect(found_, std::numeric_limits<size_t>::max());
  const size_t prefix = 1 + key.size();
  for (size_t i = 0; i < n; ++i) {
    std::string_view k = std::string_view(found_[i].first).substr(prefix);
    fn(timeAt(k), k.substr(kTimeBytes), found_[i].second);
  }
}

size_t TimeIndexedTable::collect(std::vector<std::pair<std::string, std::string>>& into,
                                 size_t limit) {
  size_t n = 0;
  table_->scan(from_, to_, [&](std::string_view key, std::string_view value) {
    if (n == into.size()) into.emplace_back();
    into[n].first.assign(key);
    into[n].second.assign(value);
    ++n;
    return n < limit;
  });
  return n;
}

void TimeIndexedTable::drain(char tag, std::optional<int64_t> bound, const Visitor& fn) {
  int64_t& below = expiredBelow_[static_cast<uint8_t>(tag)];
  if (bound && *bound <= below) return;  // nothing is that old
  from_.assign(1, tag);
  if (below != std::numeric_limits<int64_t>::min()) encodeKeyInt(from_, below);
  if (bound) {
    to_.assign(1, tag);
    encodeKeyInt(to_, *bound);
  } else {
    to_.assign(1, static_cast<char>(tag + 1));
  }
  // Each round reads what is left of the range from its start: the previous
  // round erased what it read.
  for (;;) {
    const size_t n = collect(batch_, expireBatch_);
    for (size_t i = 0; i < n; ++i) {
      const std::string& key = batch_[i].first;
      std::string_view afterTag = std::string_view(key).substr(1);
      fn(timeAt(afterTag), afterTag.substr(kTimeBytes), batch_[i].second);
      table_->erase(key);
    }
    if (n < expireBatch_) break;
  }
  // `fn` adds no entry to the range: the family now starts at `bound`.
  below = bound ? std::max(below, *bound) : std::numeric_limits<int64_t>::max();
}

}  // namespace rtsql
