#include "connectors/format/changes.h"

#include "connectors/format/decoders.h"
#include "connectors/registry.h"
#include "planner/sink_changelog.h"

namespace rtsql {

namespace {

class UpsertEncoder final : public ChangeEncoder {
 public:
  explicit UpsertEncoder(const SinkSpec& sink)
      : json_(format::makeJsonEncoder(sink)),
        emptyKey_(sink.keyColumn < 0 && sink.keyColumns.empty()) {}

  void add(const Row& row, RowKind kind, const Emit& emit) override {
    if (kind == RowKind::UpdateAfter && before_) {
      // The old row's key is needed only when the update moves the row to
      // another key (a top-N rank change): the old key then gets a tombstone,
      // or a reader of the topic would keep the old row under it for ever.
      encode(*before_, old_);
      before_.reset();
      encode(row, rec_);
      if (old_.hasKey != rec_.hasKey || old_.key != rec_.key) tombstone(old_, emit);
      emit(rec_);
      return;
    }
    finish(emit);
    if (kind == RowKind::UpdateBefore) {
      before_ = row;  // the UpdateAfter that follows replaces it
      return;
    }
    encode(row, rec_);
    if (kind == RowKind::Delete) {
      tombstone(rec_, emit);
      return;
    }
    emit(rec_);
  }

  // An UpdateBefore that nothing followed is a delete, as in debezium-json.
  void finish(const Emit& emit) override {
    if (!before_) return;
    encode(*before_, old_);
    before_.reset();
    tombstone(old_, emit);
  }

 private:
  void encode(const Row& row, EncodedRecord& rec) {
    json_->encode(row, rec);
    if (emptyKey_) {
      rec.hasKey = true;
      rec.key = "{}";
    }
  }

  static void tombstone(EncodedRecord& rec, const Emit& emit) {
    rec.hasValue = false;
    rec.value.clear();
    emit(rec);
  }

  std::unique_ptr<RecordEncoder> json_;
  bool emptyKey_;
  std::optional<Row> before_;  // an UpdateBefore waiting for its UpdateAfter
  EncodedRecord old_;          // the old row's record, for its key
  EncodedRecord rec_;
};

class DebeziumEncoder final : public ChangeEncoder {
 public:
  explicit DebeziumEncoder(const SinkSpec& sink) : json_(format::makeJsonEncoder(sink)) {}

  void add(const Row& row, RowKind kind, const Emit& emit) override {
    if (kind == RowKind::UpdateAfter && before_) {
      json_->encode(*before_, old_);
      before_.reset();
      json_->encode(row, row_);
      if (old_.hasKey != row_.hasKey || old_.key != row_.key) {
        // An update that moves the row to another key (a top-N rank change)
        // is written as Debezium writes a key change: a delete under the old
        // key, then a create under the new one. One "u" under the new key
        // would carry a `before` that belongs to another key.
        write(old_, &old_.value, nullptr, "d", emit);
        write(row_, nullptr, &row_.value, "c", emit);
        return;
      }
      write(row_, &old_.value, &row_.value, "u", emit);
      return;
    }
    finish(emit);
    switch (kind) {
      case RowKind::Insert:
        json_->encode(row, row_);
        write(row_, nullptr, &row_.value, "c", emit);
        return;
      case RowKind::UpdateBefore:
        before_ = row;
        return;
      case RowKind::UpdateAfter:
        // An update whose old row was not sent.
        json_->encode(row, row_);
        write(row_, nullptr, &row_.value, "u", emit);
        return;
      case RowKind::Delete:
        json_->encode(row, row_);
        write(row_, &row_.value, nullptr, "d", emit);
        return;
    }
  }

  void finish(const Emit& emit) override {
    if (!before_) return;
    json_->encode(*before_, row_);
    before_.reset();
    write(row_, &row_.value, nullptr, "d", emit);
  }

 private:
  // Writes one change under the key json_ made for `keyed`.
  void write(const EncodedRecord& keyed, const std::string* before, const std::string* after,
             const char* op, const Emit& emit) {
    std::string& s = rec_.value;
    s.clear();
    s += "{\"before\":";
    s += before ? *before : "null";
    s += ",\"after\":";
    s += after ? *after : "null";
    s += ",\"op\":\"";
    s += op;
    s += "\"}";
    rec_.hasValue = true;
    rec_.hasKey = keyed.hasKey;
    rec_.key = keyed.key;
    emit(rec_);
  }

  std::unique_ptr<RecordEncoder> json_;
  std::optional<Row> before_;  // an UpdateBefore waiting for its UpdateAfter
  EncodedRecord old_;          // the json of an update's old row and its key
  EncodedRecord row_;          // the json of one row and its key
  EncodedRecord rec_;          // the record written
};

}  // namespace

std::unique_ptr<ChangeEncoder> ChangeEncoder::make(const SinkSpec& sink) {
  if (sink.format == "debezium-json") return std::make_unique<DebeziumEncoder>(sink);
  if (sinkOptionsOf(sink).mode == SinkMode::Upsert) return std::make_unique<UpsertEncoder>(sink);
  return nullptr;
}

}  // namespace rtsql
