// TimeIndexedTable: the state of one stateful operator as the operators use
// it: entries found by key, entries ordered by event time that the watermark
// expires, and entries of one key ordered by time. It sits on the operator's
// StateTable (state_store.h) and is the one place that builds state keys, so
// the operators say what they keep, never how its bytes are laid out.
//
// Each kind of entry an operator keeps is a family named by one tag byte,
// the first byte of its keys. A family has one of three shapes:
//
//   keyed         tag + key                          get / put / erase
//   time-ordered  tag + encodeKeyInt(time) + rest    getAt / putAt / eraseAt,
//                                                     expireThrough / expireBefore,
//                                                     firstAt, forEachAt
//   key-then-time tag + key + encodeKeyInt(time) + rest
//                                                     getKeyAt / putKeyAt / eraseKeyAt,
//                                                     scanKey
//
// encodeKeyInt() is order-preserving, so a time-ordered family is sorted by
// time: everything the watermark passed is one ordered scan from the family's
// first key, never a full scan, and a key-then-time family keeps the entries
// of one key within a time range contiguous. `key` and `rest` are the
// operator's own bytes; a key that other entries extend (key-then-time) must
// be self-delimiting, as encodeKey() is.
//
// These layouts are a file format: checkpoints hold them. The tag and the
// parts of each family an operator uses are documented at the top of that
// operator, and a change to either needs a migration of stored state.
//
// The table keeps its key buffers between calls, so building a key costs no
// allocation once the buffers have grown: the per-record path of an operator
// adds no allocation and no state lookup by going through it.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "executor/state/state_store.h"

namespace rtsql {

class TimeIndexedTable {
 public:
  // Sees one entry of a time-ordered or key-then-time family: its time, the
  // key bytes after the time (`rest`) and its value.
  using Visitor = std::function<void(int64_t time, std::string_view rest, std::string_view value)>;

  // Expiry reads at most this many entries per scan. A batch should hold what
  // one watermark advance usually expires; the bound keeps a large expiry
  // from copying its whole range into memory.
  static constexpr size_t kExpireBatch = 65536;

  // Throws InternalError when `table` is null.
  explicit TimeIndexedTable(std::unique_ptr<StateTable> table, size_t expireBatch = kExpireBatch);

  // Keyed entries: tag + key.
  bool get(char tag, std::string_view key, std::string& value);
  void put(char tag, std::string_view key, std::string_view value);
  void erase(char tag, std::string_view key);

  // Time-ordered entries: tag + encodeKeyInt(time) + rest.
  bool getAt(char tag, int64_t time, std::string_view rest, std::string& value);
  void putAt(char tag, int64_t time, std::string_view rest, std::string_view value);
  void eraseAt(char tag, int64_t time, std::string_view rest);
  // Visits, in key order (time, then rest), every entry with time <= watermark
  // and erases each after `fn` saw it. Entries are collected in bounded
  // batches, so expiring many at once does not copy the whole range, and `fn`
  // is free to use the table (it runs outside the scan) but must not add
  // entries to the range being expired nor expire or scan itself.
  void expireThrough(char tag, int64_t watermark, const Visitor& fn);
  // The same for every entry with time < bound.
  void expireBefore(char tag, int64_t bound, const Visitor& fn);
  // The time of the family's first entry, or none when it is empty: one
  // read, which starts where expiry left off (an operator that wants to be
  // woken for its next entry asks this after it expired).
  std::optional<int64_t> firstAt(char tag);
  // Visits every entry of the family in key order, erasing none (to rebuild
  // what an operator keeps in memory about its state after a restore).
  void forEachAt(char tag, const Visitor& fn);

  // Key-then-time entries: tag + key + encodeKeyInt(time) + rest.
  bool getKeyAt(char tag, std::string_view key, int64_t time, std::string_view rest,
                std::string& value);
  void putKeyAt(char tag, std::string_view key, int64_t time, std::string_view rest,
                std::string_view value);
  void eraseKeyAt(char tag, std::string_view key, int64_t time, std::string_view rest);
  // Visits, in time order, the entries of `key` with lo <= time <= hi. They are
  // read before `fn` sees the first one, so `fn` may write to the table (to
  // update the entry it sees, say), but not scan it.
  void scanKey(char tag, std::string_view key, int64_t lo, int64_t hi, const Visitor& fn);

  // Makes every write durable in the state store (StateTable::flush).
  void flush() { table_->flush(); }
  // Entries over all families.
  uint64_t size() const { return table_->size(); }
  int64_t memoryBytes() const { return table_->memoryBytes(); }

 private:
  // key_ := tag + encodeKeyInt(time) + rest.
  const std::string& timeKey(char tag, int64_t time, std::string_view rest);
  // key_ := tag + key + encodeKeyInt(time) + rest.
  const std::string& keyTimeKey(char tag, std::string_view key, int64_t time,
                                std::string_view rest);
  // Expires the time-ordered entries of `tag` in [from_, to_), where to_ is
  // tag + encodeKeyInt(bound), or the next tag when `bound` is absent (the
  // whole family).
  void drain(char tag, std::optional<int64_t> bound, const Visitor& fn);
  // Reads up to `limit` entries of [from_, to_) into `into`; returns how many.
  // The strings of `into` are reused, so a read allocates only where an entry
  // is longer than any read into its slot before.
  size_t collect(std::vector<std::pair<std::string, std::string>>& into, size_t limit);

  std::unique_ptr<StateTable> table_;
  size_t expireBatch_;
  // Per tag, a time no entry of the time-ordered family is below: what expiry
  // already passed, lowered by putAt(). Expiry starts its scan there rather
  // than at the family's first key, so it does not walk over the deletions
  // that earlier expiries left in RocksDB. INT64_MIN: nothing known.
  std::array<int64_t, 256> expiredBelow_;
  // Buffers reused by every call: keys, scan bounds, the entries of an
  // expiry batch and those of a key scan (apart, as expiry may look up keys).
  std::string key_, from_, to_;
  std::vector<std::pair<std::string, std::string>> batch_, found_;
};

}  // namespace rtsql
