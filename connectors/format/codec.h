// Record codecs: how a source's bytes become a Row (json, csv, raw) and how a
// sink's Row becomes bytes (json, csv, raw). Kafka and file connectors share them.
// A decoder is built once per task from the source's ScanSpec and reused for
// every record; decode() must not allocate beyond the Values it produces.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/row_kind.h"
#include "common/value.h"
#include "planner/physical_plan.h"

namespace rtsql {

// The hidden Kafka metadata column names (kMetaKey ... kMetaHeaders) are in
// common/schema.h: the planner appends them and decoders fill them by name.

// A view of one Kafka record (or one line of a file: no key, partition 0).
struct RecordView {
  const char* key = nullptr;  // null: no key
  size_t keyLen = 0;
  const char* value = nullptr;  // null: tombstone
  size_t valueLen = 0;
  std::string_view topic;
  int32_t partition = 0;
  int64_t offset = 0;
  int64_t timestampMicros = 0;
  int32_t timestampType = 0;  // 0 create time, 1 log append time
  const std::vector<std::pair<std::string, std::string>>* headers = nullptr;
};

class RecordDecoder {
 public:
  virtual ~RecordDecoder() = default;
  // Fills `row` (resized to the schema) from `rec`. Returns false and sets `error`
  // (a short reason, e.g. "field 'amount': expected DOUBLE, got \"abc\"" or
  // "invalid JSON at byte 17") when the record cannot be decoded.
  virtual bool decode(const RecordView& rec, Row& row, std::string& error) = 0;

  // Whether an error quotes the value that did not convert (`got "abc"`). A
  // record is its sender's; a table file is the server's, whose text an error
  // must not reveal beyond its line and field, so the table loader turns this off.
  void setQuoteValues(bool on) { quoteValues_ = on; }

  // Changelog formats (debezium-json) give a record 0, 1 or 2 rows: a
  // tombstone none, an insert or a delete one, an update its old row and its
  // new one. After a successful decode(), changeRows() says how many: the
  // first is in decode()'s `row`, the second is moved out by secondRow().
  // Every other format gives one insert.
  virtual int changeRows() const { return 1; }
  virtual RowKind changeKind(int i) const {
    (void)i;
    return RowKind::Insert;
  }
  virtual void secondRow(Row& row) { (void)row; }

 protected:
  bool quoteValues_ = true;
};
// format json | csv | raw | debezium-json | avro | protobuf; options read: csv 'csv.delimiter'
// (default ','), json 'json.ignore-missing' (missing fields become NULL: default true).
// A source's decoder takes what CREATE SOURCE read from its options
// (SourceOptions::decode); without them (a table's rows, tests) they are read
// from `options`. `options` still gives the registry and the avro and
// protobuf schemas, which are fetched or read from files as it starts.
std::unique_ptr<RecordDecoder> makeDecoder(const std::string& format, const Schema& schema,
                                           const Options& options, const DecodeOptions& decode);
std::unique_ptr<RecordDecoder> makeDecoder(const std::string& format, const Schema& schema,
                                           const Options& options);

// The settings of `options` a decoder of `sourceFormat` reads (22023 at a
// bad 'csv.delimiter' or 'json.ignore-missing').
DecodeOptions decodeOptions(const std::string& sourceFormat, const Options& options);

struct EncodedRecord {
  bool hasKey = false;
  std::string key;
  bool hasValue = true;
  std::string value;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string topic;  // empty: the sink's topic
};

class RecordEncoder {
 public:
  virtual ~RecordEncoder() = default;
  // Reuses `out`'s buffers; never throws on any row of the sink's input schema.
  virtual void encode(const Row& row, EncodedRecord& out) = 0;
};
std::unique_ptr<RecordEncoder> makeEncoder(const SinkSpec& sink);
// CREATE FLOW's check that `sink`'s format can write its input columns, for
// formats whose fields come from elsewhere (protobuf: the message's). Throws
// SqlError at the column's position in `columns` (each output's name and
// position).
void checkSinkColumns(const SinkSpec& sink,
                      const std::vector<std::pair<std::string, size_t>>& columns);

}  // namespace rtsql
