#include "executor/state/ordered_partition.h"

#include "common/error.h"
#include "common/row_codec.h"

namespace rtsql {

namespace {
constexpr int64_t kNoTime = 0;
}  // namespace

OrderedPartition::OrderedPartition(TimeIndexedTable& table, char rowTag, char seqTag,
                                   std::vector<ExprPtr> partition, std::vector<ExprPtr> order,
                                   std::vector<bool> descending)
    : table_(table),
      rowTag_(rowTag),
      seq_(table, seqTag),
      partition_(std::move(partition)),
      order_(std::move(order)),
      descending_(std::move(descending)) {
  if (descending_.size() != order_.size())
    throw InternalError("OrderedPartition: one DESC flag per order key expected");
}

void OrderedPartition::load(const Row& row) {
  key_.clear();
  for (const auto& k : partition_) encodeKey(key_, k->eval(row));
  orderBytes_.clear();
  for (size_t i = 0; i < order_.size(); ++i) {
    const size_t from = orderBytes_.size();
    encodeKey(orderBytes_, order_[i]->eval(row));
    if (descending_[i]) {
      for (size_t b = from; b < orderBytes_.size(); ++b)
        orderBytes_[b] = static_cast<char>(~static_cast<unsigned char>(orderBytes_[b]));
    }
  }
  count_ = 0;
  table_.scanKey(rowTag_, key_, kNoTime, kNoTime,
                 [this](int64_t, std::string_view rest, std::string_view value) {
                   if (count_ == entries_.size()) entries_.emplace_back();
                   entries_[count_].rest.assign(rest);
                   entries_[count_].value.assign(value);
                   ++count_;
                 });
}

size_t OrderedPartition::insertPosition() {
  rest_ = orderBytes_;
  encodeKeyInt(rest_, seq_.current());
  size_t pos = 0;
  while (pos < count_ && entries_[pos].rest < rest_) ++pos;
  return pos;
}

void OrderedPartition::put(const Row& row) {
  value_.clear();
  encodeRow(value_, row);
  table_.putKeyAt(rowTag_, key_, kNoTime, rest_, value_);
  seq_.advance();
}

size_t OrderedPartition::find(const Row& row) {
  value_.clear();
  encodeRow(value_, row);
  const size_t restSize = orderBytes_.size() + kSequenceBytes;
  size_t pos = 0;
  while (pos < count_ &&
         !(entries_[pos].rest.size() == restSize &&
           entries_[pos].rest.compare(0, orderBytes_.size(), orderBytes_) == 0 &&
           entries_[pos].value == value_)) {
    ++pos;
  }
  return pos;
}

void OrderedPartition::erase(size_t pos) {
  table_.eraseKeyAt(rowTag_, key_, kNoTime, entries_[pos].rest);
}

}  // namespace rtsql
