// Sink encoders. json writes the row as one JSON object (visible columns, in
// schema order) with an optional key column; csv writes the same columns as one
// RFC 4180 line with the same key; raw takes value, key, headers and topic from
// the columns the query named, as Spark's Kafka sink does. All write into the
// caller's EncodedRecord so its string buffers are reused per record.
#include <algorithm>

#include "common/functions/internal.h"
#include "common/json.h"
#include "common/year_month_interval.h"
#include "connectors/format/decoders.h"
#include "connectors/registry.h"

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
    case TypeId::TimestampNtz:
      out += formatTimestamp(v.asInt());
      return;
    default:
      appendJsonValue(out, v, type);
  }
}

}  // namespace

void encodeKey(const Row& row, const Schema& schema, int keyColumn,
               const std::vector<int>& keyColumns, EncodedRecord& out) {
  out.key.clear();
  out.hasKey = false;
  if (keyColumn >= 0 && static_cast<size_t>(keyColumn) < row.size() &&
      !row[static_cast<size_t>(keyColumn)].isNull()) {
    out.hasKey = true;
    appendAsBytes(out.key, row[static_cast<size_t>(keyColumn)],
                  *schema.columns[static_cast<size_t>(keyColumn)].type);
  } else if (keyColumns.size() > 1) {
    // Several group keys: the key is the JSON object of them, so a compacted
    // topic keeps one (the latest) record per group.
    out.hasKey = true;
    out.key += '{';
    for (size_t k = 0; k < keyColumns.size(); ++k) {
      auto index = static_cast<size_t>(keyColumns[k]);
      if (k) out.key += ',';
      appendJsonString(out.key, schema.columns[index].name);
      out.key += ':';
      appendJsonValue(out.key, index < row.size() ? row[index] : Value(),
                      *schema.columns[index].type);
    }
    out.key += '}';
  } else if (keyColumns.size() == 1) {
    auto index = static_cast<size_t>(keyColumns[0]);
    if (index < row.size() && !row[index].isNull()) {
      out.hasKey = true;
      appendAsBytes(out.key, row[index], *schema.columns[index].type);
    }
  }
}

namespace {

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
    if (keyColumns_.size() > 1) {
      for (int key : keyColumns_) {
        auto in = std::find_if(columns_.begin(), columns_.end(),
                               [&](const auto& c) { return c.first == static_cast<size_t>(key); });
        if (in == columns_.end()) {
          keyFromValue_.clear();
          break;
        }
        keyFromValue_.push_back(static_cast<size_t>(in - columns_.begin()));
      }
    }
    if (!keyFromValue_.empty()) spans_.resize(columns_.size());
  }

  void encode(const Row& row, EncodedRecord& out) override {
    out.headers.clear();
    out.topic.clear();
    out.hasValue = true;
    std::string& s = out.value;
    s.clear();
    s += '{';
    bool first = true;
    const bool spans = !keyFromValue_.empty();
    std::pair<size_t, size_t>* span = spans_.data();
    for (const auto& [index, prefix] : columns_) {
      if (!first) s += ',';
      first = false;
      const size_t start = s.size();
      s += prefix;
      if (index < row.size()) {
        appendJsonValue(s, row[index], *schema_.columns[index].type);
      } else {
        s += "null";
      }
      if (spans) *span++ = {start, s.size()};
    }
    s += '}';
    if (!keyFromValue_.empty()) {
      // The key object's members are the value's, "name":value each: they
      // are copied from it rather than encoded again (a group key as long as
      // the record would otherwise be escaped twice per row).
      out.hasKey = true;
      std::string& k = out.key;
      k.clear();
      k += '{';
      for (size_t m = 0; m < keyFromValue_.size(); ++m) {
        if (m) k += ',';
        const auto [start, end] = spans_[keyFromValue_[m]];
        k.append(s, start, end - start);
      }
      k += '}';
      return;
    }
    encodeKey(row, schema_, keyColumn_, keyColumns_, out);
  }

 private:
  Schema schema_;
  int keyColumn_;
  std::vector<int> keyColumns_;
  std::vector<std::pair<size_t, std::string>> columns_;
  // Where each of columns_ is in the value being encoded: "name":value.
  std::vector<std::pair<size_t, size_t>> spans_;
  // With several key columns, all of them written in the value: the index
  // in columns_ of each, in key order (encodeKey's JSON object); else empty.
  std::vector<size_t> keyFromValue_;
};

