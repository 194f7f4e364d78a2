// The rows of a partition kept in a sort order, rows with equal order keys in
// arrival order: the state of the operators that rank or frame rows within a
// partition (top_n.cpp, over_aggregate.cpp). An operator load()s the partition
// of each input row, reads its rows by position, and keeps, finds or erases
// the input row among them.
//
// Layout in the operator's TimeIndexedTable (the operators' headers name the
// tags; state_layout_test.cpp pins the bytes):
//   row tag, key-then-time: key = encodeKey(partition values...), time = 0,
//       rest = order bytes + encodeKeyInt(seq)  -> encodeRow(input row)
//   sequence tag, keyed: empty key -> encodeKeyInt(next sequence number)
//       (stored_sequence.h)
// The order bytes are encodeKey() of each order value, every byte inverted for
// a DESC key, so that a scan of one partition key reads its rows in order
// (NULL first for ASC, last for DESC); the sequence number orders equal order
// keys by arrival. The time part is unused (always 0).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/expr.h"
#include "executor/state/stored_sequence.h"
#include "executor/state/time_indexed_table.h"

namespace rtsql {

class OrderedPartition {
 public:
  // The bytes of the sequence number that ends each kept row's rest.
  static constexpr size_t kSequenceBytes = 8;

  struct Entry {
    std::string rest;   // order bytes + sequence number
    std::string value;  // encodeRow(row)
  };

  OrderedPartition(TimeIndexedTable& table, char rowTag, char seqTag,
                   std::vector<ExprPtr> partition, std::vector<ExprPtr> order,
                   std::vector<bool> descending);

  // Reads the kept rows of `row`'s partition, in order, and notes where
  // `row` sorts: the calls below are about this row and these rows.
  void load(const Row& row);
  size_t size() const { return count_; }
  const Entry& operator[](size_t i) const { return entries_[i]; }
  // The order bytes of the loaded row, and of a kept row: equal order keys
  // have equal bytes (a rank's ties).
  std::string_view loadedOrder() const { return orderBytes_; }
  static std::string_view orderOf(const Entry& e) {
    return std::string_view(e.rest).substr(0, e.rest.size() - kSequenceBytes);
  }

  // The position the row would take as a new row: after every kept row
  // with equal order keys (it has the highest sequence number).
  size_t insertPosition();
  // Keeps `row` (the loaded row) where insertPosition() said. The loaded
  // positions stay as they were.
  void put(const Row& row);
  // The position of a kept row equal to `row` (the loaded row), or size().
  size_t find(const Row& row);
  // Erases the kept row at position `pos` of the loaded rows.
  void erase(size_t pos);

  // Before the epoch's flush: saves the sequence number.
  void save() { seq_.save(); }
  // The table's entries that are rows.
  uint64_t rowEntries(uint64_t tableEntries) const { return seq_.rowEntries(tableEntries); }

 private:
  TimeIndexedTable& table_;
  const char rowTag_;
  StoredSequence seq_;
  std::vector<ExprPtr> partition_;
  std::vector<ExprPtr> order_;
  std::vector<bool> descending_;
  // Buffers reused for every row.
  std::string key_, orderBytes_, rest_, value_;
  std::vector<Entry> entries_;
  size_t count_ = 0;
};

}  // namespace rtsql
