#include "executor/state/stored_sequence.h"

#include <string_view>

#include "common/row_codec.h"

namespace rtsql {

StoredSequence::StoredSequence(TimeIndexedTable& table, char tag) : table_(table), tag_(tag) {
  if (table_.get(tag_, {}, buffer_)) {
    std::string_view in(buffer_);
    next_ = decodeKeyInt(in);
    stored_ = true;
  }
}

void StoredSequence::save() {
  buffer_.clear();
  encodeKeyInt(buffer_, next_);
  table_.put(tag_, {}, buffer_);
  stored_ = true;
}

}  // namespace rtsql
