#include "connectors/format/changes.h"

#include "connectors/format/decoders.h"
#include "planner/sink_changelog.h"

namespace rtsql {

namespace {

class UpsertEncoder final : public ChangeEncoder {
 public:
  explicit UpsertEncoder(const SinkSpec& sink)
      : json_(format::makeJsonEncoder(sink)),
        emptyKey_(sink.keyColumn < 0 && sink.keyColumns.empty()) {}

  void add(const Row& row, RowKind kind, const Emit& emit) override {
    if (kind == RowKind::UpdateBefore) return;  // the UpdateAfter replaces it
    json_->encode(row, rec_);
    if (emptyKey_) {
      rec_.hasKey = true;
      rec_.key = "{}";
    }
    if (kind == RowKind::Delete) {
      rec_.hasValue = false;
      rec_.value.clear();
    }
    emit(rec_);
  }

  void finish(const Emit&) override {}

 private:
  std::unique_ptr<RecordEncoder> json_;
  bool emptyKey_;
  EncodedRecord rec_;
};

class DebeziumEncoder final : public ChangeEncoder {
 public:
  explicit DebeziumEncoder(const SinkSpec& sink) : json_(format::makeJsonEncoder(sink)) {}

  void add(const Row& row, RowKind kind, const Emit& emit) override {
    if (kind == RowKind::UpdateAfter && before_) {
      json_->encode(*before_, row_);
      std::string old = std::move(row_.value);
      before_.reset();
      json_->encode(row, row_);
      write(&old, &row_.value, "u", emit);
      return;
    }
    finish(emit);
    switch (kind) {
      case RowKind::Insert:
        json_->encode(row, row_);
        write(nullptr, &row_.value, "c", emit);
        return;
      case RowKind::UpdateBefore:
        before_ = row;
        return;
      case RowKind::UpdateAfter:
        // An update whose old row was not sent.
        json_->encode(row, row_);
        write(nullptr, &row_.value, "u", emit);
        return;
      case RowKind::Delete:
        json_->encode(row, row_);
        write(&row_.value, nullptr, "d", emit);
        return;
    }
  }

  void finish(const Emit& emit) override {
    if (!before_) return;
    json_->encode(*before_, row_);
    before_.reset();
    write(&row_.value, nullptr, "d", emit);
  }

 private:
  // The key is the one json_ made for the row last encoded (row_).
  void write(const std::string* before, const std::string* after, const char* op,
             const Emit& emit) {
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
    rec_.hasKey = row_.hasKey;
    rec_.key = row_.key;
    emit(rec_);
  }

  std::unique_ptr<RecordEncoder> json_;
  std::optional<Row> before_;  // an UpdateBefore waiting for its UpdateAfter
  EncodedRecord row_;          // the json of one row and its key
  EncodedRecord rec_;          // the record written
};

}  // namespace

std::unique_ptr<ChangeEncoder> ChangeEncoder::make(const SinkSpec& sink) {
  if (sink.format == "debezium-json") return std::make_unique<DebeziumEncoder>(sink);
  if (sinkMode(sink.options) == SinkMode::Upsert) return std::make_unique<UpsertEncoder>(sink);
  return nullptr;
}

}  // namespace rtsql
