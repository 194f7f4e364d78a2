// Sink encoders. json writes the row as one JSON object (visible columns, in
// schema order) with an optional key column; raw takes value, key, headers and
// topic from the columns the query named, as Spark's Kafka sink does. Both write
// into the caller's EncodedRecord so its string buffers are reused per record.
#include "common/json.h"
#include "connectors/format/decoders.h"

namespace rtsql::format {

namespace {

// A key or raw value as Kafka bytes: strings and binaries as they are, a
// timestamp in its display form, anything else in its JSON form.
void appendAsBytes(std::string& out, const Value& v, const DataType& type) {
  switch (v.type()) {
    case TypeId::String:
    case TypeId::Binary:
      out += v.asString();
      return;
    case TypeId::Timestamp:
      out += formatTimestamp(v.asInt());
      return;
    default:
      appendJsonValue(out, v, type);
  }
}

class JsonEncoder final : public RecordEncoder {
 public:
  explicit JsonEncoder(const SinkSpec& sink)
      : schema_(sink.input), keyColumn_(sink.keyColumn), keyColumns_(sink.keyColumns) {
    if (keyColumn_ >= 0) keyColumns_.clear();
    for (size_t i = 0; i < schema_.size(); ++i) {
      const Column& c = schema_.columns[i];
      if (c.hidden) continue;
      std::string prefix;
      appendJsonString(prefix, c.name);
      prefix += ':';
      columns_.push_back({i, std::move(prefix)});
    }
  }

  void encode(const Row& row, EncodedRecord& out) override {
    out.headers.clear();
    out.topic.clear();
    out.hasValue = true;
    std::string& s = out.value;
    s.clear();
    s += '{';
    bool first = true;
    for (const auto& [index, prefix] : columns_) {
      if (!first) s += ',';
      first = false;
      s += prefix;
      if (index < row.size()) {
        appendJsonValue(s, row[index], *schema_.columns[index].type);
      } else {
        s += "null";
      }
    }
    s += '}';
    out.key.clear();
    out.hasKey = false;
    if (keyColumn_ >= 0 && static_cast<size_t>(keyColumn_) < row.size() &&
        !row[static_cast<size_t>(keyColumn_)].isNull()) {
      out.hasKey = true;
      appendAsBytes(out.key, row[static_cast<size_t>(keyColumn_)],
                    *schema_.columns[static_cast<size_t>(keyColumn_)].type);
    } else if (keyColumns_.size() > 1) {
      // Several group keys: the key is the JSON object of them, so a compacted
      // topic keeps one (the latest) record per group.
      out.hasKey = true;
      out.key += '{';
      for (size_t k = 0; k < keyColumns_.size(); ++k) {
        auto index = static_cast<size_t>(keyColumns_[k]);
        if (k) out.key += ',';
        appendJsonString(out.key, schema_.columns[index].name);
        out.key += ':';
        appendJsonValue(out.key, index < row.size() ? row[index] : Value(), *schema_.columns[index].type);
      }
      out.key += '}';
    } else if (keyColumns_.size() == 1) {
      auto index = static_cast<size_t>(keyColumns_[0]);
      if (index < row.size() && !row[index].isNull()) {
        out.hasKey = true;
        appendAsBytes(out.key, row[index], *schema_.columns[index].type);
      }
    }
  }

 private:
  Schema schema_;
  int keyColumn_;
  std::vector<int> keyColumns_;
  std::vector<std::pair<size_t, std::string>> columns_;
};

class RawEncoder final : public RecordEncoder {
 public:
  explicit RawEncoder(const SinkSpec& sink)
      : schema_(sink.input),
        valueColumn_(sink.valueColumn),
        keyColumn_(sink.input.find("key")),
        headersColumn_(sink.headersColumn),
        topicColumn_(sink.topicColumn) {}

  void encode(const Row& row, EncodedRecord& out) override {
    out.value.clear();
    out.key.clear();
    out.topic.clear();
    out.headers.clear();
    const Value* v = at(row, valueColumn_);
    out.hasValue = v != nullptr;  // a NULL value is a tombstone
    if (v) appendAsBytes(out.value, *v, typeOf(valueColumn_));
    const Value* k = at(row, keyColumn_);
    out.hasKey = k != nullptr;
    if (k) appendAsBytes(out.key, *k, typeOf(keyColumn_));
    if (const Value* t = at(row, topicColumn_)) appendAsBytes(out.topic, *t, typeOf(topicColumn_));
    if (const Value* h = at(row, headersColumn_); h && h->type() == TypeId::Array) {
      for (const Value& item : h->asList()) {
        if (item.type() != TypeId::Struct) continue;
        const ValueList& kv = item.asList();
        std::pair<std::string, std::string> header;
        if (!kv.empty() && !kv[0].isNull()) header.first = kv[0].toString();
        if (kv.size() > 1 && (kv[1].type() == TypeId::String || kv[1].type() == TypeId::Binary)) {
          header.second = kv[1].asString();
        } else if (kv.size() > 1 && !kv[1].isNull()) {
          header.second = kv[1].toString();
        }
        out.headers.push_back(std::move(header));
      }
    }
  }

 private:
  const Value* at(const Row& row, int column) const {
    if (column < 0 || static_cast<size_t>(column) >= row.size()) return nullptr;
    const Value& v = row[static_cast<size_t>(column)];
    return v.isNull() ? nullptr : &v;
  }
  const DataType& typeOf(int column) const { return *schema_.columns[static_cast<size_t>(column)].type; }

  Schema schema_;
  int valueColumn_;
  int keyColumn_;
  int headersColumn_;
  int topicColumn_;
};

}  // namespace

std::unique_ptr<RecordEncoder> makeJsonEncoder(const SinkSpec& sink) {
  return std::make_unique<JsonEncoder>(sink);
}
std::unique_ptr<RecordEncoder> makeRawEncoder(const SinkSpec& sink) {
  return std::make_unique<RawEncoder>(sink);
}

}  // namespace rtsql::format
