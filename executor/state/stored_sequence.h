// The sequence number a stateful operator gives each row it keeps, so that
// rows with equal keys and times stay distinct and in arrival order (the stream
// join's rows, the top-N's ties). It lives in the operator's state table as one
// entry under its own tag and empty key, saved with the epoch's state, so that
// numbers handed out after a restore never repeat one already in state.
//
// Layout: tag, empty key -> encodeKeyInt(next number). The entry is no row:
// an operator's row count leaves it out (rowEntries()).
#pragma once

#include <cstdint>
#include <string>

#include "executor/state/time_indexed_table.h"

namespace rtsql {

class StoredSequence {
 public:
  // Reads the saved number under `tag` in `table`, or starts at 0.
  StoredSequence(TimeIndexedTable& table, char tag);

  // The number the next kept row takes.
  int64_t current() const { return next_; }
  // The row that took current() was kept.
  void advance() { ++next_; }
  // Writes the next number into the table; called before the epoch's flush.
  void save();
  // The table's entries that are rows: all but the saved number.
  uint64_t rowEntries(uint64_t tableEntries) const {
    return stored_ && tableEntries > 0 ? tableEntries - 1 : tableEntries;
  }

 private:
  TimeIndexedTable& table_;
  const char tag_;
  int64_t next_ = 0;
  bool stored_ = false;
  std::string buffer_;
};

}  // namespace rtsql
