// The debezium-json decoder: a change data capture topic read as a changelog.
//
// Each record is a Debezium change event, with or without its schema wrapper
// ({"schema": ..., "payload": {...}}):
//   {"before": {...} | null, "after": {...} | null, "op": "c" | "r" | "u" | "d", ...}
// "c" (insert) and "r" (a snapshot's read) give an insert of `after`, "u" an
// update (UpdateBefore `before`, then UpdateAfter `after`), "d" a delete of
// `before`. The tombstone Debezium writes after a delete, for log compaction,
// gives no row. The source's columns are read from `before` and `after` by the
// json decoder, as a json source reads a record, so types, missing fields and
// errors behave the same. Other envelope fields (source, ts_ms, transaction)
// are skipped.
#include <simdjson.h>

#include <cstring>

#include "connectors/format/decoders.h"

namespace rtsql::format {

namespace {

namespace od = simdjson::ondemand;

class DebeziumJsonDecoder final : public RecordDecoder {
 public:
  DebeziumJsonDecoder(const Schema& schema, const DecodeOptions& decode)
      : rows_(makeJsonDecoder(schema, decode)) {}

  bool decode(const RecordView& rec, Row& row, std::string& error) override {
    count_ = 0;
    if (rec.value == nullptr) return true;  // the tombstone after a delete
    const size_t len = rec.valueLen;
    if (buffer_.size() < len + simdjson::SIMDJSON_PADDING) {
      buffer_.resize(len + simdjson::SIMDJSON_PADDING);
    }
    std::memcpy(buffer_.data(), rec.value, len);
    std::memset(buffer_.data() + len, 0, simdjson::SIMDJSON_PADDING);

    Envelope env;
    od::document doc;
    od::object obj;
    if (parser_.iterate(buffer_.data(), len, buffer_.size()).get(doc) ||
        doc.get_object().get(obj)) {
      error = "not a Debezium change event: expected a JSON object";
      return false;
    }
    if (!readEnvelope(obj, env, error, 0)) return false;

    auto image = [&](std::string_view text, Row& out, const char* which) {
      RecordView part = rec;
      part.value = text.data();
      part.valueLen = text.size();
      if (rows_->decode(part, out, error)) return true;
      error = std::string("'") + which + "': " + error;
      return false;
    };
    if (env.op == "c" || env.op == "r") {
      if (!env.hasAfter) return missing(env.op, "after", error);
      kinds_[0] = RowKind::Insert;
      count_ = 1;
      return image(env.after, row, "after");
    }
    if (env.op == "d") {
      if (!env.hasBefore) return missing(env.op, "before", error);
      kinds_[0] = RowKind::Delete;
      count_ = 1;
      return image(env.before, row, "before");
    }
    if (env.op == "u") {
      if (!env.hasBefore) return missing(env.op, "before", error);
      if (!env.hasAfter) return missing(env.op, "after", error);
      kinds_[0] = RowKind::UpdateBefore;
      kinds_[1] = RowKind::UpdateAfter;
      count_ = 2;
      return image(env.before, row, "before") && image(env.after, second_, "after");
    }
    if (env.op.empty()) {
      error = "not a Debezium change event: no 'op' field";
    } else if (env.op == "t") {
      error = "op 't' (a truncate) has no rows to retract; truncates are not supported";
    } else {
      error = "unknown op '" + env.op + "' (expected c, r, u or d)";
    }
    count_ = 0;
    return false;
  }

  int changeRows() const override { return count_; }
  RowKind changeKind(int i) const override { return kinds_[i == 0 ? 0 : 1]; }
  void secondRow(Row& row) override { row.swap(second_); }

 private:
  struct Envelope {
    std::string op;
    bool hasBefore = false;
    bool hasAfter = false;
    std::string_view before;  // raw JSON text inside buffer_
    std::string_view after;
  };

  static bool missing(const std::string& op, const char* field, std::string& error) {
    error = "op '" + op + "' has no '" + field + "' row";
    if (op == "u" || op == "d") {
      error +=
          ": the captured table must log its old rows (PostgreSQL: REPLICA IDENTITY FULL)";
    }
    return false;
  }

  // Reads op/before/after from `obj`, or from its "payload" object when the
  // event carries its schema.
  bool readEnvelope(od::object& obj, Envelope& env, std::string& error, int depth) {
    for (auto fieldResult : obj) {
      od::field field;
      std::string_view key;
      if (std::move(fieldResult).get(field) || field.unescaped_key().get(key)) {
        error = "not a Debezium change event: invalid JSON";
        return false;
      }
      od::value value = field.value();
      od::json_type type;
      if (value.type().get(type)) {
        error = "not a Debezium change event: invalid JSON";
        return false;
      }
      if (key == "payload" && depth == 0 && type == od::json_type::object) {
        od::object payload;
        if (value.get_object().get(payload)) {
          error = "not a Debezium change event: invalid JSON";
          return false;
        }
        return readEnvelope(payload, env, error, 1);
      }
      if (key == "op") {
        std::string_view op;
        if (type != od::json_type::string || value.get_string().get(op)) {
          error = "field 'op' is not a string";
          return false;
        }
        env.op.assign(op.data(), op.size());
      } else if (key == "before" || key == "after") {
        bool before = key == "before";
        if (type == od::json_type::null) continue;
        od::object image;
        std::string_view text;
        if (type != od::json_type::object || value.get_object().get(image) ||
            image.raw_json().get(text)) {
          error = std::string("field '") + (before ? "before" : "after") +
                  "' is not an object or null";
          return false;
        }
        (before ? env.hasBefore : env.hasAfter) = true;
        (before ? env.before : env.after) = text;
      }
    }
    return true;
  }

  std::unique_ptr<RecordDecoder> rows_;
  od::parser parser_;
  std::vector<char> buffer_;
  Row second_;
  int count_ = 0;
  RowKind kinds_[2] = {RowKind::Insert, RowKind::Insert};
};

}  // namespace

std::unique_ptr<RecordDecoder> makeDebeziumJsonDecoder(const Schema& schema,
                                                       const DecodeOptions& decode) {
  return std::make_unique<DebeziumJsonDecoder>(schema, decode);
}

}  // namespace rtsql::format
