// The raw decoder: Spark's Kafka source schema, each column filled by its name
// from the record itself (key and value as bytes, no payload decoding). A
// tombstone is a row whose value is NULL, not an error.
#include "connectors/format/decode_util.h"
#include "connectors/format/decoders.h"

namespace rtsql::format {

namespace {

enum class RawField { None, Key, Value, Topic, Partition, Offset, Timestamp, TimestampType, Headers };

RawField rawFieldOf(const Column& c) {
  struct Name {
    const char* name;
    RawField field;
  };
  static const Name kNames[] = {
      {"key", RawField::Key},         {"value", RawField::Value},
      {"topic", RawField::Topic},     {"partition", RawField::Partition},
      {"offset", RawField::Offset},   {"timestamp", RawField::Timestamp},
      {"timestampType", RawField::TimestampType}, {"headers", RawField::Headers},
      {kMetaKey, RawField::Key},      {kMetaTimestamp, RawField::Timestamp},
      {kMetaPartition, RawField::Partition}, {kMetaOffset, RawField::Offset},
      {kMetaHeaders, RawField::Headers},
  };
  for (const Name& n : kNames)
    if (iequals(c.name, n.name)) return n.field;
  return RawField::None;
}

class RawDecoder final : public RecordDecoder {
 public:
  explicit RawDecoder(const Schema& schema) {
    fields_.reserve(schema.size());
    for (const Column& c : schema.columns) fields_.push_back(rawFieldOf(c));
  }

  bool decode(const RecordView& rec, Row& row, std::string& /*error*/) override {
    row.resize(fields_.size());
    for (size_t i = 0; i < fields_.size(); ++i) {
      Value& out = row[i];
      switch (fields_[i]) {
        case RawField::Key:
          // setBinary/setString refill a reused row's buffers in place.
          if (rec.key) {
            out.setBinary({rec.key, rec.keyLen});
          } else {
            out = Value();
          }
          break;
        case RawField::Value:
          if (rec.value) {
            out.setBinary({rec.value, rec.valueLen});
          } else {
            out = Value();
          }
          break;
        case RawField::Topic:
          out.setString(rec.topic);
          break;
        case RawField::Partition:
          out = Value::integer(rec.partition);
          break;
        case RawField::Offset:
          out = Value::bigint(rec.offset);
          break;
        case RawField::Timestamp:
          out = Value::timestamp(rec.timestampMicros);
          break;
        case RawField::TimestampType:
          out = Value::integer(rec.timestampType);
          break;
        case RawField::Headers:
          out = rec.headers ? headersToValue(*rec.headers) : Value();
          break;
        case RawField::None:
          out = Value();
          break;
      }
    }
    return true;
  }

 private:
  std::vector<RawField> fields_;
};

}  // namespace

std::unique_ptr<RecordDecoder> makeRawDecoder(const Schema& schema) {
  return std::make_unique<RawDecoder>(schema);
}

}  // namespace rtsql::format
