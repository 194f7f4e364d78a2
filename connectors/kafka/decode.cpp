#include "connectors/kafka/decode.h"

#include <fmt/format.h>

#include "common/schema.h"
#include "connectors/registry.h"

namespace rtsql::kafka {

void readHeaders(const rd_kafka_message_t* m, Headers& out) {
  out.clear();
  rd_kafka_headers_t* hdrs = nullptr;
  if (rd_kafka_message_headers(m, &hdrs) != RD_KAFKA_RESP_ERR_NO_ERROR) return;
  const char* name;
  const void* value;
  size_t size;
  for (size_t i = 0;
       rd_kafka_header_get_all(hdrs, i, &name, &value, &size) == RD_KAFKA_RESP_ERR_NO_ERROR; ++i) {
    out.emplace_back(name, value ? std::string(static_cast<const char*>(value), size)
                                 : std::string());
  }
}

SourceDecoder::SourceDecoder(const ScanSpec& scan) {
  // 'skip' and 'dead-letter' go on after a bad record; a source task that
  // writes dead letters does so itself (dead_letter.h).
  const SourceOptions parsed = sourceOptionsOf(scan);
  failOnError_ = parsed.onError == RowErrorPolicy::Fail;
  needHeaders_ = scan.schema.find(kMetaHeaders) >= 0 ||
                 (iequals(scan.format, "raw") && scan.schema.find("headers") >= 0);
  decoder_ = makeDecoder(scan.format, scan.schema, scan.options, parsed.decode);
}

void SourceDecoder::countError(std::string_view topic, int32_t partition, int64_t offset) {
  errors_.fetch_add(1, std::memory_order_relaxed);
  if (failOnError_) {
    failure_ = SqlError(sqlstate::kInvalidTextRepresentation,
                        fmt::format("cannot decode the record at topic '{}' partition {} "
                                    "offset {}: {}",
                                    topic, partition, offset, error_),
                        SqlError::npos,
                        "fix the record or the source's columns, or go on past bad records with "
                        "'on.error' = 'skip' or 'dead-letter'");
  }
}

void SourceDecoder::unreadable(std::string_view topic, int32_t partition, int64_t offset,
                               std::string why) {
  error_ = std::move(why);
  countError(topic, partition, offset);
}

bool SourceDecoder::decode(const RecordView& view, int64_t readMicros,
                           std::vector<SourceRecord>& out) {
  SourceRecord& rec = out.emplace_back();
  if (!decoder_->decode(view, rec.row, error_)) {
    out.pop_back();
    countError(view.topic, view.partition, view.offset);
    return false;
  }
  // The record's metadata, the same for each row it gives.
  auto stamp = [&](SourceRecord& r) {
    r.timestampMicros = view.timestampMicros;
    r.readMicros = readMicros;
    r.partition = view.partition;
    r.offset = view.offset;
  };
  stamp(rec);
  // Every format but a changelog's gives one insert.
  const int rows = decoder_->changeRows();
  if (rows == 0) {  // a changelog's tombstone
    out.pop_back();
    return true;
  }
  rec.kind = decoder_->changeKind(0);
  if (rows == 1) return true;
  // An update's new row: its own record, without a copy of the old row.
  // emplace_back may move `rec`, which is not used after.
  SourceRecord& second = out.emplace_back();
  stamp(second);
  decoder_->secondRow(second.row);
  second.kind = decoder_->changeKind(1);
  return true;
}

}  // namespace rtsql::kafka