class CsvEncoder final : public RecordEncoder {
 public:
  explicit CsvEncoder(const SinkSpec& sink)
      : schema_(sink.input),
        keyColumn_(sink.keyColumn),
        keyColumns_(sink.keyColumns),
        delimiter_(sinkOptionsOf(sink).csvDelimiter) {
    if (keyColumn_ >= 0) keyColumns_.clear();
    for (size_t i = 0; i < schema_.size(); ++i) {
      if (!schema_.columns[i].hidden) columns_.push_back(i);
    }
  }

  void encode(const Row& row, EncodedRecord& out) override {
    out.headers.clear();
    out.topic.clear();
    out.hasValue = true;
    std::string& s = out.value;
    s.clear();
    bool first = true;
    for (size_t index : columns_) {
      if (!first) s += delimiter_;
      first = false;
      if (index < row.size()) appendCsvField(s, row[index], delimiter_, schema_.columns[index].type.get());
    }
    encodeKey(row, schema_, keyColumn_, keyColumns_, out);
  }

 private:
  Schema schema_;
  int keyColumn_;
  std::vector<int> keyColumns_;
  char delimiter_;
  std::vector<size_t> columns_;
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

void appendCsvText(std::string& out, std::string_view text, char delimiter) {
  bool quote = text.empty();
  for (char c : text) {
    if (c == delimiter || c == '"' || c == '\n' || c == '\r') {
      quote = true;
      break;
    }
  }
  if (!quote) {
    out += text;
    return;
  }
  out += '"';
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
}

void appendCsvField(std::string& out, const Value& v, char delimiter, const DataType* type) {
  // Every field goes through appendCsvText: even a number is quoted when the
  // delimiter is one of its characters ('.', '-', 'e').
  std::string text;
  switch (v.type()) {
    case TypeId::Null:
      return;  // an empty unquoted field
    case TypeId::Boolean:
      text = v.asBool() ? "true" : "false";
      break;
    case TypeId::Int:
    case TypeId::BigInt:
    case TypeId::TinyInt:
    case TypeId::SmallInt:
      text = std::to_string(v.asInt());
      break;
    case TypeId::Double:
      expr_internal::appendDouble(text, v.asDouble());
      break;
    case TypeId::Float:
      expr_internal::appendFloat(text, static_cast<float>(v.asDouble()));
      break;
    case TypeId::String:
    case TypeId::Binary:
      // Binary as its bytes, as the csv decoder reads it.
      appendCsvText(out, v.asString(), delimiter);
      return;
    case TypeId::Timestamp:
      text = formatTimestamp(v.asInt(), true);
      break;
    case TypeId::TimestampNtz:  // a wall clock: ISO text without the offset
      text = formatTimestamp(v.asInt(), true);
      text.pop_back();
      break;
    case TypeId::Interval:
      text = expr_internal::formatInterval(v.asInt());
      break;
    case TypeId::YearMonthInterval:  // Spark's text: INTERVAL '1-2' YEAR TO MONTH
      text = type && type->id == TypeId::YearMonthInterval
                 ? ym::sparkText(v.asInt(), *type)
                 : ym::sparkText(v.asInt(), YmField::Year, YmField::Month);
      break;
    case TypeId::Decimal:
    case TypeId::Date:
      text = v.toString();  // 1234.50, 2024-05-01
      break;
    case TypeId::Array:
    case TypeId::Struct:
    case TypeId::Map:
      // The planner refuses these columns for csv sinks; written as their JSON
      // text should one reach here, so that encode() never throws.
      appendJsonValue(text, v, DataType{});
      break;
  }
  appendCsvText(out, text, delimiter);
}

std::unique_ptr<RecordEncoder> makeCsvEncoder(const SinkSpec& sink) {
  return std::make_unique<CsvEncoder>(sink);
}
std::unique_ptr<RecordEncoder> makeJsonEncoder(const SinkSpec& sink) {
  return std::make_unique<JsonEncoder>(sink);
}
std::unique_ptr<RecordEncoder> makeRawEncoder(const SinkSpec& sink) {
  return std::make_unique<RawEncoder>(sink);
}

}  // namespace rtsql::format
